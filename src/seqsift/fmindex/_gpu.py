"""GPU backend (numba-cuda): batched backward search, one thread per read and strand, and
locate, one thread per BWT row. The index arrays are copied to the device once and stay
there; reads go over in batches. Results are the CPU's exactly: the same intervals, and hits
sorted by the same host code (query.Searcher.hits).

A GPU hides memory latency by running many threads, so the CPU's lockstep interleaving is not
needed here; the hi-lo=1 shortcut is the one-rank form (no packed-reference walk).
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda, int64, uint64

from seqsift.fmindex.layout import IndexArrays
from seqsift.fmindex.query import SearchOptions, Searcher
from seqsift.fmindex.steps import compile_steps

THREADS_PER_BLOCK = 128  # tests shrink it to run under the simulator


@cuda.jit(device=True, inline=True)
def _popc(x):
    return cuda.popc(x)  # looked up at each call: the simulator swaps in its own `cuda` while a kernel runs


_, _backward_step, _lf = compile_steps(cuda.jit(device=True, inline=True), _popc)


@cuda.jit
def _search_kernel(blocks, C, n, table, k, codes, bounds, nq, lo_out, hi_out):
    q = cuda.grid(1)
    if q >= nq:
        return
    r = q >> 1
    start = bounds[r]
    length = bounds[r + 1] - start
    lo = int64(0)
    hi = int64(0)
    bad = length == 0
    for i in range(length):
        if codes[start + i] > 3:
            bad = True
    if not bad:
        j = length
        hi = n
        if length >= k:
            code = int64(0)
            for i in range(length - k, length):
                c = int64(codes[start + i]) if q & 1 == 0 else 3 - int64(codes[start + length - 1 - i])
                code = (code << 2) | c
            lo = int64(table[code, 0])
            hi = int64(table[code, 1])
            j = length - k
        while j > 0 and lo < hi:
            i = j - 1
            b = int64(codes[start + i]) if q & 1 == 0 else 3 - int64(codes[start + length - 1 - i])
            lo, hi = _backward_step(blocks, C, b, lo, hi, True)
            j -= 1
    lo_out[q] = lo
    hi_out[q] = max(lo, hi)


@cuda.jit
def _locate_kernel(blocks, C, samples, sa_sample, rows, out, status):
    t = cuda.grid(1)
    if t >= rows.size:
        return
    r = rows[t]
    steps = 0
    while True:
        prev = _lf(blocks, C, r)
        if prev < 0:  # r is marked: its text position is sampled
            break
        if steps >= sa_sample:
            status[0] = 1
            return
        r = prev
        steps += 1
    blk = r >> 6
    below = blocks[blk, 6] & ((uint64(1) << uint64(r & 63)) - uint64(1))
    out[t] = int64(samples[int64(blocks[blk, 7]) + int64(cuda.popc(below))]) + steps


class GpuSearcher(Searcher):
    """Searcher whose interval and locate kernels run on the GPU; host bookkeeping is shared."""

    def __init__(self, arrays: IndexArrays, source: str, options: SearchOptions = SearchOptions(),
                 threads_per_block: int = THREADS_PER_BLOCK):
        super().__init__(arrays, source, SearchOptions(kmer_table=options.kmer_table, shortcut="rank", width=1))
        self.threads_per_block = threads_per_block
        self._lock = threading.Lock()  # one batch on the device at a time; host work overlaps
        self._d = {name: cuda.to_device(np.ascontiguousarray(x)) for name, x in (
            ("blocks", arrays.blocks), ("C", arrays.C), ("table", self.table), ("samples", arrays.samples))}

    def _grid(self, size: int) -> tuple[int, int]:
        return max(1, -(-size // self.threads_per_block)), self.threads_per_block

    def intervals(self, codes: np.ndarray, bounds: np.ndarray):
        nq = 2 * (bounds.size - 1)
        with self._lock:
            d = self._d
            d_lo, d_hi = cuda.device_array(max(nq, 1), np.int64), cuda.device_array(max(nq, 1), np.int64)
            if nq:
                _search_kernel[self._grid(nq)](d["blocks"], d["C"], self.a.n, d["table"], self.k,
                                               cuda.to_device(np.ascontiguousarray(codes) if codes.size else np.zeros(1, np.uint8)),
                                               cuda.to_device(bounds), nq, d_lo, d_hi)
            lo, hi = d_lo.copy_to_host()[:nq], d_hi.copy_to_host()[:nq]
        return lo, hi, np.zeros(nq, np.int64)

    def _locate(self, rows: np.ndarray) -> np.ndarray:
        if not rows.size:
            return np.empty(0, np.int64)
        with self._lock:
            d = self._d
            d_out = cuda.device_array(rows.size, np.int64)
            status = cuda.to_device(np.zeros(1, np.int32))
            _locate_kernel[self._grid(rows.size)](d["blocks"], d["C"], d["samples"], self.a.sa_sample,
                                                  cuda.to_device(rows), d_out, status)
            located, failed = d_out.copy_to_host(), int(status.copy_to_host()[0])
        self._check(-failed)
        return located
