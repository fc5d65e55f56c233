"""The key + tag filter on the GPU (numba-cuda): one thread per key position, the key + tag table
resident on the device, candidates compacted through an atomic counter.

Each buffer goes up on its own stream from pinned host memory; the candidate count comes back
first (4 bytes), so a caller past its block threshold never reads the candidates at all.
"""

from __future__ import annotations


import numpy as np
from numba import cuda, uint32

from seqsift.backend import GpuConfig
from seqsift.scan.kernels import PAD
from seqsift.scan.table import KeyTagTable


@cuda.jit
def _table_kernel(data, n, starts, tags, masks, out_pos, out_entry, counter):
    i = cuda.grid(1) + PAD
    step = cuda.gridsize(1)
    end = PAD + n - 1
    cap = out_pos.size
    while i < end:
        key = np.int64(data[i]) | (np.int64(data[i + 1]) << 8)
        tag = uint32(data[i - 4]) | (uint32(data[i - 3]) << 8) | (uint32(data[i - 2]) << 16) | (uint32(data[i - 1]) << 24)
        for e in range(starts[key], starts[key + 1]):
            if (tag & masks[e]) == tags[e]:
                k = cuda.atomic.add(counter, 0, 1)
                if k < cap:
                    out_pos[k] = i - 4
                    out_entry[k] = e
        i += step


class GpuFilter:
    def __init__(self, table: KeyTagTable, config: GpuConfig | None = None):
        self.config = config or GpuConfig()
        self.starts = cuda.to_device(table.starts)
        self.tags = cuda.to_device(table.tags)
        self.masks = cuda.to_device(table.masks)
        self.capacity = self.config.capacity
        self._out = None
        self._data = None
        self.stream = cuda.stream()

    @staticmethod
    def host_buffer(size: int) -> np.ndarray:
        """A pinned host buffer, so the upload is a true asynchronous copy."""
        return cuda.pinned_array(size, np.uint8)

    def count(self, buf: np.ndarray, n: int) -> int:
        """Upload buf's n data bytes and run the filter; returns the candidate count (the
        candidates stay on the device until candidates() is called)."""
        size = PAD + n + PAD
        if self._data is None or self._data.size < size:
            self._data = cuda.device_array(max(size, buf.size), np.uint8)
        if self._out is None or self._out[0].size < self.capacity:
            self._out = (cuda.device_array(self.capacity, np.int64), cuda.device_array(self.capacity, np.int64))
        self._counter = cuda.to_device(np.zeros(1, np.int64), stream=self.stream)
        self._data[:size].copy_to_device(buf[:size], stream=self.stream)
        self._n = n
        self._launch()
        count = int(self._counter.copy_to_host(stream=self.stream)[0])
        self.stream.synchronize()
        if count > self.capacity:  # rare: grow and rerun so nothing is lost
            self.capacity = 1 << int(np.ceil(np.log2(count)))
            self._out = (cuda.device_array(self.capacity, np.int64), cuda.device_array(self.capacity, np.int64))
            self._counter = cuda.to_device(np.zeros(1, np.int64), stream=self.stream)
            self._launch()
            self.stream.synchronize()
        self._count = count
        return count

    def _launch(self) -> None:
        c = self.config
        blocks = max(1, min(c.blocks, (self._n + c.threads_per_block - 1) // c.threads_per_block))
        _table_kernel[blocks, c.threads_per_block, self.stream](
            self._data, self._n, self.starts, self.tags, self.masks, self._out[0], self._out[1], self._counter)

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """The last count()'s candidates (tag position, entry), in position order."""
        k = self._count
        pos = self._out[0][:k].copy_to_host(stream=self.stream)
        entry = self._out[1][:k].copy_to_host(stream=self.stream)
        self.stream.synchronize()
        order = np.lexsort((entry, pos))
        return pos[order], entry[order]
