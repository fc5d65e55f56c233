"""GPU database search (numba-cuda): one thread aligns the query against two database sequences
at once, their 16-bit scores packed two to a 32-bit word (packed.py: DPX's s16x2 instructions);
sequences are sorted by length so the two in a word, and the threads of a warp, do similar work.
The query profile sits in shared memory when it fits (48 KiB), else it is read from global memory.

On sm_90 (Hopper) the packed operations are the DPX instructions, linked from dpx.cu through
numba-cuda's foreign-function interface: __vimax3_s16x2_relu for H and __viaddmax_s16x2 without
ReLU for the gap states. Elsewhere, and under the simulator, the same kernel runs the exact
emulation in packed.py. Sequences whose score could pass the 16-bit guard are scored on the CPU.
"""

from __future__ import annotations

import threading
from importlib import resources

import numpy as np
from numba import cuda, int16

from seqsift.alignment import packed
from seqsift.alignment._packed_cpu import pair_order, query_profile

THREADS_PER_BLOCK = 128  # tests shrink it to run under the simulator
SHARED_BYTES = 48 << 10
DPX_SOURCE = resources.files("seqsift.alignment") / "dpx.cu"


def _kernel(ops, link):
    align_pair = cuda.jit(device=True)(packed.make_pair_aligner(*ops))

    def kernel(profile, m, letters, db, offsets, lengths, pairs, pad, neg_oe, neg_e, H, D, out, use_shared):
        shared = cuda.shared.array(0, int16)
        if use_shared:  # uniform across the block, so the barrier is safe
            for k in range(cuda.threadIdx.x, letters * m, cuda.blockDim.x):
                shared[k] = profile[k]
            cuda.syncthreads()
        t = cuda.grid(1)
        if t >= pairs.shape[0]:
            return
        a = pairs[t, 0]
        b = pairs[t, 1]
        seq_a = db[offsets[a] : offsets[a] + lengths[a]]
        len_b = lengths[b] if b >= 0 else 0
        seq_b = db[offsets[b] : offsets[b] + len_b] if b >= 0 else seq_a
        if use_shared:
            out[t] = align_pair(shared, m, seq_a, lengths[a], seq_b, len_b, pad, neg_oe, neg_e, H[:, t], D[:, t])
        else:
            out[t] = align_pair(profile, m, seq_a, lengths[a], seq_b, len_b, pad, neg_oe, neg_e, H[:, t], D[:, t])

    return cuda.jit(link=link)(kernel) if link else cuda.jit(kernel)


def _dpx_ops():
    sig3, sig2 = "uint32(uint32, uint32, uint32)", "uint32(uint32, uint32)"
    return (cuda.declare_device("seqsift_vimax3_s16x2_relu", sig3), cuda.declare_device("seqsift_viaddmax_s16x2", sig3),
            cuda.declare_device("seqsift_vadd_s16x2", sig2))


def build_kernel(dpx: bool):
    """The database kernel: DPX instructions linked from dpx.cu (sm_90 and later), else packed.py's
    exact emulation of them."""
    if not dpx:
        return _kernel((packed.vimax3_s16x2_relu, packed.viaddmax_s16x2, packed.vadd_s16x2), None)
    with resources.as_file(DPX_SOURCE) as source:
        return _kernel(_dpx_ops(), [str(source)])


class GpuAligner:
    """Scores of queries against one database on the GPU; the database stays on the device."""

    def __init__(self, codes: list[np.ndarray], matrix: np.ndarray, gap_open: int, gap_extend: int,
                 dpx: bool | None = None, threads_per_block: int = THREADS_PER_BLOCK):
        self.codes = codes
        self.matrix = np.ascontiguousarray(matrix)
        self.gap_open, self.gap_extend = gap_open, gap_extend
        self.threads_per_block = threads_per_block
        self.lengths = np.array([c.size for c in codes], np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.int64)
        flat = np.concatenate(codes) if codes else np.zeros(1, np.uint8)
        self._db = cuda.to_device(flat if flat.size else np.zeros(1, np.uint8))
        self._offsets, self._lengths = cuda.to_device(self.offsets), cuda.to_device(self.lengths)
        self.dpx = self._has_dpx() if dpx is None else dpx
        self._kernel = build_kernel(self.dpx)
        self._lock = threading.Lock()

    @staticmethod
    def _has_dpx() -> bool:
        from seqsift.backend import _simulated

        return not _simulated() and cuda.get_current_device().compute_capability >= (9, 0)

    def scores(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(local scores against every database sequence, indices the caller must score in 32 bits)."""
        out = np.zeros(len(self.codes), np.int64)
        pairs, too_long = pair_order(self.lengths, query.size, int(self.matrix.max(initial=0)))
        if not pairs.size or query.size == 0:
            return out, too_long
        profile = query_profile(query, self.matrix).ravel()
        letters, m = self.matrix.shape[0] + 1, query.size
        shared = profile.nbytes <= SHARED_BYTES
        neg_oe = packed.pack(-(self.gap_open + self.gap_extend), -(self.gap_open + self.gap_extend))
        neg_e = packed.pack(-self.gap_extend, -self.gap_extend)
        n = pairs.shape[0]
        with self._lock:
            H = cuda.device_array((m + 1, n), np.uint32)
            D = cuda.device_array((m + 1, n), np.uint32)
            best = cuda.device_array(n, np.uint32)
            grid = (-(-n // self.threads_per_block), self.threads_per_block, 0, profile.nbytes if shared else 0)
            self._kernel[grid](cuda.to_device(profile), m, letters, self._db, self._offsets, self._lengths,
                               cuda.to_device(np.ascontiguousarray(pairs)), letters - 1, neg_oe, neg_e, H, D, best, shared)
            words = best.copy_to_host().astype(np.int64)
        low = ((words & 0xFFFF) ^ 0x8000) - 0x8000
        high = (((words >> 16) & 0xFFFF) ^ 0x8000) - 0x8000
        out[pairs[:, 0]] = low
        second = pairs[:, 1] >= 0
        out[pairs[second, 1]] = high[second]
        return out, too_long
