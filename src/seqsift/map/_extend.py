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

Why not alignment/_reference.py's Gotoh kernel: it fills whole matrices with local, global or
semi-global ends; a mapper needs a band around the chain (a few dozen diagonals, not the window's
width) and ends that pay a clip penalty, neither of which its modes express. The recurrences and
the gap convention are the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.map.layout import (C_OPS, C_QB, C_QE, C_READ, C_RECORD, C_POSITION, C_RUNS, C_SCORE, C_SPAN, C_STRAND,
                                C_TOTAL, OP_D, OP_I, OP_M, P_AMBIGUOUS, P_BAND, P_CLIP, P_EXTEND, P_MATCH, P_MAX_TRACE,
                                P_MISMATCH, P_OPEN, P_UNGAPPED)

NEG = -(1 << 40)
START, DIAG, DEL, INS = 0, 1, 2, 3  # where H came from (2 bits)
DEL_OPEN, INS_OPEN = 4, 8  # D / I opened here from H (else extended)


@njit(nogil=True, cache=True, boundscheck=False)
def clip_align(q, t, dlo, dhi, match, mismatch, ambiguous, gap_open, gap_extend, clip5, clip3, floor, trace, ops, lens):
    """Align read codes q (int8) to window codes t (int8) on diagonals j - i in [dlo, dhi].
    floor: the score with clip penalties of some alignment in the band (alignment_floor), or
    NEG; no more than the best. trace: int8 scratch of at least (q.size + 1) * (dhi - dlo + 1);
    ops/lens: at least q.size + t.size + 1 entries, filled with the CIGAR (M/I/D runs, first to
    last) between the clips. Returns (score with clip penalties, score without them, qb, qe, tb,
    te, runs).

    The floor prunes the band without changing the answer. A cell of row i whose H is below
    need(i) = floor - (m - i) * match lies on no alignment scoring floor or more (the rest of
    the read adds at most match a base), so it cannot be the best end nor on the traceback's
    path; the cells of a row worth filling are those reached from such cells of the row above
    (its diagonal and the cell above: the columns from one left of the first to the last of
    them), then rightwards while D stays at need(i) or more; where the clip alone (start(i))
    reaches need(i), the whole row. Every value of need(i) or more is then exact (each comes
    from a value of need(i - 1) or more above, or need(i) or more to its left), and every other
    at most its true value, so each comparison the traceback reads (at cells of need(i) or more)
    comes out as in the full band: the same best, ties and CIGAR. Unfilled cells hold NEG."""
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
    alive_lo, alive_hi = 0, width - 1  # cells of the row above with H >= its need
    prev_lo, prev_hi = 0, width - 1  # cells written in prev_h / prev_i
    cur_lo, cur_hi = 0, -1  # and in cur_h / cur_i (two rows above: cleared before reuse)
    for i in range(1, m + 1):
        row_score = score[5 * q[i - 1] : 5 * q[i - 1] + 5]
        start = -clip5
        end_penalty = clip3 if i < m else 0
        row = i * width
        need = floor - (m - i) * match
        for k in range(cur_lo, cur_hi + 1):
            cur_h[k] = NEG
            cur_i[k] = NEG
        # the band's cells inside the matrix (0 <= j <= n); those outside stay NEG
        k_lo = max(0, -(i + dlo))
        k_hi = min(width - 1, n - i - dlo)
        if start >= need:
            first, until = k_lo, k_hi
        else:
            first, until = max(k_lo, alive_lo - 1), min(k_hi, alive_hi)
        new_lo, new_hi = width, -1
        d = NEG
        left = NEG
        k = first
        while k <= k_hi:
            d_open = left - open_extend
            d_ext = d - gap_extend
            d = max(d_open, d_ext)
            if k > until and d < need:  # nothing from above reaches need here, nor further right
                break
            j = i + dlo + k
            i_open = prev_h[k + 1] - open_extend
            i_ext = prev_i[k + 1] - gap_extend
            iv = max(i_open, i_ext)
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
            if h >= need:
                new_lo = min(new_lo, k)
                new_hi = k
            if h - end_penalty >= best:  # ties: the later row, so end-to-end wins over a clip
                best, best_i, best_j = h - end_penalty, i, j
            k += 1
        cur_lo, cur_hi, prev_lo, prev_hi = prev_lo, prev_hi, first, k - 1
        alive_lo, alive_hi = new_lo, new_hi
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
def gapless_budget(match, mismatch, gap_open, gap_extend, clip):
    """The loss (m * match minus score) below which gapless_is_best can judge an alignment:
    the cheapest two of a gap, a clip and a mismatch together (its docstring)."""
    u_mis, u_gap, u_clip = match + mismatch, gap_open + gap_extend, clip + match
    return min(2 * u_gap, u_gap + u_mis, u_gap + u_clip, 2 * u_clip, u_clip + u_mis)


