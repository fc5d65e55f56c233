"""Database search: every query against every database sequence, the best `top` per query with
their alignments. Local scores come from the 16-bit lanes kernel (rescored in 32 bits where a lane
saturates); the other modes, and every reported alignment, from the reference kernel.

A database larger than memory is searched in parts (`best_in` on each, `merge_best` across them,
then `aligned` once for the hits that stay): the result is the one a single part would give,
since the order, score descending then database order, is total."""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass

import numpy as np

from seqsift.alignment import lanes
from seqsift.alignment import reference as ref
from seqsift.alignment.pairwise import Alignment, align_codes, mode_code, render
from seqsift.alignment.scoring import Scoring
from seqsift.backend import check_threads, resolve_unmeasured
from seqsift.errors import UsageError
from seqsift.io.reads import Records
from seqsift.runner import Work, ordered, split


@dataclass(frozen=True)
class DatabaseHit:
    target: int  # index in the database, in file order
    name: str
    score: int
    alignment: Alignment | None  # None where a report needs scores only (search/search_database, alignments=False)
    target_length: int


@dataclass(frozen=True)
class Candidate:
    """A database sequence among a query's best so far, kept with its residues so it can be aligned
    once every part of the database has been seen."""

    score: int
    target: int  # index in the whole database, in file order
    name: str
    codes: np.ndarray

    def order(self) -> tuple[int, int]:
        return -self.score, self.target


class Database:
    """Sequences encoded once for a scoring scheme, sorted by length into lanes batches whose
    profiles are built on first use and kept for every later query."""

    def __init__(self, names: list[str], sequences: list[bytes | str], scoring: Scoring):
        if len(names) != len(sequences):
            raise UsageError(f"{len(names)} names but {len(sequences)} sequences: give one name per sequence")
        # one call for all (20,000 proteins, 2026-12-01: 0.19 s one by one, 0.04 s at once)
        self._arrange(list(names), scoring.encode_all(sequences, lambda k: f"database sequence {names[k]!r}"), scoring)

    @classmethod
    def of_records(cls, records: Records, scoring: Scoring) -> Database:
        """The records read_records gave, coded through scoring.code_table as they were read."""
        db = cls.__new__(cls)
        where = lambda k: f"database sequence {records.names[k]!r}"  # noqa: E731
        db._arrange(records.names, scoring.split_codes(records.codes, records.letters, records.bounds, where), scoring)
        return db

    def _arrange(self, names: list[str], codes: list[np.ndarray], scoring: Scoring) -> None:
        self.names = names
        self.codes = codes
        self.scoring = scoring
        order = np.argsort([c.size for c in self.codes], kind="stable")
        self.batches = [order[k : k + lanes.LANES] for k in range(0, order.size, lanes.LANES)]
        self._profiles: dict[tuple, tuple[np.ndarray, int]] = {}
        self._gpu = None

    def __len__(self) -> int:
        return len(self.codes)

    def residues(self) -> int:
        return int(sum(c.size for c in self.codes))

    def gpu(self):
        """The database resident on the GPU (built on first use)."""
        if self._gpu is None:
            from seqsift.alignment._gpu import GpuAligner

            self._gpu = GpuAligner(self.codes, self.scoring.matrix, self.scoring.gap_open, self.scoring.gap_extend)
        return self._gpu

    def profile(self, batch, bits: int) -> tuple[np.ndarray, np.ndarray]:
        """The lanes profile of a batch (its number, or ("redo", indices)), built once and kept."""
        key = (batch, bits)
        if key not in self._profiles:  # a benign race: two threads may build the same profile once each
            members = self.batches[batch] if isinstance(batch, int) else batch[1]
            self._profiles[key] = lanes.batch_profile(self.scoring.matrix, [self.codes[k] for k in members], bits)
        return self._profiles[key]


def score_pair(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: int) -> int:
    """Score only, 32-bit reference kernel, linear memory."""
    if q.size == 0 or t.size == 0:
        return align_codes(q, t, scoring, {v: k for k, v in ref.MODES.items()}[mode])[0]
    H, I = np.empty(t.size + 1, np.int32), np.empty(t.size + 1, np.int32)
    return int(ref.score_only(q, t, np.ascontiguousarray(scoring.matrix, np.int32), scoring.gap_open,
                              scoring.gap_extend, mode, H, I))


