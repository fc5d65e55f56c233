"""Single reads' SAM records, a batch in one compiled call (_report.report_single, called
precompiled): each read's choice, MAPQ, CIGAR, NM, MD and record bytes without a Python object
per read. The few reads that need more than one record (chimeric reads, -a) are written by the
Python path (choose.py, sam.py), in their place."""

from __future__ import annotations

import numpy as np

from seqsift.map.choose import choose
from seqsift.map.extend import placements_of
from seqsift.map.sam import records
from seqsift.map.scoring import MapOptions
from seqsift.precompiled import Kernel

_REPORT = Kernel("seqsift.map._report", "report_single",
                 "int64[:,:] int64 int64[:] int64[:] int8[:] int8[:] int64[:] uint8[:] int64[:] int64[:] uint8[:] "
                 "int64[:] int8[:] int64[:] uint8[:] int64[:] uint8[:] uint8[:] int64[:] uint8[:] int64[:] uint8[:]",
                 results=2)

# sam.py's complement (ACGTN and acgtn; any other letter stays)
COMPLEMENT = np.arange(256, dtype=np.uint8)
for _a, _b in zip(b"ACGTNacgtn", b"TGCANtgcan"):
    COMPLEMENT[_a] = _b


def report_options(o: MapOptions) -> np.ndarray:
    """The options report_single reads, as its R_* array (_report.py)."""
    return np.array([o.match, o.mismatch, o.gap_open, o.gap_extend, o.min_score, o.seed_length, int(o.secondary)],
                     np.int64)


class SingleReport:
    """A mapper's batches of single reads to SAM bytes; holds the per-index tables the kernel
    reads (record names as bytes, the read group's tag)."""

    def __init__(self, mapper, rg_id: str | None):
        from seqsift.fmindex.output import name_table

        self.mapper = mapper
        self.rg_id = rg_id
        self.names = name_table(mapper.index.names)
        self.rg = np.frombuffer(f"\tRG:Z:{rg_id}".encode(), np.uint8) if rg_id else np.zeros(1, np.uint8)
        self.opts = report_options(mapper.options)

    def __call__(self, batch) -> tuple[bytes, int]:
        """(the batch's SAM records in read order, reads mapped)."""
        m = self.mapper
        forward, reverse, n, table, ops, lens = m.placed(batch)
        reads = len(batch)
        ref = m.index.reference
        room = int((batch.name_hi - batch.name_lo).sum()) + 16 * int(batch.bounds[-1]) + 12 * ops.size \
            + reads * (300 + self.rg.size + int(np.diff(self.names[1]).max(initial=0)))
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
