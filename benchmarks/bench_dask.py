"""`seqsift search` and `seqsift align` on this machine's threads and on Dask: `--dask local:2`
(the command starts and stops its 2 workers), and a running cluster of 1 and 2 one-thread workers
started with Dask's own commands (`dask scheduler`, `dask worker`), each worker having loaded the
index or database in an untimed first run. Wall time of the whole command, same inputs, same run;
every output compared with the local one.

Inputs (made by bench_fmindex.py and bench_align.py under bench-data/): the Klebsiella index
with 1,000,000 exact 100 bp reads; 20 protein queries against 20,000 database sequences.

    python benchmarks/bench_dask.py [--runs 3]
    python benchmarks/bench_dask.py --render bench-data/bench_dask.json
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dask
import distributed

import seqsift
from benchlib import bench_args, cpu_name

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
SEQSIFT = [sys.executable, "-m", "seqsift"]
JOBS = {
    "search": ["search", str(DATA / "fm" / "klebsiella.ssx"), str(DATA / "fm" / "reads_exact_1000000.fq")],
    "align": ["align", str(DATA / "align_queries.fa"), str(DATA / "align_db.fa"), "--partition", "1"],
}
WAYS = {"local -t 1": ["-t", "1"], "local -t 2": ["-t", "2"], "--dask local:2": ["--dask", "local:2"],
        "running cluster, 1 worker": 1, "running cluster, 2 workers": 2}


@contextlib.contextmanager
def running_cluster(workers: int):
    """A scheduler and `workers` one-thread worker processes started by Dask's own commands,
    as on a real cluster; yields the scheduler's address."""
    dask_cli = str(Path(sys.executable).parent / "dask")
    with tempfile.TemporaryDirectory() as tmp:
        info = Path(tmp) / "scheduler.json"
        procs = [subprocess.Popen([dask_cli, "scheduler", "--scheduler-file", str(info), "--no-dashboard"],
                                  stderr=subprocess.DEVNULL)]
        try:
            while not info.exists():
                time.sleep(0.1)
            procs.append(subprocess.Popen([dask_cli, "worker", "--scheduler-file", str(info), "--nworkers",
                                           str(workers), "--nthreads", "1", "--no-dashboard"], stderr=subprocess.DEVNULL))
            with distributed.Client(scheduler_file=str(info)) as client:
                client.wait_for_workers(workers, timeout=60)
                yield client.scheduler.address
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait()


def run(argv: list[str], out: Path) -> float:
    start = time.perf_counter()
    r = subprocess.run([*SEQSIFT, *argv, "-q", "-o", str(out)], stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.decode()[-600:]}")
    return wall


def main() -> None:
    args = bench_args(__doc__, DATA / "bench_dask.json", markdown)
    if args is None:
        return
    for job in JOBS.values():
        for path in job[1:3]:
            if not Path(path).exists():
                sys.exit(f"{path} is missing: run benchmarks/bench_fmindex.py and bench_align.py first")
    rows = []
    for name, job in JOBS.items():
        reference = DATA / f"dask_{name}_reference.out"
        run([*job, "-t", "1"], reference)  # also warms the page cache and Numba's on-disk cache
        for way, extra in WAYS.items():
            out = DATA / f"dask_{name}.out"
            with contextlib.ExitStack() as stack:
                if isinstance(extra, int):
                    extra = ["--dask", stack.enter_context(running_cluster(extra))]
                    run([*job, *extra], out)  # each worker loads the index or database once, as it would stay
                walls = [run([*job, *extra], out) for _ in range(args.runs)]
            same = out.read_bytes() == reference.read_bytes()
            rows.append({"job": name, "way": way, "seconds": statistics.median(walls), "walls": walls, "same": same})
            print(f"{name:7} {way:13} {statistics.median(walls):7.2f} s  identical: {same}", flush=True)
    result = {
        "date": datetime.date.today().isoformat(), "machine": f"{cpu_name()}, {os.cpu_count()} cores",
        "python": platform.python_version(), "seqsift": seqsift.__version__, "dask": dask.__version__,
        "distributed": distributed.__version__, "runs": args.runs,
        "commands": {name: "seqsift " + " ".join(Path(a).name if "/" in a else a for a in job) for name, job in JOBS.items()},
        "rows": rows,
    }
    args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))


def markdown(result: dict) -> str:
    lines = [f"{result['date']}, {result['machine']}, Python {result['python']}, seqsift {result['seqsift']}, "
             f"dask {result['dask']} / distributed {result['distributed']}; median of {result['runs']} runs, whole "
             "commands.", ""]
    for name, command in result["commands"].items():
        lines.append(f"- {name}: `{command}`")
    lines += ["", "| job | how | seconds | vs local -t 1 | output identical |", "| --- | --- | ---: | ---: | --- |"]
    base = {r["job"]: r["seconds"] for r in result["rows"] if r["way"] == "local -t 1"}
    for r in result["rows"]:
        lines.append(f"| {r['job']} | {r['way']} | {r['seconds']:.2f} | {base[r['job']] / r['seconds']:.2f}x | "
                     f"{'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
