"""The paired-end kernel: pairs.PairBatches._pair for the pairs _report.pair_choices leaves (an end
with several candidates, or a mate to rescue), step for step, so that report_pairs writes them
too (batch_sam.py calls it precompiled). tests/map/test_pairs.py compares it with the Python
path on every pair.

Mate rescue aligns the mate over the insert size's window with the extension kernel
(_extend.place_chain, as Extender.place calls it); a rescued alignment becomes a new row of the
placement table. Most windows hold no alignment scoring min_score (the anchor lies in a repeat
shorter than the insert): before any, the windows a batch's rescues may align are scored by the
alignment engine's many-pairs Smith-Waterman (alignment._pairs.fill, 32 windows in vector lanes,
local, the same match, mismatch and gap scores), and place_chain runs only where that bound
reaches min_score. The bound holds: place_chain's alignment is a local alignment of the read in
that window, so its score (SAM's AS, clips not counted) is at most the best local score; reads or
windows holding N (scored `ambiguous` by place_chain, a mismatch by fill) are not bounded. A
pair whose chosen ends need more than one record (a supplementary part, or -a's secondary ones)
is left to the Python path, as choose_one leaves such reads."""

import math

import numpy as np
from numba import njit

from seqsift.alignment._pairs import fill
from seqsift.alignment.pairs import LIMIT, N, PAIR_LANES, TARGET_N
from seqsift.map._extend import place_chain
from seqsift.map._report import R_MATCH, R_MIN_SCORE, R_MISMATCH, R_SEED_LENGTH, choose_ordered, insert_ranked, mapq
from seqsift.map.layout import (C_OPS, C_POSITION, C_QB, C_QE, C_READ, C_RECORD, C_RUNS, C_SCORE, C_SPAN, C_STRAND,
                                C_TOTAL, P_BAND, P_MATCH, P_MISMATCH, P_OPEN, P_EXTEND)

NO_BOUND = 1 << 30  # a rescue window whose best score is not bounded beforehand
CELLS = 1 << 21  # cells of one bounding call (x PAIR_LANES direction bytes: 64 MiB)


@njit(inline="always", nogil=True)
def _facing(table, a, b):
    """pairs._facing: the outer distance of rows a and b facing each other on one record, else -1."""
    if table[a, C_RECORD] != table[b, C_RECORD] or table[a, C_STRAND] == table[b, C_STRAND]:
        return -1
    forward, reverse = (a, b) if table[a, C_STRAND] == 0 else (b, a)
    reverse_end = table[reverse, C_POSITION] + table[reverse, C_SPAN]
    if table[forward, C_POSITION] > reverse_end:
        return -1
    return reverse_end - table[forward, C_POSITION]


@njit(inline="always", nogil=True)
def _within(d, low, high):
    return d >= 0 and low <= d <= high


@njit(nogil=True, cache=True)
def _top(table, first, last, candidates, out):
    """choose.ranked(rows [first, last))[:candidates] into out; returns how many."""
    for k in range(last - first):
        insert_ranked(table, out, 0, k, first + k)
    return min(last - first, candidates)


