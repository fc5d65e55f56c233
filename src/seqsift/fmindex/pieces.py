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
symbol cost at most v / 21 key passes a suffix, never time quadratic in their length. The
suffixes inside long runs of '#' (N in the FASTA: ~150 Mbp of hg38) are not sorted at all but
written out in order, a piece at a time (_runs_cpu.py).
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from seqsift.precompiled import Kernel
from seqsift.runner import split

PREFIX = 8  # symbols of a bucket's prefix: 6^8 buckets (1.7 M, 13 MiB of counts)
BUCKETS = 6**PREFIX
RUN_BUCKET = (BUCKETS - 1) // 5  # '#' x PREFIX (code 1 in every base-6 digit): the suffixes inside '#' runs
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
# The bucket of '#' runs, _runs_cpu.py's kernels: text, shortest run -> how many runs; then their starts and ends
_RUNS = "seqsift.fmindex._runs_cpu"
_COUNT_RUNS = Kernel(_RUNS, "count_runs", "uint8[:] int64", results=1)
_FIND_RUNS = Kernel(_RUNS, "find_runs", "uint8[:] int64 int64[:] int64[:]")
_PREFIX_CODES = Kernel(_RUNS, "prefix_codes", "uint8[:] int64[:] int64 int64[:]")
# ends, lengths, groups, by_length, shortest, state, active, scratch, only_sample, v, member, out, tied -> written
_WRITE_RUNS = Kernel(_RUNS, "write_runs", "int64[:] int64[:] int64[:] int64[:] int64 int64[:] int64[:] int64[:] bool "
                     "int64 int64[:] int64[:] uint8[:]", results=1)


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
                  limit: int, ranks: np.ndarray | None = None, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The suffixes of buckets [lo, hi), sorted by their first `limit` symbols (_pieces_cpu.refine)
    and, given the sample's ranks, past them (_pieces_cpu.break_ties); and the tie flags. Buckets
    are sorted alone, so runs of them are sorted at once on `threads` threads, to the same rows:
    each thread's kernels write their own slices of `positions` and `tied`, with the GIL
    released (precompiled.py)."""
    bounds = np.zeros(hi - lo + 1, np.int64)
    np.cumsum(counts[lo:hi], out=bounds[1:])
    positions = np.empty(int(bounds[-1]), np.int64)
    _COLLECT(text, lo, hi, only_sample, cover.v, cover.member, bounds[:-1].copy(), positions)
    tied = np.empty(positions.size, np.uint8)

    def sort(part: tuple[int, int]) -> None:
        first, last = int(bounds[part[0]]), int(bounds[part[1]])
        rows, flags = positions[first:last], tied[first:last]
        _REFINE(text, rows, bounds[part[0] : part[1] + 1] - first, limit, flags)
        if ranks is not None:
            _BREAK_TIES(rows, flags, cover.v, cover.member, cover.size, cover.delta, ranks)

    split(sort, _parts(bounds, threads), threads)
    return positions, tied


PARTS_PER_THREAD = 4  # runs of buckets a thread, so unequal ones even out


def _parts(bounds: np.ndarray, threads: int) -> list[tuple[int, int]]:
    """Runs of buckets [a, b) of about equal numbers of suffixes (bounds: where each bucket
    starts, and the end), PARTS_PER_THREAD a thread; one run for one thread."""
    parts = PARTS_PER_THREAD * threads if threads > 1 else 1
    cuts = np.searchsorted(bounds, bounds[-1] * np.arange(1, parts) // parts)
    points = np.unique(np.concatenate(([0], cuts, [bounds.size - 1])))
    return list(zip(points[:-1].tolist(), points[1:].tolist()))


def _plan(counts: np.ndarray, capacity: int) -> list[tuple[int, int, int]]:
    """Pieces (first bucket, end bucket, first row): runs of buckets of at most `capacity`
    suffixes together (a single larger bucket is a piece of its own); the bucket of '#' runs
    always stands alone (RUN_BUCKET: _runs_cpu.py writes it out in parts)."""
    pieces, start, held, row = [], 0, 0, 0
    nonzero = np.flatnonzero(counts)
    for b in nonzero.tolist():
        c = int(counts[b])
        if held and (held + c > capacity or RUN_BUCKET in (b, start)):
            pieces.append((start, b, row))
            row += held
            held = 0
        if not held:
            start = b
        held += c
    if held:
        pieces.append((start, BUCKETS, row))
    return pieces


def _follower_order(text: np.ndarray, ends: np.ndarray, cover: Cover, ranks: np.ndarray | None):
    """(the runs ending at `ends` in the order of the suffixes after them, each run's group):
    sorted by their first v symbols, then by the sample's ranks where given, so every group is
    one run; without ranks (the sample being ranked), runs whose followers share v symbols
    share a group."""
    codes = np.empty(ends.size, np.int64)
    _PREFIX_CODES(text, ends, PREFIX, codes)
    order = np.argsort(codes, kind="stable")
    followers, codes = ends[order], codes[order]
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(codes)) + 1, [ends.size])).astype(np.int64)
    tied = np.empty(ends.size, np.uint8)
    _REFINE(text, followers, bounds, cover.v, tied)
    if ranks is not None:
        _BREAK_TIES(followers, tied, cover.v, cover.member, cover.size, cover.delta, ranks)
        tied[:] = 0
    return np.searchsorted(ends, followers), np.cumsum(tied == 0) - 1


def _run_pieces(text: np.ndarray, count: int, row: int, capacity: int, only_sample: bool, cover: Cover,
                ranks: np.ndarray | None):
    """The bucket of '#' runs (its `count` suffixes from `row` on) in parts of at most
    `capacity`: (first row, positions, tie flags), in order without a sort (_runs_cpu.py)."""
    v, member = cover.v, cover.member
    starts, ends = np.empty((2, _COUNT_RUNS(text, PREFIX)), np.int64)
    _FIND_RUNS(text, PREFIX, starts, ends)
    lengths = ends - starts
    written = 0
    if ends.size and text[ends[-1]] == 0:  # the run before the '$' first, its shortest suffixes first
        last = ends[-1] - np.arange(PREFIX, lengths[-1] + 1, dtype=np.int64)
        if only_sample:
            last = last[member[last % v] >= 0]
        for at in range(0, last.size, capacity):
            part = last[at : at + capacity].copy()
            yield row + written, part, np.zeros(part.size, np.uint8)
            written += part.size
        del last
        ends, lengths = ends[:-1], lengths[:-1]
    if not ends.size:
        return
    order, groups = _follower_order(text, ends, cover, ranks)
    ends, lengths = ends[order], lengths[order]
    by_length = np.argsort(-lengths, kind="stable")
    state = np.array([lengths.max(), 0, 0, 0, -1, -1], np.int64)
    active, scratch = np.empty(ends.size, np.int64), np.empty(ends.size, np.int64)
    while written < count:
        part = np.empty(min(capacity, count - written), np.int64)
        tied = np.empty(part.size, np.uint8)
        got = _WRITE_RUNS(ends, lengths, groups, by_length, PREFIX, state, active, scratch, only_sample, v, member,
                          part, tied)
        if got != part.size:
            raise AssertionError(f"the '#' runs hold {written + got:,} suffixes, their bucket {count:,}")
        yield row + written, part, tied
        written += got
        del part, tied


def _pieces(text: np.ndarray, counts: np.ndarray, capacity: int, only_sample: bool, cover: Cover, limit: int,
            ranks: np.ndarray | None = None, threads: int = 1):
    """(first row, positions sorted by their first `limit` symbols, tie flags) per piece, sorted
    completely given the sample's ranks, each on `threads` threads (_sorted_piece). The
    bucket of '#' runs is cut where `capacity` says given the sample's ranks (its order then has
    no ties); while the sample is ranked it is one piece, so no group of ties is cut."""
    for lo, hi, row in _plan(counts, capacity):
        if lo == RUN_BUCKET:
            count = int(counts[lo])
            yield from _run_pieces(text, count, row, capacity if ranks is not None else count, only_sample, cover,
                                   ranks)
            continue
        positions, tied = _sorted_piece(text, counts, lo, hi, only_sample, cover, limit, ranks, threads)
        yield row, positions, tied
        del positions, tied  # before the next piece is collected: one piece held at a time


def rank_sample(text: np.ndarray, cover: Cover, sample_counts: np.ndarray, capacity: int, threads: int = 1) -> np.ndarray:
    """Ranks of the sample's suffixes, by slot: first by v symbols, piece by piece, then the
    tied ones by prefix doubling (a tied suffix has no '$' in its first h symbols, so the one h
    further on lies in the text and in the sample)."""
    n, v = text.size, cover.v
    ranks = np.zeros(cover.samples(n), np.uint32 if cover.samples(n) < 1 << 32 else np.uint64)
    tied_members, tied_heads = [], []
    for row, positions, tied in _pieces(text, sample_counts, capacity, True, cover, v, threads=threads):
        _NAME_SAMPLE(positions, tied, row, v, cover.member, cover.size, ranks)
        grouped = tied.astype(bool)
        grouped[:-1] |= grouped[1:]  # a group's first member too
        # Each tied member's group head (its first member's row), computed over the tied members
        # alone: a group's members are contiguous and its first is the one not tied to the row
        # before. Arrays the size of the piece here (an index, its heads) cost 16-24 bytes a
        # suffix beyond the 9 the plan counts: 2.3 Gbp at --memory 4G peaked 1.5 GiB over it.
        members = np.flatnonzero(grouped)
        heads = np.maximum.accumulate(np.where(tied[members] == 0, members + row, 0))
        tied_members.append(positions[members])
        tied_heads.append(heads)
        del positions, tied, grouped, members, heads
    members = np.concatenate(tied_members) if tied_members else np.empty(0, np.int64)
    heads = np.concatenate(tied_heads) if tied_heads else np.empty(0, np.int64)
    h = v
    while members.size:
        still = _DOUBLE(members, heads, h, v, cover.member, cover.size, ranks)
        members, heads = members[:still], heads[:still]
        h *= 2
    return ranks


def suffix_pieces(text: np.ndarray, capacity: int, v: int = DEFAULT_COVER, threads: int = 1
                  ) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, suffix array rows) piece by piece in row order, each piece at most `capacity`
    suffixes unless one bucket alone holds more, each sorted on `threads` threads. The text ends
    with its one '$' (code 0)."""
    cover = Cover(v)
    every, sample = np.zeros(BUCKETS, np.int64), np.zeros(BUCKETS, np.int64)
    _HISTOGRAMS(text, v, cover.member, every, sample)
    ranks = rank_sample(text, cover, sample, capacity, threads)
    for row, positions, tied in _pieces(text, every, capacity, False, cover, v, ranks, threads):
        del tied
        yield row, positions
        del positions
