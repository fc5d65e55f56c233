"""The search output's formatters (output.py calls them precompiled, see precompiled.py):
digits and names written straight into one byte buffer."""

from numba import njit, uint8, uint64


@njit(inline="always", nogil=True)
def _put_int(out, at, value):
    """The decimal digits of value (>= 0) at out[at:]; returns the index after them. Unsigned
    arithmetic: a signed // and % by 10 carry Python's rounding toward minus infinity."""
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
def _put_bytes(out, at, src, lo, hi):
    for i in range(lo, hi):
        out[at] = src[i]
        at += 1
    return at


@njit(inline="always", nogil=True)
def _put_quality(out, at, raw, qual_lo, length, reverse):
    """A read's qualities raw[qual_lo:qual_lo + length] at out[at:], reversed for a read on the
    reverse strand, or '*' where it has none (qual_lo < 0, FASTA) or is empty; returns the index
    after them (SAM's QUAL: here and map/_report.py)."""
    if qual_lo < 0 or length == 0:
        out[at] = 42
        at += 1
    else:
        for i in range(length):
            out[at + i] = raw[qual_lo + (length - 1 - i if reverse else i)]
        at += length
    return at


@njit(nogil=True, cache=True)
def format_tsv(raw, name_lo, name_hi, counts, offsets, record, position, strand, differences, names, name_off, out):
    """The TSV lines of output.tsv; each hit with its differences after its strand where
    differences is not empty (the approximate search's, approx_output.tsv)."""
    with_differences = differences.size > 0
    at = 0
    for r in range(counts.size):
        at = _put_bytes(out, at, raw, name_lo[r], name_hi[r])
        out[at] = 9
        at = _put_int(out, at + 1, counts[r])
        out[at] = 9
        at += 1
        if offsets[r + 1] == offsets[r]:
            out[at] = 45
            at += 1
        for h in range(offsets[r], offsets[r + 1]):
            if h > offsets[r]:
                out[at] = 44
                at += 1
            at = _put_bytes(out, at, names, name_off[record[h]], name_off[record[h] + 1])
            out[at] = 58
            at = _put_int(out, at + 1, position[h])
            out[at] = 58
            out[at + 1] = 45 if strand[h] else 43
            at += 2
            if with_differences:
                out[at] = 58
                at = _put_int(out, at + 1, differences[h])
        out[at] = 10
        at += 1
    return at


@njit(inline="always", nogil=True)
def _put_text(out, at, text):
    for c in text:
        out[at] = c
        at += 1
    return at


# FNV-1a's 64-bit offset basis and prime; the basis is mixed with a fixed seed so that the choice
# among equally good sites is the same in every run, at any thread count and batch size.
_FNV_BASIS = 0xCBF29CE484222325 ^ 0x5EED5EED
_FNV_PRIME = 0x100000001B3


@njit(nogil=True, cache=True)
def name_hashes(raw, name_lo, name_hi, out):
    """Per read, FNV-1a (64 bits, from the seeded basis) of its name: the number whose remainder
    by the read's count of equally good sites picks its primary (query.Searcher.hits). As bwa,
    a repeat's reads spread over all its copies instead of all landing on the leftmost one."""
    for r in range(name_lo.size):
        h = uint64(_FNV_BASIS)
        for i in range(name_lo[r], name_hi[r]):
            h = (h ^ uint64(raw[i])) * uint64(_FNV_PRIME)
        out[r] = h


@njit(nogil=True, cache=True)
def format_sam(raw, name_lo, name_hi, seq, bounds, qual_lo, counts, mapqs, offsets, record, position, strand,
                names, name_off, comp, out):
    at = 0
    for r in range(counts.size):
        lo, hi = bounds[r], bounds[r + 1]
        length = hi - lo
        listed = offsets[r + 1] - offsets[r]
        for k in range(max(listed, 1)):
            at = _put_bytes(out, at, raw, name_lo[r], name_hi[r])
            if listed == 0:
                at = _put_text(out, at, b"\t4\t*\t0\t0\t*\t*\t0\t0\t")
                reverse = False
            else:
                h = offsets[r] + k  # the primary first (query.Searcher.hits with seeds)
                reverse = strand[h] == 1
                out[at] = 9
                at = _put_int(out, at + 1, (16 if reverse else 0) | (256 if k else 0))
                out[at] = 9
                at = _put_bytes(out, at + 1, names, name_off[record[h]], name_off[record[h] + 1])
                out[at] = 9
                at = _put_int(out, at + 1, position[h] + 1)
                out[at] = 9
                at = _put_int(out, at + 1, mapqs[r])
                out[at] = 9
                at = _put_int(out, at + 1, length)
                at = _put_text(out, at, b"M\t*\t0\t0\t")
            if k > 0 or length == 0:  # secondary records (and empty reads) carry no sequence
                at = _put_text(out, at, b"*\t*")
            else:
                for i in range(length):
                    out[at + i] = comp[seq[hi - 1 - i]] if reverse else seq[lo + i]
                at += length
                out[at] = 9
                at = _put_quality(out, at + 1, raw, qual_lo[r], length, reverse)
            if listed:
                at = _put_text(out, at, b"\tNH:i:")
                at = _put_int(out, at, listed)
                at = _put_text(out, at, b"\tHI:i:")
                at = _put_int(out, at, k + 1)
                at = _put_text(out, at, b"\tNM:i:0\tMD:Z:")  # exact matches: no edit, every base matches
                at = _put_int(out, at, length)
            at = _put_text(out, at, b"\tX0:i:")
            at = _put_int(out, at, counts[r])
            out[at] = 10
            at += 1
    return at
