"""The fast score-only CPU search of a database: LANES database sequences side by side in
8- or 16-bit lanes (inter-sequence vectorization, as SWIPE does), local alignment.

The database is sorted by length and cut into batches of LANES sequences; a batch's profile
holds, for every target position and every residue letter, the lanes' substitution scores, so
a column of cells is plain vector arithmetic over the lanes (_lane_column, saturating adds).
Past a sequence's end its lane scores PAD, which can only lower scores. Long queries run in
strips of STRIP rows so the working rows stay in cache.

Narrow lanes are not always enough (a score past the int16 range wraps): a lane that may have
saturated (saturated(): from 255 - bias at 8 bits, 32767 at 16) is redone one width up by the
caller (8 -> 16 -> the 32-bit reference kernel), so a saturated score is never reported.

The kernel itself is _lanes.score_batch, called here precompiled (precompiled.py), so a database
search imports no Numba once it is built.
"""

from __future__ import annotations

import numpy as np

from seqsift.precompiled import Kernel

# query rows processed together, so a long query's H and D rows stay in cache (noisy to measure: 256-1024 all
# within run-to-run noise here)
STRIP = 512
LANES = 256  # a batch; measured best of 16-512 with the Numba loop (the IR kernel runs it in chunks)
# dtype, the gap states' floor, the largest score, PAD (in the profile's terms). 8-bit lanes are
# unsigned with the profile biased by -min(matrix): 0..255 where signed ones would stop at 127.
WIDTHS = {8: (np.uint8, 0, 255, 0), 16: (np.int16, -32768, 32767, -16384)}
CHUNK_VECTORS = 2  # vectors advanced together: with two columns, more spill registers (measured slower)
VECTOR_BITS = 256  # AVX2; LLVM splits or joins for other vector units

# q, profile, chunk_columns, open_extend, extend, shift, H, D, above, best, floor, chunk: one signature per width
score_batch = Kernel("seqsift.alignment._lanes", "score_batch", *(
    f"uint8[:] {t}[:,:,:] int64[:] {t} {t} {t} {t}[:,:] {t}[:,:] {t}[:,:,:] {t}[:] {t} int64" for t in ("uint8", "int16")))

# profile, scores, codes, used: the profile's rows written in one pass (_lanes.fill_profile)
fill_profile = Kernel("seqsift.alignment._lanes", "fill_profile", *(
    f"{t}[:,:,:] {t}[:,:] uint8[:,:] int64" for t in ("uint8", "int16")))


def chunk_lanes(bits: int) -> int:
    """Lanes one call of the kernel's column step covers at this width."""
    return CHUNK_VECTORS * VECTOR_BITS // bits


def bias(matrix: np.ndarray) -> int:
    """What the 8-bit profile adds to every score so none is negative."""
    return max(0, -int(matrix.min(initial=0)))


def saturated(best: np.ndarray, bits: int, matrix: np.ndarray) -> np.ndarray:
    """Lanes whose best may have been clipped at the width's top: at 8 bits a clipped diagonal
    step lands at 255 - bias, so everything from there up is redone one width up."""
    return best >= (WIDTHS[8][2] - bias(matrix) if bits == 8 else WIDTHS[16][2])



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


def batch_profile(matrix: np.ndarray, targets: list[np.ndarray], bits: int = 16,
                  buffer: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(profile (columns, alphabet, LANES), chunk_columns) for up to LANES target code arrays at
    `bits`: chunk_columns[k] is the longest target in the k-th chunk_lanes(bits) lanes (0 when
    the chunk is empty), columns the longest target rounded up to even. At 8 bits the scores
    carry bias(matrix). Targets given shortest first waste the fewest padded cells. With a
    buffer (flat, of the width's dtype, at least profile_size() elements) the profile is a view
    of it, written over whatever it held."""
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
    shape = (columns, letters, LANES)
    profile = np.empty(shape, dtype) if buffer is None else buffer[: columns * letters * LANES].reshape(shape)
    fill_profile(profile, scores, codes, used)
    return profile, lengths.reshape(-1, chunk).max(axis=1)


def profile_size(matrix: np.ndarray, targets: list[np.ndarray]) -> int:
    """Elements of batch_profile's profile for these targets (a buffer of this many holds it)."""
    columns = max((t.size for t in targets), default=0)
    return (columns + columns % 2) * matrix.shape[0] * LANES
