"""Short reads against long targets, local or semi-global alignment (`seqsift align --outfmt sam`):
the results of stream.search, the same hits and alignments, without its costs in this shape of
input.

stream.search puts database sequences side by side in the lanes kernel; one long target then
fills one lane of a batch, and each read's alignment is traced over the whole target. Here the
roles turn (a local score is the same either way, the gap costs being the same on both sides):
the reads fill the lanes and each target is the query, cut into windows that overlap by the
widest a read's alignment can be (`reach`), so the best score of a read against a target is
the best of its windows, and a window holding it tells where to look. The alignment is then
traced from the target's first best cell in row order, as the full kernel picks it, over the
`reach` columns ending there: every alignment with that score ending at that cell lies within,
so the traceback takes the same steps as over the whole target (the module's test checks the
hits are stream.search's).

Semi-global (the whole read against any stretch of the target) has no lanes kernel of its own,
but a read's semi-global alignment inside a window is also a local one there, so a window's
local score bounds its semi-global score from above. The windows overlap by the widest any best
semi-global alignment can be (`reach` from the lowest score a read can have where the target is
as long as it: every pair a mismatch), the lanes give every window's local score, and the
scalar kernel scores a read semi-globally only in the windows whose local score reaches the best
semi-global score found so far, best local first: usually one window for a read that aligns.
The end column is the target's first best one in the last row, as the full kernel picks it, and
the alignment is traced over the `reach` columns ending there, as for local.

On 100 lambda reads (100 bases, both strands) against the 48.5 kbp lambda genome, one thread,
2026-12-01: 12.0-13.4 CPU s through stream.search, mostly in a lanes batch holding one target and
in tracebacks over 48.5 kbp; 0.8-1.0 s this way, start-up included (docs/benchmarks.md).
"""

from __future__ import annotations

import bisect
from typing import Iterable, Iterator

import numpy as np

from seqsift.alignment import reference as ref
from seqsift.alignment.database import Candidate, Database, DatabaseHit, scores
from seqsift.alignment.pairwise import align_codes, render
from seqsift.alignment.scoring import Scoring
from seqsift.alignment.stream import QUERY_RESIDUES, DatabaseParts, query_batches
from seqsift.runner import split

# A window is this many reaches long plus the overlap: the lanes score 1/4 more cells than the
# target has, and a read's best window is scanned cell by cell (5 reaches by its length).
WINDOW_REACHES = 4
MIN_WINDOW = 1 << 10  # the lanes kernel's call costs more than short windows save


MODES = ("local", "semi-global")  # what this module computes; global aligns every column of a target


def reach(length: int, score: int, scoring: Scoring) -> int:
    """The most target columns a local or semi-global alignment of a read of `length` residues
    scoring at least `score` can span: its aligned pairs (at most the read's length) score at
    most length * the best matrix score, and each target residue in a gap costs at least
    gap_extend."""
    best = int(scoring.matrix.max(initial=0))
    return length + max(0, length * best - score) // scoring.gap_extend


def lowest(length: int, scoring: Scoring) -> int:
    """A score a read of `length` residues reaches semi-globally in any target at least as long:
    the gap-free alignment at the target's start, every pair scored as the matrix's worst."""
    return length * int(scoring.matrix.min(initial=0))


