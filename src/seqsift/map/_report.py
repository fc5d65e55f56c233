"""The single-end report kernel: a batch's placement table (_extend.place_chains) to its SAM
records, each read's primary chosen, its MAPQ, NM, MD and CIGAR computed and the record's bytes
written into one buffer (batch_sam.py calls it precompiled). It follows choose.py, scoring.mapq,
extend.Extender.nm_md and sam.records step for step; tests/map compare the two on every read.

A read whose answer has more than one record (a chimeric read's supplementary parts, or every
read with several placements under MapOptions.secondary), or whose name is not ASCII, is marked
instead, and written by the Python path: such reads are a fraction of a percent."""

import math

import numpy as np
from numba import njit, uint8, uint64

from seqsift.map.layout import (C_OPS, C_POSITION, C_QB, C_QE, C_READ, C_RECORD, C_RUNS, C_SCORE, C_SPAN, C_STRAND,
                                C_TOTAL, OP_D, OP_I, OP_M)

# options of report_single, one int64 array (batch_sam.report_options)
R_MATCH, R_MISMATCH, R_OPEN, R_EXTEND, R_MIN_SCORE, R_SEED_LENGTH, R_SECONDARY = range(7)
_CIGAR = b"MIDNS"
_LETTERS = b"ACGTN"


@njit(inline="always", nogil=True)
def _put_int(out, at, value):
    """The decimal digits of value (>= 0) at out[at:]; returns the index after them."""
    v = uint64(value)
    digits = 1
    while v >= uint64(10):
        digits += 1
        v //= uint64(10)
    v = uint64(value)
    for i in range(digits - 1, -1, -1):
        out[at + i] = uint8(48) + uint8(v % uint64(10))
        v //= uint64(10)
    return at + digits


@njit(inline="always", nogil=True)
def _put_signed(out, at, value):
    if value < 0:
        out[at] = 45
        return _put_int(out, at + 1, -value)
    return _put_int(out, at, value)


@njit(inline="always", nogil=True)
def _put_text(out, at, text):
    for c in text:
        out[at] = c
        at += 1
    return at


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
def choose_one(table, first, last, length, opts, order):
    """choose.choose for the rows [first, last) of one read: (primary row or -1 when unmapped,
    sub, near-best count, whether the read needs more than one record). order: scratch of at
    least last - first entries."""
    min_score = opts[R_MIN_SCORE]
    count = last - first
    if count == 1:
        if table[first, C_SCORE] < min_score:
            return -1, 0, 0, False
        return first, 0, 0, False
    if count == 0:
        return -1, 0, 0, False
    if opts[R_SECONDARY]:
        return -1, 0, 0, True
    for k in range(count):  # insertion sort: stable, as Python's sorted
        row = first + k
        at = k
        while at > 0 and _before(table, row, order[at - 1]):
            order[at] = order[at - 1]
            at -= 1
        order[at] = row
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
        return -1, 0, 0, False
    p = order[best]
    score = table[p, C_SCORE]
    tolerance = max(opts[R_MATCH] + opts[R_MISMATCH], opts[R_OPEN] + opts[R_EXTEND])
    sub, rivals, near = 0, 0, 0
    for d in range(distinct):
        if d != best and _read_overlap(table, p, order[d], length):
            s = table[order[d], C_SCORE]
            sub = max(sub, s) if rivals else s
            rivals += 1
            near += s >= score - tolerance
    if rivals and sub >= score:
        near -= 1
    more = False
    for d in range(best + 1, distinct):  # another part of the read: a supplementary record
        if table[order[d], C_SCORE] >= min_score and not _read_overlap(table, order[d], p, length):
            more = True
            break
    return p, sub, max(near, 0), more


