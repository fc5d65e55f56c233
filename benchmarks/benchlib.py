"""Helpers shared by the benchmark scripts: median timing, machine and tool versions."""

from __future__ import annotations

import platform
import statistics
import subprocess
import time
from pathlib import Path

TIMEOUT = 60.0
ROOT = Path(__file__).resolve().parents[1]


def shared_data(name: str) -> Path:
    """A public data file: from $SEQSIFT_SHARED_DATA or ../shared/data beside the checkout, else
    the subset under tests/data (tests/data/README.md says which part of the file each holds)."""
    import os

    folders = [Path(os.environ["SEQSIFT_SHARED_DATA"])] if os.environ.get("SEQSIFT_SHARED_DATA") else []
    for folder in (*folders, ROOT.parent / "shared" / "data", ROOT / "tests" / "data"):
        if (folder / name).exists():
            return folder / name
    raise SystemExit(f"{name}: not in ../shared/data nor tests/data")


def timed(fn, runs: int) -> tuple[float | None, object]:
    """Median seconds of runs calls, or None if the first call took longer than TIMEOUT."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        try:
            result = fn()
        except TimeoutError:
            return None, None
        times.append(time.perf_counter() - start)
        if times[-1] > TIMEOUT:
            return None, result
    return statistics.median(times), result


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def tool_version(argv) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.split("\n")[0]
    except OSError:
        return "not installed"


def bench_args(doc: str, default_json, markdown, add_options=None):
    """Parse --runs/--json/--render (plus add_options(parser)); with --render, print the markdown of
    an earlier result and return None."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=default_json)
    parser.add_argument("--render", type=Path, help="print the markdown of an earlier --json file and stop")
    if add_options:
        add_options(parser)
    args = parser.parse_args()
    if args.render:
        print(markdown(json.loads(args.render.read_text())))
        return None
    return args


def run_process(argv: list[str], ok=(0, 1), env=None, timeout: float | None = None) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds: user + system of the process and its children, stdout) of one
    whole process, as a user times a command; an exit status outside `ok` is an error."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, env=env, timeout=timeout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in ok:
        raise RuntimeError(f"{' '.join(map(str, argv[:5]))} exited {r.returncode}: {r.stderr.decode(errors='replace')[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.stdout


def process_rounds(commands: dict[str, list[str]], runs: int, **kw) -> dict[str, dict]:
    """Every command run `runs` times in rounds, each once a round (so the drift of a shared
    machine falls on all alike): per command the median wall and CPU seconds, every time, and
    the stdout of its last run."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    outs: dict[str, bytes] = {}
    for _ in range(runs):
        for name, argv in commands.items():
            wall, cpu, outs[name] = run_process(argv, **kw)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: {"wall": statistics.median(walls[name]), "cpu": statistics.median(cpus[name]),
                   "walls": walls[name], "cpus": cpus[name], "stdout": outs[name]} for name in commands}


def fixed_and_per_byte(tiny: dict, large: dict, size: int, key: str = "wall") -> tuple[float, float]:
    """(start-up seconds, seconds per GB) of a command from its run on a tiny input and on `size`
    bytes (medians of `key`: wall or cpu): the fixed cost, and the rest spread over the bytes."""
    return tiny[key], max(large[key] - tiny[key], 0.0) / size * 1e9


def crossover(ours: tuple[float, float], peer: tuple[float, float]) -> float | None:
    """Input bytes from which our command (start-up s, s per GB) is faster than the peer's: 0 when
    it is faster at any size, None when never (its per-byte cost is not below the peer's)."""
    (f0, b0), (f1, b1) = ours, peer
    if f0 <= f1 and b0 <= b1:
        return 0.0
    if b0 >= b1:
        return None
    return (f0 - f1) / (b1 - b0) * 1e9


def ratio(peer_seconds: float, our_seconds: float) -> str:
    """The peer's time over ours (above 1: ours is faster), cut (never rounded up) to 2 decimals."""
    import math

    return f"{math.floor(peer_seconds / our_seconds * 100) / 100:.2f}x"
