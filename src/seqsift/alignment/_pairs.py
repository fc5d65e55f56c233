"""Many DNA pairs aligned at once with traceback: pair k in 16-bit lane k (inter-pair
vectorization), each cell's direction byte kept per lane, then each lane traced back alone.

Substitution is match/mismatch (N scores a mismatch against everything), computed per lane with a
compare and a select, so the lane loop is a plain vector loop. Local mode. A lane whose best score
reaches the 16-bit limit is redone by the 32-bit reference kernel; nothing here can return a wrong
score. The direction bytes are the reference kernel's (same tie order), so the alignments are the
same too.
"""

from __future__ import annotations

import numpy as np
from numba import int16, int64, njit, uint8

PAIR_LANES = 32
LIMIT = 32767
_NEG = -32768
_N = 4  # the code every non-ACGT letter has in DNA scoring


@njit(inline="always", nogil=True)
def _sat(x):
    return int16(min(max(int64(x), _NEG), LIMIT))


@njit(nogil=True, cache=True, boundscheck=False)
def fill(Q, T, rows, cols, match, mismatch, open_extend, extend, H, D, dirs, best, best_i, best_j):
    """Q[i, lane], T[j, lane]: residue codes; rows[lane], cols[lane] (int16): the lengths, cells
    past them are filled but never counted. dirs[i - 1, j, lane] gets the direction byte of cell
    (i, j); best/best_i/best_j the first best cell in row order, as the reference kernel."""
    m, n = Q.shape[0], T.shape[0]
    for j in range(n + 1):
        for lane in range(PAIR_LANES):
            H[j, lane] = 0
            D[j, lane] = _NEG
    for lane in range(PAIR_LANES):
        best[lane] = 0
        best_i[lane] = 0
        best_j[lane] = 0
    diag = np.zeros(PAIR_LANES, np.int16)
    left = np.zeros(PAIR_LANES, np.int16)
    gap = np.zeros(PAIR_LANES, np.int16)  # the horizontal gap state along the row
    row_best = np.zeros(PAIR_LANES, np.int16)
    row_j = np.zeros(PAIR_LANES, np.int16)
    for i in range(1, m + 1):
        q = Q[i - 1]
        for lane in range(PAIR_LANES):
            diag[lane] = 0
            left[lane] = 0
            gap[lane] = _NEG
            row_best[lane] = 0
            row_j[lane] = 0
        row_ok = np.int16(i)
        for j in range(1, n + 1):
            t = T[j - 1]
            h_up = H[j]
            i_row = D[j]  # the vertical gap state of column j, carried down the rows
            cell = dirs[i - 1, j]
            jj = np.int16(j)
            for lane in range(PAIR_LANES):  # every operation 16 bits wide, selects not branches
                up = h_up[lane]
                i_open = _sat(int64(up) - int64(open_extend))
                i_ext = _sat(int64(i_row[lane]) - int64(extend))
                iv = max(i_open, i_ext)
                d_open = _sat(int64(left[lane]) - int64(open_extend))
                d_ext = _sat(int64(gap[lane]) - int64(extend))
                dv = max(d_open, d_ext)
                same = (q[lane] == t[lane]) & (q[lane] != uint8(_N))
                mv = _sat(int64(diag[lane]) + int64(match if same else mismatch))
                h = max(mv, iv, dv, int16(0))
                # the direction byte from 8-bit selects, so the store stays a vector store
                src = uint8(0) if h <= 0 else (uint8(1) if h == mv else (uint8(2) if h == iv else uint8(3)))
                cell[lane] = src | (uint8(4) if i_open >= i_ext else uint8(0)) | (uint8(8) if d_open >= d_ext else uint8(0))
                diag[lane] = up
                left[lane] = h
                gap[lane] = dv
                h_up[lane] = h
                i_row[lane] = iv
                better = (jj <= cols[lane]) & (h > row_best[lane])
                row_j[lane] = jj if better else row_j[lane]
                row_best[lane] = h if better else row_best[lane]
        for lane in range(PAIR_LANES):
            if row_ok <= rows[lane] and row_best[lane] > best[lane]:
                best[lane] = row_best[lane]
                best_i[lane] = i
                best_j[lane] = row_j[lane]


@njit(nogil=True, cache=True, boundscheck=False)
def trace(dirs, lane, i, j, ops):
    """Walk back from (i, j) through one lane's direction bytes; ops reversed; returns (i, j, count)."""
    state = 0
    count = 0
    while i > 0 and j > 0:
        cell = dirs[i - 1, j, lane]
        if state == 0:
            src = cell & 3
            if src == 0:
                break
            if src == 1:
                ops[count] = 0
                count += 1
                i -= 1
                j -= 1
            else:
                state = 1 if src == 2 else 2
        elif state == 1:
            ops[count] = 1
            count += 1
            state = 0 if cell & 4 else 1
            i -= 1
        else:
            ops[count] = 2
            count += 1
            state = 0 if cell & 8 else 2
            j -= 1
    return i, j, count


def align_lanes(queries: list[np.ndarray], targets: list[np.ndarray], match: int, mismatch: int,
                gap_open: int, gap_extend: int):
    """(score, ops, q_start, q_end, t_start, t_end) per pair, for up to PAIR_LANES pairs."""
    m = max((q.size for q in queries), default=0)
    n = max((t.size for t in targets), default=0)
    Q = np.full((max(m, 1), PAIR_LANES), _N, np.uint8)
    T = np.full((max(n, 1), PAIR_LANES), _N + 1, np.uint8)
    rows = np.zeros(PAIR_LANES, np.int16)
    cols = np.zeros(PAIR_LANES, np.int16)
    for lane, (q, t) in enumerate(zip(queries, targets)):
        Q[: q.size, lane] = q
        T[: t.size, lane] = t
        rows[lane], cols[lane] = q.size, t.size
    H = np.empty((n + 1, PAIR_LANES), np.int16)
    D = np.empty((n + 1, PAIR_LANES), np.int16)
    dirs = np.zeros((m, n + 1, PAIR_LANES), np.uint8)
    best = np.empty(PAIR_LANES, np.int16)
    best_i = np.empty(PAIR_LANES, np.int64)
    best_j = np.empty(PAIR_LANES, np.int64)
    fill(Q[:m], T[:n], rows, cols, np.int16(match), np.int16(mismatch), np.int16(gap_open + gap_extend),
         np.int16(gap_extend), H, D, dirs, best, best_i, best_j)
    results = []
    ops = np.empty(m + n + 1, np.int8)
    for lane in range(len(queries)):
        if best[lane] >= LIMIT:
            results.append(None)  # saturated: the caller uses the 32-bit kernel
            continue
        i, j, count = trace(dirs, lane, int(best_i[lane]), int(best_j[lane]), ops)
        results.append((int(best[lane]), ops[:count][::-1].copy(), i, int(best_i[lane]), j, int(best_j[lane])))
    return results


def usable(scoring) -> bool:
    """Only DNA match/mismatch scoring fits the compare-and-select lanes."""
    if not scoring.is_dna:
        return False
    m = scoring.matrix
    return bool((m[:4, :4] == np.where(np.eye(4, dtype=bool), m[0, 0], m[0, 1])).all() and (m[4] == m[0, 1]).all()
                and (m[:, 4] == m[0, 1]).all())

