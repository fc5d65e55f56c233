"""seqsift index/search against bwa (aln + samse) and bowtie2 on exact matching, same inputs,
same run; plus the ablation of each search optimization the GEM paper describes.

Builds (once, under bench-data/fm/): the Klebsiella genome as plain FASTA, a ~22 Mbp reference
(four copies, each with ~1% random substitutions), and 1,000,000 simulated 100 bp reads per set:
exact (found fraction 0.9), 1% errors, near-miss (every read cut from the genome with exactly one
base changed), and exact reads of the 22 Mbp reference; the exact set also gzipped (level 6), as
reads are usually kept. Peers (Debian): bwa, bowtie2.

    python benchmarks/bench_fmindex.py [--runs 3] [--reads 1000000]
    python benchmarks/bench_fmindex.py --render bench-data/fm/bench_fmindex.json

Wall times are medians of --runs runs, each tool's inputs read into the page cache before each
run (this machine's is small, and a peer's run evicts the next one's inputs); peak memory from
/usr/bin/time. Reads/s counts every read of the file, matched or not.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import seqsift
import fm_approx
from benchlib import bench_args, cpu_name, tool_version
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.build import default_repeat_sample
from seqsift.fmindex.query import SearchOptions
from seqsift.fmindex.reference import READ_CODE
from seqsift.fmindex.simulate import simulate_chunks
from seqsift.io.reads import read_reads

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data" / "fm"
GENOME_GZ = ROOT.parent / "shared" / "data" / "klebsiella_HS11286.fa.gz"
SEQSIFT = [sys.executable, "-m", "seqsift"]
LETTERS = np.frombuffer(b"ACGT", np.uint8)


def run_timed(argv: list[str], stdout=None) -> tuple[float, int]:
    """(wall seconds, peak resident KiB) of one command, via GNU time."""
    report = DATA / "time.txt"
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(report), *argv], stdout=stdout or subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv[:4])} failed ({r.returncode}): {r.stderr.decode()[-400:]}")
    return wall, int(report.read_text().split()[-1])


def cached(paths) -> None:
    """Read files through once so the next command finds them in the page cache: this machine's
    is small (~1.5 GB), and a peer's run evicts the next tool's inputs, which then pays for the disk."""
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass


def median_run(argv: list[str], runs: int, stdout_path: Path | None = None, inputs=()) -> tuple[float, int]:
    """Median wall seconds and largest peak of `runs` runs, the inputs read into the cache before each."""
    walls, peaks = [], []
    for _ in range(runs):
        cached(inputs)
        if stdout_path:
            with open(stdout_path, "wb") as out:
                wall, peak = run_timed(argv, out)
        else:
            wall, peak = run_timed(argv)
        walls.append(wall)
        peaks.append(peak)
    return statistics.median(walls), max(peaks)


def write_fastq(path: Path, reads) -> None:
    with open(path, "wb") as out:
        for chunk in reads:
            out.write(b"".join(b"@%s\n%s\n+\n%s\n" % (h.split()[0].encode(), s, b"I" * len(s)) for h, s in chunk))


def near_miss(chunks, seed: int):
    """Every read with exactly one base changed."""
    rng = np.random.default_rng(seed)
    for chunk in chunks:
        out = []
        for header, seq in chunk:
            codes = np.frombuffer(seq, np.uint8).copy()
            i = int(rng.integers(0, codes.size))
            codes[i] = LETTERS[(int(READ_CODE[codes[i]]) + int(rng.integers(1, 4))) % 4]
            out.append((header, codes.tobytes()))
        yield out


def build_data(n: int) -> dict[str, Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    genome = DATA / "klebsiella.fa"
    if not genome.exists():
        with gzip.open(GENOME_GZ, "rb") as f, open(genome, "wb") as out:
            shutil.copyfileobj(f, out)
    big = DATA / "klebsiella_x4.fa"
    if not big.exists():
        rng = np.random.default_rng(4)
        text = b"".join(line.strip() for line in genome.read_bytes().splitlines() if not line.startswith(b">"))
        with open(big, "wb") as out:
            for copy in range(4):
                codes = np.frombuffer(text, np.uint8).copy()
                change = np.flatnonzero(rng.random(codes.size) < 0.01)
                codes[change] = LETTERS[(READ_CODE[codes[change]].astype(np.int64) + rng.integers(1, 4, change.size)) % 4]
                body = codes.tobytes()
                out.write(f">copy{copy}\n".encode() + b"\n".join(body[i : i + 80] for i in range(0, len(body), 80)) + b"\n")
    sets = {
        "exact": (genome, dict(found_fraction=0.9, error_rate=0.0, seed=1)),
        "errors 1%": (genome, dict(found_fraction=0.9, error_rate=0.01, seed=2)),
        "near-miss": (genome, dict(found_fraction=1.0, error_rate=0.0, seed=3)),
        "exact, 22 Mbp": (big, dict(found_fraction=0.9, error_rate=0.0, seed=5)),
    }
    paths = {"genome": genome, "big": big}
    for name, (ref, params) in sets.items():
        path = DATA / f"reads_{re.sub('[^a-z0-9]+', '_', name)}_{n}.fq"
        if not path.exists():
            chunks = simulate_chunks(ref, n, 100, **params)
            write_fastq(path, near_miss(chunks, 9) if name == "near-miss" else chunks)
        paths[name] = path
    packed = paths["exact"].with_suffix(".fq.gz")  # the same reads as users keep them: gzip, level 6
    if not packed.exists():
        with open(paths["exact"], "rb") as f, gzip.open(packed, "wb", compresslevel=6) as out:
            shutil.copyfileobj(f, out)
    paths["exact, gzip"] = packed
    return paths


def _merge(ours: list[dict], earlier: list[dict], key: tuple[str, str]) -> list[dict]:
    """Earlier rows with seqsift's replaced by this run's."""
    fresh = {tuple(r[k] for k in key): r for r in ours}
    return [fresh.pop(tuple(r[k] for k in key), r) if r["tool"].startswith("seqsift") else r for r in earlier] + list(fresh.values())


def build_indexes(ref: Path, label: str, runs: int, peers: bool = True) -> tuple[dict, list[dict]]:
    """Build each tool's index of ref (seqsift's alone unless peers); rows of build time and peak memory."""
    stem = DATA / ref.stem
    rows = []
    builds = {
        "seqsift index": SEQSIFT + ["index", "-q", str(ref), "-o", f"{stem}.ssx"],
        "bwa index": ["bwa", "index", "-p", f"{stem}.bwa", str(ref)],
        "bowtie2-build": ["bowtie2-build", "--threads", "1", "-q", str(ref), f"{stem}.bt2"],
    }
    for tool, argv in builds.items():
        if not peers and not tool.startswith("seqsift"):
            continue
        wall, peak = median_run(argv, runs, inputs=[ref])
        rows.append({"reference": label, "tool": tool, "seconds": wall, "peak_mib": peak / 1024})
    return {"ssx": f"{stem}.ssx", "bwa": f"{stem}.bwa", "bt2": f"{stem}.bt2"}, rows


def matched_reads(path: Path, kind: str) -> int:
    """Reads each tool reports as matched (a sanity check that they did the same job)."""
    if kind == "tsv":
        return sum(1 for line in open(path, "rb") if line.split(b"\t")[1] != b"0")
    count = 0
    for line in open(path, "rb"):
        if line[:1] != b"@":
            flag = int(line.split(b"\t")[1])
            count += not (flag & 4) and not (flag & 256)
    return count


def search_rows(label: str, reads: Path, idx: dict, n: int, runs: int, peers: bool = True) -> list[dict]:
    rows = []
    out = DATA / "out.txt"

    def files(prefix):
        return sorted(Path(prefix).parent.glob(Path(prefix).name + ".*"))

    def add(tool, argv, kind=None, inputs=(), **extra):
        wall, peak = median_run(argv, runs, out if kind else None, [reads, *inputs])
        if kind == "sai":
            samse = ["bwa", "samse", idx["bwa"], str(out), str(reads)]
            wall2, peak2 = median_run(samse, runs, DATA / "out.sam", [reads, out, *inputs])
            rows.append({"reads": label, "tool": tool, "seconds": wall, "reads_per_s": n / wall, "peak_mib": peak / 1024,
                         "matched": None})
            tool, wall, peak, kind, out_path = tool + " + samse", wall + wall2, max(peak, peak2), "sam", DATA / "out.sam"
        else:
            out_path = out
        rows.append({"reads": label, "tool": tool, "seconds": wall, "reads_per_s": n / wall, "peak_mib": peak / 1024,
                     "matched": matched_reads(out_path, kind) if kind else None, **extra})

    for threads in (1, 2):
        add(f"seqsift count, {threads} thread{'s' * (threads > 1)}",
            SEQSIFT + ["search", "-t", str(threads), "--max-hits", "0", idx["ssx"], str(reads)], "tsv", [idx["ssx"]])
        add(f"seqsift count+locate, {threads} thread{'s' * (threads > 1)}",
            SEQSIFT + ["search", "-t", str(threads), idx["ssx"], str(reads)], "tsv", [idx["ssx"]])
    if not peers:
        return rows
    add("bwa aln", ["bwa", "aln", "-n", "0", "-o", "0", "-l", "100", "-k", "0", "-t", "1", idx["bwa"], str(reads)], "sai",
        files(idx["bwa"]))
    add("bowtie2 exact", ["bowtie2", "-p", "1", "--end-to-end", "--score-min", "C,0,0", "-x", idx["bt2"], "-U", str(reads)], "sam",
        files(idx["bt2"]))
    return rows


def warm_up(idx: dict, reads: Path) -> None:
    """Compile the search's kernels into the precompiled cache (the first search after an install
    or an edit does this, 7-22 s, once), so every timed run loads them as a user's runs do."""
    few = DATA / "warm_up.fq"
    with open(reads, "rb") as f:
        few.write_bytes(b"".join(f.readline() for _ in range(40)))
    for extra in ([], ["--max-hits", "0"], ["--format", "sam"]):
        r = subprocess.run(SEQSIFT + ["search", "-q", *extra, idx["ssx"], str(few)], stdout=subprocess.DEVNULL)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"warm-up search failed ({r.returncode})")


