"""The machine's cost of a random memory read, measured beside a benchmark: how fast reads at
random in a buffer far larger than the cache come back, many at once (numpy's gather of 4 M
random 8-byte words out of an anonymous map in 2 MiB pages, the first pass apart).

An FM-index search of a genome of gigabases is such reads (one rank block per step); on the
virtual machine of docs/benchmarks.md this cost moved 2-3x between consecutive processes
(22-94 ns, 2026-12-02), so a search time means little without the probe of the same round.

    python benchmarks/memory_probe.py [MIB]
"""

from __future__ import annotations

import mmap
import statistics
import sys
import time

import numpy as np


def random_read_ns(mib: int = 3000, reads: int = 4_000_000, passes: int = 3, seed: int = 29) -> float:
    """Median nanoseconds a read over `passes` gathers, after one unmeasured gather."""
    memory = mmap.mmap(-1, mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        memory.madvise(mmap.MADV_HUGEPAGE)
    words = np.frombuffer(memory, np.uint64)
    words[::512] = 1  # every 4 KiB page made real before it is timed
    where = np.random.default_rng(seed).integers(0, words.size, reads)
    words.take(where).sum()
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        words.take(where).sum()
        times.append(time.perf_counter() - start)
    del words
    memory.close()
    return statistics.median(times) / reads * 1e9


if __name__ == "__main__":
    print(f"{random_read_ns(int(sys.argv[1]) if len(sys.argv) > 1 else 3000):.1f} ns a random read")