@njit(nogil=True, cache=True, boundscheck=False)
def fewest_differences(q, t, dlo, dhi, limit):
    """The diagonal in dlo .. dhi (window position of the read's first base, the whole read
    inside the window) on which the read differs from the window in the fewest bases, if that
    is at most limit; else -1. Counting stops at limit + 1 on each diagonal."""
    m, n = q.size, t.size
    best, best_differ = -1, limit + 1
    for d in range(max(0, dlo), min(n - m, dhi) + 1):
        differ = 0
        for i in range(m):
            if q[i] != t[d + i] or q[i] > 3:
                differ += 1
                if differ >= best_differ:
                    break
        if differ < best_differ:
            best, best_differ = d, differ
    return best


@njit(nogil=True, cache=True, boundscheck=False)
def gapless_is_best(q, t, diag, dlo, dhi, score, match, mismatch, gap_open, gap_extend, clip):
    """True when the read laid on the window without gaps, its first base at window position
    diag (score `score`, from ungapped), scores more than every other alignment clip_align may
    find on diagonals dlo .. dhi (diag among them): then that DP returns exactly this alignment,
    and need not run. False when that is not proved (the caller runs the DP).

    Why it holds. Call an alignment's loss m * match minus its score: a mismatch adds at least
    u_mis = match + mismatch, a clipped end clip + (bases clipped) * match >= u_clip = clip +
    match, a deletion of L bases open + L * extend >= u_gap = open + extend, an insertion of L
    open + L * (extend + match). Let loss0 be the gapless alignment's (every one of its
    differences a mismatch: reads or windows holding N are not judged here). Another alignment
    beats or ties it only with a loss <= loss0. When loss0 is below each of 2 u_gap, u_gap +
    u_mis, u_gap + u_clip, 2 u_clip and u_clip + u_mis (with bwa's scores below 11: a read
    with two mismatches, loss 10), such an alignment holds at most one of a gap or a clip, and
    then no mismatch besides, so it is one of:
      (i) no gap, no clip: the whole read on another diagonal with at most loss0 // u_mis
          mismatches;
     (ii) one clip of c <= (loss0 - clip) / match bases, no gap: the rest of the read exact on
          one diagonal (this one included);
    (iii) one gap, no clip: an exact prefix on one diagonal and an exact suffix on another
          (a deletion of L from diagonal d to d + L; an insertion of L read bases from d to
          d - L), the gap's cost at most loss0.
    Each is looked for directly (exact runs from either end of the read on each diagonal, and
    mismatches counted until they pass the limit); finding none proves the gapless alignment
    the unique best, so clip_align's traceback (which returns an alignment of the best score)
    gives it, with the same score, ends and CIGAR. tests/map/test_map.py checks it against
    the full-matrix runner-up of tests/naive.py and against clip_align, on random reads built
    to lie near every case."""
    m, n = q.size, t.size
    u_mis, u_clip = match + mismatch, clip + match
    loss0 = m * match - score
    if loss0 >= gapless_budget(match, mismatch, gap_open, gap_extend, clip):
        return False
    for i in range(m):
        if q[i] > 3:
            return False
    for j in range(max(0, dlo), min(n, dhi + m)):
        if t[j] > 3:
            return False
    width = dhi - dlo + 1
    prefix = np.zeros(width, np.int64)  # exact bases from the read's start on each diagonal
    suffix = np.zeros(width, np.int64)  # and from its end
    clipped_ok = m - (loss0 - clip) // match if loss0 >= u_clip else m + 1  # exact run (ii) needs
    allowed = loss0 // u_mis  # mismatches of (i)
    for k in range(width):
        start = dlo + k
        p = 0
        while p < m and 0 <= start + p < n and q[p] == t[start + p]:
            p += 1
        s = 0
        while s < m and 0 <= start + m - 1 - s < n and q[m - 1 - s] == t[start + m - 1 - s]:
            s += 1
        prefix[k], suffix[k] = p, s
        if p >= clipped_ok or s >= clipped_ok:
            return False
        if start != diag and start >= 0 and start + m <= n:
            differ = 0
            for i in range(m):
                if q[i] != t[start + i]:
                    differ += 1
                    if differ > allowed:
                        break
            if differ <= allowed:
                return False
    longest = (loss0 - gap_open) // gap_extend if gap_extend > 0 else width  # a gap costing at most loss0
    for k1 in range(width):
        for gap in range(1, min(longest, width - 1) + 1):
            k2 = k1 + gap  # deletion of gap window bases
            if k2 < width and gap_open + gap * gap_extend <= loss0 and prefix[k1] + suffix[k2] >= m:
                return False
            k2 = k1 - gap  # insertion of gap read bases
            if k2 >= 0 and gap_open + gap * (gap_extend + match) <= loss0 and prefix[k1] + suffix[k2] >= m - gap:
                return False
    return True