def kernel_rate(searcher, batches, max_hits: int, runs: int) -> float:
    """Reads/s of the search itself (reads parsed beforehand), one thread."""
    total = sum(bounds.size - 1 for _, bounds in batches)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for codes, bounds in batches:
            if max_hits:
                searcher.hits(codes, bounds, max_hits)
            else:
                searcher.count(codes, bounds)
        times.append(time.perf_counter() - start)
    return total / statistics.median(times)


def parsed(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(READ_CODE[b.seq], b.bounds) for b in read_reads(path)]


def ablation(paths: dict, runs: int) -> list[dict]:
    """In-process kernel rates with each optimization switched off in turn, the interleave width
    swept, the verify shortcut's interval size swept, the SA sampling swept (the locate's
    cost against the index's size), and the k-mer length swept (the rule for the default k)."""
    rows = []
    index = FMIndex.load(DATA / "klebsiella.ssx")
    sets = {name: parsed(paths[name]) for name in ("exact", "near-miss")}
    big = FMIndex.load(DATA / "klebsiella_x4.ssx")
    sets_big = {"exact, 22 Mbp": parsed(paths["exact, 22 Mbp"])}
    default = SearchOptions()
    variants = {
        "all on (default)": default,
        "no k-mer table": SearchOptions(kmer_table=False),
        "hi-lo=1 shortcut: none": SearchOptions(shortcut="none"),
        "hi-lo=1 shortcut: one rank": SearchOptions(shortcut="rank"),
        "no interleaving (1 at a time)": SearchOptions(width=1),
        "none of them": SearchOptions(kmer_table=False, shortcut="none", width=1),
    }
    for label, options in variants.items():
        for name, batches in list(sets.items()) + list(sets_big.items()):
            searcher = (big if "22" in name else index).searcher(options)
            searcher.count(*batches[0])  # compile
            rows.append({"study": "ablation", "variant": label, "reads": name,
                         "count": kernel_rate(searcher, batches, 0, runs),
                         "count+locate": kernel_rate(searcher, batches, 100, runs)})
    for verify_rows in (1, 2, 4, 8):
        label = f"{verify_rows} row{'s' if verify_rows > 1 else ''}" + (" (default)" if verify_rows == default.verify_rows else "")
        for name, batches in list(sets.items()) + list(sets_big.items()):
            searcher = (big if "22" in name else index).searcher(SearchOptions(verify_rows=verify_rows))
            rows.append({"study": "verify rows", "variant": label, "reads": name,
                         "count": kernel_rate(searcher, batches, 0, runs),
                         "count+locate": kernel_rate(searcher, batches, 100, runs)})
    for width in (1, 2, 5, 10, 16, 20, 32, 40):
        for name, batches in (("exact", sets["exact"]), ("exact, 22 Mbp", sets_big["exact, 22 Mbp"])):
            searcher = (big if "22" in name else index).searcher(SearchOptions(width=width))
            rows.append({"study": "interleave", "variant": f"width {width}", "reads": name,
                         "count": kernel_rate(searcher, batches, 0, runs),
                         "count+locate": kernel_rate(searcher, batches, 100, runs)})

    def rebuilt(study, label, **build):  # both references built with other settings
        for ref, name in ((paths["genome"], "exact"), (paths["big"], "exact, 22 Mbp")):
            built = FMIndex.build(ref, **build)
            batches = sets.get(name) or sets_big[name]
            searcher = built.searcher()
            searcher.count(*batches[0])
            rows.append({"study": study, "variant": label(built.arrays), "reads": name,
                         "count": kernel_rate(searcher, batches, 0, runs),
                         "count+locate": kernel_rate(searcher, batches, 100, runs),
                         "samples_mib": built.arrays.samples.nbytes / 2**20})

    # denser samples: fewer LF steps a located row, a larger index; repeat samples only where rows are many
    for s, r in ((32, 0), (32, 4), (32, 8), (16, 0), (8, 0)):  # (32, 4): the default on both genomes
        default = " (default)" if (s, r) == (32, default_repeat_sample(0)) else ""
        rebuilt("sampling", lambda a: f"--sa-sample {s} --repeat-sample {r}{default}", sa_sample=s, repeat_sample=r)
    for k in (0, 6, 8, 10, 11, 12):
        rebuilt("kmer", lambda a: f"k={k} ({a.kmer_table.nbytes / 2**20:.2f} MiB)", kmer=k)
    return rows


