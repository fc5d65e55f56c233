"""Files (and in-memory objects) packed back to back into fixed-size buffers, so a tree of
thousands of small files costs one kernel call per buffer instead of one per file.

Every buffer carries a descriptor per object part (a *segment*, the object descriptors of GPU
Gems 3, ch. 35, section 2): where it lies in the buffer and at which file offset it
starts. A file too large for the room left continues in the next buffer, which starts with its
last `carry` bytes again (the longest match minus one), so a match straddling the cut is still
whole in one buffer, and one that starts in those bytes ends past the cut, so it was not whole in
the buffer before. Buffers may be padded by `pad` bytes either side (zeros after the data) for
kernels that read a little past their range. Memory is the buffers, whatever the corpus.

`seqsift scan` packs everything this way; `seqsift find` reads runs of small regular files with
io.gather's compiled loop instead, and packs here only a file it reads whole on its own.
"""

from __future__ import annotations

import mmap
import os
import stat

from seqsift.errors import InputError
from seqsift.io.openers import STDIN, display_name, open_regular_fd, read_fd

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from typing import Callable, Iterator
    import numpy as np


# Plain classes, not dataclasses: the dataclasses module imports inspect, ~10 ms of every command's
# start (docs/benchmarks.md, "Start-up").
class PackedObject:
    """One object to pack: index, path (as reported), open_path (what is opened: a spool file for
    standard input), data (an in-memory object instead of a file), size, error (set when reading
    failed part way), fd (the file already opened by open_regular_fd, size then its fstat's: the
    Packer's to close)."""

    __slots__ = ("index", "path", "open_path", "data", "size", "error", "fd")

    def __init__(self, index: int, path: str, open_path: str | None, data: bytes | memoryview | None = None,
                 size: int = 0, error: str | None = None, fd: int | None = None):
        self.index, self.path, self.open_path, self.data = index, path, open_path, data
        self.size, self.error, self.fd = size, error, fd


class Segment:
    """A part of an object in a buffer: lo, hi (padded-buffer indices of its bytes), file_offset
    (file offset of buffer[lo]), new_from (file offset of its first byte not already in the
    previous buffer), last (the object ends in this buffer)."""

    __slots__ = ("obj", "lo", "hi", "file_offset", "new_from", "last")

    def __init__(self, obj: PackedObject, lo: int, hi: int, file_offset: int, new_from: int, last: bool):
        self.obj, self.lo, self.hi, self.file_offset, self.new_from, self.last = obj, lo, hi, file_offset, new_from, last


class Filled:
    """A filled buffer (pad + size + pad bytes: any writable buffer), its n data bytes, its segments."""

    __slots__ = ("buffer", "n", "segments")

    def __init__(self, buffer: np.ndarray | mmap.mmap, n: int, segments: list[Segment]):
        self.buffer, self.n, self.segments = buffer, n, segments

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        return (np.asarray([s.lo for s in self.segments], np.int64), np.asarray([s.hi for s in self.segments], np.int64))


