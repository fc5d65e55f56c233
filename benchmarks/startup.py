"""Whole-process start-up: each command on a tiny input (a few bytes to a few hundred bases),
beside `python -c "import numpy"` in the same environment and, where installed, ripgrep and grep.

On a tiny input a command's time is all fixed cost: the interpreter, imports, linking the
precompiled kernels, opening and writing. Each command runs --runs times in rounds (every command
once a round, in turn, so the machine's drift falls on all of them); the table gives the median
wall and CPU (user + sys) seconds and their ratios to `import numpy`'s (the goal of issue 26 is
at most 1.5x), numpy imported as seqsift imports it (OPENBLAS_NUM_THREADS=1, BASELINE). The
kernels are built once first (`python -m seqsift.precompiled`, as `make` does; --before's tree's
too), in a cache directory of this run's own. The fixed cost is then split by
`python -X importtime` (one run each): seconds spent importing numpy, Numba, llvmlite, seqsift's
own modules and the rest; what remains of the median wall is the interpreter, linking the
kernels and the command's own work.

    python benchmarks/startup.py [--runs 15] [--json startup.json] [--before OLD/src]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import cpu_name, tool_version

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("numpy", "numba", "llvmlite", "seqsift")
BEFORE = "(before)"  # the rows of --before's tree
# The ratios' baseline: numpy imported as seqsift imports it, without OpenBLAS's thread pool (cli.py
# sets OPENBLAS_NUM_THREADS=1: its threads spin ~0.1 s of CPU on start here).
BASELINE = 'OPENBLAS_NUM_THREADS=1 python -c "import numpy"'


def inputs(tmp: Path, python: list[str], env: dict) -> dict[str, list[str]]:
    """The commands and peers to time (name -> argv), on files made under tmp."""
    (tmp / "tiny.txt").write_bytes(b"xxACGTxx\n")
    (tmp / "tiny.bin").write_bytes(b"xxABCDxx")
    (tmp / "sigs.ndb").write_text("Test.Sig:0:*:41424344\n")
    (tmp / "pair.fa").write_text(">q\nACGTACGTTTGACCAGT\n>t\nGGGACGTACGTTGACC\n")
    genome = "".join("ACGT"[(k * 7 + k // 5) % 4] for k in range(400))
    (tmp / "ref.fa").write_text(f">r\n{genome}\n")
    (tmp / "reads.fq").write_text("".join(f"@r{k}\n{genome[40 * k:40 * k + 30]}\n+\n{'I' * 30}\n" for k in range(3)))
    subprocess.run(python + ["index", str(tmp / "ref.fa"), "-o", str(tmp / "ref.ssx"), "-q"], env=env, check=True)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
        BASELINE: ["env", "OPENBLAS_NUM_THREADS=1", sys.executable, "-c", "import numpy"],
        "seqsift --version": python + ["--version"],
        "seqsift find ACG tiny.txt": python + ["find", "ACG", str(tmp / "tiny.txt")],
        "seqsift scan --db sigs.ndb tiny.bin": python + ["scan", "--db", str(tmp / "sigs.ndb"), str(tmp / "tiny.bin")],
        "seqsift align --dna pair.fa pair.fa": python + ["align", "--dna", str(tmp / "pair.fa"), str(tmp / "pair.fa")],
        "seqsift search ref.ssx reads.fq": python + ["search", str(tmp / "ref.ssx"), str(tmp / "reads.fq")],
        "seqsift map ref.ssx reads.fq": python + ["map", str(tmp / "ref.ssx"), str(tmp / "reads.fq"), "-q"],
        "seqsift index ref.fa": python + ["index", str(tmp / "ref.fa"), "-o", str(tmp / "again.ssx"), "-q"],
        "seqsift stats ref.ssx reads.fq": python + ["stats", str(tmp / "ref.ssx"), str(tmp / "reads.fq")],
        "seqsift map --help": python + ["map", "--help"],
        "seqsift find --help": python + ["find", "--help"],
    }
    for tool in ("rg", "grep"):
        if shutil.which(tool):
            commands[f"{tool} ACG tiny.txt"] = [tool, "ACG", str(tmp / "tiny.txt")]
    return commands


def run_once(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_split(argv: list[str], env: dict) -> dict[str, float]:
    """Seconds of imports by top-level package (python -X importtime, one run): self times summed."""
    python = argv.index(sys.executable) if sys.executable in argv else -1
    if python < 0:
        return {}
    run = subprocess.run([*argv[: python + 1], "-X", "importtime", *argv[python + 1:]], env=env, capture_output=True,
                         text=True)
    split = dict.fromkeys(PACKAGES + ("other",), 0.0)
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        fields = line[len("import time:"):].split("|")
        try:
            own = int(fields[0]) / 1e6
        except ValueError:  # the header line
            continue
        top = fields[2].strip().split(".")[0]
        split[top if top in PACKAGES else "other"] += own
    return split


def measure(runs: int, before: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, SEQSIFT_CACHE_DIR=str(tmp / "cache"), PYTHONPATH=str(ROOT / "src"))
        python = [sys.executable, "-m", "seqsift"]
        # the bytecode a regular install writes (where PYTHONDONTWRITEBYTECODE is set, every process
        # would otherwise compile the modules again: docs/benchmarks.md, "Method")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], stdout=subprocess.DEVNULL, check=True)
        start = time.perf_counter()
        built = subprocess.run([sys.executable, "-m", "seqsift.precompiled"], env=env, capture_output=True, text=True,
                               check=True).stdout.strip()
        build_seconds = time.perf_counter() - start
        commands = {name: (argv, env) for name, argv in inputs(tmp, python, env).items()}
        if before:  # the same seqsift commands from another tree, in the same rounds
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(before)], stdout=subprocess.DEVNULL, check=True)
            old = dict(env, PYTHONPATH=str(before))
            # its own kernels too (their cache key covers its sources), as this tree's are: not
            # compiled by the warm-up runs below
            subprocess.run([sys.executable, "-m", "seqsift.precompiled"], env=old, capture_output=True, check=True)
            commands.update({f"{BEFORE} {name}": (argv, old) for name, (argv, _) in list(commands.items())
                             if name.startswith("seqsift")})
        for _ in range(2):  # first runs: page cache, bytecode, the index's check, the JIT of a tree that needs it
            for argv, command_env in commands.values():
                run_once(argv, command_env)
        times = {name: [] for name in commands}
        for _ in range(runs):
            for name, (argv, command_env) in commands.items():
                times[name].append(run_once(argv, command_env))
        splits = {name: import_split(argv, command_env) for name, (argv, command_env) in commands.items()}
    numpy_wall = statistics.median(w for w, _ in times[BASELINE])
    rows = []
    for name, samples in times.items():
        wall = statistics.median(w for w, _ in samples)
        rows.append({"command": name, "wall": wall, "cpu": statistics.median(c for _, c in samples),
                     "ratio": wall / numpy_wall, "imports": splits[name]})
    return {"date": time.strftime("%Y-%m-%d"), "commit": _commit(), "machine": f"{cpu_name()}, {os.cpu_count()} cores",
            "python": platform.python_version(), "runs": runs, "build": built, "build_seconds": build_seconds,
            "rg": tool_version(["rg", "--version"]), "before": str(before or ""), "rows": rows}


def _commit() -> str:
    run = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return run.stdout.strip() or "unknown"


def markdown(result: dict) -> str:
    lines = [f"{result['date']}, commit {result['commit']}, {result['machine']}, Python {result['python']}; "
             f"median of {result['runs']} rounds; `python benchmarks/startup.py --runs {result['runs']}"
             + (f" --before {result['before']}" if result.get("before") else "") + "`. "
             f"Kernels built first: {result['build']} ({result['build_seconds']:.0f} s, once).", "",
             "| command (tiny input) | wall s | CPU s | wall / import numpy | CPU / import numpy | imports: numpy "
             "| numba | llvmlite | seqsift | other | rest of the wall |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    numpy_cpu = next(row["cpu"] for row in result["rows"] if row["command"] == BASELINE)
    for row in result["rows"]:
        imports = row["imports"]
        cells = [f"{imports[p]:.3f}" for p in PACKAGES + ("other",)] if imports else ["-"] * 5
        rest = f"{row['wall'] - sum(imports.values()):.3f}" if imports else "-"
        lines.append(f"| `{row['command']}` | {row['wall']:.3f} | {row['cpu']:.3f} | {row['ratio']:.2f}x | "
                     f"{row['cpu'] / numpy_cpu:.2f}x | "
                     + " | ".join(cells) + f" | {rest} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--before", type=Path, help="another tree's src/ (e.g. a commit's, from git archive): its "
                        "seqsift commands are timed too, in the same rounds, as '(before) ...'")
    parser.add_argument("--render", type=Path, help="print the markdown of an earlier --json file and stop")
    args = parser.parse_args()
    result = json.loads(args.render.read_text()) if args.render else measure(args.runs, args.before)
    if args.json and not args.render:
        args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))


if __name__ == "__main__":
    main()