def main() -> None:
    def options(parser):
        parser.add_argument("--reads", type=int, default=1_000_000)
        parser.add_argument("--reuse-peers", type=Path, metavar="JSON",
                            help="take the bwa and bowtie2 rows from an earlier run; measure only seqsift (and the peers on a "
                            "set that run lacks). For quick reruns only: this machine's speed drifts up to 2x "
                            "between runs, so ratios for the record come from a full run")
        parser.add_argument("--approximate-only", action="store_true",
                            help="run only the approximate section (fm_approx.py: --errors against bwa aln -N)")

    args = bench_args(__doc__, DATA / "bench_fmindex.json", markdown, options)
    if args is None:
        return
    # Where PYTHONDONTWRITEBYTECODE is set (as on this machine), a module edited since the last
    # compileall is compiled again by every process: ~17 ms of each timed search.
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.dirname(seqsift.__file__)], check=True,
                   stdout=subprocess.DEVNULL)
    if args.approximate_only:
        approximate_only(args)
        return
    paths = build_data(args.reads)
    peers = json.loads(args.reuse_peers.read_text()) if args.reuse_peers else None
    idx_small, build_rows = build_indexes(paths["genome"], "Klebsiella 5.7 Mbp", args.runs, peers is None)
    idx_big, more = build_indexes(paths["big"], "4 copies, 22.7 Mbp", args.runs, peers is None)
    build_rows += more
    warm_up(idx_small, paths["exact"])
    search = []
    measured = {row["reads"] for row in peers["search"]} if peers else set()
    for label in ("exact", "exact, gzip", "errors 1%", "near-miss"):  # peers measured where the earlier run lacks them
        search += search_rows(label, paths[label], idx_small, args.reads, args.runs, label not in measured)
    search += search_rows("exact, 22 Mbp", paths["exact, 22 Mbp"], idx_big, args.reads, args.runs,
                          "exact, 22 Mbp" not in measured)
    if peers:  # the peers' rows of the earlier run, in the same order as a full run
        build_rows = _merge(build_rows, peers["build"], ("reference", "tool"))
        search = _merge(search, peers["search"], ("reads", "tool"))
    studies = ablation(paths, args.runs)
    approximate = fm_approx.section(SEQSIFT, median_run, write_fastq, DATA, paths["genome"], idx_small,
                                    min(args.reads, 100_000), args.runs)
    meta = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_name(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numba": __import__("numba").__version__, "numpy": np.__version__,
            "seqsift": seqsift.__version__, "bwa": _bwa_version(), "bowtie2": tool_version(["bowtie2", "--version"]),
            "runs": args.runs, "reads": args.reads,
            "peers_measured": peers["meta"]["date"] + " (earlier run, same machine and data)" if peers else "this run"}
    result = {"meta": meta, "build": build_rows, "search": search, "studies": studies, "approximate": approximate}
    args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))


