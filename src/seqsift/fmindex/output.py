"""Search results as bytes: TSV lines (compiled, it is the hot path) and SAM records.

TSV: read_id<TAB>count<TAB>hits, hits = record:position:strand joined by ',' ('-' when none
are listed). SAM: one primary record per matched read, further hits as secondary records,
unmatched reads as unmapped records.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint8, uint64

from seqsift import __version__
from seqsift.fmindex.query import BatchHits
from seqsift.io.reads import ReadBatch



def name_table(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Record names as one byte array plus offsets, for the compiled formatter."""
    encoded = [n.encode() for n in names]
    return np.frombuffer(b"".join(encoded) or b"\0", np.uint8), np.concatenate(([0], np.cumsum([len(e) for e in encoded]))).astype(np.int64)


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


@njit(nogil=True, cache=True)
def _format_tsv(raw, name_lo, name_hi, counts, offsets, record, position, strand, names, name_off, out):
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
        out[at] = 10
        at += 1
    return at


def tsv(batch: ReadBatch, found: BatchHits, record: np.ndarray, position: np.ndarray,
        names: tuple[np.ndarray, np.ndarray]) -> bytes:
    longest = int(np.diff(names[1]).max())
    size = int((batch.name_hi - batch.name_lo).sum()) + 24 * len(batch) + found.text_pos.size * (longest + 24)
    out = np.empty(size, np.uint8)
    used = _format_tsv(batch.raw, batch.name_lo, batch.name_hi, found.counts, found.offsets, record, position,
                       found.strand, names[0], names[1], out)
    return out[:used].tobytes()


def sam_header(names: list[str], lengths: np.ndarray, command_line: str) -> bytes:
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{n}\tLN:{int(length)}" for n, length in zip(names, lengths)]
    lines.append(f"@PG\tID:seqsift\tPN:seqsift\tVN:{__version__}\tCL:{command_line}")
    return ("\n".join(lines) + "\n").encode()


_COMP = np.arange(256, dtype=np.uint8)
for _a, _b in (b"AT", b"TA", b"CG", b"GC"):
    _COMP[_a] = _b


@njit(inline="always", nogil=True)
def _put_text(out, at, text):
    for c in text:
        out[at] = c
        at += 1
    return at


@njit(nogil=True, cache=True)
def _format_sam(raw, name_lo, name_hi, seq, bounds, qual_lo, counts, mapqs, offsets, record, position, strand,
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
                h = offsets[r] + k
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
                at += 1
                if qual_lo[r] < 0:
                    out[at] = 42
                    at += 1
                else:
                    for i in range(length):
                        out[at + i] = raw[qual_lo[r] + (length - 1 - i if reverse else i)]
                    at += length
            if listed:
                at = _put_text(out, at, b"\tNH:i:")
                at = _put_int(out, at, listed)
                at = _put_text(out, at, b"\tHI:i:")
                at = _put_int(out, at, k + 1)
            at = _put_text(out, at, b"\tX0:i:")
            at = _put_int(out, at, counts[r])
            out[at] = 10
            at += 1
    return at


def sam(batch: ReadBatch, found: BatchHits, record: np.ndarray, position: np.ndarray,
        names: tuple[np.ndarray, np.ndarray]) -> bytes:
    """MAPQ is the Phred-scaled chance that the reported site is not the read's origin, 1 - 1/count
    (60 for a unique read)."""
    counts = found.counts
    with np.errstate(divide="ignore"):
        phred = np.rint(-10 * np.log10(1 - 1 / np.maximum(counts, 1)))
    mapqs = np.where(counts == 1, 60, np.minimum(60, np.nan_to_num(phred, posinf=60))).astype(np.int64)
    longest = int(np.diff(names[1]).max())
    lengths = np.diff(batch.bounds)
    records = np.maximum(np.diff(found.offsets), 1)
    size = int(((batch.name_hi - batch.name_lo + 2 * lengths + longest + 120) * records).sum())
    out = np.empty(size, np.uint8)
    used = _format_sam(batch.raw, batch.name_lo, batch.name_hi, batch.seq, batch.bounds, batch.qual_lo, counts, mapqs,
                       found.offsets, record, position, found.strand, names[0], names[1], _COMP, out)
    return out[:used].tobytes()