def search(queries: Iterable[tuple[str, bytes]], parts: DatabaseParts, top: int, backend: str, threads: int,
           query_residues: int = QUERY_RESIDUES, mode: str = "local") -> Iterator[tuple[str, bytes, list[DatabaseHit]]]:
    """stream.search(queries, parts, top, mode, backend, threads, query_residues), mode one of
    MODES, computed as the module docstring says."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: reads.search computes {' and '.join(MODES)} only")
    scoring = parts.scoring
    semi = mode == "semi-global"
    for batch in query_batches(queries, query_residues):
        encoded = [scoring.encode(seq, f"query {name!r}") for name, seq in batch]
        reads = Database([name for name, _ in batch], [seq for _, seq in batch], scoring)  # checked above
        widest = max((reach(q.size, lowest(q.size, scoring) if semi else 1, scoring) for q in encoded), default=0)
        ranked: list[list[tuple[int, int]]] = [[] for _ in batch]  # a read's best (-score, target), in order
        # the score a target must beat to join a read's best (local: an empty alignment never does)
        worst = np.full(len(batch), np.iinfo(np.int64).min if semi else -1, np.int64)
        # and the windows holding it (local), or its end column (semi-global)
        found: dict[tuple[int, int], tuple[Candidate, np.ndarray | int]] = {}
        for first, db in parts:
            for k, target in enumerate(db.codes):
                windows = _windows(target.size, widest)
                per_window = np.array(split(lambda w: scores(target[w[0] : w[1]], reads, "local", backend), windows,
                                            threads)).reshape(len(windows), len(batch))
                best = per_window.max(axis=0)  # local: the scores; semi-global: bounds above them
                if semi:
                    ends = split(lambda r: _semi_global_best(encoded[r], target, windows, per_window[:, r], worst[r],
                                                             scoring) if best[r] > worst[r] else None,
                                 range(len(batch)), threads)
                    best = np.array([worst[r] if e is None else e[0] for r, e in enumerate(ends)], np.int64)
                for r in np.flatnonzero(best > worst).tolist():  # a tie goes to the earlier target
                    score, kept = int(best[r]), ranked[r]
                    bisect.insort(kept, (-score, first + k))
                    if len(kept) > top:
                        found.pop((r, kept.pop()[1]))
                    if len(kept) == top:
                        worst[r] = -kept[-1][0]
                    where = ends[r][1] if semi else np.flatnonzero(per_window[:, r] == score)
                    found[(r, first + k)] = (Candidate(score, first + k, db.names[k], target), where)
        align = _aligned_semi_global if semi else _aligned
        hits = split(lambda r: [align(encoded[r], *found[(r, g)], scoring, widest) for _, g in ranked[r]],
                     range(len(batch)), threads)
        for (name, seq), read_hits in zip(batch, hits):
            yield name, seq, read_hits


def _windows(n: int, widest: int) -> list[tuple[int, int]]:
    """[lo, hi) windows over n columns, each overlapping the next by `widest`."""
    step = max(WINDOW_REACHES * widest, MIN_WINDOW, 1)
    return [(lo, min(n, lo + step + widest)) for lo in range(0, max(n - widest, 1), step)]


def _aligned(read: np.ndarray, c: Candidate, held: np.ndarray, scoring: Scoring, widest: int) -> DatabaseHit:
    """The candidate's alignment as align_codes over the whole target gives it, traced over the
    columns that can hold it (module docstring); held: the windows whose best is the target's."""
    t = c.codes
    if c.score <= 0:
        lo = 0
        score, ops, qs, qe, ts, te = align_codes(read, t[:0], scoring, "local")
    else:
        width = reach(read.size, c.score, scoring)
        windows = _windows(t.size, widest)
        end = _first_best_end(read, t, c.score, scoring, [windows[w] for w in held.tolist()])
        lo = max(0, end - width)
        score, ops, qs, qe, ts, te = align_codes(read, t[lo:end], scoring, "local")
    if score != c.score:
        raise RuntimeError(f"internal error: window score {c.score} != reference {score} for target {c.target}")
    return DatabaseHit(c.target, c.name, score, render(read, t, scoring, score, ops, qs, qe, ts + lo, te + lo),
                       int(t.size))