class Packer:
    """Packs objects into buffers in order; fill() is called from one thread only. An object that
    cannot be opened goes to report(path, why) and is skipped; without a report it is an
    InputError naming it."""

    def __init__(self, objects: Iterator[PackedObject], size: int, carry: int,
                 report: Callable[[str, str], None] | None = None, pad: int = 0):
        self.objects = objects
        self.pad = pad
        self.size = size
        self.carry = carry
        self.report = report
        self._current: PackedObject | None = None
        self._stream = None
        self._offset = 0  # file offset of the next byte to read
        self._tail = bytearray(max(carry, 1))
        self._tail_len = 0
        self.done = False

    def fill(self, buf) -> Filled | None:
        """Fill buf (pad + size + pad bytes: a numpy uint8 array, or any writable buffer such as
        an anonymous map); None once every object has been read."""
        pad = self.pad
        if self.done:
            return None
        view = memoryview(buf)
        segments: list[Segment] = []
        used = 0
        while used < self.size:
            if self._current is None and not self._next_object():
                self.done = True
                break
            obj = self._current
            lo = pad + used
            start_offset = self._offset - self._tail_len
            if self._tail_len:  # continuation: the last `carry` bytes of the previous buffer again
                view[lo : lo + self._tail_len] = self._tail[: self._tail_len]
                used += self._tail_len
            got, eof = self._read(view[pad + used : pad + self.size])
            used += got
            self._offset += got
            segment = Segment(obj, lo, pad + used, start_offset, self._offset - got, eof)
            segments.append(segment)
            if eof:
                self._close()
            else:
                keep = min(self.carry, used - (lo - pad))
                self._tail[:keep] = view[pad + used - keep : pad + used]
                self._tail_len = keep
                break
        if not segments:
            return None
        view[pad + used : pad + used + pad] = bytes(pad)
        return Filled(buf, used, segments)

    def _next_object(self) -> bool:
        for obj in self.objects:
            try:
                if obj.data is not None:
                    self._stream = _MemoryStream(obj.data)
                    obj.size = len(obj.data)
                elif obj.fd is not None:
                    self._stream, obj.fd = _FileStream(obj.fd), None
                else:
                    fd, size = open_regular_fd(obj.open_path)  # a fifo swapped in after the walk: skipped
                    self._stream = _FileStream(fd)
                    obj.size = obj.size or size  # a caller may know it
            except (OSError, InputError) as exc:
                why = exc.why if isinstance(exc, InputError) else exc.strerror or str(exc)
                if self.report is None:
                    raise InputError(display_name(obj.path), why) from None
                self.report(obj.path, f"{why}, skipped")
                continue
            self._current, self._offset, self._tail_len = obj, 0, 0
            return True
        return False

    def _read(self, view: memoryview) -> tuple[int, bool]:
        """Read into view; (bytes read, whether the object ended)."""
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
            if total < len(view) and 0 < self._current.size == self._offset + total:
                return total, True  # a short read ending at fstat's size: the end (no second read for the 0)
        # Full: the object ends here only if nothing follows.
        if self._offset + total >= self._current.size:
            try:  # a file that refuses this (procfs's pagemap: EINVAL) fails alone
                extra = self._stream.read(1)
                if extra:
                    self._stream.seek(-1, os.SEEK_CUR)
            except OSError as exc:
                self._current.error = f"read failed at byte {self._offset + total}: {exc.strerror or exc}"
                return total, True
            if not extra:
                return total, True
        return total, False

    def close(self) -> None:
        """Close the object being read, if any (a caller that stops before the end)."""
        self._close()

    def _close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        self._current = None
        self._tail_len = 0


class _FileStream:
    """readinto()/read()/seek()/close() on a descriptor of open_regular_fd, read straight into the
    packing buffer (os.readv): no file object, no second fstat, no switch to blocking mode."""

    __slots__ = ("fd",)

    def __init__(self, fd: int):
        self.fd = fd

    def readinto(self, view) -> int:
        return read_fd(self.fd, view)

    def read(self, n: int) -> bytes:
        return os.read(self.fd, n)

    def seek(self, offset: int, whence: int = 0) -> int:
        return os.lseek(self.fd, offset, whence)

    def close(self) -> None:
        os.close(self.fd)


class _MemoryStream:
    """readinto()/read()/seek() over an in-memory object without copying it first (io.BytesIO
    copies its whole input); numpy's copy releases the GIL, so filling overlaps filtering."""

    def __init__(self, data):
        import numpy as np

        self.data = np.frombuffer(data, np.uint8)
        self.pos = 0

    def readinto(self, view) -> int:
        import numpy as np

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


def regular_size(path: str) -> int | None:
    """The size of a regular file, or None for stdin, a pipe or a device (which stream instead)."""
    if str(path) == STDIN:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # reported when it is opened
    return st.st_size if stat.S_ISREG(st.st_mode) else None
