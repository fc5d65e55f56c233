"""The CPU search: candidate-start ranges cut into work items of equal size, each scanned by the
kernel of _cpu.py on a thread of its own (runner.split). The kernel is called precompiled
(precompiled.py), so a search imports no Numba once it is built.
"""

from __future__ import annotations

import numpy as np

from seqsift.find.plan import SearchPlan
from seqsift.precompiled import Kernel
from seqsift.runner import split

# Work items per thread: more than one evens out ranges that take longer (repeats, many hits).
ITEMS_PER_THREAD = 4
# Below this many candidate starts, one work item: the thread hand-off would cost more.
MIN_STARTS_TO_SPLIT = 1 << 20

# text, pattern, fail, probes, los, his, k, resume, out, store, tally -> (n, k, resume)
SCAN_RANGES = Kernel("seqsift.find._cpu", "scan_ranges",
                     "uint8[:] uint8[:] int32[:] int64[:] int64[:] int64[:] int64 int64 int64[:] bool int64[:]", results=3)


def partition(los: np.ndarray, his: np.ndarray, parts: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Cut candidate-start ranges into `parts` work items holding equal numbers of starts, in
    order. An item is (index of its first range in los, its ranges' los, his); a range cut in two
    appears at the end of one item and the start of the next."""
    if parts <= 1 or (los.size == 1 and his[0] - los[0] < MIN_STARTS_TO_SPLIT):
        return [(0, los, his)]
    sizes = his - los
    total = int(sizes.sum())
    if total < MIN_STARTS_TO_SPLIT:
        return [(0, los, his)]
    cum = np.concatenate(([0], np.cumsum(sizes)))
    cuts = [total * p // parts for p in range(parts + 1)]
    items = []
    for c0, c1 in zip(cuts[:-1], cuts[1:]):
        r0 = int(np.searchsorted(cum, c0, "right")) - 1
        r1 = int(np.searchsorted(cum, c1, "left"))
        lo = los[r0:r1].copy()
        hi = his[r0:r1].copy()
        lo[0] += c0 - cum[r0]
        hi[-1] -= cum[r1] - c1
        items.append((r0, lo, hi))
    return items


class CpuSearcher:
    """Counts or locates one pattern in text ranges, on `threads` threads (runner.split)."""

    def __init__(self, plan: SearchPlan, threads: int):
        self.plan = plan
        self.threads = threads

    def count(self, text: np.ndarray, los: np.ndarray, his: np.ndarray) -> int:
        return sum(self._map(self._count_total, text, los, his))

    def count_ranges(self, text: np.ndarray, los: np.ndarray, his: np.ndarray) -> np.ndarray:
        """The number of matches starting in each range."""
        totals = np.zeros(los.size, np.int64)
        for first, tally in self._map(self._count_item, text, los, his):
            totals[first : first + tally.size] += tally
        return totals

    def positions(self, text: np.ndarray, los: np.ndarray, his: np.ndarray) -> np.ndarray:
        found = self._map(self._positions_item, text, los, his)
        return np.concatenate(found) if found else np.empty(0, np.int64)

    def _map(self, fn, text, los, his):
        # the kernel takes contiguous int64 ranges (a batch's bounds may be views or narrower)
        los, his = np.ascontiguousarray(los, np.int64), np.ascontiguousarray(his, np.int64)
        items = partition(los, his, self.threads * ITEMS_PER_THREAD)
        return split(lambda item: fn(text, *item), items, self.threads)

    def _count_total(self, text, first, los, his) -> int:
        p = self.plan
        n, _, _ = SCAN_RANGES(text, p.pattern, p.fail, p.probes, los, his, 0, 0, _NO_OUTPUT, False, _NO_OUTPUT)
        return n

    def _count_item(self, text, first, los, his) -> tuple[int, np.ndarray]:
        p = self.plan
        tally = np.zeros(los.size, np.int64)
        SCAN_RANGES(text, p.pattern, p.fail, p.probes, los, his, 0, 0, _NO_OUTPUT, False, tally)
        return first, tally

    def _positions_item(self, text, first, los, his) -> np.ndarray:
        p = self.plan
        pieces = []
        k, resume, capacity = 0, 0, 1024
        while True:
            out = np.empty(capacity, np.int64)
            n, k, resume = SCAN_RANGES(text, p.pattern, p.fail, p.probes, los, his, k, resume, out, True, _NO_OUTPUT)
            pieces.append(out[:n])
            if k == los.size:
                return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
            capacity = min(capacity * 4, 1 << 24)


_NO_OUTPUT = np.empty(0, np.int64)
