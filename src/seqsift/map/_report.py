"""The single-end report kernel: a batch's placement table (_extend.place_chains) to its SAM
records, each read's primary chosen, its MAPQ, NM, MD and CIGAR computed and the record's bytes
written into one buffer (batch_sam.py calls it precompiled). It follows choose.py, scoring.mapq,
extend.Extender.nm_md and sam.records step for step; tests/map compare the two on every read.

A read whose answer has more than one record (a chimeric read's supplementary parts, or every
read with several placements under MapOptions.secondary), or whose name is not ASCII, is marked
instead, and written by the Python path: such reads are a fraction of a percent."""

import math

import numpy as np
from numba import njit

from seqsift.fmindex._output_cpu import _put_int, _put_quality, _put_text
from seqsift.map._extend import differences
from seqsift.map.layout import (C_OPS, C_POSITION, C_QB, C_QE, C_READ, C_RECORD, C_RUNS, C_SCORE, C_SPAN, C_STRAND,
                                C_TOTAL)

# options of report_single, one int64 array (batch_sam.report_options)
R_MATCH, R_MISMATCH, R_OPEN, R_EXTEND, R_MIN_SCORE, R_SEED_LENGTH, R_SECONDARY = range(7)
XA_DROP = 0.8  # choose.XA_DROP and XA_HITS
XA_HITS = 5
_CIGAR = b"MIDNS"
_LETTERS = b"ACGTN"


@njit(inline="always", nogil=True)
def _put_signed(out, at, value):
    if value < 0:
        out[at] = 45
        return _put_int(out, at + 1, -value)
    return _put_int(out, at, value)


@njit(nogil=True, cache=True)
def mapq(match, mismatch, seed_length, score, sub, sub_count, read_span, ref_span):
    """scoring.mapq, the same arithmetic in the same order (so the same floating-point result)."""
    sub = sub if sub > 0 else seed_length * match
    if sub >= score or score <= 0:
        return 0
    span = max(read_span, ref_span)
    identity = 1.0 - (span * match - score) / (match + mismatch) / span
    factor = 1.0 if span < 50 else math.log(50) / math.log(span)
    factor *= identity * identity
    q = int(6.02 * (score - sub) / match * factor * factor + 0.499)
    if sub_count > 0:
        q -= int(4.343 * math.log(sub_count + 1) + 0.499)
    return max(0, min(60, q))


@njit(inline="always", nogil=True)
def _read_span(table, k, length):
    """Read bases [lo, hi) of placement k, in the forward read's coordinates."""
    if table[k, C_STRAND] == 0:
        return table[k, C_QB], table[k, C_QE]
    return length - table[k, C_QE], length - table[k, C_QB]


@njit(inline="always", nogil=True)
def _read_overlap(table, a, b, length):
    """choose._read_overlap: shared read bases at least half the shorter alignment's."""
    a0, a1 = _read_span(table, a, length)
    b0, b1 = _read_span(table, b, length)
    return 2 * (min(a1, b1) - max(a0, b0)) >= min(a1 - a0, b1 - b0)


@njit(inline="always", nogil=True)
def _same_place(table, a, b):
    """choose._same_place: one record and strand, sharing over half the shorter reference span."""
    if table[a, C_RECORD] != table[b, C_RECORD] or table[a, C_STRAND] != table[b, C_STRAND]:
        return False
    pa, pb = table[a, C_POSITION], table[b, C_POSITION]
    shared = min(pa + table[a, C_SPAN], pb + table[b, C_SPAN]) - max(pa, pb)
    return 2 * shared > min(table[a, C_SPAN], table[b, C_SPAN])


@njit(inline="always", nogil=True)
def _before(table, a, b):
    """choose.ranked's order: higher total, higher score, then record, position, strand."""
    for col, sign in ((C_TOTAL, -1), (C_SCORE, -1), (C_RECORD, 1), (C_POSITION, 1), (C_STRAND, 1)):
        x, y = sign * table[a, col], sign * table[b, col]
        if x != y:
            return x < y
    return False


