"""`seqsift align` over inputs of any size: queries and database both read in bounded batches.

Memory is one database part (its encoded sequences and lanes profiles) plus one batch of queries
with their best hits so far, whatever the file sizes (habit 7 of the design notes, minimap2's -K).
Each batch of queries meets every database part in turn; the best hits of each part are merged
(database.merge_best) and aligned once all parts are seen, so the report equals the one a single
in-memory database gives. A database of one part is read once and kept for every query batch;
a larger one is read again for each.
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

from seqsift.alignment.database import Candidate, Database, DatabaseHit, aligned, best_in_all, merge_best, unaligned
from seqsift.alignment.scoring import Scoring
from seqsift.io.reads import read_records
from seqsift.runner import split

DATABASE_RESIDUES = 16 << 20  # a database part: its lanes profiles take a few bytes a residue per alphabet letter
QUERY_RESIDUES = 1 << 20  # a batch of queries: the database is read once per batch when it has several parts


class DatabaseParts:
    """A database FASTA as (index of its first sequence, Database) parts of about `residues` each."""

    def __init__(self, path: str | os.PathLike, scoring: Scoring, residues: int = DATABASE_RESIDUES):
        self.path = path
        self.scoring = scoring
        self.residues = residues
        self.total_residues: int | None = None  # known once the database has been read through
        self._whole: Database | None = None

    def __iter__(self) -> Iterator[tuple[int, Database]]:
        if self._whole is not None:
            yield 0, self._whole
            return
        first = total = parts = 0
        db = None
        for records in read_records(self.path, self.scoring.code_table, self.residues):
            db = Database.of_records(records, self.scoring)
            yield first, db
            first, total, parts = first + len(db), total + db.residues(), parts + 1
        self.total_residues = total
        if parts == 1:
            self._whole = db
        elif parts == 0:
            self._whole = Database([], [], self.scoring)


def query_batches(queries: Iterable[tuple[str, bytes]], residues: int = QUERY_RESIDUES,
                  count: int | None = None) -> Iterator[list[tuple[str, bytes]]]:
    """(name, sequence) queries in lists of about `residues` (at least one query each), or of
    `count` queries when given."""
    batch, size = [], 0
    for query in queries:
        batch.append(query)
        size += len(query[1])
        if (size >= residues) if count is None else (len(batch) == count):
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def search(queries: Iterable[tuple[str, bytes]], parts: DatabaseParts, top: int, mode: str, backend: str,
           threads: int, query_residues: int = QUERY_RESIDUES,
           alignments: bool = True) -> Iterator[tuple[str, bytes, list[DatabaseHit]]]:
    """(name, sequence, its `top` best hits) per query, in query order; hits by score descending,
    then database order, with target numbers counted over the whole database. Queries run on
    `threads` threads. Without `alignments` (a report of scores, names and lengths) the hits carry
    none: the traceback is never run."""
    scoring = parts.scoring
    for batch in query_batches(queries, query_residues):
        encoded = [scoring.encode(seq, f"query {name!r}") for name, seq in batch]
        best: list[list[Candidate]] = [[] for _ in batch]
        for first, db in parts:
            found = best_in_all(encoded, db, top, mode, backend, first, threads)
            best = [merge_best(kept, new, top) for kept, new in zip(best, found)]
        if alignments:
            hits = split(lambda k: aligned(encoded[k], best[k], scoring, mode), range(len(batch)), threads)
        else:
            hits = [unaligned(kept) for kept in best]
        for (name, seq), query_hits in zip(batch, hits):
            yield name, seq, query_hits
