"""The approximate section of bench_fmindex.py: `seqsift search --errors E` against
`bwa aln -n E -o 0 -N` (every hit within E mismatches) and `bwa aln -n E -N` (with gaps), same
reads, one thread, whole process; and the completeness of each, hits found / the places
`seqsift check`'s independent oracle (fmindex/check_approx.py) finds.

Reads: 100 bp cut from the genome, either strand, each with a uniform 0..E differences
(substitutions for the Hamming set; substitutions, insertions and deletions for the edit sets).
bwa's hits: X0 + X1 of `bwa samse -n 1000000` (best and suboptimal hits found), capped per read at
the oracle's count; bwa's time is `bwa aln` alone (samse formats, it does not search).

    python benchmarks/bench_fmindex.py --approximate-only --reads 20000
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from seqsift.fmindex.check_approx import _Pieces, true_places
from seqsift.fmindex.reference import READ_CODE, load_reference
from seqsift.fmindex.simulate import simulate_chunks
from seqsift.io.reads import read_reads

LETTERS = np.frombuffer(b"ACGT", np.uint8)
SETS = (("hamming", 2), ("edit", 2), ("edit", 4))  # (distance, E)


def mutated(genome: Path, n: int, errors: int, distance: str, seed: int):
    """Chunks of (header, read): exact 100 bp reads, then 0..errors differences each."""
    rng = np.random.default_rng(seed)
    for chunk in simulate_chunks(genome, n, 100, found_fraction=1.0, error_rate=0.0, seed=seed):
        out = []
        for header, seq in chunk:
            read = list(seq)
            k = int(rng.integers(0, errors + 1))
            for _ in range(k):
                i = int(rng.integers(0, len(read)))
                kind = 0 if distance == "hamming" else int(rng.integers(0, 3))
                if kind == 0:
                    read[i] = int(LETTERS[(int(READ_CODE[read[i]]) + int(rng.integers(1, 4))) % 4])
                elif kind == 1:
                    read.insert(i, int(LETTERS[int(rng.integers(0, 4))]))
                else:
                    del read[i]
            out.append((header.split()[0] + f" differences={k}", bytes(read)))
        yield out


def oracle_counts(genome: Path, reads: Path, errors: int, distance: str) -> np.ndarray:
    reference = load_reference(genome)
    pieces = _Pieces(reference.text, np.concatenate(([0], np.cumsum(reference.text < 2))))
    counts = []
    for batch in read_reads(reads, code_table=READ_CODE):
        for i in range(len(batch)):
            counts.append(len(true_places(reference, pieces, batch.codes[batch.bounds[i] : batch.bounds[i + 1]],
                                          errors, distance)))
    return np.array(counts, np.int64)


def tsv_counts(path: Path) -> np.ndarray:
    return np.array([int(line.split(b"\t")[1]) for line in path.read_bytes().splitlines()], np.int64)


def bwa_counts(sam: Path) -> np.ndarray:
    """X0 + X1 of each read's primary record (0 when unmapped)."""
    counts = []
    for line in sam.read_bytes().splitlines():
        if line.startswith(b"@"):
            continue
        fields = line.split(b"\t")
        if int(fields[1]) & 0x900:
            continue
        tags = dict(re.findall(rb"\t(X[01]):i:(\d+)", line))
        counts.append(0 if int(fields[1]) & 4 else int(tags.get(b"X0", 0)) + int(tags.get(b"X1", 0)))
    return np.array(counts, np.int64)


