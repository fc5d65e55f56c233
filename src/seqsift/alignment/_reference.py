"""The reference kernel: Gotoh's affine-gap recurrences in 32-bit integers, row by row, for
local, global and semi-global alignment, with a traceback in bounded memory.

Recurrences (Gotoh's, as in "Smith-Waterman with DPX"; penalties positive, a gap of L costs open + L * extend):
    I[i][j] = max(H[i-1][j] - open - extend, I[i-1][j] - extend)   query residue against a gap
    D[i][j] = max(H[i][j-1] - open - extend, D[i][j-1] - extend)   target residue against a gap
    H[i][j] = max(H[i-1][j-1] + s(q_i, t_j), I[i][j], D[i][j]  [, 0 when local])
I and D are never clamped at zero (a gap would then extend without paying its open); only H is.

Traceback memory is bounded by checkpointing: the forward pass keeps every `every`-th row of H
and I; the traceback recomputes one band of `every` rows at a time with a direction byte per
cell, so memory is about (m / every + every) * n * (8 + 1) bytes instead of m * n.

reference.py holds the modes and the memory bounds, and calls these kernels precompiled.
"""

from __future__ import annotations

from numba import njit

from seqsift.alignment.reference import GLOBAL, LOCAL, NEG, SEMIGLOBAL
_FROM_M, _FROM_I, _FROM_D = 1, 2, 3
_I_OPEN, _D_OPEN = 4, 8


@njit(inline="always", nogil=True)
def _edge(mode, k, gap_open, gap_extend):
    """H on the border: row 0 / column 0 after k residues."""
    if k == 0 or mode == LOCAL:
        return 0
    return -(gap_open + k * gap_extend)


