"""Genome scale (issue 29): `seqsift index` and `seqsift search` on synthetic references of
0.25 to 2.3 Gbp against `bwa index` and `bwa aln`, same inputs, same run.

A reference is random bases (seeded) cut into records of at most 250 Mbp (a human chromosome),
with diverged repeats planted: 5% of each record is copies of earlier stretches of 300 bp to
10 kbp, each copy with 2-15% of its bases substituted. Reads: 1,000,000 of 100 bp, 90% cut
from the reference (half reverse-complemented), 10% random.

Measured, each command one process (/usr/bin/time: wall, user+sys CPU, peak resident memory):
- `seqsift index` with its default memory limit, and with each --memory given (sorting in
  pieces), and `bwa index` (skipped above --bwa-index-up-to Gbp: ~7 minutes at 0.25 Gbp here);
- `seqsift search --threads 1` counting only (--max-hits 0) and locating (TSV, 100 hits a read),
  and `bwa aln -t 1` + `bwa samse` (which locates), reads/s over the whole process, start-up
  included; the median of --runs runs.

    python benchmarks/bench_scale.py --size 0.25 --memory 1G
    python benchmarks/bench_scale.py --size 1 --no-search
    python benchmarks/bench_scale.py --render bench-data/scale/bench_scale.json
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import seqsift
from benchlib import bench_args, cpu_name

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data" / "scale"
SEQSIFT = [sys.executable, "-m", "seqsift"]
LETTERS = np.frombuffer(b"ACGT", np.uint8)
RECORD = 250_000_000  # bases: the longest record (human chromosome 1 is 248.9 Mbp)
LINE = 80
REPEAT_FRACTION = 0.05
READ_LENGTH = 100


def _record(rng: np.random.Generator, length: int) -> np.ndarray:
    """Random bases (codes 0-3) with diverged copies of earlier stretches planted."""
    seq = rng.integers(0, 4, length, dtype=np.uint8)
    planted, goal = 0, int(length * REPEAT_FRACTION)
    while planted < goal and length > 20_000:
        size = int(rng.integers(300, 10_000))
        src = int(rng.integers(0, length - size))
        dst = int(rng.integers(0, length - size))
        copy = seq[src : src + size].copy()
        changed = rng.random(size) < rng.uniform(0.02, 0.15)
        copy[changed] = (copy[changed] + rng.integers(1, 4, int(changed.sum()), dtype=np.uint8)) % 4
        seq[dst : dst + size] = copy
        planted += size
    return seq


def _reads(rng: np.random.Generator, seq: np.ndarray, count: int) -> list[bytes]:
    starts = rng.integers(0, seq.size - READ_LENGTH, count)
    reads = seq[starts[:, None] + np.arange(READ_LENGTH)]
    flip = rng.random(count) < 0.5
    reads[flip] = 3 - reads[flip, ::-1]
    return [LETTERS[r].tobytes() for r in reads]


def make_inputs(gbp: float, n_reads: int, seed: int = 29) -> tuple[Path, Path, int]:
    """(reference FASTA, reads FASTQ, bases) under bench-data/scale/, made once per size and seed."""
    bases = int(gbp * 1e9)
    fasta, fastq = DATA / f"synthetic_{gbp:g}g_{seed}.fa", DATA / f"synthetic_{gbp:g}g_{seed}_{n_reads}.fq"
    if fasta.exists() and fastq.exists():
        return fasta, fastq, bases
    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    lengths = [RECORD] * (bases // RECORD) + ([bases % RECORD] if bases % RECORD else [])
    per_record = [n_reads * 9 // 10 * length // bases for length in lengths]
    per_record[0] += n_reads * 9 // 10 - sum(per_record)
    reads: list[bytes] = []
    with open(str(fasta) + ".tmp", "wb") as out:
        for number, length in enumerate(lengths):
            seq = _record(rng, length)
            reads += _reads(rng, seq, per_record[number])
            out.write(f">chr{number + 1} synthetic, seed {seed}\n".encode())
            letters = LETTERS[seq]
            del seq
            for at in range(0, length, LINE * 100_000):
                block = letters[at : at + LINE * 100_000]
                rows = block[: block.size // LINE * LINE].reshape(-1, LINE)
                out.write(np.hstack((rows, np.full((rows.shape[0], 1), ord("\n"), np.uint8))).tobytes())
                if block.size % LINE:
                    out.write(block[block.size // LINE * LINE :].tobytes() + b"\n")
    os.replace(str(fasta) + ".tmp", fasta)
    reads += [LETTERS[r].tobytes() for r in rng.integers(0, 4, (n_reads - len(reads), READ_LENGTH), dtype=np.uint8)]
    order = rng.permutation(len(reads))
    quality = b"I" * READ_LENGTH
    with open(str(fastq) + ".tmp", "wb") as out:
        out.write(b"".join(b"@r%d\n%s\n+\n%s\n" % (i, reads[j], quality) for i, j in enumerate(order.tolist())))
    os.replace(str(fastq) + ".tmp", fastq)
    return fasta, fastq, bases


def run_timed(argv: list[str], stdout=None) -> dict:
    """Wall and CPU seconds and peak resident bytes of one command, via GNU time."""
    report = DATA / f"time.{os.getpid()}.txt"  # benchmarks of several sizes may run at once
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", str(report), *argv],
                       stdout=stdout or subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv[:5]))} failed ({r.returncode}): {r.stderr.decode()[-600:]}")
    user, system, peak = report.read_text().split()[-3:]
    return {"wall_s": round(wall, 2), "cpu_s": round(float(user) + float(system), 2), "peak_bytes": int(peak) * 1024}


def median_run(argv: list[str], runs: int, stdout_path: Path | None = None) -> dict:
    results = []
    for _ in range(runs):
        if stdout_path:
            with open(stdout_path, "wb") as out:
                results.append(run_timed(argv, out))
        else:
            results.append(run_timed(argv))
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


def bench_size(gbp: float, args) -> dict:
    fasta, fastq, bases = make_inputs(gbp, args.reads)
    result = {"gbp": gbp, "bases": bases, "reads": args.reads, "builds": {}, "search": {}}
    index, default = DATA / f"synthetic_{gbp:g}g.ssx", DATA / f"synthetic_{gbp:g}g.default.ssx"
    limits = [None] + list(args.memory)
    for memory in limits:
        argv = [*SEQSIFT, "index", str(fasta), "-o", str(index), "--quiet"]
        if memory:
            argv += ["--memory", memory]
        name = f"seqsift index --memory {memory}" if memory else "seqsift index"
        print(f"{gbp:g} Gbp: {name}", file=sys.stderr, flush=True)
        try:
            result["builds"][name] = run_timed(argv)
        except RuntimeError as exc:  # e.g. a --memory below what the index needs: said, and the rest measured
            result["builds"][name] = {"error": str(exc)[-200:]}
            continue
        result["builds"][name]["index_bytes"] = index.stat().st_size
        if memory:
            result["builds"][name]["same_as_default"] = _same(index, default)
        else:
            os.replace(index, default)
    index = default
    if args.bwa and gbp <= args.bwa_index_up_to:
        print(f"{gbp:g} Gbp: bwa index", file=sys.stderr, flush=True)
        prefix = DATA / f"synthetic_{gbp:g}g_bwa"
        result["builds"]["bwa index"] = run_timed(["bwa", "index", "-p", str(prefix), str(fasta)])
        if args.search:
            sai = DATA / f"synthetic_{gbp:g}g.sai"
            aln = median_run(["bwa", "aln", "-t", "1", "-n", "0", "-o", "0", "-l", "100", "-k", "0", str(prefix), str(fastq)],
                             args.runs, sai)
            samse = median_run(["bwa", "samse", "-n", "100", str(prefix), str(sai), str(fastq)], args.runs,
                               DATA / f"synthetic_{gbp:g}g.bwa.sam")
            result["search"]["bwa aln + samse"] = {key: aln[key] + samse[key] if key != "peak_bytes"
                                                   else max(aln[key], samse[key]) for key in aln}
    if args.search:
        for name, extra in (("seqsift search, count only", ["--max-hits", "0"]), ("seqsift search, locate", [])):
            print(f"{gbp:g} Gbp: {name}", file=sys.stderr, flush=True)
            result["search"][name] = median_run([*SEQSIFT, "search", str(index), str(fastq), "--threads", "1",
                                                 *extra], args.runs, DATA / f"synthetic_{gbp:g}g.tsv")
    for entry in result["search"].values():
        entry["reads_per_s"] = round(args.reads / entry["wall_s"])
    return result


def _same(a: Path, b: Path) -> bool:
    """The two index files hold the same arrays (the header's provenance aside)."""
    from seqsift.fmindex.ssx import load_index

    x, y = load_index(a).arrays, load_index(b).arrays
    return all(np.array_equal(getattr(x, f), getattr(y, f)) for f in ("blocks", "C", "samples", "kmer_table", "packed", "gaps"))


def markdown(result: dict) -> str:
    lines = [f"Machine: {result['machine']}; seqsift {result['seqsift']} (commit {result['commit']}); "
             f"{result['bwa']}; {result['date']}.", "",
             "| reference | command | wall s | CPU s | peak GB | bytes a base | index GB | same index |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for size in result["sizes"]:
        for name, b in size["builds"].items():
            if "error" in b:
                lines.append(f"| {size['gbp']:g} Gbp | `{name}` | failed: {b['error']} |||||")
                continue
            same = {True: "yes", False: "**no**"}.get(b.get("same_as_default"), "")
            index = f"{b['index_bytes'] / 1e9:.2f}" if "index_bytes" in b else ""
            lines.append(f"| {size['gbp']:g} Gbp | `{name}` | {b['wall_s']:.0f} | {b['cpu_s']:.0f} | "
                         f"{b['peak_bytes'] / 1e9:.2f} | {b['peak_bytes'] / size['bases']:.2f} | {index} | {same} |")
    lines += ["", "| reference | search (1 thread, whole process, all reads) | wall s | CPU s | reads/s | peak GB |",
              "|---|---|---:|---:|---:|---:|"]
    for size in result["sizes"]:
        for name, s in size["search"].items():
            lines.append(f"| {size['gbp']:g} Gbp | {name} | {s['wall_s']:.2f} | {s['cpu_s']:.2f} | "
                         f"{s['reads_per_s']:,} | {s['peak_bytes'] / 1e9:.2f} |")
    return "\n".join(lines)


def main() -> None:
    def options(parser):
        parser.add_argument("--size", type=float, action="append", help="reference size in Gbp (repeatable; "
                            "default 0.25)")
        parser.add_argument("--reads", type=int, default=1_000_000)
        parser.add_argument("--memory", action="append", default=[], help="also build with this --memory "
                            "(repeatable), checking the index is the same as the default's")
        parser.add_argument("--no-bwa", dest="bwa", action="store_false", help="skip bwa")
        parser.add_argument("--bwa-index-up-to", type=float, default=0.25, help="Gbp; bwa index only up to here")
        parser.add_argument("--no-search", dest="search", action="store_false", help="builds only")

    args = bench_args(__doc__, DATA / "bench_scale.json", markdown, options)
    if args is None:
        return
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    result = {"date": time.strftime("%Y-%m-%d"), "commit": commit, "seqsift": seqsift.__version__,
              "machine": f"{cpu_name()}, {os.cpu_count()} cores, {platform.system()}", "bwa": _bwa_version(),
              "sizes": [bench_size(gbp, args) for gbp in (args.size or [0.25])]}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))


def _bwa_version() -> str:
    text = subprocess.run(["bwa"], capture_output=True, text=True).stderr
    return next((line.replace("Version:", "bwa").strip() for line in text.splitlines() if line.startswith("Version")),
                "bwa not installed")


if __name__ == "__main__":
    main()
