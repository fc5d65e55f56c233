"""The CPU search: candidate-start ranges cut into work items of equal size, each scanned by the
kernel of _cpu.py on a thread of its own (runner.split). The kernel is called precompiled
(precompiled.py), so a search imports no Numba once it is built.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate

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


def int64s(values=()) -> array:
    """An int64 buffer (array.array), the type of the kernel's ranges and results."""
    return array("q", values)


def concatenated(parts: list[array]) -> array:
    """int64 buffers one after another (the one itself where there is one)."""
    if len(parts) == 1:
        return parts[0]
    out = int64s()
    for part in parts:
        out.extend(part)
    return out


def partition(los, his, parts: int) -> list[tuple[int, array, array]]:
    """Cut candidate-start ranges (int64 buffers) into `parts` work items holding equal numbers of
    starts, in order. An item is (index of its first range in los, its ranges' los, his); a range
    cut in two appears at the end of one item and the start of the next."""
    if parts <= 1 or (len(los) == 1 and his[0] - los[0] < MIN_STARTS_TO_SPLIT):
        return [(0, los, his)]
    cum = _cumulative_sizes(los, his)
    total = int(cum[-1])
    if total < MIN_STARTS_TO_SPLIT:
        return [(0, los, his)]
    cuts = [total * p // parts for p in range(parts + 1)]
    items = []
    for c0, c1 in zip(cuts[:-1], cuts[1:]):
        r0 = bisect_right(cum, c0) - 1
        r1 = bisect_left(cum, c1)
        lo = _copy(los[r0:r1])
        hi = _copy(his[r0:r1])
        lo[0] += c0 - int(cum[r0])
        hi[-1] -= int(cum[r1]) - c1
        items.append((r0, lo, hi))
    return items


def _cumulative_sizes(los, his):
    """0, then the running total of the ranges' sizes: by numpy where the ranges are numpy arrays
    (a batch of records may hold thousands), else in Python (a file's one range, a buffer's few)."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(los, np.ndarray):
        return np.concatenate(([0], np.cumsum(his - los)))
    return [0, *accumulate(hi - lo for lo, hi in zip(los, his))]


def _copy(values):
    """A copy of a slice (numpy slices are views; array.array's are copies already)."""
    return values.copy() if hasattr(values, "copy") else values


class CpuSearcher:
    """Counts or locates one pattern in text ranges, on `threads` threads (runner.split). The
    text is any uint8 buffer (a numpy array, a map, bytes), the ranges int64 buffers; results
    are plain (ints, int64 array.array), so a search over files imports no numpy."""

    def __init__(self, plan: SearchPlan, threads: int):
        self.plan = plan
        self.threads = threads

    def count(self, text, los, his) -> int:
        return sum(self._map(self._count_total, text, los, his))

    def count_ranges(self, text, los, his) -> array:
        """The number of matches starting in each range."""
        totals = int64s(bytes(8 * len(los)))
        for first, tally in self._map(self._count_item, text, los, his):
            for j, t in enumerate(tally, first):
                totals[j] += t
        return totals

    def positions(self, text, los, his) -> array:
        return concatenated(self._map(self._positions_item, text, los, his))

    def _map(self, fn, text, los, his):
        # the kernel takes contiguous int64 ranges (a batch's bounds may be views or narrower)
        los, his = _int64_ranges(los), _int64_ranges(his)
        # one thread: one item (each item more is a kernel call more, ~30 us of Python each)
        items = partition(los, his, self.threads * ITEMS_PER_THREAD if self.threads > 1 else 1)
        return split(lambda item: fn(text, *item), items, self.threads)

    def _count_total(self, text, first, los, his) -> int:
        p = self.plan
        n, _, _ = SCAN_RANGES(text, p.pattern, p.fail, p.probes, los, his, 0, 0, _NO_OUTPUT, False, _NO_OUTPUT)
        return n

    def _count_item(self, text, first, los, his) -> tuple[int, array]:
        p = self.plan
        tally = int64s(bytes(8 * len(los)))
        SCAN_RANGES(text, p.pattern, p.fail, p.probes, los, his, 0, 0, _NO_OUTPUT, False, tally)
        return first, tally

    def _positions_item(self, text, first, los, his) -> array:
        p = self.plan
        found = int64s()
        k, resume, capacity = 0, 0, 1024
        while True:
            out = int64s(bytes(8 * capacity))
            n, k, resume = SCAN_RANGES(text, p.pattern, p.fail, p.probes, los, his, k, resume, out, True, _NO_OUTPUT)
            if not found and k == len(los):
                del out[n:]
                return out
            found.extend(out[:n])
            if k == len(los):
                return found
            capacity = min(capacity * 4, 1 << 24)


def _int64_ranges(values):
    """values as a C-contiguous int64 buffer: as they are where they are one already, else copied."""
    try:
        view = memoryview(values)
        if view.c_contiguous and view.ndim == 1 and view.format in ("q", "l") and view.itemsize == 8:
            return values
    except TypeError:
        pass
    return int64s(int(v) for v in values)


_NO_OUTPUT = int64s()
