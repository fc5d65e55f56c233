"""A batch of reads in, its output text out: the chunk function `seqsift search` runs on every
batch, on this machine's threads or on a Dask worker."""

from __future__ import annotations

from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.output import name_table, sam, tsv
from seqsift.fmindex.query import SearchOptions
from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import RawBlock, ReadBatch, parse_block


class ReadSearch:
    """One index, one set of options; safe to call from several threads at once."""

    def __init__(self, index: FMIndex, options: SearchOptions, backend: str, max_hits: int, fmt: str):
        self.index = index
        self.searcher = index.searcher(options, backend)
        self.max_hits = max_hits
        self.write = sam if fmt == "sam" else tsv
        self.names = name_table(index.names)

    def __call__(self, batch: ReadBatch) -> tuple[bytes, bool]:
        """(output text of the batch, whether any read matched)."""
        found = self.searcher.hits(batch.codes, batch.bounds, self.max_hits)
        record, position = self.index.reference.to_record(found.text_pos)
        return self.write(batch, found, record, position, self.names), bool(found.counts.any())


def load(paths: tuple[str, ...], options: SearchOptions, backend: str, max_hits: int, fmt: str) -> ReadSearch:
    """A worker's ReadSearch over the index file (memory-mapped) at paths[0]."""
    from seqsift.backend import resolve_unmeasured

    return ReadSearch(FMIndex.load(paths[0]), options, resolve_unmeasured(backend), max_hits, fmt)


def run_block(job: ReadSearch, block: RawBlock) -> tuple[bytes, bool]:
    """A worker's chunk: parse the block (as read_reads would have), then search it."""
    return job(parse_block(block, READ_CODE))

