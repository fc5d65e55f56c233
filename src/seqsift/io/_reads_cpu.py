"""The reads parser's kernel (reads.py calls it precompiled, see precompiled.py): whole
blocks of FASTQ or FASTA records framed, checked, folded and coded in one pass."""

import numpy as np
from numba import njit, uint8, uint32, uint64

from seqsift.intrinsics import acgt32, cttz64, eq_mask32
from seqsift.io.reads import _ACGT, _BAD_CHAR, _NAME_CONTROL, _NO_AT, _NO_GT, _NO_NAME, _NO_PLUS, _OK, _QUAL_LEN, _TRUNCATED


@njit(inline="always", nogil=True)
def _line_end(buf, pos, final):
    """Index of the newline ending the line at pos; len(buf) for a last line at EOF; -1 when
    the line is incomplete."""
    base = uint64(buf.ctypes.data)
    i = pos
    while i + 32 <= buf.size:  # 32 bytes a compare while a whole vector fits
        found = eq_mask32(base + uint64(i), uint8(10))
        if found:
            return i + np.int64(cttz64(uint64(found)))
        i += 32
    for i in range(i, buf.size):
        if buf[i] == 10:
            return i
    return buf.size if final and pos < buf.size else -1


@njit(inline="always", nogil=True)
def _strip_cr(buf, lo, hi):
    return hi - 1 if hi > lo and buf[hi - 1] == 13 else hi


