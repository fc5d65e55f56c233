"""One buffer through filter and verification: which pieces go to which filter, and how
candidates become verified piece occurrences.

Routing by anchor length (bytes of the piece's longest exact run):
- >= 6: the seed's key + tag table (`filter="table"`, what the GPU runs and the Lab shows);
  with the default `filter="stride"`, anchors of at least 7 + stride bytes go to the stride
  prefilter instead and the rest to the table behind a Bloom filter;
- 2-5: the short table (same kernel, missing tag bytes masked), CPU only;
- 0-1: no run to index: tried at every position (reported at load; slow by nature).
Every path ends in the same verifier, so the verified occurrences do not depend on the filter.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np

from seqsift.scan import _cpu
from seqsift.scan._cpu import PAD
from seqsift.scan.program import Program, compile_program
from seqsift.scan.signatures import SignatureSet
from seqsift.scan.table import (TAG, KeyTagTable, StrideFilter, build_key_tag_table, build_stride_filter,
                                stride_min_anchor)

FILTERS = ("stride", "table")
DEFAULT_STRIDE = 8
TABLE_BLOOM_BITS = 16  # Bloom filter bits per entry in front of the table (stride mode)
_MIN_SPLIT = 1 << 16  # below this many bytes a buffer is filtered by one thread


@dataclass
class Occurrences:
    """Verified piece occurrences in one buffer, sorted by (segment, end, piece)."""

    segment: np.ndarray  # int64
    piece: np.ndarray  # int32
    start: np.ndarray  # int64, padded-buffer coordinates
    end: np.ndarray  # int64, exclusive

    def __len__(self) -> int:
        return int(self.piece.size)


@dataclass
class FilterCount:
    candidates: int = 0  # raw filter candidates (the seed's candidate ids)
    checks: int = 0  # piece starts verified
    times: dict = field(default_factory=dict)


class Engine:
    def __init__(self, signatures: SignatureSet, filter: str = "stride", stride: int = DEFAULT_STRIDE,
                 threads: int = 1, pool: Executor | None = None):
        if filter not in FILTERS:
            raise ValueError(f"filter {filter!r} is not one of {FILTERS}")
        self.program: Program = compile_program(signatures)
        self.filter = filter
        self.stride = stride
        self.threads = threads
        self.pool = pool
        prog = self.program
        self.prog_arrays = (prog.op_kind, prog.op_a, prog.op_b, prog.opt_lo, prog.opt_len, prog.opt_val,
                            prog.opt_mask, prog.piece_ops)
        n = np.arange(prog.n_pieces)
        anchor = prog.anchor_len
        self.seed_pieces = n[anchor >= TAG + 2]
        self.short_pieces = n[(anchor >= 2) & (anchor < TAG + 2)]
        self.sweep_pieces = n[anchor < 2].astype(np.int32)
        self._seed_table: KeyTagTable | None = None
        self.short_table = build_key_tag_table(prog, self.short_pieces) if self.short_pieces.size else None
        self.stride_filter: StrideFilter | None = None
        self.mid_table: KeyTagTable | None = None
        if filter == "stride":
            long = anchor >= stride_min_anchor(stride)
            strided = n[long]
            mid = n[~long & (anchor >= TAG + 2)]
            self.stride_filter = build_stride_filter(prog, strided, stride) if strided.size else None
            self.mid_table = build_key_tag_table(prog, mid, TABLE_BLOOM_BITS) if mid.size else None
        self._scratch = [self._new_scratch() for _ in range(max(threads, 1))]

    @property
    def seed_table(self) -> KeyTagTable:
        """The seed's table over every piece with a 6-byte anchor (built on first use)."""
        if self._seed_table is None:
            self._seed_table = build_key_tag_table(self.program, self.seed_pieces)
        return self._seed_table

    def _new_scratch(self) -> tuple[np.ndarray, np.ndarray]:
        size = max(self.program.scratch_size, 2)
        return np.empty(size, np.int64), np.empty(size, np.int64)

    # -- filtering -------------------------------------------------------------------------------
    def table_candidates(self, table: KeyTagTable, buf: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Raw candidates (tag position, entry) of a key+tag table for the key positions in
        [lo, hi - 1) of the padded buffer, in position order: what the seed's filter reports and
        the GPU must reproduce."""
        tail = (table.starts, table.tags, table.masks, table.bloom, table.bloom_shift)
        largest = int(np.diff(table.starts).max(initial=0))
        parts = self._split(lo, max(hi - 1, lo), 1)
        return _concat(self._map(lambda r: _drain(_cpu.table_filter, buf, *r, tail, largest), parts))

    def stride_candidates(self, buf: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        f = self.stride_filter
        tail = (f.stride, f.bloom, f.bloom_shift, f.bucket_shift, f.starts, f.values)
        largest = int(np.diff(f.starts).max(initial=0))
        parts = self._split(lo, hi, f.stride)
        return _concat(self._map(lambda r: _drain(_cpu.stride_filter, buf, *r, tail, largest), parts))

    def anchors(self, buf: np.ndarray, lo: int, hi: int, count: FilterCount) -> tuple[np.ndarray, np.ndarray]:
        """Candidate (anchor position, piece) pairs from this engine's filters over [lo, hi)."""
        found = []
        if self.filter == "stride" and self.stride_filter is not None:
            pos, entry = self.stride_candidates(buf, lo, hi)
            count.candidates += pos.size
            found.append((pos - self.stride_filter.rel[entry], self.stride_filter.piece[entry]))
        main = self.seed_table if self.filter == "table" else self.mid_table
        for table in (main, self.short_table):
            if table is not None and len(table):
                pos, entry = self.table_candidates(table, buf, lo, hi)
                count.candidates += pos.size
                found.append((pos - table.rel[entry], table.piece[entry]))
        return _concat(found)

    def short_anchors(self, buf: np.ndarray, lo: int, hi: int, count: FilterCount) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of the pieces only the CPU indexes (anchors of 2-5 bytes)."""
        if self.short_table is None:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        pos, entry = self.table_candidates(self.short_table, buf, lo, hi)
        count.candidates += pos.size
        return pos - self.short_table.rel[entry], self.short_table.piece[entry]

    def raw(self, anchor: np.ndarray, piece: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray) -> Occurrences:
        """Unverified candidates as occurrences (--no-verify): each piece's earliest possible
        start and its anchor's end."""
        seg = np.searchsorted(seg_lo, anchor, "right") - 1
        ok = seg >= 0
        ok[ok] = anchor[ok] < seg_hi[seg[ok]]
        anchor, piece, seg = anchor[ok], piece[ok], seg[ok]
        start = np.maximum(anchor - self.program.prefix_max[piece], seg_lo[seg])
        return _unique(seg, piece.astype(np.int32), start, anchor + self.program.anchor_len[piece])

    # -- verification ----------------------------------------------------------------------------
    def verify(self, buf: np.ndarray, anchor: np.ndarray, piece: np.ndarray, seg_lo: np.ndarray,
               seg_hi: np.ndarray, count: FilterCount) -> Occurrences:
        """Occurrences of the candidates' pieces inside their segments [seg_lo, seg_hi) (sorted
        padded-buffer ranges, one per object in the buffer), duplicates removed."""
        prog = self.program
        seg = np.searchsorted(seg_lo, anchor, "right") - 1
        ok = seg >= 0
        ok[ok] = anchor[ok] < seg_hi[seg[ok]]
        anchor, piece, seg = anchor[ok], piece[ok], seg[ok]
        first = anchor - prog.prefix_max[piece]
        last = anchor - prog.prefix_min[piece]
        lo, hi = seg_lo[seg], seg_hi[seg]
        count.checks += int(np.sum(last - np.maximum(first, lo) + 1, where=last >= first, initial=0))
        parts = self._split(0, anchor.size, 1, granule=256)

        def run(r, k):
            a, b = r
            rows = int(np.sum(np.maximum(last[a:b] - first[a:b] + 1, 0)))
            idx, start, end = np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows, np.int64)
            cur, nxt = self._scratch[k]
            m = _cpu.verify(buf, first[a:b], last[a:b], piece[a:b], lo[a:b], hi[a:b], self.prog_arrays, cur, nxt,
                            idx, start, end)
            return idx[:m] + a, start[:m], end[:m]

        results = self._map(run, parts, with_index=True)
        idx = np.concatenate([r[0] for r in results]) if results else np.empty(0, np.int64)
        start = np.concatenate([r[1] for r in results]) if results else np.empty(0, np.int64)
        end = np.concatenate([r[2] for r in results]) if results else np.empty(0, np.int64)
        return _unique(seg[idx], piece[idx].astype(np.int32), start, end)

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

    def scan_segments(self, buf: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray, count: FilterCount) -> Occurrences:
        """Filter and verify the buffer from its first segment's start to its last one's end
        (padded, sorted segment bounds): the full CPU pass."""
        anchor, piece = self.anchors(buf, int(seg_lo[0]), int(seg_hi[-1]), count)
        found = self.verify(buf, anchor, piece, seg_lo, seg_hi, count)
        if self.sweep_pieces.size:
            found = _merge([found, self.sweep(buf, seg_lo, seg_hi, count)])
        return found

    # -- threads ---------------------------------------------------------------------------------
    def _split(self, lo: int, hi: int, step: int, granule: int = _MIN_SPLIT) -> list[tuple[int, int]]:
        t = self.threads if self.pool is not None and hi - lo >= 2 * granule else 1
        cuts = [lo + ((hi - lo) * k // t) // step * step for k in range(t)] + [hi]
        return [(cuts[k], cuts[k + 1]) for k in range(t) if cuts[k] < cuts[k + 1]]

    def _map(self, fn, parts, with_index: bool = False):
        if len(parts) <= 1 or self.pool is None:
            return [fn(p, k) if with_index else fn(p) for k, p in enumerate(parts)]
        futures = [self.pool.submit(fn, p, k) if with_index else self.pool.submit(fn, p) for k, p in enumerate(parts)]
        return [f.result() for f in futures]


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


def _concat(parts) -> tuple[np.ndarray, np.ndarray]:
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _unique(seg, piece, start, end) -> Occurrences:
    """One row per (segment, piece, start); sorted by segment, end, piece."""
    if start.size > 1:
        order = np.lexsort((start, piece, seg))
        seg, piece, start, end = seg[order], piece[order], start[order], end[order]
        keep = np.ones(start.size, bool)
        keep[1:] = (seg[1:] != seg[:-1]) | (piece[1:] != piece[:-1]) | (start[1:] != start[:-1])
        seg, piece, start, end = seg[keep], piece[keep], start[keep], end[keep]
    order = np.lexsort((start, piece, end, seg))
    return Occurrences(seg[order], piece[order], start[order], end[order])


def _merge(parts: list[Occurrences]) -> Occurrences:
    if not parts:
        return Occurrences(np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    return _unique(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("segment", "piece", "start", "end")))
