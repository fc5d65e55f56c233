"""Read mapping: `seqsift map` against bwa mem, minimap2 -ax sr and bowtie2, whole processes,
one thread each, on reads simulated by wgsim from the Klebsiella genome and from a larger
synthetic reference.

Reads: wgsim -N PAIRS -1 150 -2 150 -e 0.005 -r 0.002 -R 0.2 -S 11 on
../shared/data/klebsiella_HS11286.fa.gz (0.5% sequencing errors; 0.2% differences from the
reference, a fifth of them indels of geometric length; fragments 500 +- 50), and the same on the
synthetic reference (--synthetic-mbp million bases, made by the benchmark from a fixed seed and
kept in bench-data/map, not in the repository: random bases in 4 records with planted diverged
repeats, see synthetic_genome). Each read's name holds its fragment's ends, so placement is
checked: a primary record is correct when it lies on the right record within 20 bases of the
fragment end it came from.

Per tool and mode (single-end: the first reads; paired: both files): fraction mapped, placed
correctly, wrong among MAPQ >= 20 and >= 1 (of those records), properly paired (flag 0x2),
reads per second of wall time (median of rounds, each tool once a round) and per CPU second
(user + sys of the process). Indexes are built before and not timed.

    python benchmarks/bench_map.py [--pairs 100000] [--runs 3] [--genomes klebsiella synthetic]
                                   [--synthetic-mbp 100] [--render bench-data/bench_map.json]

Peers: apt-get install bwa minimap2 bowtie2 samtools (wgsim comes with samtools).
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pysam

from benchlib import bench_args, cpu_name, tool_version

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data" / "map"
GENOME = ROOT.parent / "shared" / "data" / "klebsiella_HS11286.fa.gz"
SEQSIFT = [sys.executable, "-m", "seqsift"]
GENOMES = {"klebsiella": "Klebsiella HS11286 (5.7 Mbp)", "synthetic": "synthetic {mbp} Mbp with diverged repeats"}


def synthetic_genome(path: Path, mbp: int, seed: int = 20261201) -> None:
    """A reference of mbp million random bases in 4 records, with diverged repeats planted as a
    genome has them (transposon families, segmental duplications): families of 300 to 6,000
    bases, each copied 2 to 30 times, every copy diverged from the family by one of 0%, 1%, 3%,
    8% or 15% substitutions and a tenth as many 1-base deletions, until copies cover a tenth of
    the reference. The same file from the same seed, so every tool and run sees one reference."""
    rng = np.random.default_rng(seed)
    size = mbp * 1_000_000
    codes = rng.integers(0, 4, size, dtype=np.uint8)
    planted = 0
    while planted < size // 10:
        family = rng.integers(0, 4, int(rng.integers(300, 6001)), dtype=np.uint8)
        for _ in range(int(rng.integers(2, 31))):
            divergence = float(rng.choice([0.0, 0.01, 0.03, 0.08, 0.15]))
            copy = family.copy()
            changed = rng.random(copy.size) < divergence
            copy[changed] = (copy[changed] + rng.integers(1, 4, int(changed.sum()), dtype=np.uint8)) % 4
            copy = copy[rng.random(copy.size) >= divergence / 10]
            at = int(rng.integers(0, size - copy.size))
            codes[at : at + copy.size] = copy
            planted += copy.size
    letters = np.frombuffer(b"ACGT", np.uint8)[codes]
    part = size // 4
    with open(path, "wb") as f:
        for k in range(4):
            f.write(f">synth{k + 1}\n".encode())
            f.write(letters[k * part : (k + 1) * part if k < 3 else size].tobytes() + b"\n")


def prepare(pairs: int, genome: str, source: Path, mbp: int) -> dict:
    """The genome, every tool's index and the reads, made once (kept in bench-data/map/GENOME)."""
    where = DATA / genome
    where.mkdir(parents=True, exist_ok=True)
    fa = where / "ref.fa"
    if not fa.exists():
        if genome == "synthetic":
            synthetic_genome(fa, mbp)
        else:
            fa.write_bytes(gzip.decompress(source.read_bytes()))
    steps = [(where / "ref.ssx", [*SEQSIFT, "index", str(fa), "-o", str(where / "ref.ssx"), "-q"]),
             (where / "ref.fa.bwt", ["bwa", "index", str(fa)]),
             (where / "ref.mmi", ["minimap2", "-x", "sr", "-d", str(where / "ref.mmi"), str(fa)]),
             (where / "ref.1.bt2", ["bowtie2-build", "-q", "--threads", "2", str(fa), str(where / "ref")])]
    for made, argv in steps:
        if not made.exists():
            subprocess.run(argv, check=True, capture_output=True)
    r1, r2 = where / f"r1_{pairs}.fq", where / f"r2_{pairs}.fq"
    if not r2.exists():
        subprocess.run(["wgsim", "-N", str(pairs), "-1", "150", "-2", "150", "-e", "0.005", "-r", "0.002",
                        "-R", "0.2", "-S", "11", str(fa), str(r1), str(r2)], check=True, capture_output=True)
    return {"fa": fa, "r1": r1, "r2": r2, "where": where}