@njit(nogil=True, cache=True, boundscheck=False)
def alignment_floor(q, t, d_lo, d_hi, match, mismatch, ambiguous, gap_open, gap_extend, clip):
    """The score with clip penalties (clip_align's objective) of the best of a few alignments
    that lie on diagonals d_lo and d_hi (window positions of the read's first base, both in the
    band): on each, the read without gaps, either end clipped where that pays; and where d_hi >
    d_lo, the read's start on one and its end on the other joined by one gap of d_hi - d_lo
    (a deletion from d_lo to d_hi, an insertion from d_hi to d_lo), split where that scores
    most. A chain's own diagonals hold such an alignment, so the band's best is at least this:
    clip_align's floor. NEG where the read does not fit the window on those diagonals."""
    m, n = q.size, t.size
    if m == 0 or d_lo < 0 or d_hi + m > n:
        return NEG
    best = NEG
    gap = d_hi - d_lo
    lo_sum = np.zeros(m + 1, np.int64)  # lo_sum[i]: the read's first i bases on d_lo, no gaps
    hi_sum = np.zeros(m + 1, np.int64)
    for i in range(m):
        a = q[i]
        for which in range(2):
            b = t[(d_lo if which == 0 else d_hi) + i]
            s = -ambiguous if a > 3 or b > 3 else (match if a == b else -mismatch)
            if which == 0:
                lo_sum[i + 1] = lo_sum[i] + s
            else:
                hi_sum[i + 1] = hi_sum[i] + s
    for which in range(1 if gap == 0 else 2):
        sums = lo_sum if which == 0 else hi_sum
        # clipped ends: the read's bases [a, b) on this diagonal, clip paid for a > 0 and b < m
        low = sums[0]  # the least sums[a] (plus clip where a > 0) over starts a < b
        for b in range(1, m + 1):
            best = max(best, sums[b] - low - (clip if b < m else 0))
            low = min(low, sums[b] + clip)
    if gap > 0:
        cost = gap_open + gap * gap_extend
        for split in range(1, m):  # deletion: [0, split) on d_lo, [split, m) on d_hi
            best = max(best, lo_sum[split] + hi_sum[m] - hi_sum[split] - cost)
        for split in range(1, m - gap):  # insertion: [0, split) on d_hi, [split + gap, m) on d_lo
            best = max(best, hi_sum[split] + lo_sum[m] - lo_sum[split + gap] - cost)
    return best


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



