"""Search results as bytes: TSV lines (compiled, it is the hot path) and SAM records.

TSV: read_id<TAB>count<TAB>hits, hits = record:position:strand joined by ',' ('-' when none
are listed). SAM: one primary record per matched read, further hits as secondary records,
unmatched reads as unmapped records.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from seqsift import __version__
from seqsift.fmindex.query import BatchHits
from seqsift.io.reads import ReadBatch

_COMPLEMENT = bytes.maketrans(b"ACGT", b"TGCA")


def name_table(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Record names as one byte array plus offsets, for the compiled formatter."""
    encoded = [n.encode() for n in names]
    return np.frombuffer(b"".join(encoded) or b"\0", np.uint8), np.concatenate(([0], np.cumsum([len(e) for e in encoded]))).astype(np.int64)


@njit(inline="always", nogil=True)
def _put_int(out, at, value):
    if value == 0:
        out[at] = 48
        return at + 1
    digits = 0
    v = value
    while v:
        digits += 1
        v //= 10
    for i in range(digits - 1, -1, -1):
        out[at + i] = 48 + value % 10
        value //= 10
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


def mapq(count: int) -> int:
    """Phred-scaled chance that the reported site is not the read's origin: 1 - 1/count."""
    return 60 if count == 1 else min(60, int(round(-10 * math.log10(1 - 1 / count))))


def sam_header(names: list[str], lengths: np.ndarray, command_line: str) -> bytes:
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{n}\tLN:{int(length)}" for n, length in zip(names, lengths)]
    lines.append(f"@PG\tID:seqsift\tPN:seqsift\tVN:{__version__}\tCL:{command_line}")
    return ("\n".join(lines) + "\n").encode()


def sam(batch: ReadBatch, found: BatchHits, record: np.ndarray, position: np.ndarray, names: list[str]) -> bytes:
    lines = []
    raw = batch.raw
    for r in range(len(batch)):
        qname = batch.name(r)
        seq = batch.seq[batch.bounds[r] : batch.bounds[r + 1]].tobytes()
        length = len(seq)
        qual = raw[batch.qual_lo[r] : batch.qual_lo[r] + length].tobytes() if batch.qual_lo[r] >= 0 else b"*"
        seq_text = seq.decode() or "*"
        qual_text = (qual.decode() or "*") if length else "*"
        count = int(found.counts[r])
        lo, hi = found.offsets[r], found.offsets[r + 1]
        if hi == lo:
            lines.append(f"{qname}\t4\t*\t0\t0\t*\t*\t0\t0\t{seq_text}\t{qual_text}\tX0:i:{count}")
            continue
        quality = mapq(count)
        for k, h in enumerate(range(lo, hi)):
            reverse = bool(found.strand[h])
            flag = (16 if reverse else 0) | (256 if k else 0)
            if k:
                s, q = "*", "*"
            elif reverse:
                s = seq.translate(_COMPLEMENT)[::-1].decode()
                q = qual_text[::-1] if qual_text != "*" else "*"
            else:
                s, q = seq_text, qual_text
            lines.append(f"{qname}\t{flag}\t{names[record[h]]}\t{position[h] + 1}\t{quality}\t{length}M\t*\t0\t0\t"
                         f"{s}\t{q}\tNH:i:{hi - lo}\tHI:i:{k + 1}\tX0:i:{count}")
    return ("\n".join(lines) + "\n").encode() if lines else b""
