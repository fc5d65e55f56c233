"""A chain to an alignment: the reference window around the chain, inside its record, aligned
with the clip-aware banded kernel (_extend.py); and the NM and MD of an alignment."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.fmindex.layout import IndexArrays
from seqsift.fmindex.reference import Reference
from seqsift.map._extend import OP_D, OP_I, OP_M, clip_align
from seqsift.map.scoring import MapOptions

_LETTERS = np.frombuffer(b"ACGTN", np.uint8)
_CIGAR = "MIDNS"


@dataclass(frozen=True)
class Placement:
    """One alignment of a read (of its reverse complement when strand is 1): bases [qb, qe)
    of the oriented read against record `record` from 0-based `position`, as CIGAR runs
    (ops in SAM's numbering, lens). score: without clip penalties (SAM's AS); total: with them
    (what ranks alignments)."""

    record: int
    position: int
    strand: int
    qb: int
    qe: int
    read_length: int
    ops: tuple
    lens: tuple
    score: int
    total: int

    @property
    def ref_span(self) -> int:
        return sum(n for op, n in zip(self.ops, self.lens) if op != OP_I)

    @property
    def end(self) -> int:
        return self.position + self.ref_span

    def cigar(self) -> str:
        parts = [f"{self.qb}S"] if self.qb else []
        parts += [f"{n}{_CIGAR[op]}" for op, n in zip(self.ops, self.lens)]
        if self.qe < self.read_length:
            parts.append(f"{self.read_length - self.qe}S")
        return "".join(parts)


def reference_codes(arrays: IndexArrays) -> np.ndarray:
    """The index's text as int8 codes 0-3 for A C G T and 4 for everything else (N, record
    boundaries): its 2-bit packed bases, with the runs the index lists as gaps set to 4. Built
    from the index alone, since a loaded .ssx keeps no plain text."""
    packed = arrays.packed
    codes = np.empty(packed.size * 4, np.int8)
    for shift in range(4):
        codes[shift::4] = (packed >> (2 * shift)) & 3
    codes = codes[: arrays.n]
    for start, end in arrays.gaps.tolist():
        codes[start:end] = 4
    return codes


def oriented(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(forward, reverse complement) of a read's codes (0-3, 255 for other letters) as int8
    with 4 for other letters."""
    forward = np.where(codes > 3, 4, codes).astype(np.int8)
    reverse = np.where(forward[::-1] == 4, 4, 3 - forward[::-1]).astype(np.int8)
    return forward, reverse


class Extender:
    """Aligns reads around chains on one reference; keeps scratch buffers, so one per thread."""

    def __init__(self, reference: Reference, ref_codes: np.ndarray, options: MapOptions):
        self.reference = reference
        self.ref_codes = ref_codes
        self.o = options
        self.trace = np.empty(0, np.int8)
        self.ops = np.empty(0, np.int64)
        self.lens = np.empty(0, np.int64)

    def place(self, read: np.ndarray, strand: int, diag_lo: int, diag_hi: int, anchor: int) -> Placement | None:
        """The best clip-aware alignment of the oriented read in the window of a chain whose
        diagonals (text positions of the read's first base) run from diag_lo to diag_hi."""
        o, ref = self.o, self.reference
        record = int(np.searchsorted(ref.starts, anchor, "right") - 1)
        rec_start = int(ref.starts[record])
        rec_end = rec_start + int(ref.lengths[record])
        m = read.size
        lo = max(rec_start, diag_lo - o.band)
        hi = min(rec_end, diag_hi + m + o.band)
        if hi <= lo or m == 0:
            return None
        window = self.ref_codes[lo:hi]
        dlo, dhi = diag_lo - lo - o.band, diag_hi - lo + o.band
        width = dhi - dlo + 1
        if self.trace.size < (m + 1) * width:
            self.trace = np.empty(2 * (m + 1) * width, np.int8)
        if self.ops.size < m + window.size + 1:
            self.ops = np.empty(2 * (m + window.size + 1), np.int64)
            self.lens = np.empty_like(self.ops)
        total, score, qb, qe, tb, te, runs = clip_align(read, window, dlo, dhi, o.match, o.mismatch, o.ambiguous,
                                                        o.gap_open, o.gap_extend, o.clip, o.clip, self.trace,
                                                        self.ops, self.lens)
        if runs == 0:
            return None
        return Placement(record=record, position=lo + tb - rec_start, strand=strand, qb=qb, qe=qe, read_length=m,
                         ops=tuple(self.ops[:runs].tolist()), lens=tuple(self.lens[:runs].tolist()),
                         score=score, total=total)

    def nm_md(self, p: Placement, read: np.ndarray) -> tuple[int, str]:
        """SAM's NM (mismatches plus inserted and deleted bases) and MD (the reference bases
        at mismatches and deletions, as samtools calmd writes them: N never matches)."""
        ref = self.ref_codes[int(self.reference.starts[p.record]) + p.position :]
        qi, ti, nm, run = p.qb, 0, 0, 0
        md = []
        for op, n in zip(p.ops, p.lens):
            if op == OP_M:
                for a, b in zip(read[qi : qi + n].tolist(), ref[ti : ti + n].tolist()):
                    if a == b and a < 4:
                        run += 1
                    else:
                        md.append(f"{run}{chr(_LETTERS[b])}")
                        nm += 1
                        run = 0
                qi += n
                ti += n
            elif op == OP_I:
                qi += n
                nm += n
            elif op == OP_D:
                md.append(f"{run}^{_LETTERS[ref[ti : ti + n]].tobytes().decode()}")
                ti += n
                nm += n
                run = 0
        md.append(str(run))
        return nm, "".join(md)
