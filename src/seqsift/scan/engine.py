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

from dataclasses import dataclass

import numpy as np

from seqsift.runner import cuts, split
from seqsift.scan import _cpu
from seqsift.scan.program import Program, compile_program
from seqsift.scan.signatures import SignatureSet
from seqsift.scan.table import (TAG, KeyTagTable, StrideFilter, build_key_tag_table, build_stride_filter,
                                pair_log_probability, stride_min_anchor)

FILTERS = ("stride", "table")
DEFAULT_STRIDE = 8
TABLE_BLOOM_BITS = 16  # Bloom filter bits per entry in front of the table (stride mode)
_MIN_SPLIT = 1 << 16  # below this many bytes a buffer is filtered by one thread
ROW_BUFFER = 1 << 18  # candidate rows a thread holds before verifying them (6 MiB)


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
        self._scratch = [self._new_scratch() for _ in range(max(threads, 1))]
        self._rows = [_new_rows(ROW_BUFFER) for _ in range(max(threads, 1))]  # stride candidates, reused
        self._starts = (self.program.prefix_max - self.program.prefix_min + 1).astype(np.int64)  # per piece

    @property
    def seed_table(self) -> KeyTagTable:
        """The key + tag table over every piece with a 6-byte anchor (built on first use)."""
        if self._seed_table is None:
            self._seed_table = build_key_tag_table(self.program, self.seed_pieces, pair_logp=self.pair_logp)
        return self._seed_table

    def _new_scratch(self) -> tuple[np.ndarray, np.ndarray]:
        size = max(self.program.scratch_size, 2)
        return np.empty(size, np.int64), np.empty(size, np.int64)

    # -- filtering -------------------------------------------------------------------------------
    def table_candidates(self, table: KeyTagTable, buf: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Raw candidates (tag position, entry) of a key+tag table for the key positions in
        [lo, hi - 1) of the padded buffer, in position order: what the key + tag filter reports and
        the GPU must reproduce."""
        tail = (table.starts, table.tags, table.masks, table.bloom, table.bloom_shift)
        largest = int(np.diff(table.starts).max(initial=0))
        parts = self._split(lo, max(hi - 1, lo), 1)
        return _concat(self._map(lambda r: _drain(_cpu.table_filter, buf, *r, tail, largest), parts))

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
        n = _cpu.table_rows(pos, entry, table.piece, table.rel, seg_lo, seg_hi, rows)
        return self.verify(buf, tuple(r[:n] for r in rows), seg_lo, seg_hi, count, verify)

    def verify(self, buf: np.ndarray, rows: tuple, seg_lo: np.ndarray, seg_hi: np.ndarray, count: FilterCount,
               verify: bool = True) -> Occurrences:
        """Candidate rows (anchor, segment, piece) to occurrences, split between the threads."""
        parts = self._split(0, rows[0].size, 1, granule=1 << 14)
        done = self._map(lambda r, k: self._verify_part(buf, tuple(x[r[0] : r[1]] for x in rows), seg_lo, seg_hi, k, verify),
                         parts, with_index=True)
        count.checks += sum(checks for _, checks in done)
        return _merge([found for found, _ in done])

    def _verify_part(self, buf, rows: tuple, seg_lo, seg_hi, k: int, verify: bool) -> tuple[Occurrences, int]:
        """On thread k: each start the piece's prefix allows tried against the whole piece; or,
        unverified, the earliest start as it is. Returns the occurrences (never views of rows,
        which the caller reuses) and the starts tried."""
        anchor, seg, piece = rows
        prog = self.program
        if not verify:
            first = np.maximum(anchor - prog.prefix_max[piece], seg_lo[seg])
            return Occurrences(seg.copy(), piece.astype(np.int32), first, anchor + prog.anchor_len[piece]), 0
        size = int(self._starts[piece].sum())
        out = (np.empty(size, np.int64), np.empty(size, np.int32), np.empty(size, np.int64), np.empty(size, np.int64))
        m = _cpu.verify_rows(buf, rows, anchor.size, seg_lo, seg_hi, self.prog_arrays, *self._scratch[k], out)
        return Occurrences(*(o[:m] for o in out)), size

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
                found, checks, at = [], 0, r[0]
                while at < r[1]:
                    rows = self._rows[k]
                    n, at = _cpu.stride_rows(buf, at, r[1], f.arrays, seg_lo, seg_hi, per, rows, counts)
                    occurrences, tried = self._verify_part(buf, tuple(x[:n] for x in rows), seg_lo, seg_hi, k, verify)
                    found.append(occurrences)
                    checks += tried
                return _merge(found), int(counts[0]), checks

            for found, candidates, checks in self._map(run, self._split(lo, hi, f.stride), with_index=True):
                count.candidates += candidates
                count.checks += checks
                parts.append(found)
        for table in self.candidate_tables():
            pos, entry = self.table_candidates(table, buf, lo, hi)
            parts.append(self.check(buf, table, pos, entry, seg_lo, seg_hi, count, verify))
        if self.sweep_pieces.size and verify:
            parts.append(self.sweep(buf, seg_lo, seg_hi, count))
        return _merge(parts)

    def sweep(self, buf: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray, count: FilterCount) -> Occurrences:
        """Pieces with no run to index, tried at every position of every segment."""
        out = []
        cur, nxt = self._scratch[0]
        for s, (a, b) in enumerate(zip(seg_lo.tolist(), seg_hi.tolist())):
            cap = 1024
            while True:
                p, st, en = np.empty(cap, np.int32), np.empty(cap, np.int64), np.empty(cap, np.int64)
                m = _cpu.sweep(buf, a, b, self.sweep_pieces, self.prog_arrays, cur, nxt, p, st, en)
                if m >= 0:
                    break
                cap *= 4
            count.checks += (b - a) * self.sweep_pieces.size
            out.append(Occurrences(np.full(m, s, np.int64), p[:m], st[:m], en[:m]))
        return _merge(out)

    # -- threads ---------------------------------------------------------------------------------
    def _split(self, lo: int, hi: int, step: int, granule: int = _MIN_SPLIT) -> list[tuple[int, int]]:
        """One range per thread, none below granule bytes (the hand-off would cost more)."""
        return cuts(lo, hi, self.threads if hi - lo >= 2 * granule else 1, step)

    def _map(self, fn, parts, with_index: bool = False):
        """fn(part) per part, in order; with_index: fn(part, k), k the thread's scratch slot."""
        return split(fn, parts, self.threads, slot=with_index)


def _drain(kernel, data, lo: int, hi: int, tail: tuple, largest: int) -> tuple[np.ndarray, np.ndarray]:
    """Run a resumable filter kernel(data, lo, hi, *tail, out_pos, out_entry) over [lo, hi),
    growing its output until it reaches hi."""
    cap = max(4096, 2 * largest)
    out_pos, out_entry = [], []
    while True:
        pos, entry = np.empty(cap, np.int64), np.empty(cap, np.int64)
        m, lo = kernel(data, lo, hi, *tail, pos, entry)
        out_pos.append(pos[:m])
        out_entry.append(entry[:m])
        if lo >= hi:
            break
        cap *= 2
    return np.concatenate(out_pos), np.concatenate(out_entry)


def _new_rows(n: int) -> tuple:
    """Empty candidate rows: anchor position, segment, piece."""
    return np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)


def _concat(parts) -> tuple[np.ndarray, np.ndarray]:
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _merge(parts: list[Occurrences]) -> Occurrences:
    """The rows of several parts, in no particular order (the Collector sorts what it needs)."""
    if not parts:
        return Occurrences(np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    if len(parts) == 1:
        return parts[0]
    return Occurrences(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("segment", "piece", "start", "end")))