@njit(nogil=True, cache=True)
def advance(q, t, matrix, gap_open, gap_extend, mode, r0, r1, H, I, dirs, checkpoints, every, best):
    """Fill rows r0+1 .. r1. H and I hold row r0 on entry and row r1 on exit. When dirs has
    rows, the direction byte of each cell goes to dirs[i - r0 - 1, j]; when every > 0, each
    row i with i % every == 0 is copied to checkpoints[i // every] (H in [0], I in [1]).
    best = [score, i, j]: the best local cell so far (first in row order on ties), or for the
    other modes the end cell (global: (m, n); semi-global: the best cell of the last row)."""
    n = t.size
    m = q.size
    open_extend = gap_open + gap_extend
    record = dirs.shape[0] > 0
    for i in range(r0 + 1, r1 + 1):
        qi = q[i - 1]
        diag = H[0]
        left = _edge(mode, i, gap_open, gap_extend)  # H[i][j-1], kept in a register
        H[0] = left
        d = NEG
        row_best, row_j = best[0], -1
        for j in range(1, n + 1):
            up_h = H[j]
            i_open = up_h - open_extend
            i_ext = I[j] - gap_extend
            iv = max(i_open, i_ext)
            d_open = left - open_extend
            d_ext = d - gap_extend
            d = max(d_open, d_ext)
            mv = diag + matrix[qi, t[j - 1]]
            h = max(mv, iv, d)
            # the source without branches (they mispredict on real data): M before I before D on ties
            src = _FROM_M + (h != mv) * (1 + (h != iv))
            if mode == LOCAL:
                src = src * (h > 0)
                h = max(h, 0)
            diag = up_h
            left = h
            H[j] = h
            I[j] = iv
            if record:
                dirs[i - r0 - 1, j] = src | (_I_OPEN if i_open >= i_ext else 0) | (_D_OPEN if d_open >= d_ext else 0)
            if h > row_best:
                row_best, row_j = h, j
        if mode == LOCAL and row_j >= 0:
            best[0], best[1], best[2] = row_best, i, row_j
        if every > 0 and i % every == 0:
            checkpoints[i // every, 0, :] = H
            checkpoints[i // every, 1, :] = I
        if i == m and mode != LOCAL:
            if mode == GLOBAL:
                best[0], best[1], best[2] = H[n], m, n
            else:
                best[0], best[1], best[2] = H[0], m, 0
                for j in range(1, n + 1):
                    if H[j] > best[0]:
                        best[0], best[1], best[2] = H[j], m, j


@njit(nogil=True, cache=True)
def score_only(q, t, matrix, gap_open, gap_extend, mode, H, I):
    """The best score alone, in linear memory, without the direction bookkeeping (twice as fast):
    local = best cell, global = H[m][n], semi-global = best of the last row. H, I: n + 1 scratch."""
    n = t.size
    m = q.size
    open_extend = gap_open + gap_extend
    for j in range(n + 1):
        H[j] = 0 if mode != GLOBAL else _edge(mode, j, gap_open, gap_extend)
        I[j] = NEG
    best = 0 if mode == LOCAL else NEG
    for i in range(1, m + 1):
        qi = q[i - 1]
        diag = H[0]
        left = _edge(mode, i, gap_open, gap_extend)
        H[0] = left
        d = NEG
        for j in range(1, n + 1):
            up_h = H[j]
            iv = max(up_h - open_extend, I[j] - gap_extend)
            d = max(left - open_extend, d - gap_extend)
            h = max(diag + matrix[qi, t[j - 1]], iv, d)
            if mode == LOCAL:
                h = max(h, 0)
                best = max(best, h)
            diag = up_h
            left = h
            H[j] = h
            I[j] = iv
    if mode == GLOBAL:
        return H[n]
    if mode == SEMIGLOBAL:
        return max(H[: n + 1].max(), NEG) if m else 0
    return best


@njit(nogil=True, cache=True)
def first_rows(t, gap_open, gap_extend, mode, H, I):
    """Row 0: H on the border (0 for local and semi-global, whose target start is free), I = -inf."""
    for j in range(t.size + 1):
        H[j] = 0 if mode != GLOBAL else _edge(mode, j, gap_open, gap_extend)
        I[j] = NEG


@njit(nogil=True, cache=True)
def trace_band(dirs, r0, i, j, state, mode, ops):
    """Walk back from cell (i, j) in `state` (0 H, 1 I, 2 D) through the band's rows (r0, ...];
    append one op per step to ops (0 M, 1 I, 2 D) in reverse. Returns (i, j, state, count,
    finished): finished when the alignment's start was reached."""
    count = 0
    while i > r0:
        if j == 0:  # column 0: a local alignment starts here; otherwise the rest is one vertical gap
            if mode == LOCAL:
                return i, j, 0, count, True
            for _ in range(i):
                ops[count] = 1
                count += 1
            return 0, 0, 0, count, True
        cell = dirs[i - r0 - 1, j]
        if state == 0:
            src = cell & 3
            if src == 0:
                return i, j, 0, count, True
            if src == _FROM_M:
                ops[count] = 0
                count += 1
                i -= 1
                j -= 1
            else:
                state = 1 if src == _FROM_I else 2
        elif state == 1:
            ops[count] = 1
            count += 1
            state = 0 if cell & _I_OPEN else 1
            i -= 1
        else:
            ops[count] = 2
            count += 1
            state = 0 if cell & _D_OPEN else 2
            j -= 1
    return i, j, state, count, False


@njit(nogil=True, cache=True)
def columns(q, t, letters, matrix, ops, i, j, columns, cigar):
    """The aligned query, target and match line of ops from (i, j) into columns' rows, and the
    CIGAR text into cigar; returns the CIGAR's length. Compiled: in Python this cost more than
    aligning the 1 kbp DNA pairs themselves."""
    size = 0
    run = 0
    for k in range(ops.size):
        op = ops[k]
        if op == 0:
            a, b = letters[q[i]], letters[t[j]]
            line = 124 if a == b else (43 if matrix[q[i], t[j]] > 0 else 32)
            i += 1
            j += 1
        elif op == 1:
            a, b, line = letters[q[i]], 45, 32
            i += 1
        else:
            a, b, line = 45, letters[t[j]], 32
            j += 1
        columns[0, k], columns[1, k], columns[2, k] = a, b, line
        run += 1
        if k + 1 == ops.size or ops[k + 1] != op:
            size = _write_run(cigar, size, run, op)
            run = 0
    return size


@njit(nogil=True, cache=True, inline="always")
def _write_run(out, at, length, op):
    """'<length><M|I|D>' into out from at; returns the new end."""
    digits = 1
    while length >= 10 ** digits:
        digits += 1
    for k in range(digits):
        out[at + digits - 1 - k] = 48 + length % 10
        length //= 10
    out[at + digits] = (77, 73, 68)[op]
    return at + digits + 1
