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

    def __init__(self, index: FMIndex, options: SearchOptions, backend: str, max_hits: int, fmt: str,
                 errors: int = 0, distance: str = "edit", best_only: bool = False):
        self.index = index
        self.searcher = index.searcher(options, backend)
        self.max_hits = max_hits
        self.write = sam if fmt == "sam" else tsv
        self.names = name_table(index.names)
        self.errors, self.distance, self.best_only, self.fmt = errors, distance, best_only, fmt
        if errors:  # approximate search: seeds through the CPU search, whatever the backend
            from seqsift.fmindex.approx import ApproxSearcher

            self.approx = ApproxSearcher(index.searcher(options), index.reference.starts, index.reference.lengths)

    def __call__(self, batch: ReadBatch) -> tuple[bytes, bool]:
        """(output text of the batch, whether any read matched)."""
        if self.errors:
            return self._approximate(batch)
        found = self.searcher.hits(batch.codes, batch.bounds, self.max_hits)
        record, position = self.index.reference.to_record(found.text_pos)
        return self.write(batch, found, record, position, self.names), bool(found.counts.any())


    def _approximate(self, batch: ReadBatch) -> tuple[bytes, bool]:
        from seqsift.fmindex import approx_output

        found = self.approx.hits(batch.codes, batch.bounds, self.errors, self.distance, self.max_hits, self.best_only,
                                 batch.name)
        record, position = self.index.reference.to_record(found.text_pos)
        if self.fmt == "sam":
            text = approx_output.sam(batch, found, record, position, [n.encode() for n in self.index.names],
                                     self.approx.reach, self.errors, self.distance)
        else:
            text = approx_output.tsv(batch, found, record, position, self.names)
        return text, bool(found.counts.any())


def load(paths: tuple[str, ...], options: SearchOptions, backend: str, max_hits: int, fmt: str, errors: int = 0,
         distance: str = "edit", best_only: bool = False) -> ReadSearch:
    """A worker's ReadSearch over the index file (memory-mapped) at paths[0]."""
    from seqsift.backend import resolve_unmeasured

    return ReadSearch(FMIndex.load(paths[0]), options, resolve_unmeasured(backend), max_hits, fmt, errors, distance,
                      best_only)


def run_block(job: ReadSearch, block: RawBlock) -> tuple[bytes, bool]:
    """A worker's chunk: parse the block (as read_reads would have), then search it."""
    return job(parse_block(block, READ_CODE))

