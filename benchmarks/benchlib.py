"""Helpers shared by the benchmark scripts: median timing, machine and tool versions."""

from __future__ import annotations

import platform
import statistics
import subprocess
import time

TIMEOUT = 60.0


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