def scores(query: np.ndarray, db: Database, mode: str = "local", backend: str = "cpu") -> np.ndarray:
    """The score of query against every database sequence (database order), one thread; local
    scores run on the GPU when backend is 'cuda'."""
    code = mode_code(mode)
    out = np.empty(len(db), np.int64)
    if backend == "cuda" and code == ref.LOCAL:
        out, too_long = db.gpu().scores(query)
        for k in too_long.tolist():
            out[k] = score_pair(query, db.codes[k], db.scoring, code)
        return out
    if code != ref.LOCAL or query.size == 0:
        for k, t in enumerate(db.codes):
            out[k] = score_pair(query, t, db.scoring, code)
        return out
    scratch: dict = {}
    go, ge = db.scoring.gap_open, db.scoring.gap_extend
    matrix = db.scoring.matrix
    eight_bits = lanes.fits_8_bits(matrix, go, ge)  # else start at 16 bits
    redo = []
    for b, members in enumerate(db.batches):
        if not eight_bits:
            redo += members.tolist()
            continue
        profile, chunk_columns = db.profile(b, 8)
        best = lanes.run_batch(query, profile, chunk_columns, go, ge, 8, scratch)[: len(members)].astype(np.int64)
        saturated = lanes.saturated(best, 8)
        out[members[~saturated]] = best[~saturated]
        redo += members[saturated].tolist()
    _redo_at_16_bits(query, db, redo, out, eight_bits, scratch)
    return out


def scores_all(queries: list[np.ndarray], db: Database, mode: str = "local", backend: str = "cpu",
               threads: int = 1) -> list[np.ndarray]:
    """scores() of each query, on `threads` threads. Local scores on the CPU at 8 bits go batch
    by batch (SWIPE's order): a database batch's profile is written into one buffer, reused batch
    after batch, and every query is scored against it before the next. The profiles of the whole
    database (24 bytes a residue at 8 bits, padding aside: 279 MB for 20,000 proteins) are never
    held at once, nor first written into fresh memory, and each batch's stays in cache while the
    queries pass over it. Threads take runs of consecutive batches; the rest goes query by query."""
    matrix = db.scoring.matrix
    go, ge = db.scoring.gap_open, db.scoring.gap_extend
    eight_bits = lanes.fits_8_bits(matrix, go, ge)
    if backend == "cuda" or mode_code(mode) != ref.LOCAL or not eight_bits or not queries \
            or min(q.size for q in queries) == 0:
        return split(lambda query: scores(query, db, mode, backend), queries, threads)
    out = [np.empty(len(db), np.int64) for _ in queries]

    def run(batches: np.ndarray) -> list[list[int]]:
        """Scores of every query against these batches into out; per query, the sequences whose
        8-bit lanes saturated."""
        scratches: list[dict] = [{} for _ in queries]  # run_batch sizes its rows to the query
        redo: list[list[int]] = [[] for _ in queries]
        longest = [db.codes[k] for k in db.batches[batches[-1]]]  # batches go shortest first
        buffer = np.empty(lanes.profile_size(matrix, longest), lanes.WIDTHS[8][0])
        for b in batches.tolist():
            members = db.batches[b]
            profile, chunk_columns = lanes.batch_profile(matrix, [db.codes[k] for k in members], 8, buffer)
            for query, found, again, scratch in zip(queries, out, redo, scratches):
                best = lanes.run_batch(query, profile, chunk_columns, go, ge, 8, scratch)[: len(members)]
                saturated = lanes.saturated(best, 8)
                found[members[~saturated]] = best[~saturated]
                again += members[saturated].tolist()
        return redo

    runs = [b for b in np.array_split(np.arange(len(db.batches)), max(1, min(threads, len(db.batches)))) if b.size]
    redo: list[list[int]] = [[] for _ in queries]
    for part in split(run, runs, threads):
        for again, more in zip(redo, part):
            again += more
    for query, found, again in zip(queries, out, redo):
        _redo_at_16_bits(query, db, again, found, True, {})
    return out