@njit(nogil=True, cache=True)
def choose_one(table, first, last, length, opts, order, alts):
    """choose.choose for the rows [first, last) of one read: (primary row or -1 when unmapped,
    sub, near-best count, whether more records follow it: a supplementary part, or with
    R_SECONDARY a secondary one; its XA alternatives, written to alts). order and alts: scratch
    of at least last - first entries."""
    min_score = opts[R_MIN_SCORE]
    count = last - first
    if count == 1:
        if table[first, C_SCORE] < min_score:
            return -1, 0, 0, False, 0
        return first, 0, 0, False, 0
    if count == 0:
        return -1, 0, 0, False, 0
    for k in range(count):  # insertion sort: stable, as Python's sorted
        insert_ranked(table, order, 0, k, first + k)
    return choose_ordered(table, count, length, opts, order, alts)


@njit(inline="always", nogil=True)
def insert_ranked(table, order, lo, at, row):
    """Row into order[lo:at], kept in choose.ranked's order (after its equals: a stable sort)."""
    while at > lo and _before(table, row, order[at - 1]):
        order[at] = order[at - 1]
        at -= 1
    order[at] = row


@njit(nogil=True, cache=True)
def choose_ordered(table, count, length, opts, order, alts):
    """choose_one from its rows ranked in order[:count] (the primary a pair chose first, where
    there is one): the same answer."""
    min_score = opts[R_MIN_SCORE]
    distinct = 0
    for k in range(count):
        row = order[k]
        same = False
        for d in range(distinct):
            if _same_place(table, row, order[d]):
                same = True
                break
        if not same:
            order[distinct] = row
            distinct += 1
    best = -1
    for d in range(distinct):
        if table[order[d], C_SCORE] >= min_score:
            best = d
            break
    if best < 0:
        return -1, 0, 0, False, 0
    p = order[best]
    score = table[p, C_SCORE]
    tolerance = max(opts[R_MATCH] + opts[R_MISMATCH], opts[R_OPEN] + opts[R_EXTEND])
    sub, rivals, near, listed = 0, 0, 0, 0
    for d in range(distinct):
        if d != best and _read_overlap(table, p, order[d], length):
            s = table[order[d], C_SCORE]
            sub = max(sub, s) if rivals else s
            rivals += 1
            near += s >= score - tolerance
            if s >= XA_DROP * score:
                alts[listed] = order[d]
                listed += 1
    if rivals and sub >= score:
        near -= 1
    if opts[R_SECONDARY] or listed > XA_HITS:
        listed = 0
    more = False
    for d in range(best + 1, distinct):  # another part of the read (supplementary), or a secondary
        if table[order[d], C_SCORE] >= min_score and (opts[R_SECONDARY] or not _read_overlap(table, order[d], p,
                                                                                             length)):
            more = True
            break
    return p, sub, max(near, 0), more, listed


@njit(nogil=True, cache=True)
def choose_reads(table, n, bounds, opts, first_row, primary, sub, quality, more, alt_start, alts):
    """choose_one and MAPQ for every read of a batch: first_row[r] (its rows are [first_row[r],
    first_row[r + 1])), primary[r] (row, -1 when unmapped), sub[r], quality[r], more[r], and
    its XA alternatives' rows alts[alt_start[r]:alt_start[r + 1]]."""
    order = np.empty(max(n, 1), np.int64)
    row = 0
    listed = 0
    for r in range(bounds.size - 1):
        first_row[r] = row
        alt_start[r] = listed
        while row < n and table[row, C_READ] == r:
            row += 1
        p, s, near, m, k = choose_one(table, first_row[r], row, bounds[r + 1] - bounds[r], opts, order, alts[listed:])
        listed += k
        primary[r], sub[r], more[r] = p, s, m
        quality[r] = 0
        if p >= 0:
            quality[r] = mapq(opts[R_MATCH], opts[R_MISMATCH], opts[R_SEED_LENGTH], table[p, C_SCORE], s, near,
                              table[p, C_QE] - table[p, C_QB], table[p, C_SPAN])
    first_row[bounds.size - 1] = row
    alt_start[bounds.size - 1] = listed