def approximate_only(args) -> None:
    """The approximate section alone: the Klebsiella genome, its seqsift and bwa indexes."""
    DATA.mkdir(parents=True, exist_ok=True)
    genome = DATA / "klebsiella.fa"
    if not genome.exists():
        with gzip.open(GENOME_GZ, "rb") as f, open(genome, "wb") as out:
            shutil.copyfileobj(f, out)
    stem = DATA / genome.stem
    idx = {"ssx": f"{stem}.ssx", "bwa": f"{stem}.bwa"}
    run_timed(SEQSIFT + ["index", "-q", str(genome), "-o", idx["ssx"]])
    if not Path(f"{stem}.bwa.bwt").exists():
        run_timed(["bwa", "index", "-p", idx["bwa"], str(genome)])
    rows = fm_approx.section(SEQSIFT, median_run, write_fastq, DATA, genome, idx, args.reads, args.runs)
    meta = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_name(), "cores": os.cpu_count(), "seqsift": seqsift.__version__,
            "bwa": _bwa_version(), "runs": args.runs, "reads": args.reads}
    studies = [row for distance, errors in fm_approx.SETS for row in fm_approx.phases(
        idx["ssx"], DATA / f"reads_approx_{distance}_{errors}_{args.reads}.fq", errors, distance, args.runs)]
    args.json.with_name("bench_fmindex_approx.json").write_text(json.dumps(
        {"meta": meta, "approximate": rows, "phases": studies}, indent=1))
    print("\n".join(fm_approx.markdown(rows) + [""] + fm_approx.phases_markdown(studies)))


