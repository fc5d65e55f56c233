"""Two checkouts of seqsift's FM-index search, in rounds: is a kernel change faster, and by how
much, on a machine whose speed drifts by 20-30% within an hour? Each round runs every set once
per checkout, alternating, each in a fresh process, so drift hits both alike; the per-round
ratios are what to read.

    git worktree add /tmp/old <commit>
    python benchmarks/compare_fmindex.py /tmp/old/src src --rounds 5 \\
        --set exact bench-data/fm/klebsiella.ssx bench-data/fm/reads_exact_1000000.fq

In process: FMIndex.load(index).searcher().hits(codes, bounds, 100) over the first 6 batches
of the reads, parsed beforehand, median of 3 passes (bench_fmindex.kernel_rate's measure).
Whole process: `seqsift search INDEX READS -t 1 -o FILE` (with --count also `--max-hits 0`), wall
and CPU seconds (user + system); the two outputs must be identical. With --probe MIB every round
also measures the machine's cost of a random read (memory_probe.py): at gigabase scale the
search is such reads, and their cost moves between rounds on a shared virtual machine.

Two indexes of one reference (another sampling, say) compare the same way: one checkout given
twice, and INDEX as OLD.ssx,NEW.ssx.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IN_PROCESS = """
import json, statistics, sys, time
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import read_reads
searcher = FMIndex.load(sys.argv[1]).searcher()
batches = [(b.codes, b.bounds) for _, b in zip(range(6), read_reads(sys.argv[2], code_table=READ_CODE))]
searcher.hits(*batches[0], 100)
times = []
for _ in range(3):
    start = time.perf_counter()
    for codes, bounds in batches:
        searcher.hits(codes, bounds, 100)
    times.append(time.perf_counter() - start)
print(json.dumps(sum(b.size - 1 for _, b in batches) / statistics.median(times)))
"""


def run(src: str, argv: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=src)
    return subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, check=True)


def whole(src: str, argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one `python -m seqsift ...` process."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    run(src, ["-m", "seqsift", *argv])
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="the src directory of the old checkout")
    parser.add_argument("new", help="the src directory of the new checkout")
    parser.add_argument("--set", nargs=3, action="append", metavar=("NAME", "INDEX", "READS"), required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", action="store_true", help="also time counting only (--max-hits 0)")
    parser.add_argument("--probe", type=int, metavar="MIB", help="each round, the cost of a random read in MIB")
    parser.add_argument("--json", type=Path, help="write every time here")
    args = parser.parse_args()
    trees = {"old": args.old, "new": args.new}
    kinds = ("rate", "wall", "cpu") + (("count wall", "count cpu") if args.count else ())
    times = {(name, tree, kind): [] for name, _, _ in args.set for tree in trees for kind in kinds}
    probes = []
    with tempfile.TemporaryDirectory() as tmp:
        indexes = {name: dict(zip(trees, index.split(",") if "," in index else [index, index]))
                   for name, index, _ in args.set}
        for src in trees.values():  # their bytecode (PYTHONDONTWRITEBYTECODE would recompile edited modules every run)
            subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL)
        for name, _, reads in args.set:  # compile both checkouts' kernels before timing
            for tree, src in trees.items():
                run(src, ["-c", IN_PROCESS, indexes[name][tree], reads])
        for _ in range(args.rounds):
            if args.probe:
                from memory_probe import random_read_ns

                probes.append(random_read_ns(args.probe))
            for name, _, reads in args.set:
                for tree, src in trees.items():
                    index = indexes[name][tree]
                    times[(name, tree, "rate")].append(json.loads(run(src, ["-c", IN_PROCESS, index, reads]).stdout))
                    wall, cpu = whole(src, ["search", index, reads, "-t", "1", "-o", f"{tmp}/{tree}.tsv"])
                    times[(name, tree, "wall")].append(wall)
                    times[(name, tree, "cpu")].append(cpu)
                    if args.count:
                        wall, cpu = whole(src, ["search", index, reads, "-t", "1", "--max-hits", "0",
                                                "-o", f"{tmp}/{tree}.count.tsv"])
                        times[(name, tree, "count wall")].append(wall)
                        times[(name, tree, "count cpu")].append(cpu)
                for out in ("tsv", "count.tsv") if args.count else ("tsv",):
                    if Path(f"{tmp}/old.{out}").read_bytes() != Path(f"{tmp}/new.{out}").read_bytes():
                        raise SystemExit(f"{name}: the two checkouts wrote different results ({out})")
    print("| set | in process, old | in process, new | new/old per round | whole process, old | whole process, new "
          "| old/new per round |\n| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for name, _, _ in args.set:
        rate = [times[(name, t, "rate")] for t in trees]
        print(f"| {name} | {statistics.median(rate[0]) / 1e3:,.0f} k reads/s | {statistics.median(rate[1]) / 1e3:,.0f} k | "
              + ", ".join(f"{n / o:.2f}" for o, n in zip(*rate)) + " |" + _whole(times, name, trees, "") + " |")
        if args.count:
            print(f"| {name}, counting only | | | |" + _whole(times, name, trees, "count ") + " |")
    if probes:
        print(f"\nA random read (memory_probe.py, {args.probe} MiB), per round: "
              + ", ".join(f"{ns:.1f}" for ns in probes) + " ns")
    if args.json:
        args.json.write_text(json.dumps({**{" / ".join(k): v for k, v in times.items()}, "probe ns": probes}, indent=1))


def _whole(times: dict, name: str, trees: dict, kind: str) -> str:
    """Whole-process cells: median wall (CPU) seconds of each checkout, old/new CPU per round."""
    wall = [times[(name, t, kind + "wall")] for t in trees]
    cpu = [times[(name, t, kind + "cpu")] for t in trees]
    return (f" {statistics.median(wall[0]):.2f} s ({statistics.median(cpu[0]):.2f}) | "
            f"{statistics.median(wall[1]):.2f} s ({statistics.median(cpu[1]):.2f}) | "
            + ", ".join(f"{o / n:.2f}" for o, n in zip(*cpu)))


if __name__ == "__main__":
    main()