@njit(inline="always", nogil=True)
def _put_cigar(out, at, table, ops, lens, p, length):
    qb, qe = table[p, C_QB], table[p, C_QE]
    if qb:
        at = _put_int(out, at, qb)
        out[at] = 83
        at += 1
    for k in range(table[p, C_OPS], table[p, C_OPS] + table[p, C_RUNS]):
        at = _put_int(out, at, lens[k])
        out[at] = _CIGAR[ops[k]]
        at += 1
    if qe < length:
        at = _put_int(out, at, length - qe)
        out[at] = 83
        at += 1
    return at


@njit(inline="always", nogil=True)
def _put_name(out, at, names, name_off, record):
    for i in range(name_off[record], name_off[record + 1]):
        out[at] = names[i]
        at += 1
    return at


@njit(inline="always", nogil=True)
def _five_prime(table, p):
    if table[p, C_STRAND]:
        return table[p, C_POSITION] + table[p, C_SPAN] - 1
    return table[p, C_POSITION]


@njit(nogil=True, cache=True)
def _record(out, at, table, ops, lens, forward, reverse, bounds, raw, name_lo, name_hi, seq, qual_lo, ref, rec_starts,
            names, name_off, comp, rg, rg_length, opts, k, p, q, sub, alts, a0, a1, paired, first, proper, mate,
            mate_length, event_at, event_length):
    """Read k's one SAM record at out[at:] (sam.records): placement row p (-1: unmapped), MAPQ q,
    XS sub, XA alternatives' rows alts[a0:a1]; paired: its pair's flags, RNEXT, PNEXT, TLEN and MC from the mate's row (-1:
    unmapped; mate_length: the mate read's length), the name without /1 or /2; event_at and
    event_length: differences' scratch (_scratch). Returns the index after it."""
    size = forward.size
    lo, hi = bounds[k], bounds[k + 1]
    length = hi - lo
    name_end = name_hi[k]
    if paired and name_end - name_lo[k] > 2 and raw[name_end - 2] == 47 and (raw[name_end - 1] == 49
                                                                            or raw[name_end - 1] == 50):
        name_end -= 2  # pairs.pair_name
    for i in range(name_lo[k], name_end):
        out[at] = raw[i]
        at += 1
    flag = 0
    if paired:
        flag = 1 | (64 if first else 128) | (2 if proper else 0)
        if mate < 0:
            flag |= 8
        elif table[mate, C_STRAND]:
            flag |= 32
    reverse_strand = p >= 0 and table[p, C_STRAND] == 1
    if p < 0:
        out[at] = 9
        at = _put_int(out, at + 1, flag | 4)
        out[at] = 9
        at += 1
        if mate >= 0:
            at = _put_name(out, at, names, name_off, table[mate, C_RECORD])
            out[at] = 9
            at = _put_int(out, at + 1, table[mate, C_POSITION] + 1)
            at = _put_text(out, at, b"\t0\t*\t=\t")
            at = _put_int(out, at, table[mate, C_POSITION] + 1)
            at = _put_text(out, at, b"\t0\t")
        else:
            at = _put_text(out, at, b"*\t0\t0\t*\t*\t0\t0\t")
    else:
        record, position, score = table[p, C_RECORD], table[p, C_POSITION], table[p, C_SCORE]
        out[at] = 9
        at = _put_int(out, at + 1, flag | (16 if reverse_strand else 0))
        out[at] = 9
        at = _put_name(out, at + 1, names, name_off, record)
        out[at] = 9
        at = _put_int(out, at + 1, position + 1)
        out[at] = 9
        at = _put_int(out, at + 1, q)
        out[at] = 9
        at = _put_cigar(out, at + 1, table, ops, lens, p, length)
        out[at] = 9
        at += 1
        if not paired:
            at = _put_text(out, at, b"*\t0\t0\t")
        else:
            at_mate = mate if mate >= 0 else p
            if table[at_mate, C_RECORD] == record:
                out[at] = 61
                at += 1
            else:
                at = _put_name(out, at, names, name_off, table[at_mate, C_RECORD])
            out[at] = 9
            at = _put_int(out, at + 1, table[at_mate, C_POSITION] + 1)
            out[at] = 9
            at += 1
            tlen = 0
            if mate >= 0 and table[mate, C_RECORD] == record:
                p0, p1 = _five_prime(table, p), _five_prime(table, mate)
                tlen = -(p0 - p1 + (1 if p0 > p1 else -1 if p0 < p1 else 0))
            at = _put_signed(out, at, tlen)
            out[at] = 9
            at += 1
    if length == 0:
        out[at] = 42
        at += 1
    elif reverse_strand:
        for i in range(length):
            out[at + i] = comp[seq[hi - 1 - i]]
        at += length
    else:
        for i in range(length):
            out[at + i] = seq[lo + i]
        at += length
    out[at] = 9
    at = _put_quality(out, at + 1, raw, qual_lo[k], length, reverse_strand)
    if p >= 0:
        qb, qe, span = table[p, C_QB], table[p, C_QE], table[p, C_SPAN]
        o0, o1 = table[p, C_OPS], table[p, C_OPS] + table[p, C_RUNS]
        read = forward[lo:hi] if not reverse_strand else reverse[size - hi : size - lo]
        start = rec_starts[record] + position
        window = ref[start : start + span]
        at = _put_text(out, at, b"\tNM:i:")
        if score == length * opts[R_MATCH] and qe - qb == length and o1 - o0 == 1:
            at = _put_int(out, at, 0)  # every base matches: only then does the score reach this
            at = _put_text(out, at, b"\tMD:Z:")
            at = _put_int(out, at, length)
        else:
            nm, events = differences(read, window, qb, ops[o0:o1], lens[o0:o1], event_at, event_length)
            at = _put_int(out, at, nm)
            at = _put_text(out, at, b"\tMD:Z:")
            at = _put_md(out, at, window, events, event_at, event_length)
        at = _put_text(out, at, b"\tAS:i:")
        at = _put_signed(out, at, score)
        at = _put_text(out, at, b"\tXS:i:")
        at = _put_signed(out, at, sub)
        if a1 > a0:
            at = _put_text(out, at, b"\tXA:Z:")
            for x in range(a0, a1):
                at = _put_alternative(out, at, table, ops, lens, forward, reverse, bounds, k, ref, rec_starts, names,
                                      name_off, alts[x], event_at, event_length)
    if paired and mate >= 0:
        at = _put_text(out, at, b"\tMC:Z:")
        at = _put_cigar(out, at, table, ops, lens, mate, mate_length)
    for i in range(rg_length):
        out[at] = rg[i]
        at += 1
    out[at] = 10
    return at + 1


