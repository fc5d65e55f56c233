"""Short reads against long targets, local alignment (`seqsift align --outfmt sam`): the results of
stream.search, the same hits and alignments, without its costs in this shape of input.

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


def reach(length: int, score: int, scoring: Scoring) -> int:
    """The most target columns a local alignment of a read of `length` residues scoring at least
    `score` (>= 1) can span: its aligned pairs (at most the read's length) score at most
    length * the best matrix score, and each target residue in a gap costs at least gap_extend."""
    best = int(scoring.matrix.max(initial=0))
    return length + max(0, length * best - score) // scoring.gap_extend


def search(queries: Iterable[tuple[str, bytes]], parts: DatabaseParts, top: int, backend: str, threads: int,
           query_residues: int = QUERY_RESIDUES) -> Iterator[tuple[str, bytes, list[DatabaseHit]]]:
    """stream.search(queries, parts, top, "local", backend, threads, query_residues), computed as
    the module docstring says."""
    scoring = parts.scoring
    for batch in query_batches(queries, query_residues):
        encoded = [scoring.encode(seq, f"query {name!r}") for name, seq in batch]
        reads = Database([name for name, _ in batch], [seq for _, seq in batch], scoring)  # checked above
        widest = max((reach(q.size, 1, scoring) for q in encoded), default=0)
        ranked: list[list[tuple[int, int]]] = [[] for _ in batch]  # a read's best (-score, target), in order
        worst = np.full(len(batch), -1, np.int64)  # the score a target must beat to join a read's best
        found: dict[tuple[int, int], tuple[Candidate, np.ndarray]] = {}  # and the windows holding it
        for first, db in parts:
            for k, target in enumerate(db.codes):
                windows = _windows(target.size, widest)
                per_window = np.array(split(lambda w: scores(target[w[0] : w[1]], reads, "local", backend), windows,
                                            threads)).reshape(len(windows), len(batch))
                best = per_window.max(axis=0)
                for r in np.flatnonzero(best > worst).tolist():  # a tie goes to the earlier target
                    score, kept = int(best[r]), ranked[r]
                    bisect.insort(kept, (-score, first + k))
                    if len(kept) > top:
                        found.pop((r, kept.pop()[1]))
                    if len(kept) == top:
                        worst[r] = -kept[-1][0]
                    held = np.flatnonzero(per_window[:, r] == score)
                    found[(r, first + k)] = (Candidate(score, first + k, db.names[k], target), held)
        hits = split(lambda r: [_aligned(encoded[r], *found[(r, g)], scoring, widest) for _, g in ranked[r]],
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
