"""The kernels of stats.py (it calls them precompiled, see precompiled.py): the locate walks'
histogram and the trace of each read's search."""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.fmindex._cpu import backward_step, locate_steps_histogram


@njit(cache=True)
def locate_steps(blocks, C, n, limit, hist):
    """_cpu.locate_steps_histogram into hist (66 counts)."""
    hist[:] = locate_steps_histogram(blocks, C, n, limit)


@njit(nogil=True, cache=True)
def trace(blocks, C, n, table, k, codes, bounds, first_single, emptied, steps):
    """Per query (2 per read): the search step (0 = the table lookup) at which the interval first
    held a single row and at which it emptied (-1 when never), and the steps taken."""
    for q in range(2 * (bounds.size - 1)):
        start, length = bounds[q >> 1], bounds[(q >> 1) + 1] - bounds[q >> 1]
        first_single[q], emptied[q], steps[q] = -1, -1, 0
        bad = length == 0
        for i in range(length):
            bad = bad or codes[start + i] > 3
        if bad:
            continue

        def base(i):
            c = np.int64(codes[start + i])
            return c if q & 1 == 0 else 3 - np.int64(codes[start + length - 1 - i])

        lo, hi, j = 0, n, length
        if length >= k:
            code = 0
            for i in range(length - k, length):
                code = (code << 2) | base(i)
            lo, hi, j = np.int64(table[code, 0]), np.int64(table[code, 1]), length - k
        step = 0
        while True:
            if hi - lo == 1 and first_single[q] < 0:
                first_single[q] = step
            if hi <= lo:
                emptied[q] = step
                break
            if j == 0:
                break
            b = base(j - 1)
            lo, hi = backward_step(blocks, C, b, lo, hi, False)
            j -= 1
            step += 1
        steps[q] = step
