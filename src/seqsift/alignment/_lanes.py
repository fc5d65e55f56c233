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
from numba import int16, int64, njit

LANES = 128  # measured best of 16-256 on AVX2 (docs/benchmarks.md)
LIMIT = 32767
PAD = -16384  # the score of any residue against a lane's padding
_NEG = -32768


@njit(inline="always", nogil=True)
def _sat(x):
    return int16(min(max(int64(x), _NEG), LIMIT))


@njit(nogil=True, cache=True, boundscheck=False)
def score_batch(q, profile, columns, open_extend, extend, H, D, best):
    """Local scores of query q against one batch: profile[j, a, lane] is the score of residue a
    against the lane's j-th residue (PAD past its end); H and D are (len(q) + 1, LANES) scratch;
    best[lane] receives each lane's best score."""
    m = q.size
    diag = np.zeros(LANES, np.int16)
    up = np.zeros(LANES, np.int16)
    gap_i = np.zeros(LANES, np.int16)
    top = np.zeros(LANES, np.int16)
    for i in range(m + 1):
        for lane in range(LANES):
            H[i, lane] = 0
            D[i, lane] = _NEG
    oe = int16(open_extend)  # 16-bit operands let LLVM use saturating 16-bit vector ops
    ex = int16(extend)
    for j in range(columns):
        prof = profile[j]
        for lane in range(LANES):
            diag[lane] = 0
            up[lane] = 0
            gap_i[lane] = _NEG
        for i in range(1, m + 1):
            s = prof[q[i - 1]]
            h_row = H[i]
            d_row = D[i]
            for lane in range(LANES):
                left = h_row[lane]
                d = max(_sat(int64(left) - int64(oe)), _sat(int64(d_row[lane]) - int64(ex)))
                g = max(_sat(int64(up[lane]) - int64(oe)), _sat(int64(gap_i[lane]) - int64(ex)))
                h = max(_sat(int64(diag[lane]) + int64(s[lane])), d, g, int16(0))
                diag[lane] = left
                h_row[lane] = h
                d_row[lane] = d
                gap_i[lane] = g
                up[lane] = h
                top[lane] = max(top[lane], h)
    for lane in range(LANES):
        best[lane] = top[lane]


def batch_profile(matrix: np.ndarray, targets: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """(profile (columns, alphabet, LANES) int16, columns) for up to LANES target code arrays."""
    columns = max((t.size for t in targets), default=0)
    codes = np.zeros((columns, LANES), np.int64)
    pad = np.ones((columns, LANES), bool)
    for lane, t in enumerate(targets):
        codes[: t.size, lane] = t
        pad[: t.size, lane] = False
    profile = matrix.astype(np.int16)[:, codes]  # (alphabet, columns, LANES)
    profile = np.ascontiguousarray(profile.transpose(1, 0, 2))
    profile[np.broadcast_to(pad[:, None, :], profile.shape)] = PAD
    return profile, columns
