"""A chain to an alignment: the reference window around the chain, inside its record, aligned
with the clip-aware banded kernel (_extend.py); and the NM and MD of an alignment."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.fmindex.layout import IndexArrays
from seqsift.fmindex.reference import Reference
from seqsift.map.layout import (C_READ, COLUMNS, P_AMBIGUOUS, P_BAND, P_CLIP, P_EXTEND, P_MATCH, P_MAX_TRACE, P_MISMATCH,
                                P_OPEN, P_UNGAPPED, PARAMS)
from seqsift.map.scoring import MapOptions
from seqsift.precompiled import Kernel

_KERNELS = "seqsift.map._extend"  # called precompiled: `seqsift map` starts without importing Numba
place_chain = Kernel(_KERNELS, "place_chain", "int8[:] int64 int64 int64 int8[:] int64[:] int64[:] int64[:] int8[:] "
                     "int64[:] int64[:]", results=9)
place_chains = Kernel(_KERNELS, "place_chains", "int8[:] int8[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] "
                      "int64[:] float64[:] int64 int8[:] int64[:] int64[:] int64[:] uint8[:] int64[:] int64[:,:] int64[:] "
                      "int64[:]", results=2)
_NONE_SETTLED, _NO_SCORES = np.empty(0, np.uint8), np.empty(0, np.int64)
differences = Kernel(_KERNELS, "differences", "int8[:] int8[:] int64 int64[:] int64[:] int64[:] int64[:]", results=2)

_LETTERS = np.frombuffer(b"ACGTN", np.uint8)
_CIGAR = "MIDNS"
_COMPLEMENT = np.array([3, 2, 1, 0, 4], np.int8)
MAX_TRACE = 64 << 20  # traceback bytes of one extension (read length x band width); a chain needing more is skipped


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
    ref_span: int  # reference bases covered

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
    """(forward, reverse complement) of reads' codes (0-3, 255 for other letters) as int8 with
    4 for other letters. For a batch: read [lo, hi) of the forward codes is read
    [size - hi, size - lo) of the reverse ones."""
    forward = np.minimum(codes, 4).astype(np.int8)
    reverse = _COMPLEMENT[forward[::-1]]
    return forward, reverse


def kernel_params(o: MapOptions) -> np.ndarray:
    """The options the placement kernels read, as their P_* array."""
    params = np.zeros(PARAMS, np.int64)
    params[[P_MATCH, P_MISMATCH, P_AMBIGUOUS, P_OPEN, P_EXTEND, P_CLIP, P_BAND, P_UNGAPPED, P_MAX_TRACE]] = (
        o.match, o.mismatch, o.ambiguous, o.gap_open, o.gap_extend, o.clip, o.band, o.ungapped_limit, MAX_TRACE)
    return params


class Extender:
    """Aligns reads around chains on one reference; keeps scratch buffers, so one per thread."""

    def __init__(self, reference: Reference, ref_codes: np.ndarray, options: MapOptions):
        self.reference = reference
        self.ref_codes = ref_codes
        self.o = options
        self.params = kernel_params(options)
        self.trace = np.empty(0, np.int8)
        self.ops = np.empty(0, np.int64)
        self.lens = np.empty(0, np.int64)
        self.events = np.empty(0, np.int64)
        self.event_lengths = np.empty(0, np.int64)

    def place(self, read: np.ndarray, strand: int, diag_lo: int, diag_hi: int, anchor: int) -> Placement | None:
        """The best clip-aware alignment of the oriented read in the window of a chain whose
        diagonals (text positions of the read's first base) run from diag_lo to diag_hi
        (_extend.place_chain, one chain at a time: mate rescue, tests)."""
        ref = self.reference
        args = (read, diag_lo, diag_hi, anchor, self.ref_codes, ref.starts, ref.lengths, self.params)
        found, record, position, qb, qe, score, total, span, runs = place_chain(*args, self.trace, self.ops, self.lens)
        if found < 0:
            m, width = read.size, diag_hi - diag_lo + 2 * self.o.band + 1
            self.trace = np.empty(2 * (m + 1) * width, np.int8)
            self.ops = np.empty(2 * (2 * m + width + 1), np.int64)
            self.lens = np.empty_like(self.ops)
            found, record, position, qb, qe, score, total, span, runs = place_chain(*args, self.trace, self.ops,
                                                                                    self.lens)
        if found <= 0:
            return None
        return Placement(record=int(record), position=int(position), strand=strand, qb=int(qb), qe=int(qe),
                         read_length=read.size, ops=tuple(self.ops[:runs].tolist()),
                         lens=tuple(self.lens[:runs].tolist()), score=int(score), total=int(total), ref_span=int(span))

    def place_table(self, forward, reverse, bounds, chains) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """Every read's strongest chains placed (_extend.place_chains): (placements, their table
        of layout.C_* columns, ops, lens), rows in read order. The reads chains.settled names
        (the quick search's) are laid on their one diagonal without aligning them again."""
        o, ref = self.o, self.reference
        settled, gapless = (_NONE_SETTLED, _NO_SCORES) if chains.settled is None else (chains.settled, chains.gapless)
        table = np.empty((max(1, int(chains.offsets[-1])), COLUMNS), np.int64)
        room = 4 * table.shape[0] + 4096
        while True:
            ops, lens = np.empty(room, np.int64), np.empty(room, np.int64)
            n, used = place_chains(forward, reverse, bounds, chains.offsets, chains.strand, chains.diag_lo,
                                   chains.diag_hi, chains.anchor, chains.weight, np.array([o.drop_ratio], np.float64),
                                   o.max_chains, self.ref_codes, ref.starts, ref.lengths, self.params, settled, gapless,
                                   table, ops, lens)
            if n >= 0:
                return n, table, ops[:used], lens[:used]
            room = max(2 * room, used)

    def place_all(self, forward, reverse, bounds, chains) -> list[list[Placement]]:
        """The placements of every read's strongest chains, per read."""
        n, table, ops, lens = self.place_table(forward, reverse, bounds, chains)
        return placements_of(table[:n], ops, lens, bounds)

    def nm_md(self, p: Placement, read: np.ndarray) -> tuple[int, str]:
        """SAM's NM (differing bases plus inserted and deleted ones) and MD (the reference bases
        at differences and deletions), as samtools calmd writes them: N never matches."""
        if p.score == p.read_length * self.o.match and p.qe - p.qb == p.read_length and len(p.ops) == 1:
            return 0, str(p.read_length)  # every base matches: only then does the score reach this
        start = int(self.reference.starts[p.record]) + p.position
        ref = self.ref_codes[start : start + p.ref_span]
        capacity = p.read_length + len(p.ops)  # events: differing bases and deletion runs
        if self.events.size < capacity:
            self.events = np.empty(2 * capacity, np.int64)
            self.event_lengths = np.empty_like(self.events)
        nm, count = differences(read, ref, p.qb, np.asarray(p.ops, np.int64), np.asarray(p.lens, np.int64),
                                self.events, self.event_lengths)
        md, done = [], 0
        for at, n in zip(self.events[:count].tolist(), self.event_lengths[:count].tolist()):
            letters = _LETTERS[ref[at : at + max(n, 1)]].tobytes().decode()
            md.append(f"{at - done}{'^' if n else ''}{letters}")
            done = at + max(n, 1)
        md.append(str(p.ref_span - done))
        return nm, "".join(md)


def placements_of(rows: np.ndarray, ops: np.ndarray, lens: np.ndarray, bounds: np.ndarray,
                  reads=None) -> list[list[Placement]]:
    """Placement objects of place_chains' table rows, per read of the batch (reads: only those
    reads', the others' lists left empty)."""
    per_read: list[list[Placement]] = [[] for _ in range(bounds.size - 1)]
    if reads is not None:
        rows = rows[np.isin(rows[:, C_READ], reads)]
    ops, lens, lengths = ops.tolist(), lens.tolist(), np.diff(bounds).tolist()
    for r, record, position, strand, qb, qe, score, total, span, at, runs in rows.tolist():
        per_read[r].append(Placement(record=record, position=position, strand=strand, qb=qb, qe=qe,
                                     read_length=lengths[r], ops=tuple(ops[at : at + runs]),
                                     lens=tuple(lens[at : at + runs]), score=score, total=total, ref_span=span))
    return per_read
