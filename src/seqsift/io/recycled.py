"""Large byte buffers handed out again once nothing uses them.

A stream of read batches allocates several MiB a batch; fresh memory costs page faults and the
kernel's zeroing of every page, which took about a seventh of a whole `seqsift search`
(docs/benchmarks.md). Each buffer is an anonymous memory map (huge pages advised, as numpy does
for its own large arrays) handed out as a numpy array over it; every view of that array (a
batch's fields, a kernel's argument) keeps it alive, so once the array is gone, whoever held the
batch and on whichever thread, the map is free again. A weak reference tells, not reference
counts, whose details vary between Python versions.
"""

from __future__ import annotations

import mmap
import weakref

import numpy as np

_KEPT = 16  # buffers kept for reuse; a caller holding more batches than this gets fresh memory


class Buffers:
    """uint8 arrays over reused buffers of `size` bytes (larger requests get fresh memory). One
    per stream: not thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._kept: list[tuple[mmap.mmap, weakref.ref]] = []

    def get(self, size: int) -> np.ndarray:
        if size > self.size:
            return np.empty(size, np.uint8)
        for i, (memory, lent) in enumerate(self._kept):
            if lent() is None:
                return self._lend(i, memory, size)
        if len(self._kept) == _KEPT:
            return np.empty(size, np.uint8)
        memory = mmap.mmap(-1, self.size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # shared maps get no huge pages
        if hasattr(mmap, "MADV_HUGEPAGE"):
            memory.madvise(mmap.MADV_HUGEPAGE)
        self._kept.append((memory, None))
        return self._lend(len(self._kept) - 1, memory, size)

    def _lend(self, i: int, memory: mmap.mmap, size: int) -> np.ndarray:
        array = np.frombuffer(memory, np.uint8, count=size)
        self._kept[i] = (memory, weakref.ref(array))
        return array