def _semi_global_best(read: np.ndarray, t: np.ndarray, windows: list, local: np.ndarray, beat: int,
                      scoring: Scoring) -> tuple[int, int] | None:
    """(score, end column) of the read's best semi-global alignment in the target, the first end
    in column order on ties, as the full kernel picks it; None when it cannot score above `beat`.
    local: each window's local score, which bounds its semi-global one from above, so windows
    are scored best local first until the next cannot reach the best found (a window holding a
    tie is still scored: the first end may lie in it)."""
    matrix = np.ascontiguousarray(scoring.matrix, np.int32)
    go, ge = scoring.gap_open, scoring.gap_extend
    top, held = None, []  # the best score so far, and the windows scoring it
    for w in np.argsort(-local, kind="stable").tolist():
        if local[w] <= beat or (top is not None and local[w] < top):
            break
        lo, hi = windows[w]
        H, I = np.empty(hi - lo + 1, np.int32), np.empty(hi - lo + 1, np.int32)
        score = int(ref.score_only(read, t[lo:hi], matrix, go, ge, ref.SEMIGLOBAL, H, I))  # no directions: 2x faster
        if top is None or score > top:
            top, held = score, [w]
        elif score == top:
            held.append(w)
    if top is None or top <= beat:
        return None
    end = None
    for w in held:  # the first end column of the best score, in the windows that hold it
        lo, hi = windows[w]
        H, I = np.empty(hi - lo + 1, np.int32), np.empty(hi - lo + 1, np.int32)
        ref.first_rows(t[lo:hi], go, ge, ref.SEMIGLOBAL, H, I)
        best = np.zeros(3, np.int64)
        ref.advance(read, t[lo:hi], matrix, go, ge, ref.SEMIGLOBAL, 0, read.size, H, I, np.empty((0, 1), np.uint8),
                    np.empty((0, 2, 1), np.int32), 0, best)
        end = int(best[2]) + lo if end is None else min(end, int(best[2]) + lo)
    return top, end


def _aligned_semi_global(read: np.ndarray, c: Candidate, end: int, scoring: Scoring, widest: int) -> DatabaseHit:
    """The candidate's semi-global alignment as align_codes over the whole target gives it, traced
    over the columns that can hold it, which end at `end` (_semi_global_best's)."""
    t = c.codes
    lo = max(0, end - reach(read.size, c.score, scoring))
    score, ops, qs, qe, ts, te = align_codes(read, t[lo:end], scoring, "semi-global")
    if score != c.score or (read.size and te + lo != end):
        raise RuntimeError(f"internal error: window score {c.score} != reference {score} for target {c.target}")
    return DatabaseHit(c.target, c.name, score, render(read, t, scoring, score, ops, qs, qe, ts + lo, te + lo),
                       int(t.size))


def _first_best_end(read: np.ndarray, t: np.ndarray, score: int, scoring: Scoring, windows: list) -> int:
    """The target column (exclusive end) of the first cell in row order scoring `score`, the best
    over the whole target, given the windows whose best is `score`: every such cell lies in one
    of them (the windows overlap by more than any such alignment spans), and a window's cells
    score no more than the whole target's, so the first of the windows' first best cells is
    the target's."""
    matrix = np.ascontiguousarray(scoring.matrix, np.int32)
    no_dirs = np.empty((0, 1), np.uint8)
    no_checkpoints = np.empty((0, 2, 1), np.int32)
    first = None
    for lo, hi in windows:
        window = t[lo:hi]
        H, I = np.empty(window.size + 1, np.int32), np.empty(window.size + 1, np.int32)
        ref.first_rows(window, scoring.gap_open, scoring.gap_extend, ref.LOCAL, H, I)
        best = np.zeros(3, np.int64)
        ref.advance(read, window, matrix, scoring.gap_open, scoring.gap_extend, ref.LOCAL, 0, read.size, H, I, no_dirs,
                    no_checkpoints, 0, best)
        if best[0] == score and (first is None or (best[1], best[2] + lo) < first):
            first = (int(best[1]), int(best[2]) + lo)
    if first is None:
        raise RuntimeError(f"internal error: no window of the target scores {score}")
    return first[1]
