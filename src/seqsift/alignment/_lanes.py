"""The Numba kernels of the score-only database search (LANES database sequences side by side in
8- or 16-bit lanes, local alignment): lanes.py describes the method, holds the constants, builds
the profiles and calls these kernels precompiled.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.alignment._lane_column import lane_column_pair
from seqsift.alignment.lanes import LANES


@njit(nogil=True, cache=True, boundscheck=False)
def score_batch(q, profile, chunk_columns, open_extend, extend, shift, H, D, above, best, floor, chunk):
    """Local scores of query q against one batch, in the width of H's dtype (8 or 16 bits):
    profile[j, a, lane] is the score of residue a against the lane's j-th residue (PAD past its
    end, and an even number of columns); best[lane] receives each lane's best score. The query
    is processed in strips of H.shape[0] - 1 rows so the strip's H and D rows stay in cache
    whatever the query length; above (columns + 2, 2, LANES) carries each column's H and
    vertical-gap values from one strip to the next. Each strip runs two columns at a time, chunk
    lanes at a time (lane_column_pair), each chunk only as far as chunk_columns[chunk number], its
    longest sequence: a short chunk beside a long one costs nothing past its end, and an empty one
    nothing at all. open_extend, extend, shift (the 8-bit profile's bias) and floor (the gap
    states' floor) come in the lane type, which sets the lane width."""
    m = q.size
    strip = H.shape[0] - 1
    zero = floor - floor
    size = H.itemsize
    step = profile.strides[0]
    corner = np.empty(LANES, H.dtype)
    top = np.zeros(LANES, H.dtype)
    columns = chunk_columns.max()
    above[: columns + 2, 0] = zero
    above[: columns + 2, 1] = floor
    for r0 in range(0, m, strip):
        rows = min(strip, m - r0)
        H[: rows + 1] = zero  # column 0
        D[: rows + 1] = floor
        corner[:] = zero  # H of the row above the strip in column 0
        for j in range(1, columns + 1, 2):
            for c in range(0, LANES, chunk):
                if j > chunk_columns[c // chunk]:
                    continue
                lane = c * size
                lane_column_pair(H[1:].ctypes.data + lane, D[1:].ctypes.data + lane, profile[j - 1].ctypes.data + lane, step,
                                 q[r0:].ctypes.data, rows, above[j].ctypes.data + lane, corner.ctypes.data + lane,
                                 top.ctypes.data + lane, LANES, open_extend, extend, shift)
    best[:] = top


@njit(nogil=True, cache=True, boundscheck=False)
def fill_profile(profile, scores, codes, used):
    """profile[c, a, lane] = scores[a, codes[c, lane]] for the used lanes: one pass writing the
    profile in order (numpy's gather, transpose and padding mask took 4x as long at 8 bits: 20,000
    proteins, 0.45 -> 0.11 s, 2026-12-01; what a whole 'seqsift align' of a few queries spends)."""
    columns, letters, _ = profile.shape
    for c in range(columns):
        for a in range(letters):
            row = scores[a]
            for lane in range(used):
                profile[c, a, lane] = row[codes[c, lane]]
