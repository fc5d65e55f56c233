"""`seqsift find` on Dask: inputs cut into byte ranges (each read with the pattern's P-1 overlap
after it) or record batches, small files grouped, each group searched by a worker's FindJob, the
same job the local path runs, through one worker function (search_part) for the command and
seqsift.distributed alike.

A range [lo, hi) is searched over [lo, hi + P - 1), so its matches are exactly those starting in
it: ranges tile a file, and every match is reported once, by the range holding its start.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import numpy as np

from seqsift.backend import check_backend, check_threads
from seqsift.errors import FormatError, InputError, SeqsiftError, UsageError
from seqsift.find.api import FindJob, PatternSet, ReadOnly, RecordHits, as_pattern, memory_view, sequence_pattern
from seqsift.io.pack import regular_size
from seqsift.io.chunks import ChunkReader
from seqsift.io.fastx import SequenceBatch, read_batches
from seqsift.io.openers import STDIN, display_name, open_binary, read_range
from seqsift.runner import Work, tagged

if TYPE_CHECKING:
    from seqsift.find.api import Source

DEFAULT_PARTITION = 64 << 20


@dataclass(frozen=True)
class Failed:
    """In place of an input's remaining results: reading it failed (message names the file), and
    the inputs after it are still searched. A plain value, so a worker can send it back."""

    message: str

    def throw(self):
        raise SeqsiftError(self.message)


def _failed(parts: Iterator, k: int) -> Iterator:
    """(k, part) per part, then (k, Failed) if reading input k fails: its error stays in its place
    however far ahead of the results the parts are read."""
    try:
        for part in parts:
            yield k, part
    except (InputError, FormatError) as exc:
        yield k, Failed(str(exc))


@dataclass(frozen=True)
class Span:
    """Bytes [lo, hi) of input number `source`, searched with the overlap after them: read from
    path by the worker, or carried in data (which starts at lo)."""

    source: int
    lo: int
    hi: int
    shown: str
    path: str | None = None
    data: bytes | None = None
    failed: Failed | None = None


def work(pattern: bytes | tuple[bytes, ...], chunk_size: int, backend: str = "auto", threads: int | None = None,
         job: FindJob | PatternSet | None = None, ignore_case: bool = False) -> Work:
    """search_part on each part, by a FindJob (a PatternSet for a tuple of patterns, record
    batches only): job (or one made) here, or on each worker from the pattern sent there (each
    task running at once with a job of its own). backend and threads are checked here, as the
    workers will take them."""
    check_backend(backend)
    if threads is not None:
        check_threads(threads)
    options = (chunk_size, backend, threads, ignore_case)

    def share(client):
        """The job made on each worker (a client's; seqsift.distributed is imported for one only)."""
        from seqsift import distributed

        return distributed.share_object(client, pattern, _new_job, options, exclusive=True)

    return Work(search_part, (lambda: job) if job is not None else (lambda: _new_job(pattern, *options)), share)


def _workers_see(client, paths) -> bool:
    """Whether the client's workers see these files where this machine does."""
    from seqsift import distributed

    return distributed.workers_see(client, paths, thorough=False)


def _new_job(pattern: bytes | tuple[bytes, ...], chunk_size: int, backend: str, threads: int | None,
             ignore_case: bool = False) -> FindJob | PatternSet:
    """A worker's job: one thread unless told, as Dask runs one task per worker thread."""
    if isinstance(pattern, tuple):
        return PatternSet([_new_job(p, chunk_size, backend, threads, ignore_case) for p in pattern])
    return FindJob(pattern, backend=backend, threads=threads or 1, chunk_size=chunk_size, ignore_case=ignore_case)


def search_sources(job: Work, sources: list[Source], m: int, partition: int, count_only: bool, client=None,
                   progress=None):
    """(input number, result) per span of every source, in order: the offsets (or count) of the
    matches of a pattern of m bytes starting in the span. On a client, files the workers see
    travel as paths, anything else as bytes."""
    named = [s for s in sources if isinstance(s, (str, os.PathLike)) and str(s) != STDIN]
    by_path = client is None or _workers_see(client, named)
    spans = spans_of(sources, m, partition, by_path)
    pairs = ((g, (g, count_only)) for g in groups(spans, partition))
    for g, results in tagged(job, pairs, 1, client, progress):
        for span, result in zip(g, results):
            yield span.source, result


def search_records(job: Work, sources: list, m: int, partition: int, revcomp: bool, count_only: bool, client=None,
                   progress=None, bases=None):
    """(input number, RecordHits or count) per batch of records of about `partition` bases of
    every source, in order: FindJob.record_hits over every source, on this machine or a client.
    progress(1) as each batch is done; bases(n) as the next batch is read (here, where batches
    run one at a time: as the batch before is done)."""
    def pairs():
        for k, source in enumerate(sources):
            for k, part in _failed(record_parts(source, m, partition, revcomp, count_only), k):
                yield k, part
                if bases and not isinstance(part, Failed):
                    bases(int(part[0].seq.size))

    return tagged(job, pairs(), 1, client, progress)


def search_part(job: FindJob, part):
    """The engine's chunk function: spans of bytes (search_spans) or a batch of records
    (search_batch)."""
    if isinstance(part, Failed):
        return part
    return search_batch(job, part) if isinstance(part[0], SequenceBatch) else search_spans(job, part)


def search_spans(job: FindJob, part: tuple[list[Span], bool]) -> list[np.ndarray | int]:
    """Per span: the absolute offsets of matches starting in it, or their count."""
    spans, count_only = part
    results = []
    for span in spans:
        data = span.data
        if span.failed is not None:
            results.append(span.failed)
            continue
        if data is None:  # a range of a file every worker sees, with the overlap after it
            try:
                data = read_range(span.path, span.lo, span.hi - span.lo + len(job.pattern) - 1, span.shown)
            except InputError as exc:
                results.append(Failed(str(exc)))
                continue
        found = list(job.offsets(data, count_only))
        if count_only:
            results.append(int(sum(found)))
        else:
            results.append((np.concatenate(found) if found else np.empty(0, np.int64)) + span.lo)
    return results


def search_batch(job: FindJob | PatternSet, part) -> RecordHits | tuple[RecordHits, np.ndarray] | int:
    """One batch of records: the very per-batch search of FindJob.record_hits (or PatternSet's)."""
    batch, revcomp, count_only = part
    return job.batch_hits(batch, revcomp, count_only)


def spans_of(sources: list[Source], m: int, partition: int, by_path: bool) -> Iterator[Span]:
    """Spans of at most `partition` bytes over each source in turn. by_path: the workers see the
    files, so regular files travel as (path, range); anything else is read here and sent. A
    source that fails while read here ends with a span carrying its error."""
    for k, source in enumerate(sources):
        for k, span in _failed(_spans_of(k, source, m, partition, by_path), k):
            yield Span(k, 0, 0, "", failed=span) if isinstance(span, Failed) else span


def _spans_of(k: int, source: Source, m: int, partition: int, by_path: bool) -> Iterator[Span]:
    """Source k's spans (spans_of)."""
    named = isinstance(source, (str, os.PathLike))
    shown = display_name(source) if named else getattr(source, "name", "(stream)")
    size = regular_size(source) if named else None
    data = memory_view(source) if not named else _generated(source, shown) if size == 0 else None
    if data is not None:
        shown = shown if named else "(memory)"
        for lo in range(0, max(data.size - m + 1, 1), partition):
            yield Span(k, lo, min(lo + partition, data.size), shown, data=data[lo : lo + partition + m - 1].tobytes())
        return
    if by_path and size is not None:
        path = os.path.abspath(source)
        for lo in range(0, max(size, 1), partition):
            yield Span(k, lo, min(lo + partition, size), shown, path=path)
        return
    if named:
        stream = open_binary(source)
    elif hasattr(source, "readinto"):
        stream = source
    elif hasattr(source, "read"):
        stream = io.BufferedReader(ReadOnly(source))
    else:
        raise UsageError(f"cannot search a {type(source).__name__}: give bytes, a numpy uint8 array, a path or a "
                         "binary file")
    try:
        reader = ChunkReader(stream, partition, m - 1, shown)
        buf = np.empty(reader.buffer_size, np.uint8)
        empty = True
        while (got := reader.fill(buf)) is not None:
            start, n = got
            empty = False
            yield Span(k, start, start + n, shown, data=buf[:n].tobytes())
        if empty:
            yield Span(k, 0, 0, shown, data=b"")
    finally:
        if named and str(source) != STDIN:
            stream.close()


GENERATED_LIMIT = 64 << 20


def _generated(path, shown: str) -> np.ndarray:
    """A regular file whose size reads 0: empty, or written by the kernel as it is read (procfs,
    sysfs), whose size says nothing and whose content is per process (/proc/self/...: a worker
    would read its own). Read here, whole, up to GENERATED_LIMIT bytes, past which it is an error
    naming it: /proc/self/pagemap reads as 256 GiB of zeros, which streamed to the workers lost
    them one after another while the run never ended (2026-12-01)."""
    with open_binary(path) as stream:
        try:
            data = stream.read(GENERATED_LIMIT + 1)
        except OSError as exc:
            raise InputError(shown, f"read failed: {exc.strerror or exc}") from None
    if len(data) > GENERATED_LIMIT:
        raise InputError(shown, f"its size reads 0 but it holds more than {GENERATED_LIMIT >> 20} MiB (a file the "
                         "kernel generates as it is read): not searched")
    return np.frombuffer(data, np.uint8)


def groups(spans: Iterator[Span], partition: int) -> Iterator[list[Span]]:
    """Consecutive spans gathered into tasks of about `partition` bytes (many small files in one)."""
    group, size = [], 0
    for span in spans:
        if group and size + span.hi - span.lo > partition:
            yield group
            group, size = [], 0
        group.append(span)
        size += span.hi - span.lo
    if group:
        yield group


def record_parts(source, m: int, partition: int, revcomp: bool, count_only: bool):
    """Record batches of about `partition` bases, each piece carrying the P-1 overlap."""
    for batch in read_batches(source, partition, overlap=m - 1):
        yield batch, revcomp, count_only


# -- from Python: seqsift.find's functions on a client (seqsift.distributed names them) ------------
def find(client, pattern, source, *, backend: str = "auto", threads: int | None = None, chunk_size: int = 64 << 20,
         partition: int | None = None) -> np.ndarray:
    """seqsift.find on the cluster: every offset of pattern in source (bytes, array or path)."""
    parts = list(_find_spans(client, pattern, source, False, backend, threads, chunk_size, partition))
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


def find_count(client, pattern, source, *, backend: str = "auto", threads: int | None = None,
               chunk_size: int = 64 << 20, partition: int | None = None) -> int:
    """seqsift.find_count on the cluster."""
    return int(sum(_find_spans(client, pattern, source, True, backend, threads, chunk_size, partition)))


def find_records(client, pattern, source, *, revcomp: bool = False, backend: str = "auto", threads: int | None = None,
                 chunk_size: int = 64 << 20, partition: int | None = None) -> RecordHits:
    """seqsift.find_records on the cluster: the records are read here, in batches of partition bases."""
    pattern = as_pattern(pattern)
    m = len(sequence_pattern(pattern))
    job = work(pattern, chunk_size, backend, threads)
    found = [hits for _, hits in search_records(job, [source], m, partition or DEFAULT_PARTITION, revcomp, False, client)]
    for hits in found:
        if isinstance(hits, Failed):
            hits.throw()
    return RecordHits.concat(found)


def _find_spans(client, pattern, source, count_only, backend, threads, chunk_size, partition):
    pattern = as_pattern(pattern)
    job = work(pattern, chunk_size, backend, threads)
    for _, result in search_sources(job, [source], len(pattern), partition or DEFAULT_PARTITION, count_only, client):
        if isinstance(result, Failed):
            result.throw()
        yield result
