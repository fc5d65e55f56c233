"""Index files already checked in full, remembered so that loading a large one again costs ~nothing.

The full check of an .ssx file (its checksums, and the invariants the kernels rely on: ssx.py)
reads every byte: ~0.1 s for a 100 Mbp genome, seconds for a mammal's, and it pulls the whole
file into memory, which memory-mapping it was meant to avoid. Once a file has passed, an empty
marker named by the file's identity (device, inode, size, modification and change times) and by
the checking code (every seqsift source) is kept in the cache directory; a later load of that
file, unchanged, skips the checks that read the arrays. Any write to the file sets its change
time, which only root can set back, so a modified file is checked again. As in git's "racy"
rule, a file changed less than two seconds ago is not remembered: a write within the same clock
tick could leave its times as they were. Where the cache is not writable or not trusted (owned by
another user, or writable by others: precompiled.private_dir), every load checks in full, and a
marker counts only if it is a regular file of the user's own, writable by no one else.
"""

from __future__ import annotations

import os
import stat

from seqsift.filestatus import identity, settled
from seqsift.precompiled import private_dir, sha256, sources_digest  # sha256: CPython's own, not OpenSSL's (~4 ms of a start)


def _marker(st: os.stat_result) -> str | None:
    directory = private_dir("checked-indexes")
    if directory is None:
        return None
    return os.path.join(directory, sha256(identity(st).encode() + b"\0" + sources_digest()).hexdigest()[:32])


def seen(st: os.stat_result) -> bool:
    """Whether the file with this status passed the full check before, unchanged since."""
    marker = _marker(st)
    try:
        found = marker is not None and os.lstat(marker)
    except OSError:
        return False
    return bool(found) and stat.S_ISREG(found.st_mode) and found.st_uid == os.getuid() \
        and not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def remember(st: os.stat_result) -> None:
    """Record that the file with this status passed the full check (unless it changed too
    recently to be sure a later change would show; an unwritable cache is skipped)."""
    if not settled(st):
        return
    marker = _marker(st)
    if marker is None:
        return
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass
