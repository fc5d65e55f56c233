"""Count and locate a batch of reads on both strands: the search kernels plus the bookkeeping
that turns BWT intervals into sorted (record, position, strand) hits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.errors import InputError
from seqsift.fmindex import DEFAULT_VERIFY_ROWS, DEFAULT_WIDTH, SHORTCUTS
from seqsift.fmindex.layout import IndexArrays
from seqsift.precompiled import Kernel

_CPU = "seqsift.fmindex._cpu"  # the kernels, called precompiled (precompiled.py)
_ROWS = ("uint32", "uint64")  # the samples' and k-mer table's rows: 64-bit in a wide index
_FIRST_KMERS = Kernel(_CPU, "first_kmers", "uint8[:] int64[:] int64 int64[:]")
_SEARCH = Kernel(_CPU, "search", *(f"uint64[:,:] int64[:] int64 {rows}[:,:] int64 uint8[:] int64[:] int64[:] "
                                   "int64 int64 int64 int64 int64[:] int64[:] int64[:]" for rows in _ROWS))
_LOCATE = Kernel(_CPU, "locate", *(f"uint64[:,:] int64[:] {rows}[:] int64 int64[:] int64 int64[:]" for rows in _ROWS),
                 results=1)
_EXPAND_ROWS = Kernel(_CPU, "expand_rows", "int64[:] int64[:] int64[:] int64[:]")
_SETTLE = Kernel(_CPU, "settle", "uint8[:] int64[:] int64[:] uint8[:] int64[:] int64[:] int64[:] int64[:] uint8[:]")
_GATHER_HITS = Kernel(_CPU, "gather_hits", "int64[:] int64[:] uint8[:] int64 uint64[:] int64[:] int64[:] int8[:]")
_NO_SEEDS = np.empty(0, np.uint64)



@dataclass(frozen=True)
class SearchOptions:
    """The GEM paper's search optimizations, each switchable for the ablation benchmark."""

    kmer_table: bool = True
    shortcut: str = "verify"
    width: int = DEFAULT_WIDTH  # queries interleaved in lockstep; 1 = one at a time
    verify_rows: int = DEFAULT_VERIFY_ROWS  # the verify shortcut takes intervals of at most this many rows


@dataclass
class BatchHits:
    """Per read: count (both strands) and its first max_hits hits, sorted by reference order,
    position, then strand (0 forward, 1 reverse): hits of read i are [offsets[i], offsets[i+1]).
    Searched with seeds (Searcher.hits), a read's first listed hit is the one its seed picked
    among all its hits, and the others follow in that order."""

    counts: np.ndarray
    offsets: np.ndarray
    text_pos: np.ndarray
    strand: np.ndarray


class Searcher:
    """The CPU search of one index; safe to call from several threads at once."""

    def __init__(self, arrays: IndexArrays, source: str, options: SearchOptions = SearchOptions()):
        if options.shortcut not in SHORTCUTS:
            raise ValueError(f"shortcut {options.shortcut!r} is not one of {sorted(SHORTCUTS)}")
        if options.verify_rows < 1:
            raise ValueError(f"verify_rows {options.verify_rows} must be at least 1")
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
        """(lo, hi, left) per query, 2 per read (forward, reverse complement): the BWT interval
        [lo, hi), and the bases left unsearched where the verify shortcut stopped the search
        (0 elsewhere; those rows are occurrences only once settle has checked them)."""
        a, o = self.a, self.options
        nq = 2 * (bounds.size - 1)
        lo, hi, left = np.empty(nq, np.int64), np.empty(nq, np.int64), np.empty(nq, np.int64)
        kmers = np.empty(nq, np.int64)
        _FIRST_KMERS(codes, bounds, self.k, kmers)
        _SEARCH(a.blocks, a.C, a.n, self.table, self.k, codes, bounds, kmers, o.width, SHORTCUTS[o.shortcut],
                o.verify_rows, a.sa_sample, lo, hi, left)
        return lo, hi, left

    def count(self, codes: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """Occurrences of each read, both strands: only the rows of searches the verify shortcut
        stopped are located and checked."""
        lo, hi, left = self.intervals(codes, bounds)
        sizes = hi - lo
        query_of, located, keep, _ = self._settled(codes, bounds, lo, np.where(left > 0, sizes, 0), left)
        per_query = np.where(left > 0, 0, sizes) + np.bincount(query_of, keep, sizes.size).astype(np.int64)
        return per_query[0::2] + per_query[1::2]

    def hits(self, codes: np.ndarray, bounds: np.ndarray, max_hits: int, seeds: np.ndarray | None = None) -> BatchHits:
        """Counts and located hits. Every occurrence is located so the listed ones are the first
        max_hits in reference order, whatever the count. seeds (uint64, one a read): list first
        the hit that the read's seed modulo its count picks among all of them (SAM's primary,
        uniform over every equally good place, not only the listed ones), then the first
        max_hits - 1 others."""
        if max_hits == 0:  # counting only: nothing to list
            counts = self.count(codes, bounds)
            empty = np.empty(0, np.int64)
            return BatchHits(counts=counts, offsets=np.zeros(counts.size + 1, np.int64), text_pos=empty,
                             strand=empty.astype(np.int8))
        lo, hi, left = self.intervals(codes, bounds)
        sizes = hi - lo
        query_of, located, keep, starts = self._settled(codes, bounds, lo, sizes, left)
        per_query = np.bincount(query_of, keep, sizes.size).astype(np.int64)
        counts = per_query[0::2] + per_query[1::2]
        offsets = np.concatenate(([0], np.cumsum(np.minimum(counts, max_hits)))).astype(np.int64)
        text_pos = np.empty(int(offsets[-1]), np.int64)
        strand = np.empty(int(offsets[-1]), np.int8)
        _GATHER_HITS(starts, located, keep, max_hits, _NO_SEEDS if seeds is None else seeds, offsets, text_pos, strand)
        return BatchHits(counts=counts, offsets=offsets, text_pos=text_pos, strand=strand)

    def _settled(self, codes, bounds, lo, walk, left):
        """(query, read position, kept, starts) of the first walk[q] rows from lo[q] of every
        query, in query order: located, then checked against the text where the search stopped
        early; query q's rows are [starts[q], starts[q + 1])."""
        starts = np.zeros(walk.size + 1, np.int64)
        np.cumsum(walk, out=starts[1:])
        total = int(starts[-1])
        query_of, rows = np.empty(total, np.int64), np.empty(total, np.int64)
        _EXPAND_ROWS(lo, starts, query_of, rows)
        located = self._locate(rows)
        a = self.a
        if located.size and int(located.max()) >= a.n:
            raise InputError(self.source, "the index is inconsistent: a located position lies past the text")
        keep = np.empty(total, np.uint8)
        _SETTLE(a.packed, self.gap_starts, self.gap_ends, codes, bounds, left, query_of, located, keep)
        return query_of, located, keep, starts

    def _locate(self, rows: np.ndarray) -> np.ndarray:
        located = np.empty(rows.size, np.int64)
        self._check(_LOCATE(self.a.blocks, self.a.C, self.a.samples, self.a.sa_sample, rows, self.options.width,
                            located))
        return located

    def _check(self, status: int) -> None:
        if status < 0:
            raise InputError(self.source, "the index is inconsistent: an LF walk never reached a sampled row")