@njit(nogil=True, cache=True, boundscheck=False)
def place_chain(read, diag_lo, diag_hi, anchor, ref, rec_starts, rec_lengths, params, trace, ops, lens):
    """The best clip-aware alignment of an oriented read in the window of a chain whose
    diagonals (text positions of the read's first base) run from diag_lo to diag_hi, inside the
    record holding text position anchor. The window reaches `band` bases beyond the chain's
    diagonals, clipped to the record; a chain on one diagonal whose read differs from the text
    in at most params[P_UNGAPPED] bases, or for which gapless_is_best proves it, is its own
    optimum (ungapped), and so is a wider chain's best diagonal where gapless_is_best proves it
    over the whole band. trace, ops and lens must hold (read + 1) x band width bytes and read +
    window + 1 runs. Returns (found, record,
    position in the record, qb, qe, score, total, reference span, runs); found is 0 for none, -1
    when the trace would pass params[P_MAX_TRACE] bytes or the scratch is too small (the caller
    grows it and calls again only in that second case)."""
    m = read.size
    band = params[P_BAND]
    record = np.searchsorted(rec_starts, anchor, "right") - 1
    rec_start = rec_starts[record]
    rec_end = rec_start + rec_lengths[record]
    lo = max(rec_start, diag_lo - band)
    hi = min(rec_end, diag_hi + m + band)
    if hi <= lo or m == 0:
        return 0, record, 0, 0, 0, 0, 0, 0, 0
    window = ref[lo:hi]
    if ops.size < m + window.size + 1 or lens.size < m + window.size + 1:
        return -1, record, 0, 0, 0, 0, 0, 0, 0
    if diag_lo == diag_hi and lo <= diag_lo and diag_lo + m <= hi:
        score, differ = ungapped(read, window, diag_lo - lo, params[P_MATCH], params[P_MISMATCH], params[P_AMBIGUOUS])
        if differ <= params[P_UNGAPPED] or gapless_is_best(read, window, diag_lo - lo, diag_lo - lo - band,
                                                            diag_lo - lo + band, score, params[P_MATCH],
                                                            params[P_MISMATCH], params[P_OPEN], params[P_EXTEND],
                                                            params[P_CLIP]):
            ops[0] = OP_M
            lens[0] = m
            return 1, record, diag_lo - rec_start, 0, m, score, score, m, 1
    dlo, dhi = diag_lo - lo - band, diag_hi - lo + band
    need = (m + 1) * (dhi - dlo + 1)
    if need > params[P_MAX_TRACE]:
        return 0, record, 0, 0, 0, 0, 0, 0, 0
    if diag_hi > diag_lo:  # a wide window (mate rescue, a chain across an indel): one diagonal may still be best
        match, mismatch = params[P_MATCH], params[P_MISMATCH]
        limit = (gapless_budget(match, mismatch, params[P_OPEN], params[P_EXTEND], params[P_CLIP]) - 1) // (
            match + mismatch)
        d = fewest_differences(read, window, max(dlo, 0), dhi, limit)
        if d >= 0:
            score, differ = ungapped(read, window, d, match, mismatch, params[P_AMBIGUOUS])
            if gapless_is_best(read, window, d, dlo, dhi, score, match, mismatch, params[P_OPEN], params[P_EXTEND],
                               params[P_CLIP]):
                ops[0] = OP_M
                lens[0] = m
                return 1, record, lo + d - rec_start, 0, m, score, score, m, 1
    if trace.size < need:
        return -1, record, 0, 0, 0, 0, 0, 0, 0
    floor = alignment_floor(read, window, diag_lo - lo, diag_hi - lo, params[P_MATCH], params[P_MISMATCH],
                            params[P_AMBIGUOUS], params[P_OPEN], params[P_EXTEND], params[P_CLIP])
    total, score, qb, qe, tb, te, runs = clip_align(read, window, dlo, dhi, params[P_MATCH], params[P_MISMATCH],
                                                    params[P_AMBIGUOUS], params[P_OPEN], params[P_EXTEND],
                                                    params[P_CLIP], params[P_CLIP], floor, trace, ops, lens)
    if runs == 0:
        return 0, record, 0, 0, 0, 0, 0, 0, 0
    return 1, record, lo + tb - rec_start, qb, qe, score, total, te - tb, runs


