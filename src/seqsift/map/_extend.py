"""The extension kernel: a read against a reference window, banded around the chain's
diagonals, with affine gaps and a penalty for clipping either end of the read.

Objective (one pass, with traceback): the best score of an alignment of a read stretch
[qb, qe) to a reference stretch [tb, te) of the window, counting match/mismatch/gap scores
minus clip5 when qb > 0 and clip3 when qe < m. bwa mem reaches nearly the same answer in two
steps (ksw_extend from the seed to each end keeps the local end unless the end-to-end one
scores within the clip penalty of it, then ksw_global for the CIGAR); a single clip-aware DP
finds the optimum of that rule directly and costs one band instead of three.

Gotoh's recurrences (a gap of L costs gap_open + L * gap_extend), rows i = read bases used,
columns j = window bases used; cell (i, j) is stored at column k = j - i - dlo of the band:
    D[i][j] = max(H[i][j-1] - open - extend, D[i][j-1] - extend)   deletion (window base, no read base)
    I[i][j] = max(H[i-1][j] - open - extend, I[i-1][j] - extend)   insertion (read base, no window base)
    H[i][j] = max(start(i), H[i-1][j-1] + s(q_i, t_j), D[i][j], I[i][j])
start(i) = 0 at i = 0 and -clip5 elsewhere (the read's first i bases clipped); the window's
ends are free. Codes: 0-3 bases, 4 any other letter (scores `ambiguous` against anything).
"""

from __future__ import annotations

import numpy as np
from numba import njit

NEG = -(1 << 40)
START, DIAG, DEL, INS = 0, 1, 2, 3  # where H came from (2 bits)
DEL_OPEN, INS_OPEN = 4, 8  # D / I opened here from H (else extended)
OP_M, OP_I, OP_D = 0, 1, 2  # SAM's numbering of CIGAR operations


