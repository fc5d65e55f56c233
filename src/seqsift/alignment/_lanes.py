"""The fast score-only CPU kernel for database search: LANES database sequences side by side in
16-bit lanes (inter-sequence vectorization, as SWIPE does), local alignment.

The database is sorted by length and cut into batches of LANES sequences; a batch's profile
holds, for every target position and every residue letter, the lanes' substitution scores, so
the inner loop over lanes is a plain vector loop (a compile-time trip count, saturating 16-bit
adds). Past a sequence's end its lane scores PAD, which can only lower scores.

16 bits are not always enough (the seed warns of the int16 range): a lane whose best score comes
within the largest substitution score of 32767 is flagged, and the caller rescored it with the
32-bit reference kernel, so a saturated score is never reported.
"""

from __future__ import annotations

import numpy as np
from numba import int8, int16, int64, njit

LANES = 256  # measured best of 16-512 for the 8-bit pass on AVX2 (docs/benchmarks.md)
WIDTHS = {8: (np.int8, -128, 127, -64), 16: (np.int16, -32768, 32767, -16384)}  # dtype, min, max, PAD


@njit(inline="always", nogil=True)
def _sat8(x):
    return int8(min(max(int64(x), -128), 127))


@njit(inline="always", nogil=True)
def _sat16(x):
    return int16(min(max(int64(x), -32768), 32767))


@njit(nogil=True, cache=True, boundscheck=False)
def score_batch(q, profile, columns, open_extend, extend, H, D, best, sat, floor):
    """Local scores of query q against one batch, in the width of H's dtype (8 or 16 bits):
    profile[j, a, lane] is the score of residue a against the lane's j-th residue (PAD past its
    end); H and D are (len(q) + 1, LANES) scratch; best[lane] receives each lane's best score.
    sat clamps to the width (saturating vector adds); open_extend, extend and floor (the width's
    minimum) come in the narrow type so LLVM keeps every operation narrow."""
    m = q.size
    zero = floor - floor
    diag = np.zeros(LANES, H.dtype)
    up = np.zeros(LANES, H.dtype)
    gap_i = np.zeros(LANES, H.dtype)
    top = np.zeros(LANES, H.dtype)
    for i in range(m + 1):
        for lane in range(LANES):
            H[i, lane] = zero
            D[i, lane] = floor
    for j in range(columns):
        prof = profile[j]
        for lane in range(LANES):
            diag[lane] = zero
            up[lane] = zero
            gap_i[lane] = floor
        for i in range(1, m + 1):
            s = prof[q[i - 1]]
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
    for lane in range(LANES):
        best[lane] = top[lane]


def run_batch(query: np.ndarray, profile: np.ndarray, columns: int, gap_open: int, gap_extend: int, bits: int,
              scratch: dict) -> np.ndarray:
    """Best local score per lane at `bits` width; a lane equal to the width's maximum saturated."""
    dtype, low, _, _ = WIDTHS[bits]
    if bits not in scratch:
        scratch[bits] = (np.empty((query.size + 1, LANES), dtype), np.empty((query.size + 1, LANES), dtype),
                         np.empty(LANES, dtype))
    H, D, best = scratch[bits]
    sat = _sat8 if bits == 8 else _sat16
    score_batch(query, profile, columns, dtype(gap_open + gap_extend), dtype(gap_extend), H, D, best, sat, dtype(low))
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
