"""Many DNA pairs aligned at once with traceback: pair k in 16-bit lane k (inter-pair
vectorization), each cell's direction byte kept per lane, then each lane traced back alone.

Substitution is match/mismatch: N scores a mismatch against everything because query N and
target N get codes (4 and 5) that equal nothing, and padding past a target's end (5) only lowers
scores, so the row kernel (_pair_row.dp_row) needs no per-lane length checks. Local mode. A lane
whose best score reaches the 16-bit limit is redone by the 32-bit reference kernel; nothing here
can return a wrong score. The direction bytes are the reference kernel's (same tie order), so
the alignments are the same too.

The kernels are _pairs.fill and _pairs.trace, called here precompiled (precompiled.py), so
aligning pairs imports no Numba once they are built.
"""

from __future__ import annotations

import numpy as np

from seqsift.precompiled import Kernel

PAIR_LANES = 32  # pairs side by side: two AVX2 vectors of 16-bit lanes, so two independent chains overlap
LIMIT = 32767
N = 4  # the code every non-ACGT letter has in DNA scoring
TARGET_N = 5  # a target's N and its padding: equal to no query code


# Q, T, rows, match, mismatch, open_extend, extend, H, D, dirs, best, best_i, best_j
fill = Kernel("seqsift.alignment._pairs", "fill", "uint8[:,:] uint8[:,:] int64[:] int16 int16 int16 int16 int16[:,:] "
              "int16[:,:] uint8[:,:,:] int16[:] int64[:] int64[:]")
# dirs, best_i, best_j, pairs, ops, counts, starts
trace = Kernel("seqsift.alignment._pairs", "trace", "uint8[:,:,:] int64[:] int64[:] int64 int8[:,:] int64[:] int64[:,:]")


def align_lanes(queries: list[np.ndarray], targets: list[np.ndarray], match: int, mismatch: int,
                gap_open: int, gap_extend: int, space: np.ndarray | None = None):
    """(score, ops, q_start, q_end, t_start, t_end) per pair, for up to PAIR_LANES pairs. space,
    a uint8 buffer of at least dirs_bytes(m, n), holds the direction bytes: reusing one across
    batches spares the page faults of a fresh allocation (a third of a 1 kbp batch's time)."""
    m = max((q.size for q in queries), default=0)
    n = max((t.size for t in targets), default=0)
    if n >= LIMIT:
        raise ValueError("targets past the 16-bit column numbers belong to the reference kernel")
    Q = np.full((max(m, 1), PAIR_LANES), N, np.uint8)
    T = np.full((max(n, 1), PAIR_LANES), TARGET_N, np.uint8)
    rows = np.zeros(PAIR_LANES, np.int64)
    for lane, (q, t) in enumerate(zip(queries, targets)):
        Q[: q.size, lane] = q
        T[: t.size, lane] = t
        rows[lane] = q.size
    T[T == N] = TARGET_N
    H = np.empty((n + 1, PAIR_LANES), np.int16)
    D = np.empty((n + 1, PAIR_LANES), np.int16)
    if space is None:
        space = np.empty(dirs_bytes(m, n), np.uint8)
    dirs = space[: dirs_bytes(m, n)].reshape(m, n + 1, PAIR_LANES)  # column 0 is never read
    best = np.empty(PAIR_LANES, np.int16)
    best_i = np.empty(PAIR_LANES, np.int64)
    best_j = np.empty(PAIR_LANES, np.int64)
    fill(Q[:m], T[:n], rows, np.int16(match), np.int16(mismatch), np.int16(gap_open + gap_extend),
         np.int16(gap_extend), H, D, dirs, best, best_i, best_j)
    ops = np.empty((len(queries), m + n + 1), np.int8)
    counts = np.empty(len(queries), np.int64)
    starts = np.empty((len(queries), 2), np.int64)
    trace(dirs, best_i, best_j, len(queries), ops, counts, starts)
    results = []
    for lane in range(len(queries)):
        if best[lane] >= LIMIT:
            results.append(None)  # saturated: the caller uses the 32-bit kernel
            continue
        i, j = starts[lane]
        results.append((int(best[lane]), ops[lane, : counts[lane]][::-1].copy(), int(i), int(best_i[lane]), int(j),
                        int(best_j[lane])))
    return results


def dirs_bytes(m: int, n: int) -> int:
    """Direction bytes of a batch whose longest query is m and longest target n."""
    return m * (n + 1) * PAIR_LANES


def usable(scoring) -> bool:
    """Only DNA match/mismatch scoring with mismatch <= 0 fits the compare-and-select lanes."""
    if not scoring.is_dna:
        return False
    m = scoring.matrix
    return bool((m[:4, :4] == np.where(np.eye(4, dtype=bool), m[0, 0], m[0, 1])).all() and (m[4] == m[0, 1]).all()
                and (m[:, 4] == m[0, 1]).all() and m[0, 1] <= 0)

