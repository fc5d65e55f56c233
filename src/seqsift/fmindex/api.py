"""Public FM-index API: build from FASTA or load an .ssx file, then count and locate reads on
both strands."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

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
        return cls(loaded.reference, loaded.arrays, display_name(path))

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

    def count(self, reads: list[bytes | str], errors: int = 0, distance: str = "edit") -> np.ndarray:
        """Occurrences of each read in the reference, both strands together; with errors > 0,
        its places within that many differences (distance 'edit' or 'hamming')."""
        from seqsift.fmindex.verify import check_errors

        check_errors(errors, distance)
        if errors:
            return self.approx_searcher().hits(*encode_reads(reads), errors, distance, 0).counts
        return self.searcher().count(*encode_reads(reads))

    def approx_searcher(self):
        """The approximate search over the default exact search (approx.py)."""
        from seqsift.fmindex.approx import ApproxSearcher

        if "approx" not in self._searchers:
            self._searchers["approx"] = ApproxSearcher(self.searcher(), self.reference.starts, self.reference.lengths)
        return self._searchers["approx"]

    def locate(self, reads: "list[bytes | str] | str | os.PathLike", max_hits: int = 100, errors: int = 0,
               distance: str = "edit", best_only: bool = False) -> list[tuple[int, list]]:
        """(count, first max_hits hits in reference order) of each read: a list of sequences, or
        the path of a FASTQ/FASTA file of reads. With errors > 0: (count of places within that
        many differences, first max_hits ApproxHits by differences then reference order; with
        best_only only those with the fewest differences)."""
        if isinstance(reads, (str, os.PathLike)):
            from seqsift.fmindex.reference import READ_CODE
            from seqsift.io.reads import read_reads

            return [hit for batch in read_reads(reads, code_table=READ_CODE)
                    for hit in self.locate_codes(batch.codes, batch.bounds, max_hits, errors, distance, best_only)]
        return self.locate_codes(*encode_reads(reads), max_hits, errors, distance, best_only)

    def locate_codes(self, codes: np.ndarray, bounds: np.ndarray, max_hits: int = 100, errors: int = 0,
                     distance: str = "edit", best_only: bool = False) -> list[tuple[int, list]]:
        """locate() of reads already encoded (codes 0-3, 255 for other letters, and bounds)."""
        from seqsift.fmindex.verify import check_errors

        check_errors(errors, distance)
        if errors:
            return self._approx_codes(codes, bounds, max_hits, errors, distance, best_only)
        found = self.searcher().hits(codes, bounds, max_hits)
        record, position = self.reference.to_record(found.text_pos)
        names = self.names
        hits = [Hit(names[r], int(p), "+-"[s]) for r, p, s in zip(record.tolist(), position.tolist(), found.strand.tolist())]
        o = found.offsets
        return [(int(c), hits[o[i] : o[i + 1]]) for i, c in enumerate(found.counts.tolist())]

    def _approx_codes(self, codes, bounds, max_hits, errors, distance, best_only) -> list[tuple[int, list[ApproxHit]]]:
        found = self.approx_searcher().hits(codes, bounds, errors, distance, max_hits, best_only)
        record, position = self.reference.to_record(found.text_pos)
        names = self.names
        hits = [ApproxHit(names[r], p, "+-"[s], d) for r, p, s, d in
                zip(record.tolist(), position.tolist(), found.strand.tolist(), found.differences.tolist())]
        o = found.offsets
        return [(int(c), hits[o[i] : o[i + 1]]) for i, c in enumerate(found.counts.tolist())]
