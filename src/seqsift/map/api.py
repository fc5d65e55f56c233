"""`seqsift.map_reads`: place sequencing reads on a reference, as SAM records or as objects.

A batch of reads is seeded in one FM-index search (seeding.py); each read's strongest chains
are extended (extend.py), the results ranked (choose.py) and formatted (sam.py). Batches run on
a thread pool in input order (the kernels release the GIL)."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import numpy as np

from seqsift.errors import UsageError
from seqsift.map.choose import Chosen, choose
from seqsift.map.extend import Extender, Placement, oriented, reference_codes
from seqsift.map.scoring import MapOptions
from seqsift.map.sam import parse_read_group, records
from seqsift.map.seeding import find_chains
from seqsift.ordered import in_order

if TYPE_CHECKING:  # the FM-index loads on use
    from seqsift.fmindex.api import FMIndex

BATCH_READS = 1 << 12


@dataclass(frozen=True)
class Mapped:
    """One input read and what was reported for it: alignments[0] is the primary, the rest are
    supplementary; empty when the read is unmapped. nm/md per alignment."""

    name: str
    seq: bytes
    qual: bytes | None
    alignments: list[Chosen]
    nm: list[int]
    md: list[str]

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
        self._local = threading.local()

    def extender(self) -> Extender:
        ext = getattr(self._local, "extender", None)
        if ext is None:
            ext = self._local.extender = Extender(self.index.reference, self.ref_codes, self.options)
        return ext

    def candidates(self, batch) -> list[tuple[tuple[np.ndarray, np.ndarray], list[Placement]]]:
        """Per read: its (forward, reverse-complement) codes and the alignments of its strongest
        chains."""
        o = self.options
        chains = find_chains(self.searcher, batch.codes, batch.bounds, o)
        ext = self.extender()
        forward, reverse = oriented(batch.codes)
        size = forward.size
        out = []
        for r in range(len(batch)):
            lo, hi = batch.bounds[r], batch.bounds[r + 1]
            reads = forward[lo:hi], reverse[size - hi : size - lo]
            first, last = chains.offsets[r], chains.offsets[r + 1]
            placements = []
            if last > first:
                floor = o.drop_ratio * chains.weight[first]
                for c in range(first, min(last, first + o.max_chains)):
                    if chains.weight[c] < floor:
                        break
                    strand = int(chains.strand[c])
                    p = ext.place(reads[strand], strand, int(chains.diag_lo[c]), int(chains.diag_hi[c]),
                                  int(chains.anchor[c]))
                    if p is not None:
                        placements.append(p)
            out.append((reads, placements))
        return out

    def report(self, batch, r: int, reads, chosen: list[Chosen], rename=None) -> Mapped:
        """Read r of the batch with its reported alignments, NM and MD computed; rename(name)
        gives the name to report, when given."""
        ext = self.extender()
        lo, hi = batch.bounds[r], batch.bounds[r + 1]
        marks = [ext.nm_md(c.placement, reads[c.placement.strand]) for c in chosen]
        qual = None if batch.qual_lo[r] < 0 else batch.raw[batch.qual_lo[r] : batch.qual_lo[r] + hi - lo].tobytes()
        name = batch.name(r)
        return Mapped(name=rename(name) if rename else name, seq=batch.seq[lo:hi].tobytes(), qual=qual, alignments=chosen,
                      nm=[m[0] for m in marks], md=[m[1] for m in marks])

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


def batches_of(reads: "str | os.PathLike", batch_reads: int = BATCH_READS):
    """The reads of a FASTQ/FASTA file in batches, encoded for the FM-index."""
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.io.reads import read_reads

    return read_reads(reads, batch_reads, READ_CODE)


def map_batches(mapper: Mapper, reads: "str | os.PathLike", threads: int = 1,
                batch_reads: int = BATCH_READS) -> Iterator[list[Mapped]]:
    """The mapped reads of a FASTQ/FASTA file, batch by batch in input order."""
    return in_order(mapper, batches_of(reads, batch_reads), threads)


def map_reads(reference: "str | os.PathLike | FMIndex", reads: str | os.PathLike, output: str | os.PathLike | None = None,
              *, mates: str | os.PathLike | None = None, threads: int = 1, read_group: str | None = None,
              options: MapOptions | None = None) -> list[Mapped] | dict:
    """Map every read of a FASTQ/FASTA file (plain or compressed) to a reference: an FMIndex,
    an .ssx file or a FASTA file (indexed in memory first). Without output, a list of Mapped
    (one per read, in input order; single-end only); with output, a SAM file there (read_group:
    bwa's -R line, '@RG\\tID:x\\tSM:y'; mates: the second reads of pairs, in step with reads)
    and a summary {'reads': n, 'mapped': n}."""
    from seqsift.backend import check_threads

    threads = check_threads(threads)
    rg_line, rg_id = parse_read_group(read_group)
    if output is None and (read_group or mates):
        raise UsageError("read_group and mates apply to SAM output: give output=")
    mapper = Mapper(load_index(reference), options)
    if output is None:
        return [m for batch in map_batches(mapper, reads, threads) for m in batch]
    from seqsift.io.provenance import Provenance

    results = sam_batches(mapper, reads, mates, threads, rg_id)
    command = ["seqsift.map_reads", str(reference), str(reads)] + ([str(mates)] if mates else [])
    return write_sam(output, mapper.index, results, Provenance("cpu", command), rg_line)


def sam_batches(mapper: Mapper, reads, mates=None, threads: int = 1, rg_id: str | None = None,
                batch_reads: int = BATCH_READS) -> Iterator[tuple[bytes, int, int]]:
    """(SAM records, reads, reads mapped) of each batch in input order: single reads, or pairs
    when mates is given."""
    if mates is None:
        return in_order(SamBatches(mapper, rg_id), batches_of(reads, batch_reads), threads)
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.map.pairs import PairBatches, paired_batches

    return in_order(PairBatches(mapper, rg_id), paired_batches(reads, mates, batch_reads, READ_CODE), threads)


def write_sam(output, index: "FMIndex", results, provenance, rg_line: str | None = None, progress=None) -> dict:
    """The header, then each (text, reads, mapped) of results in turn, to output: a path
    (written under a temporary name and renamed at the end; NAME.bam as BAM, NAME.gz
    gzipped), or None or '-' for stdout. Returns {'reads': n, 'mapped': n};
    progress.advance(reads) after each batch."""
    from seqsift.io.provenance import sam_header
    from seqsift.io.writers import open_output

    counts = {"reads": 0, "mapped": 0}
    with open_output(output, sam=True) as out:
        out.write(sam_header(index.names, index.reference.lengths, provenance, [rg_line] if rg_line else []))
        for text, n, mapped in results:
            out.write(text)
            counts["reads"] += n
            counts["mapped"] += mapped
            if progress is not None:
                progress.advance(n)
    return counts


class SamBatches:
    """A batch of reads to (its SAM records as bytes, reads, reads mapped): the unit of work of
    the command, run on a thread pool or on Dask workers alike."""

    def __init__(self, mapper: Mapper, rg_id: str | None = None):
        self.mapper = mapper
        self.rg_id = rg_id

    def __call__(self, batch) -> tuple[bytes, int, int]:
        names = self.mapper.index.names
        mapped = self.mapper(batch)
        text = "".join(records(m, names, self.rg_id) for m in mapped)
        return text.encode(), len(mapped), sum(m.mapped for m in mapped)
