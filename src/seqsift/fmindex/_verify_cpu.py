"""CPU kernels that verify candidate places of a read on the reference: Hamming distance,
Myers' bit-parallel edit distance (every start position of a window at once) and an edit
alignment's traceback. Shared by approximate search (approx.py) and, next, the read mapper:
they work on flat arrays of codes and know nothing of seeds or output.

Codes: read bases 0-3, anything else 255; the reference is the index's 2-bit packed text plus
its gaps (runs of '#'/'$': N and other letters, record joins). A read's N and a reference's N
match nothing. Windows are always clipped to one record by the caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

NO_BASE = 4  # a window position that matches nothing (N in the reference)
OP_MATCH, OP_INS, OP_DEL = 0, 1, 2  # traceback operations: read and text advance, read only, text only
_ONE = uint64(1)


@njit(nogil=True, cache=True)
def unpack_window(packed, gap_starts, gap_ends, start, end, out):
    """Reference bases [start, end) into out[:end - start] as codes 0-3, NO_BASE inside a gap."""
    for t in range(start, end):
        out[t - start] = (packed[t >> 2] >> ((t & 3) * 2)) & 3
    g = np.searchsorted(gap_ends, start, "right")  # the first gap ending after start
    while g < gap_starts.size and gap_starts[g] < end:
        for t in range(max(gap_starts[g], start), min(gap_ends[g], end)):
            out[t - start] = NO_BASE
        g += 1


@njit(nogil=True, cache=True)
def strand_codes(codes, lo, hi, strand, out):
    """The read codes[lo:hi] (strand 0) or its reverse complement (strand 1) into out; 255 stays."""
    m = hi - lo
    for i in range(m):
        c = codes[lo + i] if strand == 0 else codes[hi - 1 - i]
        out[i] = c if c > 3 or strand == 0 else 3 - c


@njit(nogil=True, cache=True)
def hamming(read, m, window, limit):
    """Mismatches of read[:m] against window[:m] (N never matches), or limit + 1 once past limit."""
    d = 0
    for i in range(m):
        if read[i] > 3 or read[i] != window[i]:
            d += 1
            if d > limit:
                return limit + 1
    return d


@njit(nogil=True, cache=True)
def myers_start_scores(read, m, window, n, peq, pv, mv, out):
    """out[s] = the fewest edits aligning all of read[:m] to some window[s:e] (e <= n), for every
    s in [0, n): Myers' bit-parallel algorithm (Myers 1999, with Hyyro's block carries, as in
    edlib) run over the reversed read and the reversed window, so a column's score is the best
    over every end. peq, pv, mv: scratch of 4 x words, words and words uint64, words = ceil(m/64)."""
    words = (m + 63) // 64
    for c in range(4):
        for w in range(words):
            peq[c, w] = uint64(0)
    for i in range(m):  # bit i of the reversed read is read[m - 1 - i]
        c = read[m - 1 - i]
        if c <= 3:
            peq[c, i >> 6] |= _ONE << uint64(i & 63)
    for w in range(words):
        pv[w] = ~uint64(0)
        mv[w] = uint64(0)
    last = uint64((m - 1) & 63)
    score = m
    for s in range(n - 1, -1, -1):
        c = window[s]
        hin = np.int64(0)  # the top row is 0 everywhere: the alignment may start anywhere (here: end anywhere)
        for w in range(words):
            eq = peq[c, w] if c <= 3 else uint64(0)
            p, q = pv[w], mv[w]
            hneg = _ONE if hin < 0 else uint64(0)
            hpos = _ONE if hin > 0 else uint64(0)
            xv = eq | q
            eq |= hneg
            xh = (((eq & p) + p) ^ p) | eq
            ph = q | ~(xh | p)
            mh = p & xh
            if w == words - 1:
                score += np.int64((ph >> last) & _ONE) - np.int64((mh >> last) & _ONE)
            hin = np.int64(ph >> uint64(63)) - np.int64(mh >> uint64(63))  # -1, 0 or 1: signed
            ph = (ph << _ONE) | hpos
            mh = (mh << _ONE) | hneg
            pv[w] = mh | ~(xv | ph)
            mv[w] = ph & xv
        out[s] = score


@njit(nogil=True, cache=True)
def edit_traceback(read, m, window, n, ops):
    """An alignment of all of read[:m] to window[0:e] with the fewest edits over every e <= n
    (the shortest e on ties), by dynamic programming; its operations go to ops (OP_MATCH for a
    match or mismatch, OP_INS a read base against no text, OP_DEL a text base against no read
    base), first to last. Returns (edits, operations, e)."""
    d = np.empty((m + 1, n + 1), np.int64)
    for j in range(n + 1):
        d[0, j] = j  # the start is fixed at window[0]: skipped text bases cost
    for i in range(1, m + 1):
        d[i, 0] = i
        for j in range(1, n + 1):
            sub = d[i - 1, j - 1] + (0 if read[i - 1] <= 3 and read[i - 1] == window[j - 1] else 1)
            d[i, j] = min(sub, d[i - 1, j] + 1, d[i, j - 1] + 1)
    e = 0
    for j in range(1, n + 1):
        if d[m, j] < d[m, e]:
            e = j
    i, j, k = m, e, 0
    while i > 0 or j > 0:  # walks back preferring diagonal steps, then insertions
        if i > 0 and j > 0 and d[i, j] == d[i - 1, j - 1] + (0 if read[i - 1] <= 3 and read[i - 1] == window[j - 1] else 1):
            ops[k] = OP_MATCH
            i -= 1
            j -= 1
        elif i > 0 and d[i, j] == d[i - 1, j] + 1:
            ops[k] = OP_INS
            i -= 1
        else:
            ops[k] = OP_DEL
            j -= 1
        k += 1
    ops[:k] = ops[:k][::-1].copy()
    return d[m, e], k, e


@njit(nogil=True, cache=True)
def verify_candidates(codes, bounds, packed, gap_starts, gap_ends, rec_starts, rec_ends, cand_read, cand_strand,
                      cand_rec, cand_diag, errors, edit, out_read, out_pos, out_strand, out_diff):
    """Verify every candidate of a batch; returns how many places went to out_*.

    Candidates are (read, strand, record, diagonal) sorted in that order without duplicates:
    the read (strand 1: its reverse complement) may lie at text position `diagonal`, up to
    `errors` bases either way with edit distance. Hamming: each diagonal inside its record with
    at most `errors` mismatches is a place. Edit: the start windows [diagonal - errors, diagonal
    + errors] of a (read, strand, record) are merged, Myers gives every start's fewest edits,
    and the starts within `errors` of each other are one place, reported at its start with the
    fewest edits (the leftmost on ties). Places come out per (read, strand) in text order.
    The out_* arrays need room for 2 x candidates places: clusters are more than `errors`
    apart, so a merged interval of c windows (each 2 errors + 1 starts wide) holds at most 2c."""
    longest = 1
    for r in range(bounds.size - 1):
        longest = max(longest, bounds[r + 1] - bounds[r])
    read = np.empty(longest, np.uint8)
    words = (longest + 63) // 64
    peq = np.empty((4, words), np.uint64)
    pv = np.empty(words, np.uint64)
    mv = np.empty(words, np.uint64)
    window = np.empty(64, np.uint8)
    scores = np.empty(64, np.int64)
    found = 0
    k = 0
    nc = cand_read.size
    while k < nc:
        r, strand = cand_read[k], cand_strand[k]
        lo, hi = bounds[r], bounds[r + 1]
        m = hi - lo
        strand_codes(codes, lo, hi, strand, read)
        group_end = k
        while group_end < nc and cand_read[group_end] == r and cand_strand[group_end] == strand:
            group_end += 1
        if not edit:
            for c in range(k, group_end):
                s = cand_diag[c]
                rs, re = rec_starts[cand_rec[c]], rec_ends[cand_rec[c]]
                if s < rs or s + m > re:
                    continue
                if window.size < m:
                    window = np.empty(2 * m, np.uint8)
                unpack_window(packed, gap_starts, gap_ends, s, s + m, window)
                d = hamming(read, m, window, errors)
                if d <= errors:
                    out_read[found], out_pos[found], out_strand[found], out_diff[found] = r, s, strand, d
                    found += 1
            k = group_end
            continue
        # edit: merged start intervals, then clusters of qualifying starts across them
        c = k
        cluster_rec = -1
        cluster_last = 0
        best_pos = 0
        best_d = 0
        while c < group_end:
            rec = cand_rec[c]
            rs, re = rec_starts[rec], rec_ends[rec]
            a = max(cand_diag[c] - errors, rs)
            b = min(cand_diag[c] + errors, re - (m - errors))
            c += 1
            while c < group_end and cand_rec[c] == rec and cand_diag[c] - errors <= b + 1:
                b = max(b, min(cand_diag[c] + errors, re - (m - errors)))
                c += 1
            if b < a:
                continue
            end = min(b + m + errors, re)
            n = end - a
            if window.size < n:
                window = np.empty(2 * n, np.uint8)
                scores = np.empty(2 * n, np.int64)
            unpack_window(packed, gap_starts, gap_ends, a, end, window)
            myers_start_scores(read, m, window, n, peq, pv, mv, scores)
            for s in range(a, b + 1):
                d = scores[s - a]
                if d > errors:
                    continue
                if cluster_rec == rec and s - cluster_last <= errors:
                    if d < best_d:
                        best_pos, best_d = s, d
                else:
                    if cluster_rec >= 0:
                        out_read[found], out_pos[found], out_strand[found], out_diff[found] = r, best_pos, strand, best_d
                        found += 1
                    cluster_rec = rec
                    best_pos, best_d = s, d
                cluster_last = s
        if cluster_rec >= 0:
            out_read[found], out_pos[found], out_strand[found], out_diff[found] = r, best_pos, strand, best_d
            found += 1
        k = group_end
    return found
