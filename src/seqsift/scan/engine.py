"""One buffer through filter and verification: which pieces go to which filter, and how
candidates become verified piece occurrences.

Routing by anchor length (bytes of the piece's longest exact run):
- >= 6: the key + tag table of GPU Gems 3, ch. 35 (`filter="table"`, what the GPU runs and the Lab shows);
  with the default `filter="stride"`, anchors of at least 7 + stride bytes go to the stride
  prefilter instead and the rest to the table behind a Bloom filter;
- 2-5: the short table (same kernel, missing tag bytes masked), CPU only;
- 0-1: no run to index: tried at every position (reported at load; slow by nature).
Every path ends in the same verifier, so the verified occurrences do not depend on the filter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from seqsift.runner import cuts, split
from seqsift.scan import DEFAULT_STRIDE, FILTERS, kernels
from seqsift.scan.program import Program, compile_program
from seqsift.scan.signatures import SignatureSet
from seqsift.scan.table import (TAG, KeyTagTable, StrideFilter, build_key_tag_table, build_stride_filter,
                                pair_log_probability, stride_min_anchor)

TABLE_BLOOM_BITS = 16  # Bloom filter bits per entry in front of the table (stride mode)
_MIN_SPLIT = 1 << 16  # below this many bytes a buffer is filtered by one thread
ROW_BUFFER = 1 << 18  # candidate rows a thread holds before verifying them (6 MiB)
CANDIDATE_CHUNK = 1 << 18  # table candidates a thread holds before verifying them (4 MiB)
SWEEP_ROWS = 1 << 16  # positions of an anchorless piece verified in one call
OUT_CHUNK = 1 << 18  # occurrences verify_groups writes in one call (7 MiB)
# Bytes a filter kernel covers in one call: between calls the engine asks its `stop` (a cancel),
# so a buffer in flight stops within this much filtering per thread, not at its end.
POLL_BYTES = 4 << 20
# Verified occurrences one buffer may hold (28 bytes each: ~900 MiB at most, over all threads).
# Past it they are made distinct (a start reached from several anchors is one); an object part
# that still holds more is dropped and its file reported, never the run.
OCCURRENCE_LIMIT = 1 << 25


@dataclass
class Occurrences:
    """Piece occurrences in one buffer, unordered; a start may repeat where a piece's prefix
    varies (several candidates can reach it)."""

    segment: np.ndarray  # int64
    piece: np.ndarray  # int32
    start: np.ndarray  # int64, padded-buffer coordinates
    end: np.ndarray  # int64, exclusive

    def __len__(self) -> int:
        return int(self.piece.size)


@dataclass
class FilterCount:
    candidates: int = 0  # raw filter candidates (candidate ids, before verification)
    checks: int = 0  # piece starts verified
    dropped: set = field(default_factory=set)  # segments whose occurrences passed OCCURRENCE_LIMIT


class _Kept:
    """One thread's verified occurrences of a buffer, held to `limit` rows: past it they are made
    distinct, and the segment holding the most is dropped (into count.dropped) until they fit."""

    def __init__(self, limit: int, count: FilterCount):
        self.limit, self.count = limit, count
        self.parts: list[Occurrences] = []
        self.rows = 0

    def add(self, found: "Occurrences") -> None:
        if self.count.dropped and len(found):
            found = _take(found, ~np.isin(found.segment, list(self.count.dropped)))
        self.parts.append(found)
        self.rows += len(found)
        if self.rows > self.limit:
            merged = _distinct(_merge(self.parts))
            while len(merged) > self.limit // 2:
                heaviest = int(np.bincount(merged.segment).argmax())
                self.count.dropped.add(heaviest)
                merged = _take(merged, merged.segment != heaviest)
            self.parts, self.rows = [merged], len(merged)

    def result(self) -> "Occurrences":
        found = _merge(self.parts)
        if self.count.dropped and len(found):
            found = _take(found, ~np.isin(found.segment, list(self.count.dropped)))
        return found


class Engine:
    def __init__(self, signatures: SignatureSet | Program, filter: str = "stride", stride: int = DEFAULT_STRIDE,
                 threads: int = 1, sample: np.ndarray | None = None):
        """sample: bytes like those to be scanned; the filters index each signature where it is
        rarest in them (table.pair_log_probability)."""
        if filter not in FILTERS:
            raise ValueError(f"filter {filter!r} is not one of {FILTERS}")
        self.program: Program = signatures if isinstance(signatures, Program) else compile_program(signatures)
        self.pair_logp = pair_log_probability(sample)
        self.filter = filter
        self.stride = stride
        self.threads = threads
        prog = self.program
        self.prog_arrays = prog.arrays
        self.alt_index = prog.alt_index()
        n = np.arange(prog.n_pieces)
        anchor = prog.anchor_len
        self.seed_pieces = n[anchor >= TAG + 2]
        self.short_pieces = n[(anchor >= 2) & (anchor < TAG + 2)]
        self.sweep_pieces = n[anchor < 2].astype(np.int32)
        self._seed_table: KeyTagTable | None = None
        self.short_table = build_key_tag_table(prog, self.short_pieces, pair_logp=self.pair_logp) if self.short_pieces.size else None
        self.stride_filter: StrideFilter | None = None
        self.mid_table: KeyTagTable | None = None
        if filter == "stride":
            long = anchor >= stride_min_anchor(stride)
            strided = n[long]
            mid = n[~long & (anchor >= TAG + 2)]
            self.stride_filter = build_stride_filter(prog, strided, stride, pair_logp=self.pair_logp) if strided.size else None
            self.mid_table = build_key_tag_table(prog, mid, TABLE_BLOOM_BITS, self.pair_logp) if mid.size else None
        width = kernels.GROUP_STARTS + prog.max_span + 4  # verify_groups' scratch: one group's bytes
        self._groups = [(np.empty(width, np.int64), np.empty(width, np.int64), np.empty(width, np.int64))
                        for _ in range(max(threads, 1))]
        self._rows = [_new_rows(ROW_BUFFER) for _ in range(max(threads, 1))]  # stride candidates, reused
        self._starts = (self.program.prefix_max - self.program.prefix_min + 1).astype(np.int64)  # per piece
        self._one_start = (prog.literal != 0) | (prog.fixed != 0)  # verified at their one start (verify_rows)
        # Called between kernel calls (every POLL_BYTES filtered, every chunk verified) on the
        # threads scanning; it raises to stop a buffer in flight (the Lab's cancel). None: never.
        self.stop: Callable[[], None] | None = None

    def _poll(self) -> None:
        if self.stop is not None:
            self.stop()

    @property
    def seed_table(self) -> KeyTagTable:
        """The key + tag table over every piece with a 6-byte anchor (built on first use)."""
        if self._seed_table is None:
            self._seed_table = build_key_tag_table(self.program, self.seed_pieces, pair_logp=self.pair_logp)
        return self._seed_table

    # -- filtering -------------------------------------------------------------------------------
    def table_candidates(self, table: KeyTagTable, buf: np.ndarray, lo: int, hi: int,
                         limit: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """Raw candidates (tag position, entry) of a key+tag table for the key positions in
        [lo, hi - 1) of the padded buffer, in position order: what the key + tag filter reports and
        the GPU must reproduce. None once a thread's share passes `limit` (the caller then takes
        the full pass instead of holding them all)."""
        tail = (table.starts, table.tags, table.masks, table.bloom, table.bloom_shift)
        largest = int(np.diff(table.starts).max(initial=0))
        parts = self._split(lo, max(hi - 1, lo), 1)
        found = self._map(lambda r: _drain(kernels.table_filter, buf, *r, tail, largest, limit, self._poll), parts)
        return None if any(f is None for f in found) else _concat(found)

    def candidate_tables(self) -> list[KeyTagTable]:
        """The key + tag tables whose candidates are checked one by one: the key + tag table (or, in
        stride mode, the one for anchors too short to stride) and the short-anchor table."""
        main = self.seed_table if self.filter == "table" else self.mid_table
        return [t for t in (main, self.short_table) if t is not None and len(t)]

    def check(self, buf: np.ndarray, table: KeyTagTable, pos: np.ndarray, entry: np.ndarray, seg_lo: np.ndarray,
              seg_hi: np.ndarray, count: FilterCount, verify: bool = True) -> Occurrences:
        """A table's candidates checked against their whole pieces inside their objects (segments
        [seg_lo, seg_hi), padded and sorted); unverified with verify=False."""
        count.candidates += pos.size
        rows = _new_rows(pos.size)
        n = kernels.table_rows(pos, entry, table.piece, table.rel, seg_lo, seg_hi, rows)
        return self.verify(buf, tuple(r[:n] for r in rows), seg_lo, seg_hi, count, verify)

    def verify(self, buf: np.ndarray, rows: tuple, seg_lo: np.ndarray, seg_hi: np.ndarray, count: FilterCount,
               verify: bool = True) -> Occurrences:
        """Candidate rows (anchor, segment, piece) to occurrences, split between the threads."""
        parts = self._split(0, rows[0].size, 1, granule=1 << 14)
        done = self._map(lambda r, k: self._verify_part(buf, tuple(x[r[0] : r[1]] for x in rows), seg_lo, seg_hi, k, verify,
                                                              count),
                         parts, with_index=True)
        count.checks += sum(checks for _, checks in done)
        kept = _Kept(self._limit(), count)
        for found, _ in done:
            kept.add(found)
        return kept.result()

    def _verify_part(self, buf, rows: tuple, seg_lo, seg_hi, k: int, verify: bool,
                     count: FilterCount) -> tuple[Occurrences, int]:
        """On thread k: each start the piece's prefix allows tried against the whole piece; or,
        unverified, the earliest start as it is. Returns the occurrences (never views of rows,
        which the caller reuses) and the starts tried. Pieces of one start and length (exact
        bytes, or bytes some masked) are compared at that start (verify_rows); the others go
        through verify_groups, linear in the bytes their candidates cover whatever their gaps
        and alternatives."""
        anchor, seg, piece = rows
        prog = self.program
        if not verify:
            first = np.maximum(anchor - prog.prefix_max[piece], seg_lo[seg])
            return Occurrences(seg.copy(), piece.astype(np.int32), first, anchor + prog.anchor_len[piece]), 0
        one_start = self._one_start[piece]
        parts, tried = _Kept(self._limit(), count), 0
        if one_start.any():
            lit = tuple(x[one_start] for x in rows) if not one_start.all() else rows
            size = lit[0].size
            out = (np.empty(size, np.int64), np.empty(size, np.int32), np.empty(size, np.int64), np.empty(size, np.int64))
            m = kernels.verify_rows(buf, lit, size, seg_lo, seg_hi, self.prog_arrays, out)
            parts.add(Occurrences(*(o[:m].copy() for o in out)))  # a view would hold all of out
            tried += size
        if not one_start.all():
            rest = tuple(x[~one_start] for x in rows)
            order = np.lexsort((rest[0], rest[2], rest[1]))
            rest = tuple(np.ascontiguousarray(x[order]) for x in rest)
            tried += int(np.minimum(self._starts[rest[2]], kernels.GROUP_STARTS).sum())
            E, F, dq = self._groups[k]
            at = 0
            while at < rest[0].size:
                self._poll()
                out = (np.empty(OUT_CHUNK, np.int64), np.empty(OUT_CHUNK, np.int32), np.empty(OUT_CHUNK, np.int64),
                       np.empty(OUT_CHUNK, np.int64))
                m, at = kernels.verify_groups(buf, rest, rest[0].size, seg_lo, seg_hi, self.prog_arrays, self.alt_index,
                                           at, E, F, dq, out)
                parts.add(Occurrences(*(o[:m].copy() for o in out)))
        return parts.result(), tried

    def scan(self, buf: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray, count: FilterCount,
             verify: bool = True) -> Occurrences:
        """The full CPU pass over the buffer from its first segment's start to its last one's
        end: this engine's filters, then verification of their candidates."""
        lo, hi = int(seg_lo[0]), int(seg_hi[-1])
        parts = []
        f = self.stride_filter
        if self.filter == "stride" and f is not None:
            per = max(f.most_owners, 1)

            if self._rows[0][0].size < 4 * per:
                self._rows = [_new_rows(4 * per) for _ in self._rows]

            def run(r, k):
                """Thread k's share: filter into its row buffer, verifying each time it fills, so
                memory stays at one row buffer however many candidates the data raises."""
                counts = np.zeros(1, np.int64)
                kept, checks, at = _Kept(self._limit(), count), 0, r[0]
                poll = max(POLL_BYTES // f.stride, 1) * f.stride  # a call's reach, on the stride's grid
                while at < r[1]:
                    self._poll()
                    rows = self._rows[k]
                    n, at = kernels.stride_rows(buf, at, min(r[1], at + poll), f.arrays, seg_lo, seg_hi, per, rows,
                                                counts)
                    occurrences, tried = self._verify_part(buf, tuple(x[:n] for x in rows), seg_lo, seg_hi, k, verify, count)
                    kept.add(occurrences)
                    checks += tried
                return kept.result(), int(counts[0]), checks

            for found, candidates, checks in self._map(run, self._split(lo, hi, f.stride), with_index=True):
                count.candidates += candidates
                count.checks += checks
                parts.append(found)
        for table in self.candidate_tables():
            parts.append(self.table_scan(table, buf, lo, hi, seg_lo, seg_hi, count, verify))
        if self.sweep_pieces.size and verify:
            parts.append(self.sweep(buf, seg_lo, seg_hi, count))
        return _merge(parts)

    def table_scan(self, table: KeyTagTable, buf: np.ndarray, lo: int, hi: int, seg_lo: np.ndarray,
                   seg_hi: np.ndarray, count: FilterCount, verify: bool = True) -> Occurrences:
        """A key + tag table's candidates for key positions in [lo, hi - 1), verified as they come
        in chunks of CANDIDATE_CHUNK, so memory is a chunk and the occurrences kept (_Kept),
        however many candidates the data raises (5,000 signatures sharing their anchor, and the
        anchor every 64 bytes, raise 80,000 a KiB)."""
        tail = (table.starts, table.tags, table.masks, table.bloom, table.bloom_shift)
        cap = max(CANDIDATE_CHUNK, 2 * int(np.diff(table.starts).max(initial=0)))

        def run(r, k):
            pos, entry, rows = np.empty(cap, np.int64), np.empty(cap, np.int64), _new_rows(cap)
            kept, candidates, checks, at = _Kept(self._limit(), count), 0, 0, r[0]
            while at < r[1]:
                self._poll()
                m, at = kernels.table_filter(buf, at, min(r[1], at + POLL_BYTES), *tail, pos, entry)
                candidates += m
                n = kernels.table_rows(pos[:m], entry[:m], table.piece, table.rel, seg_lo, seg_hi, rows)
                found, tried = self._verify_part(buf, tuple(x[:n] for x in rows), seg_lo, seg_hi, k, verify, count)
                kept.add(found)
                checks += tried
            return kept.result(), candidates, checks

        parts = []
        for found, candidates, checks in self._map(run, self._split(lo, max(hi - 1, lo), 1), with_index=True):
            count.candidates += candidates
            count.checks += checks
            parts.append(found)
        return _merge(parts)

    def _limit(self) -> int:
        return max(OCCURRENCE_LIMIT // max(self.threads, 1), 1 << 16)

    def sweep(self, buf: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray, count: FilterCount) -> Occurrences:
        """Pieces with no run to index, tried at every position of every segment: a row per
        position (its anchor placed so the rows' starts cover the segment), SWEEP_ROWS at a time,
        through the same verifier as every candidate."""
        prog = self.program
        kept = _Kept(self._limit(), count)
        for s, (a, b) in enumerate(zip(seg_lo.tolist(), seg_hi.tolist())):
            for p in self.sweep_pieces.tolist():
                shift = int(prog.prefix_min[p])
                for at in range(a, b, SWEEP_ROWS):
                    self._poll()
                    anchors = np.arange(at, min(at + SWEEP_ROWS, b), dtype=np.int64) + shift
                    rows = (anchors, np.full(anchors.size, s, np.int64), np.full(anchors.size, p, np.int64))
                    found, tried = self._verify_part(buf, rows, seg_lo, seg_hi, 0, True, count)
                    kept.add(found)
            count.checks += (b - a) * self.sweep_pieces.size
        return _distinct(kept.result())

    # -- threads ---------------------------------------------------------------------------------
    def _split(self, lo: int, hi: int, step: int, granule: int = _MIN_SPLIT) -> list[tuple[int, int]]:
        """One range per thread, none below granule bytes (the hand-off would cost more)."""
        return cuts(lo, hi, self.threads if hi - lo >= 2 * granule else 1, step)

    def _map(self, fn, parts, with_index: bool = False):
        """fn(part) per part, in order; with_index: fn(part, k), k the thread's scratch slot."""
        return split(fn, parts, self.threads, slot=with_index)


def _drain(kernel, data, lo: int, hi: int, tail: tuple, largest: int,
           limit: int | None = None, poll: Callable[[], None] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Run a resumable filter kernel(data, lo, hi, *tail, out_pos, out_entry) over [lo, hi),
    growing its output until it reaches hi; None as soon as it holds more than `limit`. poll is
    called before each call, each covering POLL_BYTES at most."""
    cap = max(4096, 2 * largest)
    out_pos, out_entry, held = [], [], 0
    while True:
        if poll is not None:
            poll()
        pos, entry = np.empty(cap, np.int64), np.empty(cap, np.int64)
        m, lo = kernel(data, lo, min(hi, lo + POLL_BYTES), *tail, pos, entry)
        out_pos.append(pos[:m])
        out_entry.append(entry[:m])
        held += m
        if limit is not None and held > limit:
            return None
        if lo >= hi:
            break
        if m > cap // 2:  # stopped for room, not at the end of its reach: more room next call
            cap = min(cap * 2, max(CANDIDATE_CHUNK, 2 * largest))
    return np.concatenate(out_pos), np.concatenate(out_entry)


def _new_rows(n: int) -> tuple:
    """Empty candidate rows: anchor position, segment, piece."""
    return np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)


def _concat(parts) -> tuple[np.ndarray, np.ndarray]:
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _take(found: Occurrences, keep: np.ndarray) -> Occurrences:
    return Occurrences(found.segment[keep], found.piece[keep], found.start[keep], found.end[keep])


def _distinct(found: Occurrences) -> Occurrences:
    """One row per (segment, piece, start): a start reached from several anchors is one start
    (its end is the least end from it, the same from every anchor)."""
    if not len(found):
        return found
    order = np.lexsort((found.start, found.piece, found.segment))
    seg, piece, start = found.segment[order], found.piece[order], found.start[order]
    fresh = np.ones(order.size, bool)
    fresh[1:] = (seg[1:] != seg[:-1]) | (piece[1:] != piece[:-1]) | (start[1:] != start[:-1])
    return _take(found, order[fresh])


def _merge(parts: list[Occurrences]) -> Occurrences:
    """The rows of several parts, in no particular order (the Collector sorts what it needs)."""
    if not parts:
        return Occurrences(np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    if len(parts) == 1:
        return parts[0]
    return Occurrences(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("segment", "piece", "start", "end")))
