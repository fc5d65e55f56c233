"""CPU kernels: backward search and locate over the 64-byte rank blocks (see build.py)."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from seqsift.intrinsics import popcount64

_LOW32 = uint64(0xFFFFFFFF)


@njit(inline="always", nogil=True, boundscheck=False)
def _below(bit):
    """Mask of the bits below `bit` (0..63)."""
    return (uint64(1) << uint64(bit)) - uint64(1)


@njit(inline="always", nogil=True, boundscheck=False)
def rank(blocks, b, i):
    """Occurrences of base b (0..3) in BWT rows [0, i)."""
    blk = i >> 6
    count = (blocks[blk, b >> 1] >> uint64(32 * (b & 1))) & _LOW32
    return np.int64(count + popcount64(blocks[blk, 2 + b] & _below(i & 63)))


@njit(inline="always", nogil=True, boundscheck=False)
def lf_steps_to_mark(blocks, C, r):
    """(marked row reached from row r by LF steps, number of steps)."""
    steps = 0
    while True:
        blk = r >> 6
        bit = uint64(r & 63)
        if (blocks[blk, 6] >> bit) & uint64(1):
            return r, steps
        b = 0
        while not (blocks[blk, 2 + b] >> bit) & uint64(1):
            b += 1
        r = C[b] + rank(blocks, b, r)
        steps += 1


@njit(nogil=True, boundscheck=False, cache=True)
def intervals(blocks, C, n, seq, bounds, lo_out, hi_out):
    """Backward search of every read (codes 0..3; any other code matches nothing): its BWT
    interval [lo, hi), empty when the read does not occur. Stops as soon as it empties."""
    for r in range(bounds.size - 1):
        lo = 0
        hi = n if bounds[r + 1] > bounds[r] else 0
        for j in range(bounds[r + 1] - 1, bounds[r] - 1, -1):
            b = seq[j]
            if b > 3:
                hi = lo
                break
            lo = C[b] + rank(blocks, b, lo)
            hi = C[b] + rank(blocks, b, hi)
            if lo >= hi:
                break
        lo_out[r] = lo
        hi_out[r] = max(hi, lo)


@njit(nogil=True, boundscheck=False, cache=True)
def locate_rows(blocks, C, samples, lo, hi, out):
    """Text positions of rows [lo, hi) into out[: hi - lo]."""
    for k in range(hi - lo):
        row, steps = lf_steps_to_mark(blocks, C, lo + k)
        blk = row >> 6
        idx = blocks[blk, 7] + popcount64(blocks[blk, 6] & _below(row & 63))
        out[k] = samples[idx] + steps


@njit(nogil=True, boundscheck=False, cache=True)
def max_steps_to_mark(blocks, C, n):
    """The longest LF walk to a mark over every row (the locate bound, for tests and stats)."""
    worst = 0
    for r in range(n):
        worst = max(worst, lf_steps_to_mark(blocks, C, r)[1])
    return worst