@njit(nogil=True, cache=True, boundscheck=False)
def clip_align(q, t, dlo, dhi, match, mismatch, ambiguous, gap_open, gap_extend, clip5, clip3, trace, ops, lens):
    """Align read codes q (int8) to window codes t (int8) on diagonals j - i in [dlo, dhi].
    trace: int8 scratch of at least (q.size + 1) * (dhi - dlo + 1); ops/lens: at least
    q.size + t.size + 1 entries, filled with the CIGAR (M/I/D runs, first to last) between the
    clips. Returns (score with clip penalties, score without them, qb, qe, tb, te, runs)."""
    m, n = q.size, t.size
    width = dhi - dlo + 1
    open_extend = gap_open + gap_extend
    # H and I of the previous and current rows; one more cell past the band stays NEG, so the
    # cell above the band's last is read without a test
    prev_h = np.full(width + 1, NEG, np.int64)
    prev_i = np.full(width + 1, NEG, np.int64)
    cur_h = np.full(width + 1, NEG, np.int64)
    cur_i = np.full(width + 1, NEG, np.int64)
    score = np.empty(25, np.int64)  # score[5 * a + b] of read code a against window code b
    for a in range(5):
        for b in range(5):
            score[5 * a + b] = -ambiguous if a > 3 or b > 3 else (match if a == b else -mismatch)
    best, best_i, best_j = NEG, 0, 0
    end0 = -clip3 if m > 0 else 0
    for k in range(width):
        j = dlo + k
        trace[k] = START
        if 0 <= j <= n:
            prev_h[k] = 0
            if end0 > best:
                best, best_i, best_j = end0, 0, j
    for i in range(1, m + 1):
        row_score = score[5 * q[i - 1] : 5 * q[i - 1] + 5]
        start = -clip5
        end_penalty = clip3 if i < m else 0
        row = i * width
        # the band's cells inside the matrix (0 <= j <= n); those outside stay NEG
        k_lo = max(0, -(i + dlo))
        k_hi = min(width - 1, n - i - dlo)
        for k in range(width):
            if k < k_lo or k > k_hi:
                cur_h[k] = NEG
                cur_i[k] = NEG
                trace[row + k] = START
        d = NEG
        left = NEG
        for k in range(k_lo, k_hi + 1):
            j = i + dlo + k
            i_open = prev_h[k + 1] - open_extend
            i_ext = prev_i[k + 1] - gap_extend
            iv = max(i_open, i_ext)
            d_open = left - open_extend
            d_ext = d - gap_extend
            d = max(d_open, d_ext)
            # at j = 0 the diagonal's cell lies outside the matrix: prev_h[k] is NEG there
            diag = prev_h[k] + row_score[t[j - 1] if j > 0 else 4]
            h = start
            src = START
            if diag >= h:
                h = diag
                src = DIAG
            if d > h:
                h = d
                src = DEL
            if iv > h:
                h = iv
                src = INS
            trace[row + k] = src | (DEL_OPEN if d_open >= d_ext else 0) | (INS_OPEN if i_open >= i_ext else 0)
            cur_h[k] = h
            cur_i[k] = iv
            left = h
            if h - end_penalty >= best:  # ties: the later row, so end-to-end wins over a clip
                best, best_i, best_j = h - end_penalty, i, j
        prev_h, cur_h = cur_h, prev_h
        prev_i, cur_i = cur_i, prev_i
    # traceback from the best end, runs collected backwards then reversed
    i, j = best_i, best_j
    state = START
    runs = 0
    while True:
        cell = trace[i * width + j - i - dlo]
        if state == START:
            src = cell & 3
            if src == START:
                break
            if src == DIAG:
                op = OP_M
                i -= 1
                j -= 1
            else:
                state = src
                continue
        elif state == DEL:
            op = OP_D
            if cell & DEL_OPEN:
                state = START
            j -= 1
        else:
            op = OP_I
            if cell & INS_OPEN:
                state = START
            i -= 1
        if runs > 0 and ops[runs - 1] == op:
            lens[runs - 1] += 1
        else:
            ops[runs] = op
            lens[runs] = 1
            runs += 1
    for a in range(runs // 2):
        b = runs - 1 - a
        ops[a], ops[b] = ops[b], ops[a]
        lens[a], lens[b] = lens[b], lens[a]
    aligned = best + (clip5 if i > 0 else 0) + (clip3 if best_i < m else 0)
    return best, aligned, i, best_i, j, best_j, runs


@njit(nogil=True, cache=True, boundscheck=False)
def ungapped(q, t, diag, match, mismatch, ambiguous):
    """(score, bases that do not match) of the read laid on the window without gaps, its first
    base at window position diag (the caller checks that it fits). With none, or one where
    clipping and gaps cost more than it (MapOptions.ungapped_limit), no alignment scores more,
    so the band need not be filled."""
    score = 0
    differ = 0
    for i in range(q.size):
        a, b = q[i], t[diag + i]
        if a > 3 or b > 3:
            score -= ambiguous
            differ += 1
        elif a == b:
            score += match
        else:
            score -= mismatch
            differ += 1
    return score, differ


@njit(nogil=True, cache=True, boundscheck=False)
def differences(q, ref, qb, ops, lens, at, length):
    """SAM's NM of an alignment (q from base qb against ref from its start, CIGAR runs ops/lens)
    and its MD as events: at[e] (window offset) and length[e] (0 a differing base, else a
    deletion of that many). Returns (NM, events). N matches nothing (samtools calmd's rule)."""
    i, j, nm, events = qb, 0, 0, 0
    for r in range(ops.size):
        n = lens[r]
        if ops[r] == OP_M:
            for k in range(n):
                a, b = q[i + k], ref[j + k]
                if a != b or a > 3:
                    at[events] = j + k
                    length[events] = 0
                    events += 1
                    nm += 1
            i += n
            j += n
        elif ops[r] == OP_I:
            i += n
            nm += n
        else:
            at[events] = j
            length[events] = n
            events += 1
            j += n
            nm += n
    return nm, events
