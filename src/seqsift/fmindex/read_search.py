"""A batch of reads in, its results out: the one function every FM-index search runs on each
batch (`seqsift search`, FMIndex.locate, seqsift.distributed.search), and the one call that runs
it over a reads file or list, on this machine's threads or on a Dask worker."""

from __future__ import annotations

import os
from typing import Iterator, NamedTuple

import numpy as np

from seqsift.fmindex.output import name_table, primary_seeds, sam, tsv
from seqsift.fmindex.query import SearchOptions
from seqsift.fmindex.reference import READ_CODE, encode_reads
from seqsift.io.openers import STDIN
from seqsift.io.reads import RawBlock, ReadBatch, parse_block, read_blocks, read_reads
from seqsift.runner import Work, ordered

FORMATS = ("tsv", "sam", "hits")
DEFAULT_BATCH = 1 << 16  # reads a batch


class ReadSearch:
    """One index (an FMIndex: not imported here, which api.py imports), one set of options; safe to
    call from several threads at once. fmt: "tsv" or
    "sam" gives the output text of each batch; "hits" gives FMIndex.locate's (count, hits) list."""

    def __init__(self, index, options: SearchOptions, backend: str, max_hits: int, fmt: str, errors: int = 0,
                 distance: str = "edit", best_only: bool = False):
        if fmt not in FORMATS:
            raise ValueError(f"fmt {fmt!r} is not one of {FORMATS}")
        self.index = index
        self.searcher = index.searcher(options, backend)
        self.max_hits = max_hits
        self.fmt = fmt
        self.write = sam if fmt == "sam" else tsv
        self.names = name_table(index.names) if fmt != "hits" else None
        self.errors, self.distance, self.best_only = errors, distance, best_only
        if errors:  # approximate search: seeds through the CPU search, whatever the backend
            from seqsift.fmindex.approx import ApproxSearcher

            self.approx = ApproxSearcher(index.searcher(options), index.reference.starts, index.reference.lengths)

    def __call__(self, batch: ReadBatch) -> tuple[bytes | list, bool]:
        """(the batch's output text, or its hit lists; whether any read matched)."""
        # The mapped file's lease is checked before the batch and after it: a writer waiting on
        # it (a truncate, an open for writing) stops the search with an error naming the file,
        # and waits until the map is gone, so no kernel ever reads a vanished page (docs/formats.md,
        # "An index changed while in use").
        self.index.check_unchanged()
        result = self._approximate(batch) if self.errors else self._exact(batch)
        self.index.check_unchanged()
        return result

    def _exact(self, batch) -> tuple[bytes | list, bool]:
        seeds = primary_seeds(batch) if self.fmt == "sam" else None  # the primary picked among all sites
        found = self.searcher.hits(batch.codes, batch.bounds, self.max_hits, seeds)
        matched = bool(found.counts.any())
        if self.fmt == "hits":
            return self.index.hit_lists(found), matched
        record, position = self.index.reference.to_record(found.text_pos)
        return self.write(batch, found, record, position, self.names), matched

    def _approximate(self, batch) -> tuple[bytes | list, bool]:
        from seqsift.fmindex import approx_output

        seeds = primary_seeds(batch) if self.fmt == "sam" else None  # the primary picked among all best places
        found = self.approx.hits(batch.codes, batch.bounds, self.errors, self.distance, self.max_hits, self.best_only,
                                 getattr(batch, "name", None), seeds)
        matched = bool(found.counts.any())
        if self.fmt == "hits":
            return self.index.approx_hit_lists(found), matched
        record, position = self.index.reference.to_record(found.text_pos)
        if self.fmt == "sam":
            text = approx_output.sam(batch, found, record, position, [n.encode() for n in self.index.names],
                                     self.approx.reach, self.errors, self.distance)
        else:
            text = approx_output.tsv(batch, found, record, position, self.names)
        return text, matched


class Encoded(NamedTuple):
    """Reads already encoded (codes 0-3, 255 for other letters, and their bounds): a batch
    without names, enough for hit lists, which do not name reads."""

    codes: np.ndarray
    bounds: np.ndarray


def run_batch(search: ReadSearch, batch) -> tuple[bytes | list, bool]:
    """The engine's chunk function: a batch parsed here (ReadBatch, Encoded) or a raw block of a
    reads file parsed on the worker, as read_reads would have."""
    if isinstance(batch, RawBlock):
        batch = parse_block(batch, READ_CODE)
    return search(batch)


def search_reads(job: Work, reads, batch_reads: int = DEFAULT_BATCH, threads: int = 1, client=None,
                 progress=None, longest: int | None = None) -> Iterator[tuple]:
    """job's result of each batch of reads, in order: reads is a FASTQ/FASTA path ('-' stdin) or a
    list of sequences. With a client, a file the workers see is parsed by them (raw blocks travel);
    otherwise it is parsed here. longest: the most bases a read with a match can have; a longer
    one in a file is read past without being held and counted 0 (io.reads)."""
    if isinstance(reads, (str, os.PathLike)):
        if client is not None:
            from seqsift.distributed import workers_see

            by_path = str(reads) != STDIN and workers_see(client, [os.fspath(reads)], thorough=False)
            batches = read_blocks(reads, batch_reads, by_path, longest)
        else:
            batches = read_reads(reads, batch_reads, READ_CODE, longest)
    else:
        reads = list(reads)
        batches = (Encoded(*encode_reads(reads[k : k + batch_reads])) for k in range(0, len(reads), batch_reads))
    return ordered(job, batches, threads, client, progress)
