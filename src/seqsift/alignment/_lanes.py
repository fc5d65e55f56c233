"""The fast score-only CPU kernel for database search: LANES database sequences side by side in
8- or 16-bit lanes (inter-sequence vectorization, as SWIPE does), local alignment.

The database is sorted by length and cut into batches of LANES sequences; a batch's profile
holds, for every target position and every residue letter, the lanes' substitution scores, so
a column of cells is plain vector arithmetic over the lanes (_lane_column, saturating adds).
Past a sequence's end its lane scores PAD, which can only lower scores. Long queries run in
strips of STRIP rows so the working rows stay in cache.

Narrow lanes are not always enough (a score past the int16 range wraps): a lane that may have
saturated (saturated(): from 255 - bias at 8 bits, 32767 at 16) is redone one width up by the
caller (8 -> 16 -> the 32-bit reference kernel), so a saturated score is never reported.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.alignment._lane_column import chunk_lanes, lane_column_pair

# query rows processed together, so a long query's H and D rows stay in cache (noisy to measure: 256-1024 all
# within run-to-run noise here)
STRIP = 512
LANES = 256  # a batch; measured best of 16-512 with the Numba loop (the IR kernel runs it in chunks)
# dtype, the gap states' floor, the largest score, PAD (in the profile's terms). 8-bit lanes are
# unsigned with the profile biased by -min(matrix): 0..255 where signed ones would stop at 127.
WIDTHS = {8: (np.uint8, 0, 255, 0), 16: (np.int16, -32768, 32767, -16384)}


def bias(matrix: np.ndarray) -> int:
    """What the 8-bit profile adds to every score so none is negative."""
    return max(0, -int(matrix.min(initial=0)))


def saturated(best: np.ndarray, bits: int, matrix: np.ndarray) -> np.ndarray:
    """Lanes whose best may have been clipped at the width's top: at 8 bits a clipped diagonal
    step lands at 255 - bias, so everything from there up is redone one width up."""
    return best >= (WIDTHS[8][2] - bias(matrix) if bits == 8 else WIDTHS[16][2])


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


def run_batch(query: np.ndarray, profile: np.ndarray, chunk_columns: np.ndarray, gap_open: int, gap_extend: int,
              bits: int, scratch: dict, shift: int = 0) -> np.ndarray:
    """Best local score per lane at `bits` width (shift: the 8-bit profile's bias); see
    saturated() for which lanes to redo."""
    dtype, low, _, _ = WIDTHS[bits]
    columns = int(chunk_columns.max())
    rows = min(max(query.size, 1), STRIP)
    if bits not in scratch:
        scratch[bits] = (np.empty((rows + 1, LANES), dtype), np.empty((rows + 1, LANES), dtype), np.empty(LANES, dtype))
    H, D, best = scratch[bits]
    if ("above", bits) not in scratch or scratch[("above", bits)].shape[0] < columns + 2:
        scratch[("above", bits)] = np.empty((columns + 2, 2, LANES), dtype)
    score_batch(query, profile, chunk_columns, dtype(gap_open + gap_extend), dtype(gap_extend), dtype(shift), H, D,
                scratch[("above", bits)], best, dtype(low), chunk_lanes(bits))
    return best


@njit(nogil=True, cache=True, boundscheck=False)
def _fill_profile(profile, scores, codes, used):
    """profile[c, a, lane] = scores[a, codes[c, lane]] for the used lanes: one pass writing the
    profile in order (numpy's gather, transpose and padding mask took 4x as long at 8 bits: 20,000
    proteins, 0.45 -> 0.11 s, 2026-12-01; what a whole 'seqsift align' of a few queries spends)."""
    columns, letters, _ = profile.shape
    for c in range(columns):
        for a in range(letters):
            row = scores[a]
            for lane in range(used):
                profile[c, a, lane] = row[codes[c, lane]]


def batch_profile(matrix: np.ndarray, targets: list[np.ndarray], bits: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(profile (columns, alphabet, LANES), chunk_columns) for up to LANES target code arrays at
    `bits`: chunk_columns[k] is the longest target in the k-th chunk_lanes(bits) lanes (0 when
    the chunk is empty), columns the longest target rounded up to even. At 8 bits the scores
    carry bias(matrix). Targets given shortest first waste the fewest padded cells."""
    dtype, _, _, pad_score = WIDTHS[bits]
    chunk = chunk_lanes(bits)
    used = -(-len(targets) // chunk) * chunk  # lanes of chunks holding a target; the rest is never read
    columns = max((t.size for t in targets), default=0)
    columns += columns % 2  # the kernel takes columns in pairs: a last odd one is paired with padding
    letters = matrix.shape[0]
    codes = np.full((columns, used), letters, np.uint8)  # code `letters`: past the lane's target
    lengths = np.zeros(LANES, np.int64)
    for lane, t in enumerate(targets):
        codes[: t.size, lane] = t
        lengths[lane] = t.size
    scores = np.full((letters, letters + 1), pad_score, dtype)  # the extra column: PAD for padding
    scores[:, :letters] = matrix.astype(np.int64) + (bias(matrix) if bits == 8 else 0)
    profile = np.empty((columns, letters, LANES), dtype)
    _fill_profile(profile, scores, codes, used)
    return profile, lengths.reshape(-1, chunk).max(axis=1)