@njit(nogil=True, cache=True, boundscheck=False)
def settled_chain(m, diag, anchor, score, rec_starts, ops, lens):
    """place_chain's answer for the one chain of a read of m bases the quick search settled
    (_chains.settled_reads): the read laid without gaps on the chain's one diagonal, inside its
    record, proved the best in the band by the same test place_chain makes (few differences or
    gapless_is_best), with the score settled_reads found there; neither that test nor the
    reference is read again."""
    record = np.searchsorted(rec_starts, anchor, "right") - 1
    ops[0] = OP_M
    lens[0] = m
    return 1, record, diag - rec_starts[record], 0, m, score, score, m, 1


@njit(nogil=True, cache=True, boundscheck=False)
def place_chains(forward, reverse, bounds, offsets, strand, diag_lo, diag_hi, anchor, weight, drop_ratio, max_chains,
                 ref, rec_starts, rec_lengths, params, settled, gapless, table, ops_all, lens_all):
    """place_chain on each read's strongest chains (those weighing at least drop_ratio[0] of its
    best, at most max_chains), into table (C_* columns a row; as many rows as chains suffice)
    and ops_all/lens_all: the runs of row k are ops_all[table[k, C_OPS]:][:table[k, C_RUNS]].
    Read r is forward[bounds[r]:bounds[r+1]] and, reverse-complemented,
    reverse[size - bounds[r+1]:size - bounds[r]]. settled: per read, 1 where the quick search
    settled it (its one chain placed by settled_chain with its score gapless[r], the same
    answer), or empty. Returns
    (placements, runs used), or (-1, runs needed so far) when ops_all is too small (the caller
    grows it and calls again)."""
    size = forward.size
    n = 0
    used = 0
    trace = np.empty(1 << 16, np.int8)
    ops = np.empty(1024, np.int64)
    lens = np.empty(1024, np.int64)
    for r in range(bounds.size - 1):
        first, last = offsets[r], offsets[r + 1]
        if last == first:
            continue
        lo, hi = bounds[r], bounds[r + 1]
        floor = drop_ratio[0] * weight[first]
        for c in range(first, min(last, first + max_chains)):
            if weight[c] < floor:
                break
            read = forward[lo:hi] if strand[c] == 0 else reverse[size - hi : size - lo]
            if settled.size and settled[r]:
                found, record, position, qb, qe, score, total, span, runs = settled_chain(
                    hi - lo, diag_lo[c], anchor[c], gapless[r], rec_starts, ops, lens)
            else:
                found, record, position, qb, qe, score, total, span, runs = place_chain(
                    read, diag_lo[c], diag_hi[c], anchor[c], ref, rec_starts, rec_lengths, params, trace, ops, lens)
            if found < 0:  # scratch too small for this chain: grow it and align again
                band = params[P_BAND]
                width = diag_hi[c] - diag_lo[c] + 2 * band + 1
                trace = np.empty(2 * (hi - lo + 1) * width, np.int8)
                ops = np.empty(2 * (2 * (hi - lo) + width + 1), np.int64)
                lens = np.empty_like(ops)
                found, record, position, qb, qe, score, total, span, runs = place_chain(
                    read, diag_lo[c], diag_hi[c], anchor[c], ref, rec_starts, rec_lengths, params, trace, ops, lens)
            if found <= 0:
                continue
            if used + runs > ops_all.size:
                return -1, 2 * (used + runs)
            ops_all[used : used + runs] = ops[:runs]
            lens_all[used : used + runs] = lens[:runs]
            row = table[n]
            row[C_READ], row[C_RECORD], row[C_POSITION], row[C_STRAND] = r, record, position, strand[c]
            row[C_QB], row[C_QE], row[C_SCORE], row[C_TOTAL], row[C_SPAN] = qb, qe, score, total, span
            row[C_OPS], row[C_RUNS] = used, runs
            used += runs
            n += 1
    return n, used