@njit(nogil=True, cache=True)
def report_single(table, n, ops, lens, forward, reverse, bounds, raw, name_lo, name_hi, seq, qual_lo, ref, rec_starts,
                  names, name_off, comp, rg, opts, out, starts, deferred):
    """Each read's SAM record (sam.records without pairs) written to out, read r's at
    out[starts[r]:starts[r + 1]]; a read that needs more than one record is left empty with
    deferred[r] = 1. rg: the bytes after QUAL on every record ("\\tRG:Z:id", or one byte 0 for
    none). Returns (bytes written, reads mapped), or (-1, 0) when out is too small."""
    size = forward.size
    reads = bounds.size - 1
    order = np.empty(max(n, 1), np.int64)
    rg_length = 0 if rg[0] == 0 else rg.size
    longest = 0
    for k in range(name_off.size - 1):
        longest = max(longest, name_off[k + 1] - name_off[k])
    at, mapped, row = 0, 0, 0
    for r in range(reads):
        starts[r] = at
        deferred[r] = 0
        first = row
        while row < n and table[row, C_READ] == r:
            row += 1
        lo, hi = bounds[r], bounds[r + 1]
        length = hi - lo
        runs = 0
        for k in range(first, row):
            runs = max(runs, table[k, C_RUNS])
        # a generous bound on the record's bytes: name, SEQ, QUAL, CIGAR, MD and fixed fields
        need = name_hi[r] - name_lo[r] + 2 * length + 12 * (runs + 4) + 12 * length + 200 + rg_length
        if at + need + longest > out.size:
            return -1, 0
        p, sub, near, more = choose_one(table, first, row, length, opts, order)
        for i in range(name_lo[r], name_hi[r]):
            more |= raw[i] >= 128  # not ASCII: the Python path writes it as it decodes it
        if more:
            deferred[r] = 1
            continue
        for i in range(name_lo[r], name_hi[r]):
            out[at] = raw[i]
            at += 1
        reverse_strand = p >= 0 and table[p, C_STRAND] == 1
        if p < 0:
            at = _put_text(out, at, b"\t4\t*\t0\t0\t*\t*\t0\t0\t")
        else:
            mapped += 1
            record, position, score = table[p, C_RECORD], table[p, C_POSITION], table[p, C_SCORE]
            qb, qe, span = table[p, C_QB], table[p, C_QE], table[p, C_SPAN]
            q = mapq(opts[R_MATCH], opts[R_MISMATCH], opts[R_SEED_LENGTH], score, sub, near, qe - qb, span)
            out[at] = 9
            at = _put_int(out, at + 1, 16 if reverse_strand else 0)
            out[at] = 9
            at += 1
            for i in range(name_off[record], name_off[record + 1]):
                out[at] = names[i]
                at += 1
            out[at] = 9
            at = _put_int(out, at + 1, position + 1)
            out[at] = 9
            at = _put_int(out, at + 1, q)
            out[at] = 9
            at += 1
            if qb:
                at = _put_int(out, at, qb)
                out[at] = 83
                at += 1
            o0, o1 = table[p, C_OPS], table[p, C_OPS] + table[p, C_RUNS]
            for k in range(o0, o1):
                at = _put_int(out, at, lens[k])
                out[at] = _CIGAR[ops[k]]
                at += 1
            if qe < length:
                at = _put_int(out, at, length - qe)
                out[at] = 83
                at += 1
            at = _put_text(out, at, b"\t*\t0\t0\t")
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
        at += 1
        if qual_lo[r] < 0 or length == 0:
            out[at] = 42
            at += 1
        else:
            for i in range(length):
                out[at + i] = raw[qual_lo[r] + (length - 1 - i if reverse_strand else i)]
            at += length
        if p >= 0:
            read = forward[lo:hi] if not reverse_strand else reverse[size - hi : size - lo]
            at = _put_text(out, at, b"\tNM:i:")
            window = ref[rec_starts[record] + position : rec_starts[record] + position + span]
            if score == length * opts[R_MATCH] and qe - qb == length and o1 - o0 == 1:
                at = _put_int(out, at, 0)  # every base matches: only then does the score reach this
                at = _put_text(out, at, b"\tMD:Z:")
                at = _put_int(out, at, length)
            else:
                at = _put_int(out, at, _edit_distance(read, window, qb, ops, lens, o0, o1))
                at = _put_text(out, at, b"\tMD:Z:")
                at = _put_md(out, at, read, window, qb, ops, lens, o0, o1)
            at = _put_text(out, at, b"\tAS:i:")
            at = _put_signed(out, at, score)
            at = _put_text(out, at, b"\tXS:i:")
            at = _put_signed(out, at, sub)
        for i in range(rg_length):
            out[at] = rg[i]
            at += 1
        out[at] = 10
        at += 1
    starts[reads] = at
    return at, mapped


@njit(inline="always", nogil=True)
def _edit_distance(q, ref, qb, ops, lens, o0, o1):
    """SAM's NM: differing bases (N matches nothing) plus inserted and deleted ones."""
    i, j, nm = qb, 0, 0
    for r in range(o0, o1):
        n = lens[r]
        if ops[r] == OP_M:
            for k in range(n):
                a, b = q[i + k], ref[j + k]
                if a != b or a > 3:
                    nm += 1
            i += n
            j += n
        elif ops[r] == OP_I:
            i += n
            nm += n
        else:
            j += n
            nm += n
    return nm


@njit(inline="always", nogil=True)
def _put_md(out, at, q, ref, qb, ops, lens, o0, o1):
    """SAM's MD as samtools calmd writes it: matching runs, differing reference bases, and ^
    before a deletion's reference bases."""
    i, j, done = qb, 0, 0
    for r in range(o0, o1):
        n = lens[r]
        if ops[r] == OP_M:
            for k in range(n):
                a, b = q[i + k], ref[j + k]
                if a != b or a > 3:
                    at = _put_int(out, at, j + k - done)
                    out[at] = _LETTERS[ref[j + k]]
                    at += 1
                    done = j + k + 1
            i += n
            j += n
        elif ops[r] == OP_I:
            i += n
        elif ops[r] == OP_D:
            at = _put_int(out, at, j - done)
            out[at] = 94
            at += 1
            for k in range(n):
                out[at] = _LETTERS[ref[j + k]]
                at += 1
            j += n
            done = j
    return _put_int(out, at, ref.size - done)
