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
