"""Two in-process measures of the FM-index search that give the same answer run after run on this
noisy machine, where whole-process times move by 20-30% (docs/benchmarks.md):

    python benchmarks/search_phases.py steps INDEX READS
        the search (k-mer codes, lookup, backward steps) of every read cut to its last L bases,
        for L = k, k + 4, k + 8 and whole: what the lookups cost, and what the first steps cost;
    python benchmarks/search_phases.py locate READS INDEX [INDEX ...]
        the rows the default search leaves to locate in the first 16 batches (found with the first
        index), located with each index in turn, in one process: indexes of one reference built
        with other samplings share their BWT, so their rows are the same.

Medians of 5 (steps) or 7 (locate) passes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from seqsift.fmindex import _cpu
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import read_reads


def batches(reads: str, limit: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for batch in read_reads(reads, code_table=READ_CODE):
        out.append((batch.codes.copy(), batch.bounds.copy()))
        if limit and len(out) == limit:
            break
    return out


def median_time(passes: int, work) -> float:
    work()
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def last_bases(codes: np.ndarray, bounds: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Every read cut to its last `length` bases (reads are at least that long)."""
    taken = ((bounds[1:] - length)[:, None] + np.arange(length)).ravel()
    return np.ascontiguousarray(codes[taken]), np.arange(0, (bounds.size) * length, length, dtype=np.int64)


def steps(index_path: str, reads: str) -> None:
    index = FMIndex.load(index_path)
    searcher, k = index.searcher(), index.arrays.kmer
    whole = batches(reads)
    for length in (k, k + 4, k + 8, None):
        cut = whole if length is None else [last_bases(c, b, length) for c, b in whole]
        seconds = median_time(5, lambda: [searcher.intervals(c, b) for c, b in cut])
        print(f"reads cut to {length or 'whole'} bases: {seconds:.3f} s")


def locate(reads: str, index_paths: list[str]) -> None:
    indexes = [FMIndex.load(p) for p in index_paths]
    searcher = indexes[0].searcher()
    rows = []
    for codes, bounds in batches(reads, 16):
        lo, hi, left = searcher.intervals(codes, bounds)
        walk = np.where(left > 0, hi - lo, 0)  # the rows of the searches the verify shortcut stopped
        first = np.concatenate(([0], np.cumsum(walk)[:-1]))
        rows.append(np.repeat(lo - first, walk) + np.arange(int(walk.sum())))
    total = sum(r.size for r in rows)

    def run(a):
        for r in rows:
            _cpu.locate(a.blocks, a.C, a.samples, a.sa_sample, r, 32, np.empty(r.size, np.int64))

    times = {p: [] for p in index_paths}
    for index in indexes:
        run(index.arrays)
    for _ in range(7):  # alternating, so drift hits every index alike
        for p, index in zip(index_paths, indexes):
            start = time.perf_counter()
            run(index.arrays)
            times[p].append(time.perf_counter() - start)
    for p in index_paths:
        print(f"{p}: {statistics.median(times[p]) * 1e9 / total:.1f} ns a row ({total:,} rows)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="measure", required=True)
    p = sub.add_parser("steps")
    p.add_argument("index")
    p.add_argument("reads")
    p = sub.add_parser("locate")
    p.add_argument("reads")
    p.add_argument("indexes", nargs="+")
    args = parser.parse_args()
    if args.measure == "steps":
        steps(args.index, args.reads)
    else:
        locate(args.reads, args.indexes)


if __name__ == "__main__":
    main()