def _redo_at_16_bits(query: np.ndarray, db: Database, redo: list[int], out: np.ndarray, eight_bits: bool,
                     scratch: dict) -> None:
    """The local scores of database sequences `redo` into out, in 16-bit lanes (their profiles
    kept in db when no 8-bit pass came first), a lane that saturates there by the 32-bit kernel."""
    matrix = db.scoring.matrix
    redo = sorted(redo, key=lambda k: db.codes[k].size)  # regrouped by length at 16 bits
    for first in range(0, len(redo), lanes.LANES):
        members = redo[first : first + lanes.LANES]
        profile, chunk_columns = db.profile(("redo", tuple(members)), 16) if not eight_bits else \
            lanes.batch_profile(matrix, [db.codes[k] for k in members], 16)
        best = lanes.run_batch(query, profile, chunk_columns, db.scoring.gap_open, db.scoring.gap_extend, 16, scratch)
        for lane, k in enumerate(members):
            out[k] = score_pair(query, db.codes[k], db.scoring, ref.LOCAL) if lanes.saturated(best[lane], 16) \
                else best[lane]


def search_database(queries: list[bytes | str], db: Database, top: int = 10, mode: str = "local",
                    threads: int | None = None, backend: str = "auto",
                    alignments: bool = True) -> list[list[DatabaseHit]]:
    """For each query, its `top` best database sequences (score descending, then database order),
    each with its alignment (None without `alignments`: no traceback runs). Queries run on
    `threads` threads (the kernels release the GIL); backend 'auto' | 'cpu' | 'cuda' chooses where
    the scores are computed."""
    threads = check_threads(threads)
    backend = resolve_unmeasured(backend)
    encoded = [db.scoring.encode(q, f"query {i + 1}") for i, q in enumerate(queries)]

    def one(query: np.ndarray) -> list[DatabaseHit]:
        best = best_in(query, db, top, mode, backend)
        return aligned(query, best, db.scoring, mode) if alignments else unaligned(best)

    return list(ordered(Work(lambda _, query: one(query), lambda: None), encoded, min(threads, os.cpu_count() or 1)))


def best_in(query: np.ndarray, db: Database, top: int, mode: str, backend: str, first: int = 0) -> list[Candidate]:
    """The query's `top` best sequences of `db` (score descending, then database order), as
    Candidates numbered from `first`, the index of db's first sequence in the whole database."""
    all_scores = scores(query, db, mode, backend)
    best = np.lexsort((np.arange(all_scores.size), -all_scores))[:top]
    return [Candidate(int(all_scores[k]), first + k, db.names[k], db.codes[k]) for k in best.tolist()]


def best_in_all(queries: list[np.ndarray], db: Database, top: int, mode: str, backend: str, first: int = 0,
                threads: int = 1) -> list[list[Candidate]]:
    """best_in() of each query, the scores from scores_all."""
    found = []
    for all_scores in scores_all(queries, db, mode, backend, threads):
        best = np.lexsort((np.arange(all_scores.size), -all_scores))[:top]
        found.append([Candidate(int(all_scores[k]), first + k, db.names[k], db.codes[k]) for k in best.tolist()])
    return found


def merge_best(kept: list[Candidate], found: list[Candidate], top: int) -> list[Candidate]:
    """The `top` best of two lists each already in order (score descending, then database order)."""
    return list(heapq.merge(kept, found, key=Candidate.order))[:top]


def unaligned(best: list[Candidate]) -> list[DatabaseHit]:
    """The candidates as hits without their alignments, for a report of scores and lengths."""
    return [DatabaseHit(c.target, c.name, c.score, None, int(c.codes.size)) for c in best]


def aligned(query: np.ndarray, best: list[Candidate], scoring: Scoring, mode: str) -> list[DatabaseHit]:
    """Each candidate's alignment by the reference kernel, which must find the fast kernel's score."""
    hits = []
    for c in best:
        score, ops, qs, qe, ts, te = align_codes(query, c.codes, scoring, mode)
        if score != c.score:
            raise RuntimeError(f"internal error: fast score {c.score} != reference {score} for target {c.target}")
        hits.append(DatabaseHit(c.target, c.name, score, render(query, c.codes, scoring, score, ops, qs, qe, ts, te),
                                int(c.codes.size)))
    return hits
