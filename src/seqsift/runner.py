"""Run an engine's work on threads or on a Dask client: the one place seqsift starts threads for
computing (the I/O stages of a pipeline keep their own reader threads).

Two shapes of work, both on one thread pool per process (threads start on first use and are
shared by every engine and every object; none is started for threads=1):
- `ordered(work, parts, threads, client)`: a job per part (a batch of reads, of queries, of
  files), results in input order with a bounded number of parts in flight, so memory stays
  bounded however long the input. With a Dask client the same work runs on the cluster
  (`on_client`, through distributed's sharing and submission), with the same results.
- `split(fn, items, threads)`: one buffer cut into items searched at once (find's ranges of
  candidate starts, scan's slices of a buffer), results in item order. `threads` helpers take
  items as they free up, so unequal items even out; a pool thread splitting again (a part of
  `ordered` cut further) takes items itself, so nested use never waits on a busy pool.

threads=1 runs everything in the calling thread: `-t 1` is one core.
"""

from __future__ import annotations

import functools
import itertools
import os
import _thread  # threading's own primitives: a command that starts no thread skips its import (~1.4 ms)
from collections import deque

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator
    from concurrent.futures import ThreadPoolExecutor

_LOCK = _thread.allocate_lock()
_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
IN_FLIGHT_PER_THREAD = 2  # parts submitted ahead per thread: a thread never waits for the next part
_THIS = None  # threading.local() marking the pool's threads, made with the first pool


def _mark_pool_thread() -> None:
    _THIS.in_pool = True


def pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool, with room for at least `threads` tasks at once. It starts a thread only
    when no idle one is left, so its size is a ceiling, not a cost; a pool too small for a
    request is replaced by a larger one (tasks already queued on the old one still run)."""
    from concurrent.futures import ThreadPoolExecutor  # here: a command that never needs the pool skips its import (~4 ms)

    global _POOL, _POOL_SIZE, _THIS
    with _LOCK:
        if _THIS is None:
            import threading  # imported by concurrent.futures already

            _THIS = threading.local()
        if _POOL is None or _POOL_SIZE < threads:
            old = _POOL
            _POOL_SIZE = max(threads, 4 * (os.cpu_count() or 1), 32)
            _POOL = ThreadPoolExecutor(_POOL_SIZE, thread_name_prefix="seqsift", initializer=_mark_pool_thread)
            if old is not None:
                old.shutdown(wait=False)
        return _POOL


# -- one buffer, cut into items ---------------------------------------------------------------------
def split(fn: Callable, items: list, threads: int, *, slot: bool = False) -> list:
    """[fn(item) for item in items] on up to `threads` threads of the pool (the calling thread one
    of them when it is itself a pool thread).
    slot=True calls fn(item, k), k < threads being the worker running it, unique among the items
    running at once (an index into per-thread scratch buffers)."""
    workers = min(threads, len(items))
    if workers <= 1:
        return [fn(item, 0) if slot else fn(item) for item in items]
    results: list = [None] * len(items)
    following = itertools.count()  # next() is atomic under the GIL: each item is taken once
    failed: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in iter(following.__next__, None):
                if i >= len(items) or failed:
                    return
                results[i] = fn(items[i], k) if slot else fn(items[i])
        except BaseException as exc:
            failed.append(exc)

    # A thread of the pool (running a part of ordered()) works on its items itself, and drops the
    # helpers not started yet (the pool busy with other parts): nested use never waits on itself.
    # Any other thread hands every item to the pool and waits, leaving its core to the helpers.
    nested = _THIS is not None and getattr(_THIS, "in_pool", False)  # no pool yet: not one of its threads
    helpers = [pool(workers).submit(work, k) for k in range(1 if nested else 0, workers)]
    if nested:
        work(0)
    for helper in helpers:
        if not (nested and helper.cancel()):
            helper.result()
    if failed:
        raise failed[0]
    return results


def cuts(lo: int, hi: int, parts: int, step: int = 1) -> list[tuple[int, int]]:
    """[lo, hi) in at most `parts` consecutive ranges of about equal size, inner cuts on multiples
    of `step` from lo; empty ranges dropped."""
    points = [lo + ((hi - lo) * k // parts) // step * step for k in range(parts)] + [hi]
    return [(points[k], points[k + 1]) for k in range(parts) if points[k] < points[k + 1]]


# -- a job per part -------------------------------------------------------------------------------------
class Work:
    """An engine's job on every part: run(value, part), run a module-level function so a Dask
    worker can run it too. local(): the object every part needs, made here (an index, a
    database, a compiled job), called only for a run on this machine's threads; share(client):
    the same object made on each worker (a distributed.Resource, from distributed.share_files or
    share_object), called only when a client is given. A plain class, not a NamedTuple: typing
    costs every command ~6 ms to import (docs/benchmarks.md, "Start-up")."""

    __slots__ = ("run", "local", "share")

    def __init__(self, run: Callable[[Any, Any], Any], local: Callable[[], Any],
                 share: Callable[[Any], Any] | None = None):
        self.run, self.local, self.share = run, local, share


def ordered(work: Work, parts: Iterable, threads: int = 1, client=None,
            progress: Callable[[int], None] | None = None) -> Iterator:
    """work.run(value, part) for every part, results in input order: on a Dask client when one is
    given, else on `threads` threads of this process (threads=1: in the calling thread, one part
    at a time). At most IN_FLIGHT_PER_THREAD parts per thread are in flight. progress(1) is
    called as each result is taken. An error raised by a part, or by the parts iterator, comes
    after the results of every earlier part, as in a loop."""
    if client is not None:
        if work.share is None:
            raise TypeError(f"{work.run.__qualname__}: this work has no way to reach Dask workers (share)")
        yield from on_client(client, work.share(client), work.run, parts, progress)
        return
    run = functools.partial(work.run, work.local())
    parts = iter(parts)
    if threads > 1:  # a single part runs here, as with one thread: no pool to start (~5 ms of a tiny input)
        parts, single = _single(parts)
        threads = 1 if single else threads
    if threads == 1:
        for part in parts:
            yield run(part)
            if progress:
                progress(1)
        return
    import threading

    gate = threading.BoundedSemaphore(threads)  # the pool may be larger: `threads` run at once

    def one(part):
        with gate:
            return run(part)

    executor = pool(threads * (IN_FLIGHT_PER_THREAD + 1))
    yield from _in_order(lambda part: executor.submit(one, part), lambda future: future.result(), parts,
                         IN_FLIGHT_PER_THREAD * threads, progress)


def _single(parts: Iterator) -> tuple[Iterator, bool]:
    """(the same parts, whether there is only one), reading at most two ahead. An error met
    reading the second comes after the first, as in a loop."""
    first = next(parts, _NONE)
    if first is _NONE:
        return iter(()), True
    try:
        second = next(parts, _NONE)
    except Exception as exc:  # bad input: the first part, then the error
        return _then_raise(first, exc), False
    if second is _NONE:
        return iter((first,)), True
    return itertools.chain((first, second), parts), False


def _then_raise(part, exc: Exception) -> Iterator:
    yield part
    raise exc


_NONE = object()


def on_client(client, resource, run: Callable, parts: Iterable, progress: Callable[[int], None] | None = None,
              window: int = 0) -> Iterator:
    """run(shared object, part) for every part on a Dask cluster, results in input order. run is
    a module-level function; resource says how each worker makes the shared object
    (distributed.share_files or share_object); window: parts in flight (0: twice the cluster's
    threads, at least 4). A part travels inside its task, not scattered ahead: a task holding its
    own input is what Dask can recompute when the worker holding it dies."""
    from seqsift import distributed

    window = window or max(4, 2 * sum(client.nthreads().values()))
    yield from _in_order(lambda part: distributed.submit_part(client, resource, run, part), distributed.take_part,
                         parts, window, progress)


def _in_order(submit: Callable, take: Callable, parts: Iterable, window: int, progress) -> Iterator:
    """take(submit(part)) for every part in input order, with at most `window` parts submitted and
    not yet taken (plus the one just submitted). An error met reading the parts comes after every
    earlier part's result; parts not taken when the caller stops are cancelled."""
    pending: deque = deque()

    def taken():
        result = take(pending.popleft())
        if progress:
            progress(1)
        return result

    parts = iter(parts)
    try:
        while True:
            try:
                part = next(parts)
            except StopIteration:
                break
            except Exception:  # bad input met while reading ahead: earlier parts come first (Ctrl-C at once)
                while pending:
                    yield taken()
                raise
            pending.append(submit(part))
            if len(pending) > window:
                yield taken()
        while pending:
            yield taken()
    finally:
        for handle in pending:  # stopped early: queued parts are dropped, running ones finish
            handle.cancel()


# -- parts tagged with their input ------------------------------------------------------------------
def tagged(work: Work, pairs: Iterable[tuple[Any, Any]], threads: int = 1, client=None,
           progress: Callable[[int], None] | None = None) -> Iterator[tuple[Any, Any]]:
    """ordered() over (tag, part) pairs: yields (tag, result), the tag never leaving here."""
    tags: deque = deque()

    def parts():
        for tag, part in pairs:
            tags.append(tag)
            yield part

    for result in ordered(work, parts(), threads, client, progress):
        yield tags.popleft(), result


def by_source(count: int, pairs: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Iterator]]:
    """(k, iterator of input k's results) for every k < count in order, inputs with no
    parts included, from (k, result) pairs in input order. Consume each before the next."""
    following = 0
    for k, group in itertools.groupby(pairs, key=lambda t: t[0]):
        for empty in range(following, k):
            yield empty, iter(())
        yield k, (result for _, result in group)
        following = k + 1
    for empty in range(following, count):
        yield empty, iter(())
