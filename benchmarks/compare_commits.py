"""Two checkouts of seqsift, every engine, whole processes, in rounds: did a change (a refactor, say)
keep each command's speed and output? Each round runs every set once per checkout, alternating which
goes first, each in a fresh process, so this machine's drift hits both alike; the per-round ratios
are what to read. The two outputs of a set must be identical.

    git worktree add /tmp/old <commit>
    python benchmarks/compare_commits.py /tmp/old/src src --data ../shared/data --rounds 5

Sets (built once under bench-data/compare/ from the files in --data, with a fixed seed):
- find: `find -t 1 -c GATTACA` on the Klebsiella genome's bases repeated to 256 MiB, one line;
- find-tree: `find -t 1 -c` of an ELF magic over 2,000 files copied from /usr/bin and /usr/lib;
- scan: `scan -t 1 -r --no-summary` with 2,000 hex signatures (1% cut from the tree) over that tree;
- search: `search -t 1` of 200,000 simulated 100 bp reads (1% errors) against the Klebsiella index;
- align: `align -t 1` of 5 proteins against the 20,000 of proteins_db.fa.gz.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path("bench-data/compare")


def seqsift(src: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=src)
    run = subprocess.run([sys.executable, "-m", "seqsift", *argv], env=env, capture_output=True)
    if check and run.returncode not in (0, 1):
        raise SystemExit(f"seqsift {' '.join(argv)} (PYTHONPATH={src}) exited {run.returncode}:\n"
                         f"{run.stderr.decode(errors='replace')}")
    return run


def build_inputs(data: Path, src: str) -> dict[str, list[str]]:
    """The command line of every set; the inputs are made once."""
    OUT.mkdir(parents=True, exist_ok=True)
    genome = data / "klebsiella_HS11286.fa.gz"
    text = OUT / "dna_256M.txt"
    if not text.exists():
        bases = b"".join(line.strip() for line in gzip.open(genome) if not line.startswith(b">"))
        text.write_bytes((bases * (256 * 2**20 // len(bases) + 1))[: 256 * 2**20])
    tree = OUT / "tree"
    if not tree.exists():
        files = sorted(p for d in ("/usr/bin", "/usr/lib") for p in Path(d).rglob("*")
                       if p.is_file() and not p.is_symlink() and 4096 <= p.stat().st_size <= 4 << 20)
        random.Random(1).shuffle(files)
        tmp = OUT / "tree.part"
        shutil.rmtree(tmp, ignore_errors=True)
        for k, p in enumerate(files[:2000]):
            folder = tmp / f"{k // 100:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, folder / f"{k:04d}")
        tmp.rename(tree)
    listed = sorted(str(p) for p in tree.rglob("*") if p.is_file())
    sigs = OUT / "sigs.ndb"
    if not sigs.exists():
        rng = random.Random(2)
        lines = []
        for k in range(2000):
            n = rng.randint(16, 32)
            if k % 100 == 0:
                blob = Path(rng.choice(listed)).read_bytes()
                at = rng.randrange(0, len(blob) - n)
                body = blob[at : at + n]
            else:
                body = bytes(rng.randrange(256) for _ in range(n))
            lines.append(f"Sig.{k}:0:*:{body.hex()}")
        sigs.write_text("\n".join(lines) + "\n")
    index = OUT / "klebsiella.ssx"
    if not index.exists():
        seqsift(src, "index", str(genome), "-o", str(index), "-q")
    reads = OUT / "reads_200k.fq"
    if not reads.exists():
        seqsift(src, "simulate", str(genome), "-n", "200000", "--length", "100", "--error-rate", "0.01",
                "--seed", "3", "-o", str(reads), "-q")
    queries = OUT / "queries_5.fa"
    if not queries.exists():
        records = gzip.open(data / "proteins_query.fa.gz", "rt").read().split(">")[1:6]
        queries.write_text("".join(">" + r for r in records))
    return {
        "find": ["find", "-t", "1", "-c", "-q", "GATTACA", str(text)],
        "find-tree": ["find", "-t", "1", "-c", "-q", "--hex", "7f454c46", *listed],
        "scan": ["scan", "-t", "1", "-r", "-q", "--no-summary", "--db", str(sigs), str(tree)],
        "search": ["search", "-t", "1", "-q", str(index), str(reads)],
        "align": ["align", "-t", "1", "-q", str(queries), str(data / "proteins_db.fa.gz")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="the src directory of the old checkout")
    parser.add_argument("new", help="the src directory of the new checkout")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="the real data files")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sets", help="comma-separated sets to run (default: all)")
    parser.add_argument("--json", type=Path, help="write every time here")
    args = parser.parse_args()
    trees = {"old": args.old, "new": args.new}
    for src in trees.values():  # their bytecode (PYTHONDONTWRITEBYTECODE would recompile edited modules every run)
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL)
    sets = build_inputs(args.data, args.new)
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    outputs = {}
    for name, argv in sets.items():  # warm: compile both checkouts' kernels, fill the page cache
        for tree, src in trees.items():
            outputs[(name, tree)] = seqsift(src, *argv).stdout
        if outputs[(name, "old")] != outputs[(name, "new")]:
            raise SystemExit(f"{name}: the two checkouts wrote different results")
    times = {(name, tree): [] for name in sets for tree in trees}
    for r in range(args.rounds):
        for name, argv in sets.items():
            for tree in (["old", "new"] if r % 2 == 0 else ["new", "old"]):
                start = time.perf_counter()
                out = seqsift(trees[tree], *argv).stdout
                times[(name, tree)].append(time.perf_counter() - start)
                if out != outputs[(name, "old")]:
                    raise SystemExit(f"{name}: {tree} wrote a different result in round {r + 1}")
    print("| set | old (median) | new (median) | old/new per round |\n| --- | ---: | ---: | --- |")
    for name in sets:
        old, new = times[(name, "old")], times[(name, "new")]
        print(f"| {name} | {statistics.median(old):.3f} s | {statistics.median(new):.3f} s | "
              + ", ".join(f"{o / n:.2f}" for o, n in zip(old, new)) + " |")
    if args.json:
        args.json.write_text(json.dumps({" / ".join(k): v for k, v in times.items()}, indent=1))


if __name__ == "__main__":
    main()
