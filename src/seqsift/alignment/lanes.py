"""The fast score-only CPU search of a database: LANES database sequences side by side in
8- or 16-bit lanes (inter-sequence vectorization, as SWIPE does), local alignment.

The database is sorted by length and cut into batches of LANES sequences; a batch's profile
holds, for every target position and every residue letter, the lanes' substitution scores, so
a column of cells is plain vector arithmetic over the lanes (_lane_column, saturating adds).
Past a sequence's end its lane scores PAD, which can only lower scores. Long queries run in
strips of STRIP rows so the working rows stay in cache.

Narrow lanes are not always enough: the diagonal step saturates at the width's top, and a lane
that may have saturated (saturated(): best 127 at 8 bits, 32767 at 16) is redone one width up by
the caller (8 -> 16 -> the 32-bit reference kernel), so a saturated score is never reported.
The 8-bit lanes are signed, with no bias on the profile (_lane_column says why that costs fewer
operations a cell); a protein search's unrelated sequences score far below 127 (5 queries
against 20,000 proteins, 2026-12-02: 45 of 100,000 scores were redone at 16 bits).

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
# dtype, the largest score (where a lane saturates), PAD: the profile's score past a target's end
WIDTHS = {8: (np.int8, 127, -128), 16: (np.int16, 32767, -16384)}
CHUNK_VECTORS = 2  # vectors advanced together: with two columns, more spill registers (measured slower)
VECTOR_BITS = 256  # AVX2; LLVM splits or joins for other vector units

# q, profile, chunk_columns, open_extend, extend, H, D, above, best, chunk: one signature per width
# (H and D: (chunks, strip rows + 1, chunk lanes))
score_batch = Kernel("seqsift.alignment._lanes", "score_batch", *(
    f"uint8[:] {t}[:,:,:] int64[:] {t} {t} {t}[:,:,:] {t}[:,:,:] {t}[:,:,:] {t}[:] int64" for t in ("int8", "int16")))

# profile, scores, codes, used: the profile's rows written in one pass (_lanes.fill_profile)
fill_profile = Kernel("seqsift.alignment._lanes", "fill_profile", *(
    f"{t}[:,:,:] {t}[:,:] uint8[:,:] int64" for t in ("int8", "int16")))


def chunk_lanes(bits: int) -> int:
    """Lanes one call of the kernel's column step covers at this width."""
    return CHUNK_VECTORS * VECTOR_BITS // bits


def fits_8_bits(matrix: np.ndarray, gap_open: int, gap_extend: int) -> bool:
    """Whether 8-bit lanes can hold this scoring's scores and gap costs (else start at 16)."""
    return -128 <= int(matrix.min(initial=0)) and int(matrix.max(initial=0)) < 127 and gap_open + gap_extend < 128


def saturated(best: np.ndarray, bits: int) -> np.ndarray:
    """Lanes whose best may have been clipped at the width's top: a clipped diagonal step
    lands exactly there, so everything from there up is redone one width up."""
    return best >= WIDTHS[bits][1]


def run_batch(query: np.ndarray, profile: np.ndarray, chunk_columns: np.ndarray, gap_open: int, gap_extend: int,
              bits: int, scratch: dict) -> np.ndarray:
    """Best local score per lane at `bits` width; see saturated() for which lanes to redo."""
    dtype = WIDTHS[bits][0]
    columns = int(chunk_columns.max())
    rows = min(max(query.size, 1), STRIP)
    if bits not in scratch:
        shape = (LANES // chunk_lanes(bits), rows + 1, chunk_lanes(bits))
        scratch[bits] = (np.empty(shape, dtype), np.empty(shape, dtype), np.empty(LANES, dtype))
    H, D, best = scratch[bits]
    if ("above", bits) not in scratch or scratch[("above", bits)].shape[0] < columns + 2:
        scratch[("above", bits)] = np.empty((columns + 2, 2, LANES), dtype)
    score_batch(query, profile, chunk_columns, dtype(gap_open + gap_extend), dtype(gap_extend), H, D,
                scratch[("above", bits)], best, chunk_lanes(bits))
    return best


def batch_profile(matrix: np.ndarray, targets: list[np.ndarray], bits: int = 16,
                  buffer: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(profile (columns, alphabet, LANES), chunk_columns) for up to LANES target code arrays at
    `bits`: chunk_columns[k] is the longest target in the k-th chunk_lanes(bits) lanes (0 when
    the chunk is empty), columns the longest target rounded up to even. Targets given shortest first waste the fewest padded cells. With a
    buffer (flat, of the width's dtype, at least profile_size() elements) the profile is a view
    of it, written over whatever it held."""
    dtype, _, pad_score = WIDTHS[bits]
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
    scores[:, :letters] = matrix
    shape = (columns, letters, LANES)
    profile = np.empty(shape, dtype) if buffer is None else buffer[: columns * letters * LANES].reshape(shape)
    fill_profile(profile, scores, codes, used)
    return profile, lengths.reshape(-1, chunk).max(axis=1)


def profile_size(matrix: np.ndarray, targets: list[np.ndarray]) -> int:
    """Elements of batch_profile's profile for these targets (a buffer of this many holds it)."""
    columns = max((t.size for t in targets), default=0)
    return (columns + columns % 2) * matrix.shape[0] * LANES
