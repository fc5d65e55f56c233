"""Work on a stream of items with a few threads, results in input order."""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor


def in_order(work, batches, threads: int):
    """work(batch) for every batch, results in input order. One thread does everything itself
    (so -t 1 is one core); more keep a few batches in flight on a pool while this thread parses."""
    if threads == 1:
        yield from map(work, batches)
        return
    with ThreadPoolExecutor(threads) as pool:
        pending: deque = deque()
        for batch in batches:
            pending.append(pool.submit(work, batch))
            if len(pending) > 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
