"""The fast score-only CPU kernel for database search: LANES database sequences side by side in
8- or 16-bit lanes (inter-sequence vectorization, as SWIPE does), local alignment.

The database is sorted by length and cut into batches of LANES sequences; a batch's profile
holds, for every target position and every residue letter, the lanes' substitution scores, so
the inner loop over lanes is a plain vector loop (a compile-time trip count, saturating adds).
Past a sequence's end its lane scores PAD, which can only lower scores. Long queries run in
strips of STRIP rows so the working rows stay in cache.

Narrow lanes are not always enough (the seed warns of the int16 range): a lane that reaches its
width's maximum has saturated, and the caller redoes it one width up (8 -> 16 -> the 32-bit
reference kernel), so a saturated score is never reported.
"""

from __future__ import annotations

import numpy as np
from numba import int8, int16, int64, njit

STRIP = 512  # query rows processed together, so a long query's H and D rows stay in cache (noisy to measure: 256-1024 all within run-to-run noise here)
LANES = 256  # measured best of 16-512 for the 8-bit pass on AVX2 (docs/benchmarks.md)
WIDTHS = {8: (np.int8, -128, 127, -64), 16: (np.int16, -32768, 32767, -16384)}  # dtype, min, max, PAD


@njit(inline="always", nogil=True)
def _sat8(x):
    return int8(min(max(int64(x), -128), 127))


@njit(inline="always", nogil=True)
def _sat16(x):
    return int16(min(max(int64(x), -32768), 32767))


@njit(nogil=True, cache=True, boundscheck=False)
def score_batch(q, profile, columns, open_extend, extend, H, D, top_h, top_i, best, sat, floor):
    """Local scores of query q against one batch, in the width of H's dtype (8 or 16 bits):
    profile[j, a, lane] is the score of residue a against the lane's j-th residue (PAD past its
    end); best[lane] receives each lane's best score. The query is processed in strips of
    H.shape[0] - 1 rows so the strip's H and D rows stay in cache whatever the query length;
    top_h/top_i (columns + 1, LANES) carry each column's H and vertical-gap values from one strip
    to the next. sat clamps to the width (saturating vector adds); open_extend, extend and floor
    (the width's minimum) come in the narrow type so LLVM keeps every operation narrow."""
    m = q.size
    strip = H.shape[0] - 1
    zero = floor - floor
    diag = np.zeros(LANES, H.dtype)
    up = np.zeros(LANES, H.dtype)
    gap_i = np.zeros(LANES, H.dtype)
    corner = np.zeros(LANES, H.dtype)
    top = np.zeros(LANES, H.dtype)
    for j in range(columns + 1):
        for lane in range(LANES):
            top_h[j, lane] = zero
            top_i[j, lane] = floor
    for r0 in range(0, m, strip):
        rows = min(strip, m - r0)
        for i in range(rows + 1):
            for lane in range(LANES):
                H[i, lane] = zero  # column 0
                D[i, lane] = floor
        for lane in range(LANES):
            corner[lane] = zero  # H of the row above the strip in column 0
        for j in range(1, columns + 1):
            prof = profile[j - 1]
            above_h = top_h[j]
            above_i = top_i[j]
            for lane in range(LANES):
                diag[lane] = corner[lane]
                up[lane] = above_h[lane]
                gap_i[lane] = above_i[lane]
                corner[lane] = above_h[lane]
            for i in range(1, rows + 1):
                s = prof[q[r0 + i - 1]]
                h_row = H[i]
                d_row = D[i]
                for lane in range(LANES):
                    left = h_row[lane]
                    d = max(sat(int64(left) - int64(open_extend)), sat(int64(d_row[lane]) - int64(extend)))
                    g = max(sat(int64(up[lane]) - int64(open_extend)), sat(int64(gap_i[lane]) - int64(extend)))
                    h = max(sat(int64(diag[lane]) + int64(s[lane])), d, g, sat(0))
                    diag[lane] = left
                    h_row[lane] = h
                    d_row[lane] = d
                    gap_i[lane] = g
                    up[lane] = h
                    top[lane] = max(top[lane], h)
            for lane in range(LANES):  # the strip's last row: the next strip's row above
                above_h[lane] = up[lane]
                above_i[lane] = gap_i[lane]
    for lane in range(LANES):
        best[lane] = top[lane]


def run_batch(query: np.ndarray, profile: np.ndarray, columns: int, gap_open: int, gap_extend: int, bits: int,
              scratch: dict) -> np.ndarray:
    """Best local score per lane at `bits` width; a lane equal to the width's maximum saturated."""
    dtype, low, _, _ = WIDTHS[bits]
    rows = min(max(query.size, 1), STRIP)
    if bits not in scratch:
        scratch[bits] = (np.empty((rows + 1, LANES), dtype), np.empty((rows + 1, LANES), dtype), np.empty(LANES, dtype))
    H, D, best = scratch[bits]
    if ("top", bits) not in scratch or scratch[("top", bits)][0].shape[0] < columns + 1:
        scratch[("top", bits)] = (np.empty((columns + 1, LANES), dtype), np.empty((columns + 1, LANES), dtype))
    top_h, top_i = scratch[("top", bits)]
    sat = _sat8 if bits == 8 else _sat16
    score_batch(query, profile, columns, dtype(gap_open + gap_extend), dtype(gap_extend), H, D, top_h, top_i, best, sat,
                dtype(low))
    return best


def batch_profile(matrix: np.ndarray, targets: list[np.ndarray], bits: int = 16) -> tuple[np.ndarray, int]:
    """(profile (columns, alphabet, LANES), columns) for up to LANES target code arrays, at `bits`."""
    dtype, _, _, pad_score = WIDTHS[bits]
    columns = max((t.size for t in targets), default=0)
    codes = np.zeros((columns, LANES), np.int64)
    pad = np.ones((columns, LANES), bool)
    for lane, t in enumerate(targets):
        codes[: t.size, lane] = t
        pad[: t.size, lane] = False
    profile = matrix.astype(dtype)[:, codes]  # (alphabet, columns, LANES)
    profile = np.ascontiguousarray(profile.transpose(1, 0, 2))
    profile[np.broadcast_to(pad[:, None, :], profile.shape)] = pad_score
    return profile, columns
