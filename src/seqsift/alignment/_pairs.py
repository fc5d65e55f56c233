"""The Numba kernels of the many-pairs alignment with traceback (pair k in 16-bit lane k, each
cell's direction byte kept per lane, each lane traced back alone): pairs.py describes the method,
lays the pairs out in lanes and calls these kernels precompiled.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.alignment._pair_row import dp_row
from seqsift.alignment.pairs import PAIR_LANES

_NEG = -32768


@njit(nogil=True, cache=True, boundscheck=False)
def fill(Q, T, rows, match, mismatch, open_extend, extend, H, D, dirs, best, best_i, best_j):
    """Q[i, lane], T[j, lane]: residue codes (T's N as pairs.TARGET_N); rows[lane]: the query lengths,
    rows past them are filled but never counted. dirs[i - 1, j, lane] gets the direction byte of
    cell (i, j); best/best_i/best_j the first best cell in row order, as the reference kernel."""
    m, n = Q.shape[0], T.shape[0]
    H[:] = 0
    D[:] = _NEG
    best[:] = 0
    best_i[:] = 0
    best_j[:] = 0
    row_best = np.zeros(PAIR_LANES, np.int16)
    row_j = np.zeros(PAIR_LANES, np.int16)
    for i in range(1, m + 1):
        dp_row(H.ctypes.data, D.ctypes.data, T.ctypes.data, dirs[i - 1].ctypes.data, Q[i - 1].ctypes.data,
               row_best.ctypes.data, row_j.ctypes.data, n, match, mismatch, open_extend, extend)
        for lane in range(PAIR_LANES):
            if i <= rows[lane] and row_best[lane] > best[lane]:
                best[lane] = row_best[lane]
                best_i[lane] = i
                best_j[lane] = row_j[lane]


@njit(nogil=True, cache=True, boundscheck=False)
def trace(dirs, best_i, best_j, pairs, ops, counts, starts):
    """Walk each of the first `pairs` lanes back from (best_i, best_j) through its direction
    bytes: ops[lane] gets its operations reversed (0 M, 1 I, 2 D), counts[lane] their number and
    starts[lane] the (i, j) where the alignment begins."""
    for lane in range(pairs):
        i, j = best_i[lane], best_j[lane]
        state = 0
        count = 0
        while i > 0 and j > 0:
            cell = dirs[i - 1, j, lane]
            if state == 0:
                src = cell & 3
                if src == 0:
                    break
                if src == 1:
                    ops[lane, count] = 0
                    count += 1
                    i -= 1
                    j -= 1
                else:
                    state = 1 if src == 2 else 2
            elif state == 1:
                ops[lane, count] = 1
                count += 1
                state = 0 if cell & 4 else 1
                i -= 1
            else:
                ops[lane, count] = 2
                count += 1
                state = 0 if cell & 8 else 2
                j -= 1
        counts[lane] = count
        starts[lane, 0], starts[lane, 1] = i, j
