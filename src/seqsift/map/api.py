"""`seqsift.map_reads`: place sequencing reads on a reference, as SAM records or as objects;
and the one call that runs the mapper (mapper.py) over a reads file, or a pair of files, on this
machine's threads or on Dask (runner.ordered)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator

from seqsift.errors import UsageError
from seqsift.map import BATCH_READS
from seqsift.map.mapper import Mapped, Mapper, load_index
from seqsift.map.sam import parse_read_group
from seqsift.map.scoring import MapOptions
from seqsift.runner import Work, ordered

if TYPE_CHECKING:
    from seqsift.fmindex.api import FMIndex


def batches_of(reads: "str | os.PathLike", batch_reads: int = BATCH_READS):
    """The reads of a FASTQ/FASTA file in batches, encoded for the FM-index."""
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.io.reads import read_reads

    return read_reads(reads, batch_reads, READ_CODE)


def map_batches(mapper: Mapper, reads: "str | os.PathLike", threads: int = 1,
                batch_reads: int = BATCH_READS) -> Iterator[list[Mapped]]:
    """The mapped reads of a FASTQ/FASTA file, batch by batch in input order."""
    from seqsift.map.cluster import run_part

    return ordered(Work(run_part, lambda: mapper), batches_of(reads, batch_reads), threads)


def map_reads(reference: "str | os.PathLike | FMIndex", reads: str | os.PathLike, output: str | os.PathLike | None = None,
              *, mates: str | os.PathLike | None = None, threads: int = 1, read_group: str | None = None,
              options: MapOptions | None = None) -> list[Mapped] | dict:
    """Map every read of a FASTQ/FASTA file (plain or compressed) to a reference: an FMIndex,
    an .ssx file or a FASTA file (indexed in memory first). Without output, a list of Mapped
    (one per read, in input order; single reads only); with output, a SAM file there (read_group:
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
                batch_reads: int = BATCH_READS, client=None, reference_path=None,
                progress=None) -> Iterator[tuple[bytes, int, int]]:
    """(SAM records, reads, reads mapped) of each batch in input order: single reads, or pairs
    when mates is given; on this machine's threads, or with a Dask client on its workers (each
    loads reference_path, or is sent the index, once; a file of single reads the workers see is
    parsed by them, pairs are parsed here)."""
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.map.cluster import work_of

    work = work_of(mapper, rg_id, reference_path, paired=mates is not None)
    if mates is not None:  # parsed here in step, each pair of batches sent as it is
        from seqsift.map.pairs import paired_batches

        return ordered(work, paired_batches(reads, mates, batch_reads, READ_CODE), threads, client, progress)
    if client is not None and str(reads) != "-":
        from seqsift.distributed import workers_see
        from seqsift.io.reads import read_blocks

        parts = read_blocks(reads, batch_reads, workers_see(client, [os.fspath(reads)], thorough=False))
    else:
        parts = batches_of(reads, batch_reads)
    return ordered(work, parts, threads, client, progress)


def write_sam(output, index: "FMIndex", results, provenance, rg_line: str | None = None) -> dict:
    """The header, then each (text, reads, mapped) of results in turn, to output: a path
    (written under a temporary name and renamed at the end; NAME.bam as BAM, NAME.gz
    gzipped), or None or '-' for stdout. Returns {'reads': n, 'mapped': n}."""
    from seqsift.io.provenance import sam_header
    from seqsift.io.writers import open_output

    counts = {"reads": 0, "mapped": 0}
    with open_output(output, sam=True) as out:
        out.write(sam_header(index.names, index.reference.lengths, provenance, [rg_line] if rg_line else []))
        for text, n, mapped in results:
            out.write(text)
            counts["reads"] += n
            counts["mapped"] += mapped
    return counts
