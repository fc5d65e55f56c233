"""Many DNA pairs aligned at once with traceback: pair k in 16-bit lane k (inter-pair
vectorization), each cell's direction byte kept per lane, then each lane traced back alone.

Substitution is match/mismatch: N scores a mismatch against everything because query N and
target N get codes (4 and 5) that equal nothing, and padding past a target's end (5) only lowers
scores, so the row kernel (_pair_row.dp_row) needs no per-lane length checks. Local mode. A lane
whose best score reaches the 16-bit limit is redone by the 32-bit reference kernel; nothing here
can return a wrong score. The direction bytes are the reference kernel's (same tie order), so
the alignments are the same too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.alignment._pair_row import LANES as PAIR_LANES
from seqsift.alignment._pair_row import dp_row

LIMIT = 32767
_NEG = -32768
_N = 4  # the code every non-ACGT letter has in DNA scoring
_TARGET_N = 5  # a target's N and its padding: equal to no query code


@njit(nogil=True, cache=True, boundscheck=False)
def fill(Q, T, rows, match, mismatch, open_extend, extend, H, D, dirs, best, best_i, best_j):
    """Q[i, lane], T[j, lane]: residue codes (T's N as _TARGET_N); rows[lane]: the query lengths,
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


def align_lanes(queries: list[np.ndarray], targets: list[np.ndarray], match: int, mismatch: int,
                gap_open: int, gap_extend: int, space: np.ndarray | None = None):
    """(score, ops, q_start, q_end, t_start, t_end) per pair, for up to PAIR_LANES pairs. space,
    a uint8 buffer of at least dirs_bytes(m, n), holds the direction bytes: reusing one across
    batches spares the page faults of a fresh allocation (a third of a 1 kbp batch's time)."""
    m = max((q.size for q in queries), default=0)
    n = max((t.size for t in targets), default=0)
    if n >= LIMIT:
        raise ValueError("targets past the 16-bit column numbers belong to the reference kernel")
    Q = np.full((max(m, 1), PAIR_LANES), _N, np.uint8)
    T = np.full((max(n, 1), PAIR_LANES), _TARGET_N, np.uint8)
    rows = np.zeros(PAIR_LANES, np.int64)
    for lane, (q, t) in enumerate(zip(queries, targets)):
        Q[: q.size, lane] = q
        T[: t.size, lane] = t
        rows[lane] = q.size
    T[T == _N] = _TARGET_N
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