def section(seqsift: list[str], median_run, write_fastq, data: Path, genome: Path, idx: dict, n: int,
            runs: int) -> list[dict]:
    """One row per (set, tool): reads/s, the median wall time, and completeness."""
    rows = []
    for distance, errors in SETS:
        reads = data / f"reads_approx_{distance}_{errors}_{n}.fq"
        if not reads.exists():
            write_fastq(reads, mutated(genome, n, errors, distance, seed=11 + errors))
        label = f"{distance} E={errors}"
        want = oracle_counts(genome, reads, errors, distance)
        out = data / f"approx_{distance}_{errors}.tsv"
        argv = seqsift + ["search", idx["ssx"], str(reads), "--errors", str(errors), "--distance", distance,
                          "-t", "1", "-o", str(out)]
        seconds, memory = median_run(argv, runs, None, (reads,))
        got = tsv_counts(out)
        rows.append(dict(reads=label, tool="seqsift search", seconds=seconds, reads_per_s=n / seconds,
                         memory_mb=memory / 1024, completeness=float(np.minimum(got, want).sum() / max(1, want.sum())),
                         exact_counts=bool((got == want).all())))
        peers = [("bwa aln -n {e} -o 0 -N", ["-o", "0"])] if distance == "hamming" else []
        peers.append(("bwa aln -n {e} -N", []))
        for name, extra in peers:
            sai = data / f"approx_{distance}_{errors}.sai"
            argv = ["bwa", "aln", "-n", str(errors), *extra, "-N", "-t", "1", idx["bwa"], str(reads)]
            seconds, memory = median_run(argv, runs, sai, (reads,))
            sam = data / f"approx_{distance}_{errors}.sam"
            with open(sam, "wb") as f:
                subprocess.run(["bwa", "samse", "-n", "1000000", idx["bwa"], str(sai), str(reads)], stdout=f,
                               stderr=subprocess.DEVNULL, check=True)
            found = bwa_counts(sam)
            rows.append(dict(reads=label, tool=name.format(e=errors), seconds=seconds, reads_per_s=n / seconds,
                             memory_mb=memory / 1024,
                             completeness=float(np.minimum(found, want).sum() / max(1, want.sum()))))
    return rows


def markdown(rows: list[dict]) -> list[str]:
    lines = ["| reads (100 bp, 0-E differences) | tool | reads/s | wall s | peak MB | completeness |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['reads']} | {r['tool']} | {r['reads_per_s']:,.0f} | {r['seconds']:.2f} | "
                     f"{r['memory_mb']:.0f} | {100 * r['completeness']:.2f}% |")
    speed = {(r["reads"], r["tool"].split(" -")[0]): r["reads_per_s"] for r in rows}
    for (label, tool), rate in speed.items():
        if tool == "seqsift search":
            for r in rows:
                if r["reads"] == label and r["tool"].startswith("bwa"):
                    lines.append(f"\n{label}: seqsift {rate / r['reads_per_s']:.1f}x `{r['tool']}`")
    return lines


def phases(index_path: str, reads: Path, errors: int, distance: str, runs: int) -> list[dict]:
    """In process, one thread: seconds of each phase of the approximate search (best of runs),
    under the exact search's optimizations switched off one at a time for the piece lookups."""
    import time

    from seqsift.fmindex.api import FMIndex
    from seqsift.fmindex.approx import ApproxSearcher
    from seqsift.fmindex.query import SearchOptions
    from seqsift.fmindex.seeds import seed_candidates
    from seqsift.fmindex.verify import verify

    index = FMIndex.load(index_path)
    batches = list(read_reads(reads, 1 << 16, READ_CODE))
    n = sum(len(b) for b in batches)
    variants = {"default": SearchOptions(), "no k-mer table": SearchOptions(kmer_table=False),
                "shortcut none": SearchOptions(shortcut="none"), "interleave 1": SearchOptions(width=1)}
    rows = []
    for variant, options in variants.items():
        approx = ApproxSearcher(index.searcher(options), index.reference.starts, index.reference.lengths)
        best = {}
        for _ in range(runs):
            took = {"seeds": 0.0, "verify": 0.0, "whole search": 0.0}
            candidates = 0
            for b in batches:
                t0 = time.perf_counter()
                c = seed_candidates(approx.searcher, approx.record_starts, b.codes, b.bounds, errors + 1)
                t1 = time.perf_counter()
                verify(approx.reach, b.codes, b.bounds, c, errors, distance)
                t2 = time.perf_counter()
                approx.hits(b.codes, b.bounds, errors, distance, 100)
                t3 = time.perf_counter()
                took["seeds"] += t1 - t0
                took["verify"] += t2 - t1
                took["whole search"] += t3 - t2
                candidates += c.read.size
            best = {k: min(v, best.get(k, v)) for k, v in took.items()}
        rows.append(dict(reads=f"{distance} E={errors}", variant=variant, candidates_per_read=candidates / n,
                         reads_per_s=n / best["whole search"], **{f"{k} s": v for k, v in best.items()}))
    return rows


def phases_markdown(rows: list[dict]) -> list[str]:
    lines = ["| reads | piece lookups | candidates/read | seeds s | verify s | whole search s | reads/s |",
             "|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['reads']} | {r['variant']} | {r['candidates_per_read']:.2f} | {r['seeds s']:.3f} | "
              f"{r['verify s']:.3f} | {r['whole search s']:.3f} | {r['reads_per_s']:,.0f} |" for r in rows]
    return lines
