"""SAM records of a batch by compiled calls (_report.py, called precompiled): each read's choice,
MAPQ, CIGAR, NM, MD and record bytes without a Python object per read; for pairs also the pair's
choice, mate rescue included (_pairs.py). The few reads that need more than one record (chimeric
reads, -a), and the pairs with such an end, are written by the Python path (choose.py, pairs.py,
sam.py), in their place."""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from seqsift.map.choose import choose
from seqsift.map.extend import kernel_params, placements_of
from seqsift.map.sam import records
from seqsift.map.scoring import MapOptions
from seqsift.precompiled import Kernel

_REPORT = Kernel("seqsift.map._report", "report_single",
                 "int64[:,:] int64 int64[:] int64[:] int8[:] int8[:] int64[:] uint8[:] int64[:] int64[:] uint8[:] "
                 "int64[:] int8[:] int64[:] uint8[:] int64[:] uint8[:] uint8[:] int64[:] uint8[:] int64[:] uint8[:]",
                 results=2)
_CHOOSE = Kernel("seqsift.map._report", "choose_reads",
                 "int64[:,:] int64 int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] uint8[:] int64[:] int64[:]")
_PAIR = Kernel("seqsift.map._report", "pair_choices",
               "int64[:,:] int64[:] int64[:] int64[:] uint8[:] float64[:] int64 int64[:] uint8[:]")
_REPORT_PAIRS = Kernel("seqsift.map._report", "report_pairs",
                       "int64[:,:] int64 int64[:] int64[:] int8[:] int8[:] int64[:] uint8[:] int64[:] int64[:] uint8[:] "
                       "int64[:] int8[:] int64[:] uint8[:] int64[:] uint8[:] uint8[:] int64[:] int64[:] int64[:] "
                       "int64[:] int64[:] int64[:] int64[:] int64[:] uint8[:] uint8[:] int64[:]", results=2)
_RESCUE = Kernel("seqsift.map._pairs", "pair_rescues",
                 "int64[:,:] int64 int64[:] int64[:] int64 int8[:] int8[:] int64[:] int8[:] int64[:] int64[:] int64[:] "
                 "int64[:] int64[:] int64[:] int64[:] int64[:] uint8[:] int64[:] int64[:] int64[:] int64 float64[:] "
                 "int64 int64 uint8[:]", results=3)
RESCUES_PER_PAIR = 4  # table rows pair_rescues may add: two rescues of each end

# sam.py's complement (ACGTN and acgtn; any other letter stays)
COMPLEMENT = np.arange(256, dtype=np.uint8)
for _a, _b in zip(b"ACGTNacgtn", b"TGCANtgcan"):
    COMPLEMENT[_a] = _b


def report_options(o: MapOptions) -> np.ndarray:
    """The options report_single reads, as its R_* array (_report.py)."""
    return np.array([o.match, o.mismatch, o.gap_open, o.gap_extend, o.min_score, o.seed_length, int(o.secondary)],
                     np.int64)


class _Report:
    """What the kernels read besides the batch: record names as bytes, the read group's tag,
    the options."""

    def __init__(self, mapper, rg_id: str | None):
        from seqsift.fmindex.output import name_table

        self.mapper = mapper
        self.rg_id = rg_id
        self.names = name_table(mapper.index.names)
        self.rg = np.frombuffer(f"\tRG:Z:{rg_id}".encode(), np.uint8) if rg_id else np.zeros(1, np.uint8)
        self.opts = report_options(mapper.options)
        self.params = kernel_params(mapper.options)

    def room(self, batch, ops: np.ndarray) -> int:
        """A first guess of the batch's SAM bytes (the kernels say when it is short)."""
        return int((batch.name_hi - batch.name_lo).sum()) + 16 * int(batch.bounds[-1]) + 24 * ops.size \
            + len(batch) * (300 + self.rg.size + 2 * int(np.diff(self.names[1]).max(initial=0)))


class SingleReport(_Report):
    """A mapper's batches of single reads to SAM bytes."""

    def __call__(self, batch) -> tuple[bytes, int]:
        """(the batch's SAM records in read order, reads mapped)."""
        m = self.mapper
        forward, reverse, n, table, ops, lens = m.placed(batch)
        reads = len(batch)
        ref = m.index.reference
        room = self.room(batch, ops)
        starts, deferred = np.empty(reads + 1, np.int64), np.empty(max(reads, 1), np.uint8)
        while True:
            out = np.empty(room, np.uint8)
            used, mapped = _REPORT(table, n, ops, lens, forward, reverse, batch.bounds, batch.raw, batch.name_lo,
                                   batch.name_hi, batch.seq, batch.qual_lo, m.ref_codes, ref.starts, self.names[0],
                                   self.names[1], COMPLEMENT, self.rg, self.opts, out, starts, deferred)
            if used >= 0:
                break
            room *= 2
        later = np.flatnonzero(deferred[:reads])
        if later.size == 0:
            return out[:used].tobytes(), mapped
        per_read = placements_of(table[:n], ops, lens, batch.bounds, later)
        size, pieces, done = forward.size, [], 0
        for r in later.tolist():
            lo, hi = int(batch.bounds[r]), int(batch.bounds[r + 1])
            oriented = (forward[lo:hi], reverse[size - hi : size - lo])
            one = m.report(batch, r, oriented, choose(per_read[r], m.options))
            pieces += [out[starts[done] : starts[r]].tobytes(), records(one, m.index.names, self.rg_id).encode()]
            done = r + 1
            mapped += one.mapped
        pieces.append(out[starts[done] : used].tobytes())
        return b"".join(pieces), mapped


