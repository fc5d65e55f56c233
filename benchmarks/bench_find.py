"""seqsift find against ripgrep, grep, bytes.count and a bytes.find loop, same inputs, same run.

Builds (once, under bench-data/): a >= 1 GiB DNA text file (the Klebsiella genome from
../shared/data repeated, no line breaks) and a >= 1 GiB tree of real binaries copied from /usr/lib
and /usr/bin, plus the adversarial `a`*20M. Reports medians of --runs runs, wall time of each
command or call, inputs in the page cache. Counting semantics differ: seqsift and the find loop
count overlapping matches, rg --count-matches and bytes.count non-overlapping ones, grep -c lines.

    python benchmarks/bench_find.py [--runs 5] [--quick]

--whole times whole processes only, as a user times the command: `seqsift find -t 1 -c` against
`rg -j1 --count-matches --include-zero` (a line a file, as seqsift and grep -c write) on one 512
MiB DNA file and on the tree of binaries, each also on a one-byte input, so the fixed cost
(start-up) and the cost per byte show apart, and from them the input size from which seqsift is
the faster; wall and CPU seconds, medians of --runs rounds.

    python benchmarks/bench_find.py --whole [--runs 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import seqsift
from benchlib import (TIMEOUT, cpu_name, crossover, fixed_and_per_byte, process_rounds, ratio, shared_data, timed,
                      tool_version)
from seqsift.find.api import FindJob

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
GiB = 1 << 30


def build_dna(target: int) -> Path:
    path = DATA / "klebsiella_x.txt"
    if path.exists() and path.stat().st_size >= target:
        return path
    with gzip.open(shared_data("klebsiella_HS11286.fa.gz"), "rb") as f:
        genome = b"".join(line.strip() for line in f if not line.startswith(b">"))
    DATA.mkdir(exist_ok=True)
    with open(path, "wb") as out:
        for _ in range(-(-target // len(genome))):
            out.write(genome)
    return path


def build_binaries(target: int) -> tuple[Path, list[Path]]:
    tree = DATA / "binaries"
    listing = DATA / "binaries.txt"
    if listing.exists():
        # paths relative to the tree (listings written before 2026-12-02 held absolute ones, of
        # whichever checkout made them: their part below binaries/ is taken)
        files = [tree / p.split("/binaries/", 1)[-1] for p in listing.read_text().split("\n") if p]
        if all(p.is_file() for p in files) and sum(p.stat().st_size for p in files) >= target:
            return tree, files
    shutil.rmtree(tree, ignore_errors=True)
    files, total = [], 0
    for top in ("/usr/lib", "/usr/bin"):
        for dirpath, _, names in sorted(os.walk(top)):
            for name in sorted(names):
                src = Path(dirpath) / name
                if src.is_symlink() or not src.is_file() or total >= target:
                    continue
                dst = tree / src.relative_to("/")
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                files.append(dst)
                total += dst.stat().st_size
    listing.write_text("\n".join(str(p.relative_to(tree)) for p in files))
    return tree, files


def build_adversarial() -> Path:
    path = DATA / "a20M.txt"
    if not path.exists():
        path.write_bytes(b"a" * 20_000_000)
    return path


def command(argv: list[str]):
    def go():
        r = subprocess.run(argv, capture_output=True, timeout=TIMEOUT * 4)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"{argv[:3]} failed: {r.stderr.decode()[:300]}")
        return sum(int(line.rsplit(b":", 1)[-1].rsplit(b"\t", 1)[-1]) for line in r.stdout.split(b"\n") if line.strip())
    return go


def numpy_filter_verify(texts, pattern):
    """The issue's ten-line numpy baseline: positions where four spread pattern bytes match, then
    verified byte by byte, 16 MiB at a time. Quadratic on repeats, so it gives up after TIMEOUT."""
    p = np.frombuffer(pattern, np.uint8)
    m, n, deadline = p.size, 0, time.perf_counter() + TIMEOUT
    probes = sorted({0, m // 3, 2 * m // 3, m - 1})
    for t in texts:
        a = np.frombuffer(t, np.uint8)
        for s in range(0, max(a.size - m + 1, 0), 1 << 24):
            e = min(s + (1 << 24), a.size - m + 1)
            keep = a[s + probes[0] : e + probes[0]] == p[probes[0]]
            for j in probes[1:]:
                keep &= a[s + j : e + j] == p[j]
            cand = s + np.flatnonzero(keep)
            for j in range(m):
                cand = cand[a[cand + j] == p[j]]
                if time.perf_counter() > deadline:
                    raise TimeoutError
            n += cand.size
    return n


def find_loop(texts, pattern):
    n = 0
    for t in texts:
        i = t.find(pattern)
        while i >= 0:
            n += 1
            i = t.find(pattern, i + 1)
    return n


def cases_for(label, texts, files, patterns, runs, quick):
    seqsift_cli = [sys.executable, "-m", "seqsift", "find", "-q", "-c"]
    rows = []
    for name, pattern in patterns:
        hexpat = pattern.hex()
        size = sum(len(t) for t in texts)
        tools = {
            "seqsift -t 1 (API, in memory)": lambda: api_count(pattern, texts, 1),
            "seqsift -t 2 (API, in memory)": lambda: api_count(pattern, texts, 2),
            "seqsift -t 1 (CLI, files)": command(seqsift_cli + ["-t", "1", "--backend", "cpu", "--hex", hexpat, *map(str, files)]),
            "seqsift -t 2 (CLI, files)": command(seqsift_cli + ["-t", "2", "--backend", "cpu", "--hex", hexpat, *map(str, files)]),
            "rg --count-matches -F -j1": command(["rg", "--count-matches", "-a", "-uuu", "-j1", *_rg_pattern(pattern), *map(str, files)]),
            "grep -c -F": command(["grep", "-c", "-F", "-a", "-e", pattern.decode("latin-1"), *map(str, files)])
            if b"\n" not in pattern and b"\x00" not in pattern else None,
            "numpy filter+verify": lambda: numpy_filter_verify(texts, pattern),
            "bytes.count": lambda: sum(t.count(pattern) for t in texts),
            "bytes.find loop": lambda: find_loop(texts, pattern),
        }
        for tool, fn in tools.items():
            if fn is None or (quick and "CLI" in tool):
                continue
            seconds, count = timed(fn, 1 if tool.startswith("bytes") else runs)
            rows.append({"corpus": label, "case": name, "m": len(pattern), "tool": tool, "seconds": seconds,
                         "GB/s": round(size / seconds / 1e9, 3) if seconds else None, "count": count})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def _rg_pattern(pattern: bytes) -> list[str]:
    """rg -F takes text; a pattern with a NUL or non-UTF-8 byte goes as a regex of \\xHH escapes
    with Unicode off, which rg also searches as one literal."""
    try:
        text = pattern.decode("utf-8")
        if "\x00" not in text:
            return ["-F", "-e", text]
    except UnicodeDecodeError:
        pass
    multiline = ["-U"] if b"\n" in pattern else []  # rg refuses a newline byte outside multiline mode
    return [*multiline, "-e", "(?-u)" + "".join(f"\\x{b:02x}" for b in pattern)]


def api_count(pattern: bytes, texts: list[bytes], threads: int) -> int:
    """One FindJob over all texts, as the CLI does over its files."""
    with FindJob(pattern, backend="cpu", threads=threads) as job:
        return sum(sum(job.offsets(t, count_only=True)) for t in texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=GiB, help="bytes per corpus (default 1 GiB)")
    parser.add_argument("--quick", action="store_true", help="skip the CLI runs")
    parser.add_argument("--whole", action="store_true", help="whole processes only: seqsift -t 1 against rg -j1")
    parser.add_argument("--json", type=Path, default=DATA / "bench_find.json")
    parser.add_argument("--render", type=Path, help="print the markdown table of an earlier --json file and stop")
    args = parser.parse_args()
    if args.render:
        result = json.loads(args.render.read_text())
        print(whole_markdown(result) if "whole" in result else markdown(result["rows"]))
        return
    if args.whole:
        whole_processes(args.runs, args.json.with_name("bench_find_whole.json") if args.json == DATA / "bench_find.json"
                        else args.json)
        return

    rng = np.random.default_rng(2026)
    dna_path = build_dna(args.size)
    dna = dna_path.read_bytes()
    dna_patterns = []
    for m in (8, 20, 100):
        dna_patterns.append((f"present {m}", dna[4_000_000 : 4_000_000 + m]))
    dna_patterns += [("absent 8", b"GATTACAN"),
                     ("absent 20", bytes(rng.choice(np.frombuffer(b"ACGT", np.uint8), 20))),
                     ("absent 100", bytes(rng.choice(np.frombuffer(b"ACGT", np.uint8), 100)))]
    rows = cases_for("DNA 1 GiB", [dna], [dna_path], dna_patterns, args.runs, args.quick)
    del dna

    tree, files = build_binaries(args.size)
    texts = [p.read_bytes() for p in files]
    big = max(texts, key=len)
    bin_patterns = [(f"present {m}", big[len(big) // 2 : len(big) // 2 + m]) for m in (8, 20, 100)]
    bin_patterns += [(f"absent {m}", bytes(rng.integers(0, 256, m, dtype=np.uint8))) for m in (8, 20, 100)]
    rows += cases_for(f"binaries {len(files)} files", texts, files, bin_patterns, args.runs, args.quick)
    del texts

    adv = build_adversarial()
    rows += cases_for("adversarial a*20M", [adv.read_bytes()], [adv], [("a*1000", b"a" * 1000)], args.runs, args.quick)

    meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or platform.machine(),
            "cpu": cpu_name(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numba": __import__("numba").__version__, "numpy": np.__version__, "seqsift": seqsift.__version__,
            "rg": tool_version(["rg", "--version"]), "grep": tool_version(["grep", "--version"]), "runs": args.runs}
    args.json.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(json.dumps(meta))
    print(markdown(rows))


WHOLE_DNA = 512 << 20


def whole_processes(runs: int, out: Path) -> None:
    """seqsift find -t 1 -c and rg -j1 --count-matches as whole processes, in rounds, on the large
    input and on a one-byte one (start-up), counts checked equal."""
    rng = np.random.default_rng(2026)
    dna_path = build_dna(WHOLE_DNA)
    with open(dna_path, "rb") as f:
        f.seek(4_000_000)
        present_dna = f.read(20)
    tree, files = build_binaries(GiB)
    big = max(files, key=lambda p: p.stat().st_size)
    with open(big, "rb") as f:
        f.seek(big.stat().st_size // 2)
        present_bin = f.read(20)
    tiny_dir = DATA / "tiny"
    (tiny_dir / "tree").mkdir(parents=True, exist_ok=True)
    (tiny_dir / "tree" / "one").write_bytes(b"A")
    corpora = [
        ("DNA", [str(dna_path)], [str(tiny_dir / "tree" / "one")], dna_path.stat().st_size,
         [("present 20", present_dna), ("absent 20", bytes(rng.choice(np.frombuffer(b"ACGT", np.uint8), 20)))]),
        (f"binaries ({len(files)} files)", ["-r", str(tree)], ["-r", str(tiny_dir / "tree")],
         sum(p.stat().st_size for p in files),
         [("present 20", present_bin), ("absent 20", bytes(rng.integers(0, 256, 20, dtype=np.uint8)))]),
    ]
    rows = []
    for corpus, paths, tiny, size, patterns in corpora:
        for case, pattern in patterns:
            rg_paths = [p for p in paths if p != "-r"]
            rg_tiny = [p for p in tiny if p != "-r"]
            ours = [sys.executable, "-m", "seqsift", "find", "-q", "-c", "-t", "1", "--hex", *paths[:-1], pattern.hex()]
            # --include-zero: rg then writes a line for every file, as seqsift and grep -c do (by
            # default it leaves out the files without a match: on the tree and the absent pattern, no line)
            rg = ["rg", "-j1", "--count-matches", "--include-zero", "-a", "-uuu", *_rg_pattern(pattern)]
            commands = {"seqsift": ours + rg_paths, "rg": rg + rg_paths,
                        "seqsift (1 byte)": ours + rg_tiny, "rg (1 byte)": rg + rg_tiny}
            timed_ = process_rounds(commands, runs)
            counts = {t: _count_lines(timed_[t]["stdout"]) for t in ("seqsift", "rg")}
            for t in commands:
                del timed_[t]["stdout"]
            row = {"corpus": corpus, "case": case, "bytes": size, "counts": counts, "same": len(set(counts.values())) == 1}
            for tool in ("seqsift", "rg"):
                row[tool] = timed_[tool]
                row[tool + " (1 byte)"] = timed_[tool + " (1 byte)"]
                row[tool + " cost"] = fixed_and_per_byte(timed_[tool + " (1 byte)"], timed_[tool], size)
                row[tool + " CPU cost"] = fixed_and_per_byte(timed_[tool + " (1 byte)"], timed_[tool], size, "cpu")
            row["crossover"] = crossover(row["seqsift cost"], row["rg cost"])
            row["CPU crossover"] = crossover(row["seqsift CPU cost"], row["rg CPU cost"])
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k not in commands}), {t: round(timed_[t]["wall"], 3) for t in commands},
                  flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_name(), "cores": os.cpu_count(), "seqsift": seqsift.__version__,
            "rg": tool_version(["rg", "--version"]), "runs": runs,
            "commands": {"seqsift": "python -m seqsift find -q -c -t 1 --hex PATTERN FILE (-r TREE)",
                         "rg": "rg -j1 --count-matches --include-zero -a -uuu -F -e PATTERN FILE|TREE (or (?-u)\\xHH escapes)"}}
    out.write_text(json.dumps({"meta": meta, "whole": rows}, indent=1))
    print(whole_markdown({"meta": meta, "whole": rows}))


def _count_lines(out: bytes) -> int:
    return sum(int(line.rsplit(b":", 1)[-1].rsplit(b"\t", 1)[-1]) for line in out.split(b"\n") if line.strip())


def whole_markdown(result: dict) -> str:
    """One line per (corpus, case): wall and CPU medians of both, the ratios, and from the CPU
    seconds (steadier than wall on a shared machine) the start-up apart from the cost per GB."""
    lines = ["| input | case | seqsift wall (CPU) s | rg -j1 wall (CPU) s | rg time / seqsift time: wall (CPU) "
             "| seqsift CPU: start-up + per GB | rg CPU: start-up + per GB | seqsift faster (CPU) from |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["whole"]:
        cross = r["CPU crossover"]
        where = "any size" if cross == 0 else "never (per byte slower)" if cross is None else f"{cross / 2**20:,.0f} MiB"
        sf, sb = r["seqsift CPU cost"]
        rf, rb = r["rg CPU cost"]
        lines.append(f"| {r['corpus']} {r['bytes'] / 2**20:,.0f} MiB | {r['case']}{'' if r['same'] else ' **counts differ**'} "
                     f"| {r['seqsift']['wall']:.3f} ({r['seqsift']['cpu']:.3f}) | {r['rg']['wall']:.3f} ({r['rg']['cpu']:.3f}) "
                     f"| {ratio(r['rg']['wall'], r['seqsift']['wall'])} ({ratio(r['rg']['cpu'], r['seqsift']['cpu'])}) "
                     f"| {sf:.3f} s + {sb:.3f} s | {rf:.3f} s + {rb:.3f} s | {where} |")
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    """One line per (corpus, case), one column per tool: GB/s, with the count each tool reported."""
    tools = list(dict.fromkeys(r["tool"] for r in rows))
    lines = ["| corpus | case | " + " | ".join(tools) + " |", "| --- | --- |" + " --- |" * len(tools)]
    for key in dict.fromkeys((r["corpus"], r["case"]) for r in rows):
        cells = {r["tool"]: r for r in rows if (r["corpus"], r["case"]) == key}
        out = []
        for t in tools:
            r = cells.get(t)
            out.append("n/a" if r is None else "> 60 s" if r["GB/s"] is None else f"{r['GB/s']:.2f} ({r['count']:,})")
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(out) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
