"""Rank, the backward-search step and the LF step over the 64-byte rank blocks (build.py),
written once and compiled for the CPU (_cpu.py: njit) and the GPU (_gpu.py: cuda device
functions), each over its own target's popcount, as find/kmp.py does for the KMP step.

Numba's on-disk cache keys _cpu.py's kernels on _cpu.py alone: after this file changes, `make`
drops every cached kernel (the Makefile's .kernels step) so they compile again; outside make,
delete src/seqsift/fmindex/__pycache__/*.nbi."""

from numba import int64, uint64


def compile_steps(jit, popcount):
    """(rank, backward_step, lf) compiled by the decorator `jit`."""

    @jit
    def rank(blocks, b, i):
        """Occurrences of base b (0..3) in BWT rows [0, i): the block's count plus a popcount."""
        blk = i >> 6
        count = (blocks[blk, b >> 1] >> uint64(32 * (b & 1))) & uint64(0xFFFFFFFF)
        return int64(count) + int64(popcount(blocks[blk, 2 + b] & ((uint64(1) << uint64(i & 63)) - uint64(1))))

    @jit
    def backward_step(blocks, C, b, lo, hi, one_rank):
        """The interval [lo, hi) of rows extended by base b in front. With one_rank (the GEM paper's hi-lo=1
        shortcut, section 4.2.2) a single row costs one bit test and one rank instead of two ranks:
        it survives only if its BWT symbol is b."""
        if one_rank and hi - lo == 1:
            if (blocks[lo >> 6, 2 + b] >> uint64(lo & 63)) & uint64(1):
                lo = C[b] + rank(blocks, b, lo)
                return lo, lo + 1
            return lo, lo
        return C[b] + rank(blocks, b, lo), C[b] + rank(blocks, b, hi)

    @jit
    def lf(blocks, C, r):
        """The row before row r in the text (LF), or -1 when row r is marked (sampled)."""
        blk = r >> 6
        bit = uint64(r & 63)
        if (blocks[blk, 6] >> bit) & uint64(1):
            return int64(-1)
        # the row's base without branches: an unmarked row has exactly one of the four bits set
        b = int64((blocks[blk, 3] >> bit) & uint64(1)) + 2 * int64((blocks[blk, 4] >> bit) & uint64(1)) \
            + 3 * int64((blocks[blk, 5] >> bit) & uint64(1))
        return C[b] + rank(blocks, b, r)

    return rank, backward_step, lf