@njit(nogil=True, cache=True)
def _rescue(table, n, ops_all, lens_all, used, read, k, anchors, n_anchors, mates, n_mates, ref, rec_starts,
            rec_lengths, params, min_score, insert, unpaired, scratch, bound, slot):
    """pairs.PairBatches._rescue: read k (oriented codes read[0] forward, read[1] reverse) aligned
    in the window of each of the two first anchors that needs it; each alignment scoring
    min_score becomes table row n, n + 1, ... and joins mates[n_mates:]. scratch: (trace, ops,
    lens) of place_chain, grown here; bound[slot + i]: the best local score in anchor i's window
    (NO_BOUND where not known). Returns (rows, runs used, mates), rows -1 when table or ops_all
    is too small."""
    low, high = int(insert[2]), int(insert[3])
    best = _best_score(table, anchors, n_anchors)
    trace, ops, lens = scratch
    for i in range(min(2, n_anchors)):
        a = anchors[i]
        if not _wants_rescue(table, a, best, min_score, unpaired, mates, n_mates, low, high):
            continue
        if bound[slot + i] < min_score:  # no alignment in the window scores min_score
            continue
        strand, lo, hi, anchor = _window(table, a, read[0].size, low, high, rec_starts, rec_lengths)
        codes = read[strand]
        found, rec, position, qb, qe, score, total, span, runs = place_chain(
            codes, lo, hi, anchor, ref, rec_starts, rec_lengths, params, trace, ops, lens)
        if found < 0:  # Extender.place: the scratch grown once
            width = hi - lo + 2 * params[P_BAND] + 1
            trace = np.empty(2 * (codes.size + 1) * width, np.int8)
            ops = np.empty(2 * (2 * codes.size + width + 1), np.int64)
            lens = np.empty_like(ops)
            found, rec, position, qb, qe, score, total, span, runs = place_chain(
                codes, lo, hi, anchor, ref, rec_starts, rec_lengths, params, trace, ops, lens)
        if found <= 0 or score < min_score:
            continue
        if n >= table.shape[0] or used + runs > ops_all.size:
            return -1, used, n_mates, (trace, ops, lens)
        ops_all[used : used + runs] = ops[:runs]
        lens_all[used : used + runs] = lens[:runs]
        row = table[n]
        row[C_READ], row[C_RECORD], row[C_POSITION], row[C_STRAND] = k, rec, position, strand
        row[C_QB], row[C_QE], row[C_SCORE], row[C_TOTAL], row[C_SPAN] = qb, qe, score, total, span
        row[C_OPS], row[C_RUNS] = used, runs
        used += runs
        mates[n_mates] = n
        n_mates += 1
        n += 1
    return n, used, n_mates, (trace, ops, lens)


@njit(inline="always", nogil=True)
def _oriented(forward, reverse, bounds, k):
    """Read k's codes forward and reverse-complemented (reverse holds the batch's reads reversed
    as one array, so read k's lie at the mirror of its bounds)."""
    size = forward.size
    return forward[bounds[k] : bounds[k + 1]], reverse[size - bounds[k + 1] : size - bounds[k]]


@njit(inline="always", nogil=True)
def _best_score(table, anchors, n_anchors):
    """The best score among the anchors (0 where there are none)."""
    best = 0
    for i in range(n_anchors):
        best = max(best, table[anchors[i], C_SCORE]) if i else table[anchors[i], C_SCORE]
    return best


@njit(inline="always", nogil=True)
def _wants_rescue(table, a, best, min_score, unpaired, mates, n_mates, low, high):
    """Whether anchor row a's mate is looked for in its window (pairs.PairBatches._rescue): the
    anchor scores within `unpaired` of the best and min_score, and no mate already faces it at a
    likely insert size. _rescue and _slots must agree on this, so it is said once."""
    if table[a, C_SCORE] < max(min_score, best - unpaired):
        return False
    for j in range(n_mates):
        if _within(_facing(table, a, mates[j]), low, high):
            return False
    return True


@njit(inline="always", nogil=True)
def _window(table, a, length, low, high, rec_starts, rec_lengths):
    """(strand, first and last text position of the mate's first base, anchor) of the window
    where anchor row a's mate (length bases) lies at an insert size in [low, high], inside a's
    record (pairs.PairBatches._rescue)."""
    record = table[a, C_RECORD]
    start, record_length = rec_starts[record], rec_lengths[record]
    if table[a, C_STRAND] == 0:  # the mate is reverse, ending within [position + low, position + high]
        lo, hi = table[a, C_POSITION] + low - length, table[a, C_POSITION] + high - length
    else:  # the mate is forward, starting within [end - high, end - low]
        end = table[a, C_POSITION] + table[a, C_SPAN]
        lo, hi = end - high, end - low
    lo, hi = max(lo, 0), min(max(hi, lo), record_length)
    return 1 - table[a, C_STRAND], start + lo, start + hi, start + min(table[a, C_POSITION], record_length - 1)


