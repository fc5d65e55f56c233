"""Count and locate a batch of reads on both strands: the search kernels plus the bookkeeping
that turns BWT intervals into sorted (record, position, strand) hits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.errors import InputError
from seqsift.fmindex.build import IndexArrays

SHORTCUTS = {"none": 0, "rank": 1, "verify": 2}
DEFAULT_WIDTH = 16


@dataclass(frozen=True)
class SearchOptions:
    """The seed's optimizations, each switchable for the ablation benchmark."""

    kmer_table: bool = True
    shortcut: str = "verify"
    width: int = DEFAULT_WIDTH  # queries interleaved in lockstep; 1 = one at a time


@dataclass
class BatchHits:
    """Per read: count (both strands) and its first max_hits hits, sorted by reference order,
    position, then strand (0 forward, 1 reverse): hits of read i are [offsets[i], offsets[i+1])."""

    counts: np.ndarray
    offsets: np.ndarray
    text_pos: np.ndarray
    strand: np.ndarray


class Searcher:
    """The CPU search of one index; safe to call from several threads at once."""

    def __init__(self, arrays: IndexArrays, source: str, options: SearchOptions = SearchOptions()):
        if options.shortcut not in SHORTCUTS:
            raise ValueError(f"shortcut {options.shortcut!r} is not one of {sorted(SHORTCUTS)}")
        self.a = arrays
        self.source = source
        self.options = options
        if options.kmer_table:
            self.table, self.k = arrays.kmer_table, arrays.kmer
        else:
            self.table, self.k = np.array([[0, arrays.n]], arrays.kmer_table.dtype), 0
        self.gap_starts = np.ascontiguousarray(arrays.gaps[:, 0])
        self.gap_ends = np.ascontiguousarray(arrays.gaps[:, 1])

    def intervals(self, codes: np.ndarray, bounds: np.ndarray):
        """(lo, hi, pos) per query, 2 per read (forward, reverse complement)."""
        from seqsift.fmindex import _cpu

        a = self.a
        nq = 2 * (bounds.size - 1)
        lo, hi, pos = np.empty(nq, np.int64), np.empty(nq, np.int64), np.empty(nq, np.int64)
        kmers = np.empty(nq, np.int64)
        _cpu.first_kmers(codes, bounds, self.k, kmers)
        status = _cpu.search(a.blocks, a.C, a.n, self.table, self.k, a.packed, self.gap_starts, self.gap_ends,
                             a.samples, a.sa_sample, codes, bounds, kmers, self.options.width,
                             SHORTCUTS[self.options.shortcut], lo, hi, pos)
        self._check(status)
        return lo, hi, pos

    def count(self, codes: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        lo, hi, _ = self.intervals(codes, bounds)
        per_query = hi - lo
        return per_query[0::2] + per_query[1::2]

    def hits(self, codes: np.ndarray, bounds: np.ndarray, max_hits: int) -> BatchHits:
        """Counts and located hits. Every occurrence is located so the listed ones are the first
        max_hits in reference order, whatever the count."""
        from seqsift.fmindex import _cpu

        lo, hi, pos = self.intervals(codes, bounds)
        sizes = hi - lo
        counts = sizes[0::2] + sizes[1::2]
        if max_hits == 0:  # counting only: nothing to locate
            empty = np.empty(0, np.int64)
            return BatchHits(counts=counts, offsets=np.zeros(counts.size + 1, np.int64), text_pos=empty,
                             strand=empty.astype(np.int8))
        walk = np.where(pos < 0, sizes, 0)  # rows still to locate, per query
        walk_start = np.cumsum(walk) - walk
        rows = np.repeat(lo - walk_start, walk) + np.arange(int(walk_start[-1] + walk[-1]) if walk.size else 0)
        located = self._locate(rows)
        if located.size and int(located.max()) >= self.a.n or pos.size and int(pos.max()) >= self.a.n:
            raise InputError(self.source, "the index is inconsistent: a located position lies past the text")
        offsets = np.concatenate(([0], np.cumsum(np.minimum(counts, max_hits)))).astype(np.int64)
        text_pos = np.empty(int(offsets[-1]), np.int64)
        strand = np.empty(int(offsets[-1]), np.int8)
        _cpu.gather_hits(lo, hi, pos, walk_start, located, max_hits, offsets, text_pos, strand)
        return BatchHits(counts=counts, offsets=offsets, text_pos=text_pos, strand=strand)

    def _locate(self, rows: np.ndarray) -> np.ndarray:
        from seqsift.fmindex import _cpu

        located = np.empty(rows.size, np.int64)
        self._check(_cpu.locate(self.a.blocks, self.a.C, self.a.samples, self.a.sa_sample, rows,
                                self.options.width, located))
        return located

    def _check(self, status: int) -> None:
        if status < 0:
            raise InputError(self.source, "the index is inconsistent: an LF walk never reached a sampled row")
