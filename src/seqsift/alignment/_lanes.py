"""The Numba kernels of the score-only database search (LANES database sequences side by side in
signed 8- or 16-bit lanes, local alignment): lanes.py describes the method, holds the constants, builds
the profiles and calls these kernels precompiled.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.alignment._lane_column import lane_column_pair
from seqsift.alignment.lanes import LANES
from seqsift.intrinsics import byte_lookup16


@njit(nogil=True, cache=True, boundscheck=False)
def score_batch(q, profile, chunk_columns, open_extend, extend, H, D, above, best, chunk):
    """Local scores of query q against one batch, in the width of H's dtype (int8 or int16):
    profile[j, a, lane] is the score of residue a against the lane's j-th residue (PAD past its
    end, and an even number of columns); best[lane] receives each lane's best score. H and D
    (chunks, strip + 1, chunk lanes) hold column j - 1's H and the horizontal gap entering
    column j, each chunk's rows one after another, so a pass down a chunk's rows reads memory in
    order (rows of all LANES, chunk lanes read from each, ran ~30% slower: 2026-12-02, 256
    sequences of 400 against 400-2,000 residues, 10-11 -> 14-15 GCUPS). The query is processed
    in strips of H.shape[1] - 1 rows so the strip's rows stay in cache whatever the query length;
    above (columns + 2, 2, LANES) carries each column's H and the
    vertical gap entering the next row from one strip to the next. Each strip runs two columns
    at a time, chunk lanes at a time (lane_column_pair), each chunk only as far as
    chunk_columns[chunk number], its longest sequence: a short chunk beside a long one costs
    nothing past its end, and an empty one nothing at all. open_extend and extend come in the
    lane type, which sets the lane width; gap values floor at 0, so every state starts at 0."""
    m = q.size
    strip = H.shape[1] - 1
    zero = extend - extend
    size = H.itemsize
    step = profile.strides[0]
    corner = np.empty(LANES, H.dtype)
    top = np.zeros(LANES, H.dtype)
    columns = chunk_columns.max()
    above[: columns + 2] = zero
    for r0 in range(0, m, strip):
        rows = min(strip, m - r0)
        H[:, : rows + 1] = zero  # column 0
        D[:, : rows + 1] = zero
        corner[:] = zero  # H of the row above the strip in column 0
        for j in range(1, columns + 1, 2):
            for c in range(0, LANES, chunk):
                if j > chunk_columns[c // chunk]:
                    continue
                lane = c * size
                lane_column_pair(H[c // chunk, 1:].ctypes.data, D[c // chunk, 1:].ctypes.data, profile[j - 1].ctypes.data + lane, step,
                                 q[r0:].ctypes.data, rows, above[j].ctypes.data + lane, corner.ctypes.data + lane,
                                 top.ctypes.data + lane, LANES, open_extend, extend)
    best[:] = top


@njit(nogil=True, cache=True, boundscheck=False)
def fill_profile(profile, scores, codes, used):
    """profile[c, a, lane] = scores[a, codes[c, lane]] for the used lanes (a multiple of 16):
    one pass writing the profile in order (numpy's gather, transpose and padding mask took 4x as
    long at 8 bits: 20,000 proteins, 0.45 -> 0.11 s, 2026-12-01; what a whole 'seqsift align' of
    a few queries spends). 8-bit profiles of up to 31 letters (and PAD) take 16 lanes a lookup
    (byte_lookup16: 20,000 proteins 0.20 -> 0.03 s, 2026-12-02); others a load a lane."""
    columns, letters, _ = profile.shape
    if profile.itemsize == 1 and scores.shape[1] <= 32:
        tables = np.zeros((letters, 32), profile.dtype)  # each letter's scores, padded to the lookup's 32
        tables[:, : scores.shape[1]] = scores
        for c in range(columns):
            at = codes[c].ctypes.data
            for a in range(letters):
                row, table = profile[c, a].ctypes.data, tables[a].ctypes.data
                for lane in range(0, used, 16):
                    byte_lookup16(table, at + lane, row + lane)
        return
    for c in range(columns):
        for a in range(letters):
            row = scores[a]
            for lane in range(used):
                profile[c, a, lane] = row[codes[c, lane]]
