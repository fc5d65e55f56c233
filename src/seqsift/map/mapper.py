"""The mapper itself: a batch of reads in, each read's reported alignments out (Mapper), and the
same as SAM records (SamBatches); the one object every way of running it (threads, Dask,
pairs) calls. A batch is seeded in one FM-index search (seeding.py); each read's strongest chains
are extended (extend.py); SamBatches then chooses and formats every read by compiled calls
(batch_sam.py), Mapper.__call__ by the Python path (choose.py, sam.py) that batch_sam.py follows
and falls back to."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from seqsift.map.batch_sam import SingleReport
from seqsift.map.choose import Chosen, choose
from seqsift.map.extend import Extender, Placement, oriented, placements_of, reference_codes
from seqsift.map.scoring import MapOptions
from seqsift.map.seeding import Quick, find_chains

if TYPE_CHECKING:  # the FM-index loads on use
    from seqsift.fmindex.api import FMIndex


@dataclass(frozen=True)
class Mapped:
    """One input read and what was reported for it: alignments[0] is the primary, then the
    supplementary and (with MapOptions.secondary) secondary ones; empty when the read is
    unmapped. Per alignment: the name of its reference record, NM and MD."""

    name: str
    seq: bytes
    qual: bytes | None
    alignments: list[Chosen]
    nm: list[int]
    md: list[str]
    references: list[str]
    alternative_nm: list[list[int]] | None = None  # per alignment, NM of each of its XA alternatives

    @property
    def mapped(self) -> bool:
        return bool(self.alignments)


class Mapper:
    """Maps batches of reads (io.reads.ReadBatch with the FM-index's READ_CODE) on one index;
    callable from several threads at once."""

    def __init__(self, index: "FMIndex", options: MapOptions | None = None):
        self.index = index
        self.options = options or MapOptions()
        self.searcher = index.searcher()
        self.ref_codes = reference_codes(index.arrays)
        self.quick = Quick(index.reference, self.ref_codes, self.options)
        self._local = threading.local()

    def extender(self) -> Extender:
        ext = getattr(self._local, "extender", None)
        if ext is None:
            ext = self._local.extender = Extender(self.index.reference, self.ref_codes, self.options)
        return ext

    def placed(self, batch) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
        """The batch's (forward, reverse-complement) codes and the placements of every read's
        strongest chains as Extender.place_table gives them (a table, rows in read order)."""
        chains = find_chains(self.searcher, batch.codes, batch.bounds, self.options, self.ref_codes, self.quick)
        forward, reverse = oriented(batch.codes)
        return (forward, reverse, *self.extender().place_table(forward, reverse, batch.bounds, chains))

    def candidates(self, batch) -> list[tuple[tuple[np.ndarray, np.ndarray], list[Placement]]]:
        """Per read: its (forward, reverse-complement) codes and the alignments of its strongest
        chains."""
        forward, reverse, n, table, ops, lens = self.placed(batch)
        placements = placements_of(table[:n], ops, lens, batch.bounds)
        size = forward.size
        bounds = batch.bounds.tolist()
        return [((forward[lo:hi], reverse[size - hi : size - lo]), placed)
                for lo, hi, placed in zip(bounds[:-1], bounds[1:], placements)]

    def report(self, batch, r: int, reads, chosen: list[Chosen], rename=None) -> Mapped:
        """Read r of the batch with its reported alignments, NM and MD computed; rename(name)
        gives the name to report, when given."""
        ext = self.extender()
        lo, hi = batch.bounds[r], batch.bounds[r + 1]
        marks = [ext.nm_md(c.placement, reads[c.placement.strand]) for c in chosen]
        alternative_nm = [[ext.nm_md(a, reads[a.strand])[0] for a in c.alternatives] for c in chosen]
        qual = None if batch.qual_lo[r] < 0 else batch.raw[batch.qual_lo[r] : batch.qual_lo[r] + hi - lo].tobytes()
        name = batch.name(r)
        return Mapped(name=rename(name) if rename else name, seq=batch.seq[lo:hi].tobytes(), qual=qual, alignments=chosen,
                      nm=[m[0] for m in marks], md=[m[1] for m in marks],
                      references=[self.index.names[c.placement.record] for c in chosen], alternative_nm=alternative_nm)

    def __call__(self, batch) -> list[Mapped]:
        return [self.report(batch, r, reads, choose(placements, self.options))
                for r, (reads, placements) in enumerate(self.candidates(batch))]


def load_index(reference: "str | os.PathLike | FMIndex", announce=None) -> "FMIndex":
    """An FMIndex as given, loaded from an .ssx file, or built in memory from a FASTA file
    (announce(message) is told so: it takes a while on a large genome)."""
    from seqsift.fmindex.api import FMIndex
    from seqsift.fmindex.ssx import MAGIC
    from seqsift.io.openers import check_readable

    if isinstance(reference, FMIndex):
        return reference
    check_readable(reference)
    with open(reference, "rb") as f:
        is_index = f.read(len(MAGIC)) == MAGIC
    if is_index:
        return FMIndex.load(reference)
    if announce:
        announce(f"{reference} is not an .ssx index: indexing it in memory first (`seqsift index` saves one)")
    return FMIndex.build(reference)


class SamBatches:
    """A batch of reads to (its SAM records as bytes, reads, reads mapped): the unit of work of
    the command, run on a thread pool or on Dask workers alike."""

    def __init__(self, mapper: Mapper, rg_id: str | None = None):
        self.mapper = mapper
        self.rg_id = rg_id
        self.report = SingleReport(mapper, rg_id)

    def __call__(self, batch) -> tuple[bytes, int, int]:
        # A writer waiting on the mapped index's lease stops the run with an error naming the
        # file, before and after the batch (fmindex.ssx.Watch), never a vanished page.
        self.mapper.index.check_unchanged()
        text, mapped = self.report(batch)
        self.mapper.index.check_unchanged()
        return text, len(batch), mapped