@njit(nogil=True, cache=True)
def _slots(table, k, anchors, n_anchors, certain, mates, n_mates, read, rec_starts, rec_lengths, params, insert,
           unpaired, min_score, jobs, count, slot):
    """The windows _rescue may align read k in from anchors[:2] (the first `certain` of them
    known now), appended to jobs (slot, read, strand, window start, window end) from row count;
    a window is left out where _rescue surely skips it (an anchor below the threshold or a mate
    already facing it) or where it holds N. Returns the new count."""
    low, high = int(insert[2]), int(insert[3])
    best = _best_score(table, anchors, n_anchors)
    band = params[P_BAND]
    for i in range(min(2, certain)):
        a = anchors[i]
        if not _wants_rescue(table, a, best, min_score, unpaired, mates, n_mates, low, high):
            continue
        strand, lo, hi, anchor = _window(table, a, read[0].size, low, high, rec_starts, rec_lengths)
        record = np.searchsorted(rec_starts, anchor, "right") - 1  # place_chain's window
        w0 = max(rec_starts[record], lo - band)
        w1 = min(rec_starts[record] + rec_lengths[record], hi + read[0].size + band)
        if w1 <= w0 or w1 - w0 >= LIMIT:
            continue
        jobs[count, 0], jobs[count, 1], jobs[count, 2], jobs[count, 3], jobs[count, 4] = slot + i, k, strand, w0, w1
        count += 1
    return count


@njit(nogil=True, cache=True)
def _bounds(jobs, count, forward, reverse, bounds, ref, params, bound):
    """bound[slot] of each job: the best local Smith-Waterman score of its read in its window
    (alignment._pairs.fill, up to PAIR_LANES windows a call, each call's direction bytes at most
    CELLS x PAIR_LANES); jobs whose read or window holds N, or that alone pass CELLS, keep
    NO_BOUND."""
    size = forward.size
    usable = np.zeros(count, np.bool_)
    for x in range(count):
        k, w0, w1 = jobs[x, 1], jobs[x, 3], jobs[x, 4]
        m = bounds[k + 1] - bounds[k]
        ok = 0 < m < LIMIT and m * (w1 - w0 + 1) <= CELLS  # 16-bit scores; bounded direction bytes
        for j in range(w0, w1):
            ok &= ref[j] < 4
        for j in range(bounds[k], bounds[k + 1]):
            ok &= forward[j] < 4
        usable[x] = ok
    space = np.empty(0, np.uint8)  # the direction bytes, reused from call to call
    best = np.empty(PAIR_LANES, np.int16)
    best_i, best_j = np.empty(PAIR_LANES, np.int64), np.empty(PAIR_LANES, np.int64)
    rows = np.zeros(PAIR_LANES, np.int64)
    lane_job = np.empty(PAIR_LANES, np.int64)
    match, mismatch = np.int16(params[P_MATCH]), np.int16(-params[P_MISMATCH])
    open_extend, extend = np.int16(params[P_OPEN] + params[P_EXTEND]), np.int16(params[P_EXTEND])
    x = 0
    while x < count:
        lanes, m, n = 0, 1, 1  # the call's jobs, longest read and window
        while x < count and lanes < PAIR_LANES:
            if usable[x]:
                k, w0, w1 = jobs[x, 1], jobs[x, 3], jobs[x, 4]
                longer_m, longer_n = max(m, bounds[k + 1] - bounds[k]), max(n, w1 - w0)
                if lanes and longer_m * (longer_n + 1) > CELLS:
                    break  # this job starts the next call
                m, n = longer_m, longer_n
                lane_job[lanes] = x
                lanes += 1
            x += 1
        if lanes == 0:
            break
        Q = np.full((m, PAIR_LANES), N, np.uint8)
        T = np.full((n, PAIR_LANES), TARGET_N, np.uint8)
        rows[:] = 0
        for lane in range(lanes):
            k, strand, w0, w1 = jobs[lane_job[lane], 1], jobs[lane_job[lane], 2], jobs[lane_job[lane], 3], \
                jobs[lane_job[lane], 4]
            lo, hi = bounds[k], bounds[k + 1]
            for i in range(hi - lo):
                Q[i, lane] = forward[lo + i] if strand == 0 else reverse[size - hi + i]
            for j in range(w1 - w0):
                T[j, lane] = ref[w0 + j]
            rows[lane] = hi - lo
        if space.size < m * (n + 1) * PAIR_LANES:
            space = np.empty(m * (n + 1) * PAIR_LANES, np.uint8)
        dirs = space[: m * (n + 1) * PAIR_LANES].reshape((m, n + 1, PAIR_LANES))
        H, D = np.empty((n + 1, PAIR_LANES), np.int16), np.empty((n + 1, PAIR_LANES), np.int16)
        fill(Q, T, rows, match, mismatch, open_extend, extend, H, D, dirs, best, best_i, best_j)
        for lane in range(lanes):
            if best[lane] < LIMIT:  # (reads are shorter than LIMIT: it is never reached)
                bound[jobs[lane_job[lane], 0]] = best[lane]


