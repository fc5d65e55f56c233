"""The FM-index on Dask: the search of every batch (read_search.run_batch) made on each worker,
for `seqsift search --dask` and seqsift.distributed.search alike, through the same engine call as
on this machine's threads (read_search.search_reads; runner.ordered decides where it runs).

The index reaches each worker once: memory-mapped from its path where every worker sees the same
file, else sent (distributed.share_files); an FMIndex given in memory is broadcast as it is.
"""

from __future__ import annotations

import os

from seqsift.backend import check_backend, check_threads, resolve_unmeasured
from seqsift.fmindex.api import FMIndex, Hit
from seqsift.fmindex.query import SearchOptions
from seqsift.fmindex.read_search import DEFAULT_BATCH, ReadSearch, run_batch, search_reads
from seqsift.runner import Work

DEFAULT_PARTITION = DEFAULT_BATCH  # reads per Dask task


def load(paths: tuple[str, ...], options: SearchOptions, backend: str, max_hits: int, fmt: str, errors: int = 0,
         distance: str = "edit", best_only: bool = False) -> ReadSearch:
    """A worker's ReadSearch over the index file (memory-mapped) at paths[0]."""
    return ReadSearch(FMIndex.load(paths[0]), options, resolve_unmeasured(backend), max_hits, fmt, errors, distance,
                      best_only)


def from_index(index: FMIndex, options: SearchOptions, backend: str, max_hits: int, fmt: str, errors: int = 0,
               distance: str = "edit", best_only: bool = False) -> ReadSearch:
    """A worker's ReadSearch over an FMIndex sent in memory."""
    return ReadSearch(index, options, resolve_unmeasured(backend), max_hits, fmt, errors, distance, best_only)


def work(index: FMIndex, options: SearchOptions, backend: str, max_hits: int, fmt: str,
         path: str | os.PathLike | None = None, errors: int = 0, distance: str = "edit",
         best_only: bool = False) -> Work:
    """The search of each batch (approximate when errors > 0): here with index, on workers from
    the .ssx at path (or, without one, from the index itself, broadcast). The backend's name is
    checked here; where it runs, by whoever runs it."""
    check_backend(backend)
    args = (options, backend, max_hits, fmt, errors, distance, best_only)

    def share(client):
        # seqsift.distributed only for a client, as in alignment/cluster.py
        from seqsift import distributed

        if path is not None:
            return distributed.share_files(client, load, [os.fspath(path)], args)
        return distributed.share_object(client, index, from_index, args)

    return Work(run_batch, lambda: from_index(index, *args), share)


# -- from Python: FMIndex.locate on a client (seqsift.distributed names it) -----------------------------
def search(client, index, reads, *, max_hits: int = 100, threads: int | None = None, backend: str = "auto",
           partition: int = DEFAULT_PARTITION) -> list[tuple[int, list[Hit]]]:
    """FMIndex.locate on the cluster: (count, first max_hits hits) of each read. index: an .ssx
    path (shared by path or sent) or an FMIndex; reads: a list of sequences or a FASTQ/FASTA path,
    read here in batches of partition reads. A task is one worker thread: threads, if given, is
    checked and otherwise left to Dask."""
    if threads is not None:
        check_threads(threads)
    path = None
    if not isinstance(index, FMIndex):
        path, index = index, FMIndex.load(index)  # a bad index fails here, as locally
    job = work(index, SearchOptions(), backend, max_hits, "hits", path)
    return [hit for hits, _ in search_reads(job, reads, partition, client=client) for hit in hits]