@njit(nogil=True, cache=True)
def _put_alternative(out, at, table, ops, lens, forward, reverse, bounds, k, ref, rec_starts, names, name_off, a,
                     event_at, event_length):
    """One XA entry of read k: record,+-position,CIGAR,NM; (placement row a)."""
    size = forward.size
    lo, hi = bounds[k], bounds[k + 1]
    at = _put_name(out, at, names, name_off, table[a, C_RECORD])
    out[at] = 44
    out[at + 1] = 45 if table[a, C_STRAND] else 43
    at = _put_int(out, at + 2, table[a, C_POSITION] + 1)
    out[at] = 44
    at = _put_cigar(out, at + 1, table, ops, lens, a, hi - lo)
    out[at] = 44
    read = forward[lo:hi] if table[a, C_STRAND] == 0 else reverse[size - hi : size - lo]
    start = rec_starts[table[a, C_RECORD]] + table[a, C_POSITION]
    window = ref[start : start + table[a, C_SPAN]]
    o0, o1 = table[a, C_OPS], table[a, C_OPS] + table[a, C_RUNS]
    nm, _ = differences(read, window, table[a, C_QB], ops[o0:o1], lens[o0:o1], event_at, event_length)
    at = _put_int(out, at + 1, nm)
    out[at] = 59
    return at + 1