@njit(nogil=True, cache=True)
def _forced(table, first, last, extra, n_extra, length, opts, forced, order, alts):
    """choose.choose(candidates + rescued, primary=forced): rows [first, last) then extra[:n_extra]
    ranked after forced. Returns choose_ordered's answer."""
    order[0] = forced
    count = 1
    for row in range(first, last):
        if row != forced:
            insert_ranked(table, order, 1, count, row)
            count += 1
    for x in range(n_extra):
        if extra[x] != forced:
            insert_ranked(table, order, 1, count, extra[x])
            count += 1
    return choose_ordered(table, count, length, opts, order, alts)


@njit(nogil=True, cache=True)
def pair_rescues(table, n, ops, lens, used, forward, reverse, bounds, ref, rec_starts, rec_lengths, params, opts,
                 first_row, primary, quality, sub, more, alt_lo, alt_hi, alts, alts_used, insert, unpaired,
                 candidates, proper):
    """pairs.PairBatches._pair for each pair r with proper[r] == 2 (reads r and r + half): each
    end's best `candidates` alignments, mates rescued from the two best (rows n, n + 1, ... of
    table, their runs in ops/lens from used), every facing pair within the insert size scored,
    the best against the ends placed apart, each end's choice made again with the pair's
    alignment first where it changed (its XA rows at alts[alt_lo[k]:alt_hi[k]], from
    alts_used), MAPQs raised by the pair's lead. proper[r] becomes 1, 0, or stays 2 (either end
    needs more than one record: the Python path). Returns (rows, runs used, alternatives used),
    or (-1, 0, 0) when table, ops or alts is too small (the caller grows them and calls again
    on fresh copies of what this writes)."""
    half = (bounds.size - 1) // 2
    mean, std, low, high = insert[0], insert[1], insert[2], insert[3]
    match, min_score = opts[R_MATCH], opts[R_MIN_SCORE]
    most = 1
    for k in range(bounds.size - 1):
        most = max(most, first_row[k + 1] - first_row[k])
    top1, top2 = np.empty(most + 2, np.int64), np.empty(most + 2, np.int64)
    order, listed = np.empty(most + 4, np.int64), np.empty(most + 4, np.int64)
    scratch = (np.empty(1 << 16, np.int8), np.empty(1024, np.int64), np.empty(1024, np.int64))
    chosen, subs, qualities, lists = (np.empty(2, np.int64), np.empty(2, np.int64), np.empty(2, np.int64),
                                      np.empty(2, np.int64))  # per end: primary, XS, MAPQ, XA rows (-1: kept)
    # the windows rescues may align, bounded beforehand in vector lanes (the module's docstring)
    bound = np.full(4 * half, NO_BOUND, np.int64)  # pair r's slots 4r, 4r + 1: end 2; 4r + 2, 4r + 3: end 1
    jobs = np.empty((4 * half, 5), np.int64)
    count = 0
    for r in range(half):
        if proper[r] != 2 or more[r] or more[r + half] or high < 0:
            continue
        k1, k2 = r, r + half
        reads1, reads2 = _oriented(forward, reverse, bounds, k1), _oriented(forward, reverse, bounds, k2)
        t1 = _top(table, first_row[k1], first_row[k1 + 1], candidates, top1)
        t2 = _top(table, first_row[k2], first_row[k2 + 1], candidates, top2)
        count = _slots(table, k2, top1, t1, t1, top2, t2, reads2, rec_starts, rec_lengths, params, insert, unpaired,
                       min_score, jobs, count, 4 * r)
        # end 1's anchors: top2 and the rescued ones after it, so its second is known where top2 has two
        count = _slots(table, k1, top2, t2, t2, top1, t1, reads1, rec_starts, rec_lengths, params, insert, unpaired,
                       min_score, jobs, count, 4 * r + 2)
    _bounds(jobs, count, forward, reverse, bounds, ref, params, bound)
    for r in range(half):
        if proper[r] != 2 or more[r] or more[r + half] or high < 0:
            continue
        k1, k2 = r, r + half
        reads1, reads2 = _oriented(forward, reverse, bounds, k1), _oriented(forward, reverse, bounds, k2)
        t1 = _top(table, first_row[k1], first_row[k1 + 1], candidates, top1)
        t2 = _top(table, first_row[k2], first_row[k2 + 1], candidates, top2)
        # rescued2 from top1 (joining top2), then rescued1 from top2 + rescued2 (joining top1)
        n, used, m2, scratch = _rescue(table, n, ops, lens, used, reads2, k2, top1, t1, top2, t2, ref, rec_starts,
                                       rec_lengths, params, min_score, insert, unpaired, scratch, bound, 4 * r)
        if n < 0:
            return -1, 0, 0
        n, used, m1, scratch = _rescue(table, n, ops, lens, used, reads1, k1, top2, m2, top1, t1, ref, rec_starts,
                                       rec_lengths, params, min_score, insert, unpaired, scratch, bound, 4 * r + 2)
        if n < 0:
            return -1, 0, 0
        best, second, scored, a_best, b_best = -math.inf, -math.inf, 0, -1, -1
        for i in range(m1):
            a = top1[i]
            for j in range(m2):
                b = top2[j]
                d = _facing(table, a, b)
                if not _within(d, low, high):
                    continue
                z = abs(d - mean) / std
                tail = max(math.erfc(z / math.sqrt(2)), 1e-300)
                score = table[a, C_SCORE] + table[b, C_SCORE] + 0.721 * math.log(2 * tail) * match
                if score > best:  # the first of equals stays first (a stable sort)
                    second = max(second, best)
                    best, a_best, b_best = score, a, b
                else:
                    second = max(second, score)
                scored += 1
        proper[r] = 0
        if scored == 0:
            continue
        apart = (table[primary[k1], C_SCORE] if primary[k1] >= 0 else 0) + \
            (table[primary[k2], C_SCORE] if primary[k2] >= 0 else 0) - unpaired
        if best < apart:
            continue
        runner_up = max(second if scored > 1 else 0, apart)
        q_pair = min(60, int(6.02 * (best - runner_up) / match + 0.499))
        # each end's own choice stands where the pair agrees with it (the common case); else it
        # is made again with the pair's alignment first, its XA rows appended to alts
        alts_from = alts_used
        for end in range(2):
            k, pick = (k1, a_best) if end == 0 else (k2, b_best)
            rescued, extra = (m1 - t1, top1[t1:m1]) if end == 0 else (m2 - t2, top2[t2:m2])
            if rescued == 0 and primary[k] >= 0 and primary[k] == pick:
                chosen[end], subs[end], qualities[end], lists[end] = primary[k], sub[k], quality[k], -1
                continue
            p, s, near, further, count = _forced(table, first_row[k], first_row[k + 1], extra, rescued,
                                                 bounds[k + 1] - bounds[k], opts, pick, order, listed)
            if further:
                proper[r] = 2
                break
            q = 0
            if p >= 0:
                q = mapq(opts[R_MATCH], opts[R_MISMATCH], opts[R_SEED_LENGTH], table[p, C_SCORE], s, near,
                         table[p, C_QE] - table[p, C_QB], table[p, C_SPAN])
            if alts_used + count > alts.size:
                return -1, 0, 0
            alts[alts_used : alts_used + count] = listed[:count]
            alts_used += count
            chosen[end], subs[end], qualities[end], lists[end] = p, s, q, count
        if proper[r] == 2 or chosen[0] < 0 or chosen[1] < 0:  # (an end the pair left unmapped: the ends stand apart)
            continue
        for end in range(2):
            k = k1 if end == 0 else k2
            primary[k], sub[k] = chosen[end], subs[end]
            quality[k] = max(qualities[end], min(q_pair, qualities[end] + 40))
            if lists[end] >= 0:
                alt_lo[k], alt_hi[k] = alts_from, alts_from + lists[end]
                alts_from += lists[end]
        proper[r] = 1
    return n, used, alts_used
