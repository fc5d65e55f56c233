"""Database search on Dask: each part of the queries reported by a worker's AlignReport
(run_queries, the one worker function), for `seqsift align --dask` and
seqsift.distributed.search_database alike, through the same call as on this machine's threads
(runner.ordered decides where it runs).

The database reaches each worker once: its FASTA read from its path where every worker sees the
same file, else sent (distributed.share_files); a Database given in memory is broadcast.
"""

from __future__ import annotations

import os

from seqsift.alignment import QUERIES_PER_PARTITION
from seqsift.alignment import scoring as scorings
from seqsift.alignment.database import Database, DatabaseHit
from seqsift.alignment.report import DEFAULT_EVALUE, AlignReport
from seqsift.backend import check_backend, check_threads, resolve_unmeasured
from seqsift.runner import Work, ordered


def load(paths: tuple[str, ...], scoring: scorings.Scoring, top: int, mode: str, fmt: str, columns: list[str],
         backend: str, evalue: float = DEFAULT_EVALUE, database: str | None = None) -> AlignReport:
    """A worker's AlignReport over the database FASTA at paths[0] (plain/gz/bz2/xz), read whole."""
    from seqsift.io.reads import read_records

    whole = next(read_records(paths[0], scoring.code_table), None)
    db = Database.of_records(whole, scoring) if whole is not None else Database([], [], scoring)
    return from_database(db, scoring, top, mode, fmt, columns, backend, evalue, database)


def from_database(db: Database, scoring: scorings.Scoring, top: int, mode: str, fmt: str, columns: list[str],
                  backend: str, evalue: float = DEFAULT_EVALUE, database: str | None = None) -> AlignReport:
    """An AlignReport over a Database given in memory (here, or sent to a worker)."""
    return AlignReport(db, scoring, top, mode, fmt, columns, resolve_unmeasured(backend), evalue, database)


def run_queries(report: AlignReport, queries: list[tuple[str, bytes]]):
    """The engine's chunk function: one part of the queries, reported."""
    return report(queries)


def work(scoring: scorings.Scoring, top: int, mode: str, fmt: str, columns: list[str], backend: str,
         db: Database | None = None, path: str | os.PathLike | None = None, evalue: float = DEFAULT_EVALUE,
         database: str | None = None) -> Work:
    """Each part of the queries searched: here with db, on workers from the FASTA at path (or,
    without one, from db itself, broadcast). The backend's name is checked here. database: the
    name outfmt 7's '# Database:' lines give (the name the user typed, not the path sent)."""
    check_backend(backend)
    args = (scoring, top, mode, fmt, columns, backend, evalue, database)

    def share(client):
        # seqsift.distributed (logging, tempfile, dataclasses, hashlib: ~25 ms) only for a client:
        # a search on this machine's threads never imports it
        from seqsift import distributed

        if path is not None:
            return distributed.share_files(client, load, [os.fspath(path)], args)
        return distributed.share_object(client, db, from_database, args)

    return Work(run_queries, lambda: from_database(db, *args), share)


def align_queries(job: Work, parts, threads: int = 1, client=None, progress=None):
    """job's result of each part (a list of (name, sequence) queries), in order, on threads or a client."""
    return ordered(job, parts, threads, client, progress)


# -- from Python: search_database on a client (seqsift.distributed names it) ---------------------------
def search_database(client, queries, db: Database, *, top: int = 10, mode: str = "local", threads: int | None = None,
                    backend: str = "auto", partition: int = QUERIES_PER_PARTITION) -> list[list[DatabaseHit]]:
    """seqsift.alignment.search_database on the cluster: each query's `top` best database hits,
    partition queries a task; db (a Database) is sent to every worker once. Each task searches
    its queries one after another (threads, if given, is checked and otherwise left to Dask's
    worker threads)."""
    if threads is not None:
        check_threads(threads)
    queries = [(str(k + 1), q) for k, q in enumerate(queries)]
    job = work(db.scoring, top, mode, "hits", [], backend, db=db)
    parts = (queries[k : k + partition] for k in range(0, len(queries), partition))
    return [hits for part in align_queries(job, parts, client=client) for hits in part]
