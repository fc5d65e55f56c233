"""Objects (files) and the buffers they are packed into (GPU Gems 3, ch. 35, sections 2 and 4).

Files are laid back to back into fixed-size buffers, each buffer carrying a descriptor per
object part (a *segment*): where it lies in the buffer and at which file offset it starts. A
file too large for the room left continues in the next buffer, which starts with its last
`carry` bytes again (the longest piece span minus one), so a match straddling the cut is still
whole in one buffer; the part already seen is not reported twice (see `new_from`). Memory is the
buffers, whatever the corpus.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from seqsift.scan._cpu import PAD

STDIN = "-"


@dataclass
class ScanObject:
    index: int
    path: str  # as reported
    open_path: str | None  # what is opened (a spool file for standard input)
    data: bytes | memoryview | None = None  # an in-memory object instead of a file
    size: int = 0
    error: str | None = None  # set when reading failed part way


@dataclass
class Segment:
    obj: ScanObject
    lo: int  # padded-buffer index of its first byte
    hi: int
    file_offset: int  # file offset of buffer[lo]
    new_from: int  # file offset of its first byte not already in the previous buffer
    last: bool  # the object ends in this buffer


@dataclass
class Filled:
    buffer: np.ndarray  # PAD + size + PAD bytes
    n: int  # data bytes
    segments: list[Segment]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.asarray([s.lo for s in self.segments], np.int64), np.asarray([s.hi for s in self.segments], np.int64))


def walk(paths: list[str], recursive: bool, report: Callable[[str, str], None]) -> Iterator[tuple[str, str]]:
    """(reported path, path to open) of every regular file named or found under a directory;
    anything else (missing, unreadable, a fifo or device, a symlink loop) goes to report() and
    is skipped. Inside directories, symlinks to directories are not followed (clamscan's default)."""
    for path in paths:
        if path == STDIN:
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
        what = "a fifo" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        report(path, f"is {what}, not a regular file, skipped")
        return None
    if not os.access(path, os.R_OK):
        report(path, "permission denied, skipped")
        return None
    return "file"


def spool_stdin(directory: str | None = None) -> str:
    """Standard input copied to a temporary file, so it has a size (EOF-n offsets) and streams
    through buffers like any file. The caller deletes it."""
    fd, tmp = tempfile.mkstemp(prefix="seqsift-stdin.", dir=directory)
    with os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
    return tmp


class BufferFiller:
    """Packs objects into buffers in order; fill() is called from one thread only."""

    def __init__(self, objects: Iterator[ScanObject], size: int, carry: int, report: Callable[[str, str], None]):
        self.objects = objects
        self.size = size
        self.carry = carry
        self.report = report
        self._current: ScanObject | None = None
        self._stream = None
        self._offset = 0  # file offset of the next byte to read
        self._tail = np.empty(max(carry, 1), np.uint8)
        self._tail_len = 0
        self.done = False

    def fill(self, buf: np.ndarray) -> Filled | None:
        """Fill buf (PAD + size + PAD bytes); None once every object has been read."""
        if self.done:
            return None
        segments: list[Segment] = []
        used = 0
        while used < self.size:
            if self._current is None and not self._next_object():
                self.done = True
                break
            obj = self._current
            lo = PAD + used
            start_offset = self._offset - self._tail_len
            if self._tail_len:  # continuation: the last `carry` bytes of the previous buffer again
                buf[lo : lo + self._tail_len] = self._tail[: self._tail_len]
                used += self._tail_len
            got, eof = self._read(buf, PAD + used, PAD + self.size)
            used += got
            self._offset += got
            segment = Segment(obj, lo, PAD + used, start_offset, self._offset - got, eof)
            segments.append(segment)
            if eof:
                self._close()
            else:
                keep = min(self.carry, used - (lo - PAD))
                self._tail[:keep] = buf[PAD + used - keep : PAD + used]
                self._tail_len = keep
                break
        if not segments:
            return None
        buf[PAD + used : PAD + used + PAD] = 0
        return Filled(buf, used, segments)

    def _next_object(self) -> bool:
        for obj in self.objects:
            try:
                if obj.data is not None:
                    self._stream = _MemoryStream(obj.data)
                    obj.size = len(obj.data)
                else:
                    self._stream = open(obj.open_path, "rb", buffering=0)
                    obj.size = os.fstat(self._stream.fileno()).st_size
            except OSError as exc:
                self.report(obj.path, f"{exc.strerror or exc}, skipped")
                continue
            self._current, self._offset, self._tail_len = obj, 0, 0
            return True
        return False

    def _read(self, buf: np.ndarray, lo: int, hi: int) -> tuple[int, bool]:
        """Read into buf[lo:hi]; (bytes read, whether the object ended)."""
        view = memoryview(buf)[lo:hi]
        total = 0
        while total < len(view):
            try:
                got = self._stream.readinto(view[total:])
            except OSError as exc:
                self._current.error = f"read failed at byte {self._offset + total}: {exc.strerror or exc}"
                return total, True
            if not got:
                return total, True
            total += got
        # Full: the object ends here only if nothing follows.
        if self._offset + total >= self._current.size:
            extra = self._stream.read(1)
            if not extra:
                return total, True
            self._stream.seek(-1, os.SEEK_CUR)
        return total, False

    def _close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        self._current = None
        self._tail_len = 0


class _MemoryStream:
    """readinto()/read()/seek() over an in-memory object without copying it first (io.BytesIO
    copies its whole input); numpy's copy releases the GIL, so filling overlaps filtering."""

    def __init__(self, data):
        self.data = np.frombuffer(data, np.uint8)
        self.pos = 0

    def readinto(self, view) -> int:
        out = np.frombuffer(view, np.uint8)
        n = min(out.size, self.data.size - self.pos)
        out[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n

    def read(self, n: int) -> bytes:
        chunk = self.data[self.pos : self.pos + n].tobytes()
        self.pos += len(chunk)
        return chunk

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset
        return self.pos

    def close(self) -> None:
        pass
