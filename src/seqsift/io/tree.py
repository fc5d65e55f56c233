"""Walking the paths a command is given: files as named, directories (with -r) in sorted order.

Symlinks to directories inside a tree are not followed (clamscan's default, and no loop can form);
anything that is not a readable regular file (a missing path, a broken symlink, a symlink loop, a
fifo, a socket or a device, a file without read permission) is reported and skipped, never opened:
opening a fifo would block.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Callable, Iterator

from seqsift.io.openers import STDIN, file_kind


def walk(paths: list[str], recursive: bool, report: Callable[[str, str], None]) -> Iterator[tuple[str, str]]:
    """(reported path, path to open) of every regular file named or found under a directory;
    anything else (missing, unreadable, a fifo or device, a symlink loop) goes to report() and
    is skipped. Inside directories, symlinks to directories are not followed (clamscan's default)."""
    for path in paths:
        if str(path) == STDIN:
            yield STDIN, STDIN
            continue
        kind = _kind(path, report)
        if kind == "dir":
            if not recursive:
                report(path, "is a directory (use -r to scan directories)")
                continue
            yield from _walk_dir(path, report)
        elif kind == "file":
            yield path, path


def _walk_dir(top: str, report) -> Iterator[tuple[str, str]]:
    def onerror(exc: OSError) -> None:
        report(exc.filename or top, exc.strerror or str(exc))

    for root, dirs, files in os.walk(top, onerror=onerror):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            full = os.path.join(root, name)
            if os.path.islink(full) and os.path.isdir(full):
                continue
            if _kind(full, report) == "file":
                yield full, full
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]


def _kind(path: str, report) -> str | None:
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            report(path, "symlink loop, skipped")
        elif exc.errno == errno.ENOENT:
            report(path, "no such file (or a broken symlink), skipped")
        else:
            report(path, f"{exc.strerror or exc}, skipped")
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if not stat.S_ISREG(st.st_mode):
        report(path, f"is {file_kind(st.st_mode)}, not a regular file, skipped")
        return None
    if not os.access(path, os.R_OK):
        report(path, "permission denied, skipped")
        return None
    return "file"