@njit(inline="always", nogil=True)
def _room(table, first_row, bounds, name_lo, name_hi, k, longest, rg_length):
    """A generous bound on read k's record bytes: name, SEQ, QUAL, CIGAR, MD (<= 12 a base),
    the mate's CIGAR, XA's (at most XA_HITS), names and fixed fields."""
    runs = 0
    for row in range(first_row[k], first_row[k + 1]):
        runs = max(runs, table[row, C_RUNS])
    return name_hi[k] - name_lo[k] + 14 * (bounds[k + 1] - bounds[k]) + 7 * (24 * (runs + 4) + longest + 60) \
        + rg_length + 300


@njit(inline="always", nogil=True)
def _longest(name_off):
    longest = 0
    for k in range(name_off.size - 1):
        longest = max(longest, name_off[k + 1] - name_off[k])
    return longest


@njit(nogil=True, cache=True)
def report_single(table, n, ops, lens, forward, reverse, bounds, raw, name_lo, name_hi, seq, qual_lo, ref, rec_starts,
                  names, name_off, comp, rg, opts, out, starts, deferred):
    """Each read's SAM record (sam.records without pairs) written to out, read r's at
    out[starts[r]:starts[r + 1]]; a read that needs more than one record is left empty with
    deferred[r] = 1. rg: the bytes after QUAL on every record ("\\tRG:Z:id", or one byte 0 for
    none). Returns (bytes written, reads mapped), or (-1, 0) when out is too small."""
    reads = bounds.size - 1
    first_row = np.empty(reads + 1, np.int64)
    primary, sub, quality = np.empty(reads, np.int64), np.empty(reads, np.int64), np.empty(reads, np.int64)
    more = np.empty(reads, np.bool_)
    alt_start, alts = np.empty(reads + 1, np.int64), np.empty(max(n, 1), np.int64)
    choose_reads(table, n, bounds, opts, first_row, primary, sub, quality, more, alt_start, alts)
    rg_length = 0 if rg[0] == 0 else rg.size
    longest = _longest(name_off)
    event_at, event_length = _scratch(table, n, bounds)
    at, mapped = 0, 0
    for r in range(reads):
        starts[r] = at
        later = more[r]
        for i in range(name_lo[r], name_hi[r]):
            later |= raw[i] >= 128  # not ASCII: the Python path writes it as it decodes it
        deferred[r] = later
        if later:
            continue
        if at + _room(table, first_row, bounds, name_lo, name_hi, r, longest, rg_length) > out.size:
            return -1, 0
        at = _record(out, at, table, ops, lens, forward, reverse, bounds, raw, name_lo, name_hi, seq, qual_lo, ref,
                     rec_starts, names, name_off, comp, rg, rg_length, opts, r, primary[r], quality[r], sub[r], alts,
                     alt_start[r], alt_start[r + 1], False, False, False, -1, 0, event_at, event_length)
        mapped += primary[r] >= 0
    starts[reads] = at
    return at, mapped


@njit(nogil=True, cache=True)
def report_pairs(table, n, ops, lens, forward, reverse, bounds, raw, name_lo, name_hi, seq, qual_lo, ref, rec_starts,
                 names, name_off, comp, rg, opts, first_row, primary, quality, sub, alt_lo, alt_hi, alts, proper, out,
                 starts):
    """The records of each pair r (sam.records with a Pairing): read r is its first end, read r
    + half its second, of a batch of 2 half reads; primary, quality and sub per read (from
    choose_reads, then pair_choices and _pairs.pair_rescues) and its XA alternatives' rows
    alts[alt_lo[k]:alt_hi[k]]; proper[r]: 0 or 1, or 2 for a pair written by the Python path
    (left empty). Pair r's records at out[starts[r]:starts[r + 1]]. Returns (bytes written,
    reads mapped), or (-1, 0) when out is too small."""
    half = (bounds.size - 1) // 2
    rg_length = 0 if rg[0] == 0 else rg.size
    longest = _longest(name_off)
    event_at, event_length = _scratch(table, n, bounds)
    at, mapped = 0, 0
    for r in range(half):
        starts[r] = at
        if proper[r] == 2:
            continue
        for end in range(2):
            k, mate = r + end * half, r + (1 - end) * half
            runs = table[primary[mate], C_RUNS] if primary[mate] >= 0 else 0
            if primary[k] >= 0 and not first_row[k] <= primary[k] < first_row[k + 1]:  # a rescued row: not in _room
                runs += table[primary[k], C_RUNS]
            for x in range(alt_lo[k], alt_hi[k]):
                runs += table[alts[x], C_RUNS]
            if at + _room(table, first_row, bounds, name_lo, name_hi, k, longest, rg_length) + 24 * runs > out.size:
                return -1, 0
            at = _record(out, at, table, ops, lens, forward, reverse, bounds, raw, name_lo, name_hi, seq, qual_lo,
                         ref, rec_starts, names, name_off, comp, rg, rg_length, opts, k, primary[k], quality[k],
                         sub[k], alts, alt_lo[k], alt_hi[k], True, end == 0, proper[r] == 1, primary[mate],
                         bounds[mate + 1] - bounds[mate], event_at, event_length)
            mapped += primary[k] >= 0
    starts[half] = at
    return at, mapped