def commands(files: dict, paired: bool) -> dict[str, list[str]]:
    reads = [str(files["r1"])] + ([str(files["r2"])] if paired else [])
    where = files["where"]
    # bowtie2 calls a pair proper up to -X 500 by default: wgsim's 500 +- 50 fragments need more
    bowtie_reads = ["-X", "1000", "-1", reads[0], "-2", reads[1]] if paired else ["-U", reads[0]]
    return {
        "seqsift map": [*SEQSIFT, "map", str(where / "ref.ssx"), *reads, "-t", "1", "-q"],
        "bwa mem": ["bwa", "mem", "-t", "1", str(files["fa"]), *reads],
        "minimap2 -ax sr": ["minimap2", "-ax", "sr", "-t", "1", str(where / "ref.mmi"), *reads],
        "bowtie2": ["bowtie2", "-p", "1", "-x", str(where / "ref"), *bowtie_reads],
    }


def run(argv: list[str], out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole process writing SAM to out."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out, "wb") as f:
        subprocess.run(argv, stdout=f, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def accuracy(sam_path: Path) -> dict:
    reads = mapped = correct = proper = 0
    wrong = {20: 0, 1: 0}
    confident = {20: 0, 1: 0}
    with pysam.AlignmentFile(str(sam_path)) as sam:
        for r in sam:
            if r.is_secondary or r.is_supplementary:
                continue
            reads += 1
            if r.is_unmapped:
                continue
            mapped += 1
            proper += r.is_proper_pair
            chrom, left, right, *_ = r.query_name.removesuffix("/1").removesuffix("/2").rsplit("_", 5)
            ok = r.reference_name == chrom and (abs(r.reference_start + 1 - int(left)) <= 20
                                                or abs(r.reference_end - int(right)) <= 20)
            correct += ok
            for q in (20, 1):
                if r.mapping_quality >= q:
                    confident[q] += 1
                    wrong[q] += not ok
    return {"reads": reads, "mapped": mapped / reads, "correct": correct / reads, "proper": proper / reads,
            "wrong_q20": wrong[20], "mapq20": confident[20], "wrong_q1": wrong[1], "mapq1": confident[1]}


def measure(pairs: int, runs: int, genomes: list[str], source: Path, mbp: int) -> dict:
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{cpu_name()}, {os.cpu_count()} cores",
              "python": platform.python_version(), "pairs": pairs, "runs": runs,
              "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True).stdout.strip(),
              "versions": {"bwa": "bwa " + _bwa_version(), "minimap2": tool_version(["minimap2", "--version"]),
                           "bowtie2": tool_version(["bowtie2", "--version"]).split()[-1]},
              "genomes": {}}
    for genome in genomes:
        files = prepare(pairs, genome, source, mbp)
        modes = result["genomes"][GENOMES[genome].format(mbp=mbp)] = {}
        for paired in (False, True):
            mode = "paired" if paired else "single"
            tools = commands(files, paired)
            walls: dict[str, list[float]] = {t: [] for t in tools}
            cpus: dict[str, list[float]] = {t: [] for t in tools}
            for _ in range(runs):
                for tool, argv in tools.items():
                    wall, cpu = run(argv, files["where"] / f"{tool.split()[0]}_{mode}.sam")
                    walls[tool].append(wall)
                    cpus[tool].append(cpu)
            rows = {}
            for tool in tools:
                acc = accuracy(files["where"] / f"{tool.split()[0]}_{mode}.sam")
                wall, cpu = statistics.median(walls[tool]), statistics.median(cpus[tool])
                rows[tool] = {**acc, "wall_s": wall, "cpu_s": cpu, "reads_per_s": acc["reads"] / wall,
                              "reads_per_cpu_s": acc["reads"] / cpu}
            modes[mode] = rows
    return result


def _bwa_version() -> str:
    text = subprocess.run(["bwa"], capture_output=True, text=True).stderr
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Version")), "?")


def _named(tool: str, version: str) -> str:
    """'minimap2 2.24-r1122': a version with its tool's name, once ('bwa 0.7.17' stays as it is)."""
    return version if version.startswith(tool) else f"{tool} {version}"


def markdown(result: dict) -> str:
    lines = [f"{result['date']}, commit {result['commit']}, {result['machine']}; {result['pairs']:,} wgsim pairs of "
             f"150 bp; whole processes, one thread, medians of {result['runs']} rounds; "
             f"{', '.join(_named(tool, version) for tool, version in result['versions'].items())}", ""]
    for genome, modes in result["genomes"].items():
        for mode, rows in modes.items():
            lines += [f"{genome}, {mode}-end:", "",
                      "| tool | mapped | placed correctly | wrong at MAPQ>=20 | wrong at MAPQ>=1 | properly paired "
                      "| reads/s (wall) | reads/s per CPU s | vs minimap2 per CPU s |",
                      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
            base = rows["minimap2 -ax sr"]["reads_per_cpu_s"]
            for tool, r in rows.items():
                lines.append(f"| {tool} | {r['mapped']:.2%} | {r['correct']:.2%} | {r['wrong_q20']} of "
                             f"{r['mapq20']:,} | {r['wrong_q1']} of {r['mapq1']:,} | {r['proper']:.2%} "
                             f"| {r['reads_per_s']:,.0f} | {r['reads_per_cpu_s']:,.0f} "
                             f"| {_floor(r['reads_per_cpu_s'] / base)}x |")
            lines.append("")
    return "\n".join(lines)


def _floor(ratio: float) -> str:
    """A ratio to two decimals, rounded down (a goal is never reported met by rounding)."""
    return f"{int(ratio * 100) / 100:.2f}"


def main() -> None:
    def options(p):
        p.add_argument("--pairs", type=int, default=100_000)
        p.add_argument("--genome", type=Path, default=GENOME, help="the Klebsiella FASTA (default %(default)s)")
        p.add_argument("--genomes", nargs="+", choices=list(GENOMES), default=list(GENOMES),
                       help="references to map to (default: both)")
        p.add_argument("--synthetic-mbp", type=int, default=100, help="size of the synthetic reference in million "
                       "bases (default %(default)s)")

    args = bench_args(__doc__, ROOT / "bench-data" / "bench_map.json", markdown, options)
    if args is None:
        return
    missing = [t for t in ("bwa", "minimap2", "bowtie2", "bowtie2-build", "wgsim") if shutil.which(t) is None]
    if missing:
        sys.exit(f"missing peers: {', '.join(missing)} (apt-get install bwa minimap2 bowtie2 samtools)")
    result = measure(args.pairs, args.runs, args.genomes, args.genome, args.synthetic_mbp)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))


if __name__ == "__main__":
    main()
