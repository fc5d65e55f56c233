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


class ApproxHit(NamedTuple):
    """A place of an approximate search (docs/formats.md, "Approximate hits")."""

    record: str
    position: int  # 0-based, leftmost forward position of the aligned stretch
    strand: str  # '+' or '-'
    differences: int  # mismatches (hamming) or edits (edit)


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
              wide: bool | None = None, memory: int | None = None, threads: int = 1) -> "FMIndex":
        """Index a FASTA file; kmer=None and repeat_sample=None pick the k-mer table length and
        the repeats' marking from the genome size; wide (64-bit text positions) is chosen by size,
        or forced; memory: bytes the construction may hold (None: build.default_memory), beyond
        which the suffix array is sorted in pieces, to the same index, on `threads` threads."""
        from seqsift.fmindex.build import build_arrays

        reference = load_reference(fasta)
        arrays = build_arrays(reference, sa_sample, repeat_sample, kmer, wide, memory=memory, threads=threads)
        return cls(reference, arrays, display_name(fasta))

    @staticmethod
    def build_file(fasta: str | os.PathLike, path: str | os.PathLike, sa_sample: int = 32,
                   repeat_sample: int | None = None, kmer: int | None = None, wide: bool | None = None,
                   memory: int | None = None, threads: int = 1) -> tuple[Reference, "IndexArrays"]:
        """Index a FASTA file straight into an .ssx file (`seqsift index`; '-' for stdout), the
        same bytes as build(...).save(path) in less memory: the rank blocks, SA samples and k-mer
        table are written to temporary files beside it as they are filled (spill.py), and the
        text is let go before the file is written. Returns the reference's records (no text) and
        the arrays (those three as their Spills, closed: sizes only)."""
        import tempfile

        from seqsift.fmindex.build import build_arrays, map_large_arrays
        from seqsift.fmindex.ssx import write_index

        map_large_arrays()
        reference = load_reference(fasta)
        target = os.path.realpath(path) if str(path) != "-" else None
        beside = target is not None and (not os.path.exists(target) or os.path.isfile(target))
        arrays = build_arrays(reference, sa_sample, repeat_sample, kmer, wide, memory=memory, threads=threads,
                              spill_dir=os.path.dirname(target) if beside else tempfile.gettempdir())
        reference = Reference(text=None, names=reference.names, starts=reference.starts, lengths=reference.lengths)
        try:
            write_index(path, reference, arrays, display_name(fasta))
        finally:
            for spilled in (arrays.blocks, arrays.samples, arrays.kmer_table):
                spilled.close()
        return reference, arrays

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

    def count(self, reads: list[bytes | str], errors: int = 0, distance: str = "edit", *, threads: int | None = None,
              backend: str = "auto") -> np.ndarray:
        """Occurrences of each read in the reference, both strands together; with errors > 0, its
        places within that many differences (distance 'edit' or 'hamming'; docs/formats.md).
        threads: batches of reads searched at once (None: every core); backend: "cpu", "cuda" (the
        GPU's exact search; approximate seeds always run on the CPU) or "auto" (the CPU until the
        GPU's search is measured on a real GPU, docs/gpu.md)."""
        from seqsift.backend import check_threads, resolve_unmeasured
        from seqsift.fmindex.read_search import DEFAULT_BATCH
        from seqsift.fmindex.verify import check_errors
        from seqsift.runner import Work, ordered

        threads = check_threads(threads)
        check_errors(errors, distance)
        backend = resolve_unmeasured(backend)
        reads = list(reads)
        batches = (encode_reads(reads[k : k + DEFAULT_BATCH]) for k in range(0, len(reads), DEFAULT_BATCH))
        if errors:
            job = Work(_approx_count, lambda: (self.approx_searcher(), errors, distance))
        else:
            job = Work(_count, lambda: self.searcher(backend=backend))
        counts = list(ordered(job, batches, threads))
        return np.concatenate(counts) if counts else np.empty(0, np.int64)

    def approx_searcher(self):
        """The approximate search over the default exact search (approx.py)."""
        from seqsift.fmindex.approx import ApproxSearcher

        if "approx" not in self._searchers:
            self._searchers["approx"] = ApproxSearcher(self.searcher(), self.reference.starts, self.reference.lengths)
        return self._searchers["approx"]

    def locate(self, reads: "list[bytes | str] | str | os.PathLike", max_hits: int = 100, errors: int = 0,
               distance: str = "edit", best_only: bool = False, *, threads: int | None = None,
               backend: str = "auto") -> list[tuple[int, list]]:
        """(count, first max_hits hits in reference order) of each read: a list of sequences, or
        the path of a FASTQ/FASTA file of reads. With errors > 0: (count of places within that
        many differences, first max_hits ApproxHits by differences then reference order; with
        best_only only those with the fewest differences). threads and backend as for count()."""
        from seqsift.backend import check_threads, resolve_unmeasured
        from seqsift.fmindex.query import SearchOptions
        from seqsift.fmindex.read_search import DEFAULT_BATCH, ReadSearch, run_batch, search_reads
        from seqsift.fmindex.verify import check_errors
        from seqsift.runner import Work

        threads = check_threads(threads)
        if not isinstance(max_hits, int) or max_hits < 0:
            raise UsageError(f"max_hits={max_hits!r}: give 0 (count only) or more")
        check_errors(errors, distance)
        search = ReadSearch(self, SearchOptions(), resolve_unmeasured(backend), max_hits, "hits", errors, distance,
                            best_only)
        job = Work(run_batch, lambda: search)
        return [hit for hits, _ in search_reads(job, reads, DEFAULT_BATCH, threads) for hit in hits]

    def locate_codes(self, codes: np.ndarray, bounds: np.ndarray, max_hits: int = 100, errors: int = 0,
                     distance: str = "edit", best_only: bool = False) -> list[tuple[int, list]]:
        """locate() of reads already encoded (codes 0-3, 255 for other letters, and bounds), in
        the calling thread."""
        from seqsift.fmindex.verify import check_errors

        check_errors(errors, distance)
        self.check_unchanged()
        if errors:
            return self.approx_hit_lists(self.approx_searcher().hits(codes, bounds, errors, distance, max_hits,
                                                                     best_only))
        return self.hit_lists(self.searcher().hits(codes, bounds, max_hits))

    def hit_lists(self, found) -> list[tuple[int, list[Hit]]]:
        """A searcher's BatchHits as (count, hits) per read, positions named by record."""
        record, position = self.reference.to_record(found.text_pos)
        names = self.names
        hits = [Hit(names[r], int(p), "+-"[s]) for r, p, s in zip(record.tolist(), position.tolist(), found.strand.tolist())]
        o = found.offsets
        return [(int(c), hits[o[i] : o[i + 1]]) for i, c in enumerate(found.counts.tolist())]

    def approx_hit_lists(self, found) -> list[tuple[int, list[ApproxHit]]]:
        """An ApproxSearcher's hits as (count, ApproxHits) per read, positions named by record."""
        record, position = self.reference.to_record(found.text_pos)
        names = self.names
        hits = [ApproxHit(names[r], p, "+-"[s], d) for r, p, s, d in
                zip(record.tolist(), position.tolist(), found.strand.tolist(), found.differences.tolist())]
        o = found.offsets
        return [(int(c), hits[o[i] : o[i + 1]]) for i, c in enumerate(found.counts.tolist())]


def _count(searcher, codes_bounds) -> np.ndarray:
    return searcher.count(*codes_bounds)


def _approx_count(job, codes_bounds) -> np.ndarray:
    searcher, errors, distance = job
    return searcher.hits(*codes_bounds, errors, distance, 0).counts