@njit(nogil=True, cache=True)
def pair_choices(table, first_row, primary, quality, more, insert, unpaired, opts, proper):
    """pairs.PairBatches._pair where it needs no rescue and no second candidate: each end of pair
    r (reads r and r + half) has one placement, both reported, facing each other within the
    insert size (insert: mean, std, low, high): the pair's score against the ends' own, MAPQs
    raised by the pair's lead. proper[r]: 1 a proper pair, 0 ends placed apart (also every pair
    when insert[3] < 0: no estimate), 2 left to _pairs.pair_rescues (or, where an end needs more
    than one record, to the Python path)."""
    half = primary.size // 2
    mean, std, low, high = insert[0], insert[1], insert[2], insert[3]
    match = opts[R_MATCH]
    for r in range(half):
        a, b = primary[r], primary[r + half]
        if more[r] or more[r + half]:
            proper[r] = 2
            continue
        if high < 0:
            proper[r] = 0
            continue
        proper[r] = 2
        if a < 0 or b < 0 or first_row[r + 1] - first_row[r] != 1 or first_row[r + half + 1] - first_row[r + half] != 1:
            continue
        if table[a, C_RECORD] != table[b, C_RECORD] or table[a, C_STRAND] == table[b, C_STRAND]:
            continue
        fwd, rev = (a, b) if table[a, C_STRAND] == 0 else (b, a)
        rev_end = table[rev, C_POSITION] + table[rev, C_SPAN]
        if table[fwd, C_POSITION] > rev_end:
            continue
        d = rev_end - table[fwd, C_POSITION]
        if not low <= d <= high:
            continue
        z = abs(d - mean) / std
        tail = max(math.erfc(z / math.sqrt(2)), 1e-300)
        scores = table[a, C_SCORE] + table[b, C_SCORE]
        best = scores + 0.721 * math.log(2 * tail) * match
        apart = scores - unpaired
        if best < apart:
            proper[r] = 0
            continue
        runner_up = max(0, apart)
        q_pair = min(60, int(6.02 * (best - runner_up) / match + 0.499))
        for k in (r, r + half):
            quality[k] = max(quality[k], min(q_pair, quality[k] + 40))
        proper[r] = 1


@njit(inline="always", nogil=True)
def _put_md(out, at, ref, events, event_at, event_length):
    """SAM's MD from _extend.differences' events, as Extender.nm_md writes it: matching runs,
    differing reference bases, and ^ before a deletion's reference bases."""
    done = 0
    for e in range(events):
        where, n = event_at[e], event_length[e]
        at = _put_int(out, at, where - done)
        if n:
            out[at] = 94
            at += 1
        for k in range(max(n, 1)):
            out[at] = _LETTERS[ref[where + k]]
            at += 1
        done = where + max(n, 1)
    return _put_int(out, at, ref.size - done)


@njit(nogil=True, cache=True)
def _scratch(table, n, bounds):
    """differences' event arrays for any alignment of the batch: one event per read base or run."""
    longest = 0
    for r in range(bounds.size - 1):
        longest = max(longest, bounds[r + 1] - bounds[r])
    runs = 0
    for k in range(n):
        runs = max(runs, table[k, C_RUNS])
    return np.empty(longest + runs + 1, np.int64), np.empty(longest + runs + 1, np.int64)