@dataclass
class PairRun:
    """A batch of both ends (pairs.joined) placed and each read chosen alone: the placement
    table (layout.C_* columns), per read its first row, primary row, XS, MAPQ and whether more
    records follow, its XA alternatives' rows alts[alt_start[r]:alt_start[r + 1]]; proper per pair
    once finished (0, 1, or 2: an end needs more than one record, left to pairs.py)."""

    batch: object
    forward: np.ndarray
    reverse: np.ndarray
    n: int
    table: np.ndarray
    ops: np.ndarray
    lens: np.ndarray
    first_row: np.ndarray
    primary: np.ndarray
    sub: np.ndarray
    quality: np.ndarray
    more: np.ndarray
    alt_start: np.ndarray
    alts: np.ndarray
    proper: np.ndarray | None = None
    rows: int = 0  # the table's rows once finished: n, then the rescued mates'


class PairReport(_Report):
    """Paired batches to SAM bytes in two steps, the insert size estimated between them
    (pairs.PairBatches)."""

    def start(self, both) -> PairRun:
        m = self.mapper
        forward, reverse, n, table, ops, lens = m.placed(both)
        reads = len(both)
        run = PairRun(both, forward, reverse, n, table, ops, lens, np.empty(reads + 1, np.int64),
                      np.empty(reads, np.int64), np.empty(reads, np.int64), np.empty(reads, np.int64),
                      np.empty(reads, np.uint8), np.empty(reads + 1, np.int64), np.empty(max(n, 1), np.int64))
        _CHOOSE(table, n, both.bounds, self.opts, run.first_row, run.primary, run.sub, run.quality, run.more,
                run.alt_start, run.alts)
        return run

    def finish(self, run: PairRun, insert, unpaired: int, candidates: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        """(out, starts, bytes used, reads mapped) of the pairs the kernels choose and write:
        pair r's records at out[starts[r]:starts[r + 1]], empty where run.proper[r] == 2 (a pair
        whose ends need more than one record). candidates: the alignments of each end tried in
        pairs and as rescue anchors."""
        m, both = self.mapper, run.batch
        half = len(both) // 2
        run.proper = np.empty(max(half, 1), np.uint8)
        size = np.array([insert.mean, insert.std, insert.low, insert.high] if insert else [0, 1, 0, -1], np.float64)
        _PAIR(run.table, run.first_row, run.primary, run.quality, run.more, size, unpaired, self.opts, run.proper)
        run.proper = run.proper[:half]
        alt_lo, alt_hi = run.alt_start[:-1].copy(), run.alt_start[1:].copy()
        run.rows, table, ops, lens, alts = run.n, run.table, run.ops, run.lens, run.alts
        if insert is not None and (run.proper == 2).any():
            run.rows, table, ops, lens, alts, alt_lo, alt_hi = self._rescued(run, size, unpaired, candidates, alt_lo,
                                                                              alt_hi)
        ref = m.index.reference
        starts = np.empty(half + 1, np.int64)
        room = self.room(both, ops)
        while True:
            out = np.empty(room, np.uint8)
            used, mapped = _REPORT_PAIRS(table, run.rows, ops, lens, run.forward, run.reverse, both.bounds,
                                         both.raw, both.name_lo, both.name_hi, both.seq, both.qual_lo, m.ref_codes,
                                         ref.starts, self.names[0], self.names[1], COMPLEMENT, self.rg, self.opts,
                                         run.first_row, run.primary, run.quality, run.sub, alt_lo, alt_hi, alts,
                                         run.proper, out, starts)
            if used >= 0:
                return out, starts, used, mapped
            room *= 2

    def _rescued(self, run: PairRun, insert: np.ndarray, unpaired: int, candidates: int, alt_lo: np.ndarray,
                 alt_hi: np.ndarray):
        """_pairs.pair_rescues on the pairs pair_choices left (run.proper == 2): run.primary,
        quality, sub and proper updated; returns (rows, table, ops, lens, alts, alt_lo, alt_hi)
        with the rescued mates' rows after run.n."""
        m, both = self.mapper, run.batch
        ref = m.index.reference
        later = int((run.proper == 2).sum())
        rows, runs, listed = run.n + RESCUES_PER_PAIR * later, run.ops.size + 64 * later, run.alts.size + 16 * later
        while True:
            table = np.empty((rows, run.table.shape[1]), np.int64)
            table[: run.n] = run.table[: run.n]
            ops, lens = np.empty(runs, np.int64), np.empty(runs, np.int64)
            ops[: run.ops.size], lens[: run.ops.size] = run.ops, run.lens
            alts = np.empty(listed, np.int64)
            alts[: run.alts.size] = run.alts
            primary, quality, sub, proper = run.primary.copy(), run.quality.copy(), run.sub.copy(), run.proper.copy()
            lo, hi = alt_lo.copy(), alt_hi.copy()
            n, _, _ = _RESCUE(table, run.n, ops, lens, run.ops.size, run.forward, run.reverse, both.bounds, m.ref_codes,
                              ref.starts, ref.lengths, self.params, self.opts, run.first_row, primary, quality, sub,
                              run.more, lo, hi, alts, run.alts.size, insert, unpaired, candidates, proper)
            if n >= 0:
                run.primary, run.quality, run.sub, run.proper = primary, quality, sub, proper
                return n, table, ops, lens, alts, lo, hi
            rows, runs, listed = 2 * rows, 2 * runs, 2 * listed
