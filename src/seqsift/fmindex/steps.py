"""Rank and the backward-search step over the 64-byte rank blocks (build.py), written once and
compiled for the CPU (_cpu.py: njit) and the GPU (_gpu.py: cuda device functions), each over its
own target's popcount, as find/kmp.py does for the KMP step."""

from numba import int64, uint64


def compile_steps(jit, popcount):
    """(rank, backward_step) compiled by the decorator `jit`."""

    @jit
    def rank(blocks, b, i):
        """Occurrences of base b (0..3) in BWT rows [0, i): the block's count plus a popcount."""
        blk = i >> 6
        count = (blocks[blk, b >> 1] >> uint64(32 * (b & 1))) & uint64(0xFFFFFFFF)
        return int64(count) + int64(popcount(blocks[blk, 2 + b] & ((uint64(1) << uint64(i & 63)) - uint64(1))))

    @jit
    def backward_step(blocks, C, b, lo, hi, one_rank):
        """The interval [lo, hi) of rows extended by base b in front. With one_rank (the seed's hi-lo=1
        shortcut, section 4.2.2) a single row costs one bit test and one rank instead of two ranks:
        it survives only if its BWT symbol is b."""
        if one_rank and hi - lo == 1:
            if (blocks[lo >> 6, 2 + b] >> uint64(lo & 63)) & uint64(1):
                lo = C[b] + rank(blocks, b, lo)
                return lo, lo + 1
            return lo, lo
        return C[b] + rank(blocks, b, lo), C[b] + rank(blocks, b, hi)

    return rank, backward_step
