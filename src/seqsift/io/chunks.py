"""Byte chunks with overlap: memory bounded by the chunk size whatever the input size.

Each chunk starts with the last `overlap` bytes of the one before (P-1 for a
pattern of length P), so a match that straddles a boundary lies whole in the
later chunk, and a match lying whole in the earlier one does not repeat.
"""

from __future__ import annotations

import queue
import threading
from typing import BinaryIO, Iterator

import numpy as np

from seqsift.errors import InputError


class ChunkReader:
    """Fills caller-supplied buffers (plain or pinned) with consecutive overlapping chunks."""

    def __init__(self, stream: BinaryIO, chunk_size: int, overlap: int, path: str = "(stream)", offset: int = 0):
        """offset: where in the file the stream stands (a file read on from part way)."""
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.stream = stream
        self.chunk_size = chunk_size
        self.overlap = overlap
        self.path = path
        self.buffer_size = chunk_size + overlap
        self._carry = np.empty(overlap, np.uint8)
        self._carried = 0  # valid bytes in _carry
        self._offset = offset  # stream offset of the next byte to be read
        self._eof = False

    def fill(self, buf: np.ndarray) -> tuple[int, int] | None:
        """Fill buf; return (stream offset of buf[0], valid length), or None once the stream is done."""
        if self._eof:
            return None
        k = self._carried
        buf[:k] = self._carry[:k]
        got = self._read_into(memoryview(buf)[k : k + self.chunk_size])
        if got == 0:
            self._eof = True
            return None
        n = k + got
        start = self._offset - k
        self._offset += got
        keep = min(self.overlap, n)
        self._carry[:keep] = buf[n - keep : n]
        self._carried = keep
        if got < self.chunk_size:
            self._eof = True
        return start, n

    def _read_into(self, view: memoryview) -> int:
        total = 0
        while total < len(view):
            try:
                got = self.stream.readinto(view[total:])
            except OSError as exc:
                raise InputError(self.path, f"read failed: {exc.strerror or exc}") from None
            if not got:
                break
            total += got
        return total


def iter_chunks(
    reader: ChunkReader, prefetch: bool = True, buffers: list[np.ndarray] | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield (offset, chunk view) from rotating buffers (two new ones unless given, each of
    reader.buffer_size bytes); a reader thread fills the next while the caller works on the
    current one. A view is valid until the next one is requested."""
    if buffers is None:
        buffers = [np.empty(reader.buffer_size, np.uint8) for _ in range(2)]
    if not prefetch or len(buffers) < 2:
        while (got := reader.fill(buffers[0])) is not None:
            yield got[0], buffers[0][: got[1]]
        return
    free = queue.Queue()
    for i in range(len(buffers)):
        free.put(i)
    filled: queue.Queue = queue.Queue()
    stop = threading.Event()

    def produce() -> None:
        try:
            while not stop.is_set():
                i = free.get()
                if i is None:
                    break
                got = reader.fill(buffers[i])
                filled.put((i, got))
                if got is None:
                    break
        except BaseException as exc:  # handed to the consumer, raised there
            filled.put((None, exc))

    thread = threading.Thread(target=produce, name="seqsift-reader", daemon=True)
    thread.start()
    try:
        while True:
            i, got = filled.get()
            if i is None:
                raise got
            if got is None:
                break
            yield got[0], buffers[i][: got[1]]
            free.put(i)
    finally:
        stop.set()
        free.put(None)


class ArrayStream:
    """readinto() over an in-memory array, so memory sources stream through ChunkReader too."""

    def __init__(self, data: np.ndarray):
        self.data = memoryview(data).cast("B")
        self.pos = 0

    def readinto(self, view) -> int:
        n = min(len(view), len(self.data) - self.pos)
        view[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n
