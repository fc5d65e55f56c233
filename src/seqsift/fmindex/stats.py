"""`seqsift stats`: what the index holds and how searches behave in it: base
content, repeats, search steps and locate walks. Instrumented, so slower than a search: it is for
understanding the index, not for timing it.
"""

from __future__ import annotations

import argparse

import numpy as np

from seqsift.fmindex.api import FMIndex
from seqsift.errors import InputError
from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import read_reads
from seqsift.precompiled import Kernel

GROUPS = (1, 2, 10, 100, 1000, 10000)  # repeat-count buckets: 1, 2-9, 10-99, ...
# _stats_cpu.py's kernels, called precompiled (precompiled.py); the k-mer table's rows are 64-bit in a wide index
_CPU = "seqsift.fmindex._stats_cpu"
_LOCATE_STEPS = Kernel(_CPU, "locate_steps", "uint64[:,:] int64[:] int64 int64 int64[:]")
# blocks, C, n, k-mer table, k, codes, bounds -> first_single, emptied, steps
_TRACE = Kernel(_CPU, "trace", *(f"uint64[:,:] int64[:] int64 {rows}[:,:] int64 uint8[:] int64[:] int64[:] int64[:] "
                                 "int64[:]" for rows in ("uint32", "uint64")))


def _single_base_blocks(blocks: np.ndarray, n: int) -> int:
    """Rank blocks whose 64 rows all hold one base: the GEM paper's 'accelerator' case."""
    full = blocks[: n // 64, 2:6]
    return int(np.any(full == np.uint64(0xFFFFFFFFFFFFFFFF), axis=1).sum())


def _groups(sizes: np.ndarray) -> list[tuple[str, int, int]]:
    """(bucket, k-mers, occurrences) by repeat count."""
    rows = []
    bounds = GROUPS + (None,)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        chosen = sizes >= lo if hi is None else (sizes >= lo) & (sizes < hi)
        label = f"{lo}+" if hi is None else (f"{lo}" if hi == lo + 1 else f"{lo}-{hi - 1}")
        rows.append((label, int(chosen.sum()), int(sizes[chosen].sum())))
    return rows


def _repeat_marks(a) -> str:
    if not a.repeat_sample:
        return ""
    return f", and 1 in {a.repeat_sample} inside repeats (windows of {a.repeat_window} bases occurring more than once)"


def report(index: FMIndex, reads_path=None) -> str:
    a = index.arrays
    r = index.reference
    lines = [f"index: {len(r.names)} records, {int(r.lengths.sum()):,} bases, {a.n:,} BWT rows "
             f"({len(a.gaps)} runs of N or boundaries)",
             f"rank blocks: {a.blocks.shape[0]:,} of 64 rows ({a.blocks.nbytes / 2**20:.1f} MiB); "
             f"{_single_base_blocks(a.blocks, a.n):,} hold a single base",
             f"SA samples: 1 in {a.sa_sample} text positions" + _repeat_marks(a) + f", {a.samples.size:,} stored"]
    hist = np.zeros(66, np.int64)
    _LOCATE_STEPS(a.blocks, a.C, a.n, min(a.sa_sample, 65), hist)  # 65 steps: past the histogram
    if a.sa_sample <= 65 and hist[65]:
        raise InputError(index.source, f"the index is inconsistent: {int(hist[65]):,} rows take more than "
                         f"sa_sample - 1 = {a.sa_sample - 1} LF steps to reach a mark")
    mean = float((hist * np.arange(hist.size)).sum() / max(1, hist.sum()))
    lines.append(f"locate: LF steps per row mean {mean:.2f}, max {int(np.flatnonzero(hist).max())} "
                 f"(bound {a.sa_sample - 1})")
    sizes = (a.kmer_table[:, 1].astype(np.int64) - a.kmer_table[:, 0])
    lines.append(f"k-mer table: k={a.kmer}, {sizes.size:,} k-mers, {int((sizes > 0).sum()):,} present "
                 f"({a.kmer_table.nbytes / 2**20:.1f} MiB); repeats of the present ones:")
    for label, kmers, occurrences in _groups(sizes[sizes > 0]):
        lines.append(f"  occurring {label:>9} times: {kmers:>10,} k-mers, {occurrences:>12,} occurrences")
    if reads_path is not None:
        lines += _search_report(index, reads_path)
    return "\n".join(lines) + "\n"


def _search_report(index: FMIndex, reads_path) -> list[str]:
    a = index.arrays
    singles, empties, all_steps = [], [], []
    for batch in read_reads(reads_path):
        codes = READ_CODE[batch.seq]
        nq = 2 * len(batch)
        first_single, emptied, steps = (np.empty(nq, np.int64) for _ in range(3))
        _TRACE(a.blocks, a.C, a.n, a.kmer_table, a.kmer, codes, batch.bounds, first_single, emptied, steps)
        singles.append(first_single)
        empties.append(emptied)
        all_steps.append(steps)
    first_single, emptied, steps = (np.concatenate(x) for x in (singles, empties, all_steps))
    nq = first_single.size
    reached = first_single >= 0
    lines = [f"searches: {nq // 2:,} reads, {nq:,} searches (both strands), {float(steps.mean()) if nq else 0:.1f} "
             f"rank steps each on average after the k-mer lookup",
             f"  reached hi-lo=1: {int(reached.sum()):,} ({100 * reached.mean() if nq else 0:.1f}%), at step "
             + _quartiles(first_single[reached]),
             f"  emptied early: {int((emptied >= 0).sum()):,} ({100 * (emptied >= 0).mean() if nq else 0:.1f}%), "
             "at step " + _quartiles(emptied[emptied >= 0])]
    return lines


def _quartiles(values: np.ndarray) -> str:
    if not values.size:
        return "-"
    q = np.percentile(values, [0, 25, 50, 75, 100]).astype(int)
    return f"min {q[0]}, quartiles {q[1]}/{q[2]}/{q[3]}, max {q[4]} (0 = at the k-mer lookup)"


def add_parser(sub, parent) -> None:
    p = sub.add_parser("stats", parents=[parent],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("index", help="an .ssx file")
    p.add_argument("reads", nargs="?", help="reads to trace (FASTQ/FASTA)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from seqsift.io.writers import open_output
    from seqsift.options import EXIT_OK

    text = report(FMIndex.load(args.index), args.reads)
    with open_output(args.output) as out:
        out.write(text.encode())
    return EXIT_OK
