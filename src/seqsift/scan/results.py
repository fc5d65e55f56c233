"""Verified piece occurrences -> signature matches per object.

A one-piece signature matches at every verified start its offset rule allows. A signature cut
at unbounded gaps matches when its pieces occur in order, each starting at least the gap minimum
after the one before ends; occurrences arrive in order of their end, across buffers too, so one
greedy pass (take the earliest-ending occurrence of the piece wanted next) decides it with a few
integers of state per (object, signature).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from seqsift.scan.engine import Occurrences
from seqsift.io.pack import Filled
from seqsift.scan.program import Program
from seqsift.scan.signatures import ANY_OFFSET, FROM_EOF, FROM_START

MAX_OFFSETS = 100  # offsets listed per (object, signature); the count stays exact


@dataclass
class Match:
    signature: int  # index in the database
    name: str
    count: int  # distinct start offsets (1 for a signature with unbounded gaps: one chain is shown)
    offsets: list[int]  # the first MAX_OFFSETS, ascending


@dataclass
class ObjectResult:
    path: str
    size: int
    matches: list[Match]
    error: str | None = None


@dataclass
class _Chain:
    wanted: int = 0  # rank of the piece wanted next
    min_start: int = 0
    first_start: int = -1


@dataclass
class _Pending:
    counts: dict = field(default_factory=dict)  # signature -> count
    offsets: dict = field(default_factory=dict)  # signature -> list of offsets
    chains: dict = field(default_factory=dict)  # signature -> _Chain


class Collector:
    def __init__(self, program: Program, names: list[str], raw: bool = False):
        """raw: the occurrences are unverified filter candidates (--no-verify): every piece
        stands for its signature, offsets unchecked."""
        self.program = program
        self.names = names
        self.raw = raw
        self._pending: dict[int, _Pending] = {}
        self.multi = (program.sig_pieces[program.piece_sig] > 1) & (not raw)  # per piece

    def add(self, filled: Filled, found: Occurrences) -> list[ObjectResult]:
        """Take one buffer's occurrences; return the objects that ended in it, in order."""
        prog = self.program
        seg_off = np.asarray([s.file_offset - s.lo for s in filled.segments], np.int64)
        new_from = np.asarray([s.new_from for s in filled.segments], np.int64)
        seg = found.segment
        start = found.start + seg_off[seg]
        end = found.end + seg_off[seg]
        keep = end > new_from[seg]  # ending at or before new_from: reported from the previous buffer
        piece = found.piece
        sig = prog.piece_sig[piece]
        first = prog.piece_rank[piece] == 0
        sizes = np.asarray([s.obj.size for s in filled.segments], np.int64)
        if not self.raw:
            keep &= ~first | _offset_ok(prog, sig, start, sizes[seg])
        seg, piece, sig, start, end = seg[keep], piece[keep], sig[keep], start[keep], end[keep]
        pending = [self._pending.setdefault(sg.obj.index, _Pending()) for sg in filled.segments]
        single = ~self.multi[piece]
        if single.any():
            self._add_single(pending, seg[single], sig[single], start[single])
        if not single.all():
            chained = ~single
            seg, piece, sig, start, end = seg[chained], piece[chained], sig[chained], start[chained], end[chained]
            order = np.lexsort((piece, end, seg))  # the greedy chain takes occurrences by their end
            for k in np.unique(seg).tolist():
                rows = order[seg[order] == k]
                self._add_chained(pending[k], piece[rows], sig[rows], start[rows], end[rows])
        done = []
        for segment in filled.segments:
            if segment.last:
                done.append(self._finish(segment.obj))
        return done

    def _add_single(self, pending: list[_Pending], seg: np.ndarray, sig: np.ndarray, start: np.ndarray) -> None:
        """Count distinct starts per (object part, signature) and keep the first offsets."""
        key, start = _distinct_sorted(seg * np.int64(len(self.names)) + sig, start)
        cuts = np.flatnonzero(np.diff(key)) + 1
        heads = np.concatenate([[0], cuts]).astype(np.int64)
        sizes = np.diff(np.append(heads, key.size))
        # the first MAX_OFFSETS starts of each group, picked in numpy: one Python step per group
        taken = np.minimum(sizes, MAX_OFFSETS)
        rank = np.arange(key.size) - np.repeat(heads, sizes)
        chosen = start[rank < MAX_OFFSETS].tolist()
        bounds = np.concatenate([[0], np.cumsum(taken)]).tolist()
        n = len(self.names)
        for g, (group_key, size, room_in_group) in enumerate(zip(key[heads].tolist(), sizes.tolist(), taken.tolist())):
            k, s = divmod(group_key, n)
            into = pending[k]
            into.counts[s] = into.counts.get(s, 0) + size
            listed = into.offsets.setdefault(s, [])
            room = min(MAX_OFFSETS - len(listed), room_in_group)
            if room > 0:
                listed.extend(chosen[bounds[g] : bounds[g] + room])

    def _add_chained(self, pending: _Pending, piece, sig, start, end) -> None:
        prog = self.program
        for p, s, st, en in zip(piece.tolist(), sig.tolist(), start.tolist(), end.tolist()):
            chain = pending.chains.setdefault(s, _Chain())
            rank = int(prog.piece_rank[p])
            if chain.wanted >= prog.sig_pieces[s] or rank != chain.wanted or st < chain.min_start:
                continue
            if rank == 0:
                chain.first_start = st
            chain.wanted += 1
            chain.min_start = en + int(prog.gap_after[p])
            if chain.wanted == prog.sig_pieces[s]:
                pending.counts[s] = 1
                pending.offsets[s] = [chain.first_start]

    def _finish(self, obj) -> ObjectResult:
        pending = self._pending.pop(obj.index, _Pending())
        if obj.error:
            return ObjectResult(obj.path, obj.size, [], obj.error)
        matches = []
        for s in sorted(pending.counts):
            offsets = sorted(pending.offsets[s])
            matches.append(Match(s, self.names[s], pending.counts[s], offsets))
        return ObjectResult(obj.path, obj.size, matches)


def _distinct_sorted(key: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (key, start) pairs sorted by key then start. Both packed in one int64 and
    sorted as numbers where they fit (10x faster than lexsort on a buffer's 30,000 rows)."""
    if not key.size:
        return key, start
    bits = int(start.max()).bit_length()
    if int(start.min()) >= 0 and int(key.max()) < 1 << (62 - bits) and int(key.min()) >= 0:
        packed = np.sort((key << bits) | start)  # np.unique is 10x slower than sorting here
        packed = packed[np.concatenate(([True], packed[1:] != packed[:-1]))]
        return packed >> bits, packed & ((1 << bits) - 1)
    order = np.lexsort((start, key))
    key, start = key[order], start[order]
    fresh = np.ones(key.size, bool)
    fresh[1:] = (key[1:] != key[:-1]) | (start[1:] != start[:-1])  # one row per start
    return key[fresh], start[fresh]


def _offset_ok(prog: Program, sig: np.ndarray, start: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Whether a first piece starting at `start` obeys its signature's offset rule."""
    kind = prog.offset_kind[sig]
    anchor = np.where(kind == FROM_EOF, size - prog.offset[sig], prog.offset[sig])
    inside = (start >= anchor) & (start <= anchor + prog.shift[sig])
    return (kind == ANY_OFFSET) | (((kind == FROM_START) | (kind == FROM_EOF)) & inside)
