"""Public FM-index API: build from FASTA or load an .ssx file, then count and locate reads on
both strands."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from seqsift.errors import UsageError
from seqsift.fmindex.reference import Reference, encode_reads, load_reference
from seqsift.io.openers import display_name

if TYPE_CHECKING:  # the kernels and the suffix sorter load on first use, not on `import seqsift`
    from seqsift.fmindex.layout import IndexArrays
    from seqsift.fmindex.query import SearchOptions


class Hit(NamedTuple):
    record: str
    position: int  # 0-based, leftmost, on the forward strand
    strand: str  # '+' or '-'


class FMIndex:
    """An FM-index of a DNA reference. Reads match only A, C, G and T (case-insensitive); a read
    with any other letter occurs nowhere, and no match spans two records or includes an N.
    Counts cover both strands: a read equal to its own reverse complement counts each site twice."""

    def __init__(self, reference: Reference, arrays: "IndexArrays", source: str = "<memory>"):
        self.reference = reference
        self.arrays = arrays
        self.source = source
        self.watch = None  # ssx.Watch of the mapped file, set by load()
        self._searchers: dict = {}

    @classmethod
    def build(cls, fasta: str | os.PathLike, sa_sample: int = 32, repeat_sample: int | None = None, kmer: int | None = None,
              wide: bool | None = None) -> "FMIndex":
        """Index a FASTA file; kmer=None and repeat_sample=None pick the k-mer table length and
        the repeats' marking from the genome size; wide (64-bit text positions) is chosen by size,
        or forced."""
        from seqsift.fmindex.build import build_arrays

        reference = load_reference(fasta)
        return cls(reference, build_arrays(reference, sa_sample, repeat_sample, kmer, wide), display_name(fasta))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "FMIndex":
        """Map an .ssx file written by save() or `seqsift index` (checked, never unpickled)."""
        from seqsift.fmindex.ssx import load_index

        loaded = load_index(path)
        index = cls(loaded.reference, loaded.arrays, display_name(path))
        index.watch = loaded.watch
        return index

    def check_unchanged(self) -> None:
        """InputError if the mapped index file was rewritten in place since it was loaded."""
        if self.watch is not None:
            self.watch.check()

    def save(self, path: str | os.PathLike) -> None:
        from seqsift.fmindex.ssx import write_index

        write_index(path, self.reference, self.arrays, self.source)

    @property
    def names(self) -> list[str]:
        return self.reference.names

    def searcher(self, options: "SearchOptions | None" = None, backend: str = "cpu"):
        """The search engine for these options on a resolved backend ('cpu' or 'cuda')."""
        from seqsift.fmindex.query import SearchOptions, Searcher

        options = options or SearchOptions()
        key = (options, backend)
        if key not in self._searchers:
            if backend == "cuda":
                from seqsift.fmindex._gpu import GpuSearcher

                self._searchers[key] = GpuSearcher(self.arrays, self.source)
            else:
                self._searchers[key] = Searcher(self.arrays, self.source, options)
        return self._searchers[key]

    def count(self, reads: list[bytes | str], *, threads: int | None = None, backend: str = "auto") -> np.ndarray:
        """Occurrences of each read in the reference, both strands together. threads: batches of
        reads searched at once (None: every core); backend: "cpu", "cuda" (the GPU's search) or
        "auto" (the CPU until the GPU's search is measured on a real GPU, docs/gpu.md)."""
        from seqsift.backend import check_threads, resolve_unmeasured
        from seqsift.fmindex.read_search import DEFAULT_BATCH
        from seqsift.runner import Work, ordered

        threads = check_threads(threads)
        searcher = self.searcher(backend=resolve_unmeasured(backend))
        reads = list(reads)
        batches = (encode_reads(reads[k : k + DEFAULT_BATCH]) for k in range(0, len(reads), DEFAULT_BATCH))
        counts = list(ordered(Work(_count, lambda: searcher), batches, threads))
        return np.concatenate(counts) if counts else np.empty(0, np.int64)

    def locate(self, reads: "list[bytes | str] | str | os.PathLike", max_hits: int = 100, *, threads: int | None = None,
               backend: str = "auto") -> list[tuple[int, list[Hit]]]:
        """(count, first max_hits hits in reference order) of each read: a list of sequences, or
        the path of a FASTQ/FASTA file of reads. threads and backend as for count()."""
        from seqsift.backend import check_threads, resolve_unmeasured
        from seqsift.fmindex.query import SearchOptions
        from seqsift.fmindex.read_search import DEFAULT_BATCH, ReadSearch, run_batch, search_reads
        from seqsift.runner import Work

        threads = check_threads(threads)
        if not isinstance(max_hits, int) or max_hits < 0:
            raise UsageError(f"max_hits={max_hits!r}: give 0 (count only) or more")
        search = ReadSearch(self, SearchOptions(), resolve_unmeasured(backend), max_hits, "hits")
        job = Work(run_batch, lambda: search)
        return [hit for hits, _ in search_reads(job, reads, DEFAULT_BATCH, threads) for hit in hits]

    def locate_codes(self, codes: np.ndarray, bounds: np.ndarray, max_hits: int = 100) -> list[tuple[int, list[Hit]]]:
        """locate() of reads already encoded (codes 0-3, 255 for other letters, and bounds)."""
        self.check_unchanged()
        return self.hit_lists(self.searcher().hits(codes, bounds, max_hits))

    def hit_lists(self, found) -> list[tuple[int, list[Hit]]]:
        """A searcher's BatchHits as (count, hits) per read, positions named by record."""
        record, position = self.reference.to_record(found.text_pos)
        names = self.names
        hits = [Hit(names[r], int(p), "+-"[s]) for r, p, s in zip(record.tolist(), position.tolist(), found.strand.tolist())]
        o = found.offsets
        return [(int(c), hits[o[i] : o[i + 1]]) for i, c in enumerate(found.counts.tolist())]


def _count(searcher, codes_bounds) -> np.ndarray:
    return searcher.count(*codes_bounds)