@njit(inline="always", nogil=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 10


@njit(inline="always", nogil=True)
def _name(buf, lo, hi, name_lo, name_hi, r):
    """First word of a header (after its '>' or '@'): -1 when it has none, the offset of a control
    byte in it (below 0x20 or 0x7f: printed in TSV or SAM it could forge a field or a line, and
    SAM's QNAME allows none), else 0."""
    while lo < hi and _is_space(buf[lo]):
        lo += 1
    end = lo
    control = 0
    while end < hi and not _is_space(buf[end]):
        if control == 0 and (buf[end] < 32 or buf[end] == 127):
            control = end
        end += 1
    name_lo[r] = lo
    name_hi[r] = end
    return control if end > lo else -1


@njit(inline="always", nogil=True)
def _acgt_line(buf, lo, hi, seq, nseq, codes):
    """Whether [lo, hi), at least 32 bytes, holds only ACGTacgt, folding and coding it into
    seq and codes from nseq meanwhile (32 bytes a step, the last step overlapping the one
    before: each byte's outputs depend on it alone)."""
    source = uint64(buf.ctypes.data) + uint64(lo)
    folded = uint64(seq.ctypes.data) + uint64(nseq)
    coded = uint64(codes.ctypes.data) + uint64(nseq)
    size = uint64(hi - lo)
    other = uint32(0)
    i = uint64(0)
    while i + uint64(32) <= size:
        other |= acgt32(source + i, folded + i, coded + i)
        i += uint64(32)
    if i < size:
        i = size - uint64(32)
        other |= acgt32(source + i, folded + i, coded + i)
    return other == 0


@njit(inline="always", nogil=True)
def _copy_bases(buf, lo, hi, fold, seq, nseq, table, codes, acgt):
    """Fold [lo, hi) into seq from nseq, and its translation through table into codes; returns
    (new nseq, index of a bad byte or -1). acgt (table codes A, C, G, T in either case 0-3):
    a line of those letters only is done by vectors, where a table costs a load a base. Other
    lines of letters only are copied by loops without branches, over views indexed from 0
    (Numba adds negative-index code to other signed indexes, which keeps loops from
    vectorizing); a line holding a space or a bad byte is redone byte by byte."""
    if acgt and hi - lo >= 32 and _acgt_line(buf, lo, hi, seq, nseq, codes):
        return nseq + hi - lo, -1
    line = buf[lo:hi]
    out = seq[nseq:nseq + (hi - lo)]
    odd = uint8(0)
    for i in range(line.size):
        c = fold[line[i]]
        odd |= uint8(c < 33)  # 0 (a bad byte) or a space: every letter FOLD keeps is above '!'
        out[i] = c
    if odd:
        return _copy_slowly(buf, lo, hi, fold, seq, nseq, table, codes)
    translated = codes[nseq:nseq + (hi - lo)]
    for i in range(out.size):
        translated[i] = table[out[i]]
    return nseq + hi - lo, -1


@njit(inline="always", nogil=True)
def _copy_slowly(buf, lo, hi, fold, seq, nseq, table, codes):
    for i in range(lo, hi):
        c = fold[buf[i]]
        if c == 0:
            return nseq, i
        if not _is_space(c):
            seq[nseq] = c
            codes[nseq] = table[c]
            nseq += 1
    return nseq, -1


@njit(nogil=True, cache=True)
def parse(buf, final, fastq, max_reads, copy, fold, table, seq, codes, bounds, name_lo, name_hi, qual_lo):
    """Complete records of buf, at most max_reads. Returns (reads, bytes consumed, lines
    consumed, error code, line of the error relative to buf's start, offending byte). copy=False
    checks the framing only (headers, names, separators, quality lengths): bases are neither
    copied nor checked, and seq, codes and bounds are not written."""
    pos, line, r, nseq = 0, 0, 0, 0
    n = buf.size
    acgt = True  # do fold and table treat A, C, G, T (either case) as acgt32 does?
    for b in range(4):
        upper = _ACGT[b]
        acgt = acgt and fold[upper] == upper and fold[upper | 32] == upper and table[upper] == b and table[upper | 32] == b
    bounds[0] = 0
    while r < max_reads and pos < n:
        e1 = _line_end(buf, pos, final)
        if e1 < 0:
            break
        if buf[pos] != (64 if fastq else 62):
            blank = True
            for i in range(pos, e1):
                blank = blank and _is_space(buf[i])
            if not blank:
                return r, pos, line, _NO_AT if fastq else _NO_GT, line, 0
            pos, line = e1 + 1, line + 1
            continue
        if fastq:
            named = _name(buf, pos + 1, e1, name_lo, name_hi, r)
            if named != 0:
                return r, pos, line, _NO_NAME if named < 0 else _NAME_CONTROL, line, buf[named] if named > 0 else 0
            e2 = _line_end(buf, e1 + 1, final)  # sequence, '+' and quality lines (-1: not all here)
            e3 = _line_end(buf, e2 + 1, final) if e2 >= 0 else -1
            e4 = _line_end(buf, e3 + 1, final) if e3 >= 0 else -1
            if e4 < 0:
                if final:
                    return r, pos, line, _TRUNCATED, line, 0
                break
            s_lo, s_hi = e1 + 1, _strip_cr(buf, e1 + 1, e2)
            p_lo = e2 + 1
            if p_lo >= n or buf[p_lo] != 43:
                return r, pos, line, _NO_PLUS, line + 2, 0
            q_lo, q_hi = e3 + 1, _strip_cr(buf, e3 + 1, e4)
            if q_hi - q_lo != s_hi - s_lo:
                return r, pos, line, _QUAL_LEN, line + 3, q_hi - q_lo
            if copy:
                nseq, bad = _copy_bases(buf, s_lo, s_hi, fold, seq, nseq, table, codes, acgt)
                if bad >= 0:
                    return r, pos, line, _BAD_CHAR, line + 1, buf[bad]
            qual_lo[r] = q_lo
            pos, line = e4 + 1, line + 4
        else:
            named = _name(buf, pos + 1, e1, name_lo, name_hi, r)
            if named != 0:
                return r, pos, line, _NO_NAME if named < 0 else _NAME_CONTROL, line, buf[named] if named > 0 else 0
            start, lines = e1 + 1, 1
            complete = False
            while True:  # sequence lines up to the next '>' at a line start, or EOF
                if start >= n:
                    complete = final
                    break
                if buf[start] == 62:
                    complete = True
                    break
                e = _line_end(buf, start, final)
                if e < 0:
                    break
                start, lines = e + 1, lines + 1
            if not complete:
                break
            at = e1 + 1
            ln = line + 1
            while copy and at < start:  # copy line by line so an error names its line
                e = _line_end(buf, at, True)
                nseq, bad = _copy_bases(buf, at, e, fold, seq, nseq, table, codes, acgt)
                if bad >= 0:
                    return r, pos, line, _BAD_CHAR, ln, buf[bad]
                at, ln = e + 1, ln + 1
            qual_lo[r] = -1
            pos, line = start, line + lines
        r += 1
        if copy:
            bounds[r] = nseq
    return r, pos, line, _OK, 0, 0