def _bwa_version() -> str:
    r = subprocess.run(["bwa"], capture_output=True, text=True)
    return next((line for line in r.stderr.splitlines() if line.startswith("Version")), "bwa (version unknown)")


def markdown(result: dict) -> str:
    m = result["meta"]
    lines = [f"{m['date']}, {m['cpu']} ({m['cores']} cores), Python {m['python']}, numba {m['numba']}, "
             f"seqsift {m['seqsift']}, {m['bwa']}, {m['bowtie2'].split('/')[-1]}; medians of {m['runs']} runs, "
             f"{m['reads']:,} reads of 100 bp per set; bwa and bowtie2 measured {m.get('peers_measured', 'this run')}.", "",
             "| reference | tool | build s | peak MiB |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['reference']} | {r['tool']} | {r['seconds']:.2f} | {r['peak_mib']:.0f} |" for r in result["build"]]
    lines += ["", "| reads | tool | seconds | reads/s | peak MiB | reads matched |", "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['reads']} | {r['tool']} | {r['seconds']:.2f} | {r['reads_per_s'] / 1e3:,.0f} k | {r['peak_mib']:.0f} | "
              f"{'' if r['matched'] is None else format(r['matched'], ',')} |" for r in result["search"]]
    for study in ("ablation", "verify rows", "interleave", "sampling", "kmer"):
        rows = [r for r in result["studies"] if r["study"] == study]
        sets = list(dict.fromkeys(r["reads"] for r in rows))
        sizes = study == "sampling"  # its rows also give the SA samples' size
        lines += ["", f"| {study} (in process, 1 thread, k reads/s: count / count+locate"
                  f"{' (MiB of SA samples)' if sizes else ''}) | " + " | ".join(sets) + " |",
                  "| --- |" + " --- |" * len(sets)]
        for variant in dict.fromkeys(r["variant"] for r in rows):
            cells = {r["reads"]: r for r in rows if r["variant"] == variant}
            lines.append(f"| {variant} | " + " | ".join(
                _cell(cells[s], sizes) if s in cells else "" for s in sets) + " |")
    if result.get("approximate"):
        lines += ["", "Approximate search (fm_approx.py):", ""] + fm_approx.markdown(result["approximate"])
    return "\n".join(lines)


def _cell(row: dict, sizes: bool) -> str:
    text = f"{row['count'] / 1e3:,.0f} / {row['count+locate'] / 1e3:,.0f}"
    return text + f" ({row['samples_mib']:.1f})" if sizes else text


if __name__ == "__main__":
    main()
