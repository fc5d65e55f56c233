"""Suffix sorting in pieces, in bounded memory: the suffix array of a text too large to sort in
one array (divsufsort needs 4 bytes a base below 2^31 symbols and 8 above, beside the text),
produced piece by piece in row order, so only one piece of positions is held at a time.

A piece is a run of buckets, a bucket the suffixes that share their first PREFIX symbols (a
histogram of those prefixes, taken in one pass, says how many rows each bucket has and where
its rows start). Each piece is collected by a pass over the text and sorted on its own: by
21 symbols at a time packed into 64-bit keys (numpy's sort), down to `v` symbols; suffixes
still tied after v symbols are ordered by a difference cover (as bowtie2-build does, after
Kärkkäinen, "Fast BWT in small space by blockwise suffix sorting", 2007): D, a set of residues
mod v such that any two positions i, j have a delta < v with i + delta and j + delta both in
D mod v. The suffixes starting at those positions (about 2 sqrt(v) / v of them, the sample)
are ranked first, by their first v symbols and then by prefix doubling over the sample alone;
two suffixes that share v symbols are then ordered by the ranks of i + delta and j + delta, in
constant time. No comparison reads more than v symbols, so long repeats and long runs of one
symbol cost at most v / 21 key passes a suffix, never time quadratic in their length.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np
from seqsift.precompiled import Kernel

PREFIX = 8  # symbols of a bucket's prefix: 6^8 buckets (1.7 M, 13 MiB of counts)
BUCKETS = 6**PREFIX
SYMBOLS_PER_KEY = 21  # 3-bit symbol codes (1-6; 0 past the end or past the comparison's depth)
SYMBOLS_PER_WORD = 16  # with a 16-bit index beside them, for groups of at most SMALL_GROUP
SMALL_GROUP = 1 << 16
DEFAULT_COVER = 1024  # v: 64 sample residues, ranks of 1/16 of the suffixes (4 bytes each: 0.25 bytes a base)
BYTES_PER_SUFFIX = 10  # a piece's position and tie flag, and a little for the sort of its largest bucket

# The passes, _pieces_cpu.py's kernels, called precompiled (precompiled.py)
_CPU = "seqsift.fmindex._pieces_cpu"
_RANKS = ("uint32", "uint64")  # the sample's ranks: 64-bit past 2^32 sample slots
_DELTA_TABLE = Kernel(_CPU, "delta_table", "int64 int64[:] int32[:,:]")
_HISTOGRAMS = Kernel(_CPU, "histograms", "uint8[:] int64 int64[:] int64[:] int64[:]")
# text, first and end bucket, sample only, v, member, each bucket's next slot, out
_COLLECT = Kernel(_CPU, "collect", "uint8[:] int64 int64 bool int64 int64[:] int64[:] int64[:]")
_REFINE = Kernel(_CPU, "refine", "uint8[:] int64[:] int64[:] int64 uint8[:]")
_NAME_SAMPLE = Kernel(_CPU, "name_sample", *(f"int64[:] uint8[:] int64 int64 int64[:] int64 {r}[:]" for r in _RANKS))
# members, heads, h, v, member, size, ranks -> how many are still tied
_DOUBLE = Kernel(_CPU, "double", *(f"int64[:] int64[:] int64 int64 int64[:] int64 {r}[:]" for r in _RANKS), results=1)
_BREAK_TIES = Kernel(_CPU, "break_ties", *(f"int64[:] uint8[:] int64 int64[:] int64 int32[:,:] {r}[:]" for r in _RANKS))


def difference_cover(v: int) -> np.ndarray:
    """A difference cover mod v: {0..r-1} and {r, 2r, ..., r*r} mod v with r = ceil(sqrt(v)),
    at most 2r residues. Every d in [0, v) is q*r - s for some 1 <= q <= r, 0 <= s < r."""
    r = math.isqrt(v - 1) + 1 if v > 1 else 1
    return np.unique(np.array(list(range(r)) + [(q * r) % v for q in range(1, r + 1)], np.int64))


class Cover:
    """The difference cover, its positions' indexes in the sample, and the delta table."""

    def __init__(self, v: int):
        if v < PREFIX:
            raise ValueError(f"cover period {v} must be at least the buckets' prefix, {PREFIX}")
        self.v = v
        residues = difference_cover(v)
        self.member = np.full(v, -1, np.int64)  # index of a residue in the cover, -1 outside it
        self.member[residues] = np.arange(residues.size)
        self.size = int(residues.size)
        self.delta = np.empty((v, v), np.int32)
        _DELTA_TABLE(v, self.member, self.delta)

    def samples(self, n: int) -> int:
        """Slots of the sample rank array for a text of n symbols (some past the end, unused)."""
        return -(-n // self.v) * self.size


def _sorted_piece(text: np.ndarray, counts: np.ndarray, lo: int, hi: int, only_sample: bool, cover: "Cover",
                  limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The suffixes of buckets [lo, hi), sorted by their first `limit` symbols, and the tie
    flags (_pieces_cpu.refine)."""
    bounds = np.zeros(hi - lo + 1, np.int64)
    np.cumsum(counts[lo:hi], out=bounds[1:])
    positions = np.empty(int(bounds[-1]), np.int64)
    _COLLECT(text, lo, hi, only_sample, cover.v, cover.member, bounds[:-1].copy(), positions)
    tied = np.empty(positions.size, np.uint8)
    _REFINE(text, positions, bounds, limit, tied)
    return positions, tied


def _plan(counts: np.ndarray, capacity: int) -> list[tuple[int, int, int]]:
    """Pieces (first bucket, end bucket, first row): runs of buckets of at most `capacity`
    suffixes together (a single larger bucket is a piece of its own)."""
    pieces, start, held, row = [], 0, 0, 0
    nonzero = np.flatnonzero(counts)
    for b in nonzero.tolist():
        c = int(counts[b])
        if held and held + c > capacity:
            pieces.append((start, b, row))
            row += held
            start, held = b, 0
        held += c
    if held:
        pieces.append((start, BUCKETS, row))
    return pieces


def _pieces(text: np.ndarray, counts: np.ndarray, capacity: int, only_sample: bool, cover: Cover, limit: int):
    """(first row, positions sorted by their first `limit` symbols, tie flags) per piece."""
    for lo, hi, row in _plan(counts, capacity):
        positions, tied = _sorted_piece(text, counts, lo, hi, only_sample, cover, limit)
        yield row, positions, tied
        del positions, tied  # before the next piece is collected: one piece held at a time


def rank_sample(text: np.ndarray, cover: Cover, sample_counts: np.ndarray, capacity: int) -> np.ndarray:
    """Ranks of the sample's suffixes, by slot: first by v symbols, piece by piece, then the
    tied ones by prefix doubling (a tied suffix has no '$' in its first h symbols, so the one h
    further on lies in the text and in the sample)."""
    n, v = text.size, cover.v
    ranks = np.zeros(cover.samples(n), np.uint32 if cover.samples(n) < 1 << 32 else np.uint64)
    tied_members, tied_heads = [], []
    for row, positions, tied in _pieces(text, sample_counts, capacity, True, cover, v):
        _NAME_SAMPLE(positions, tied, row, v, cover.member, cover.size, ranks)
        grouped = tied.astype(bool)
        grouped[:-1] |= grouped[1:]  # a group's first member too
        heads = np.maximum.accumulate(np.where(tied == 0, np.arange(tied.size) + row, 0))
        tied_members.append(positions[grouped])
        tied_heads.append(heads[grouped])
        del positions, tied, grouped, heads
    members = np.concatenate(tied_members) if tied_members else np.empty(0, np.int64)
    heads = np.concatenate(tied_heads) if tied_heads else np.empty(0, np.int64)
    h = v
    while members.size:
        still = _DOUBLE(members, heads, h, v, cover.member, cover.size, ranks)
        members, heads = members[:still], heads[:still]
        h *= 2
    return ranks


def suffix_pieces(text: np.ndarray, capacity: int, v: int = DEFAULT_COVER) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, suffix array rows) piece by piece in row order, each piece at most `capacity`
    suffixes unless one bucket alone holds more. The text ends with its one '$' (code 0)."""
    cover = Cover(v)
    every, sample = np.zeros(BUCKETS, np.int64), np.zeros(BUCKETS, np.int64)
    _HISTOGRAMS(text, v, cover.member, every, sample)
    ranks = rank_sample(text, cover, sample, capacity)
    for row, positions, tied in _pieces(text, every, capacity, False, cover, v):
        _BREAK_TIES(positions, tied, v, cover.member, cover.size, cover.delta, ranks)
        del tied
        yield row, positions
        del positions
