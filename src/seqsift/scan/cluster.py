"""`seqsift scan` on Dask: the objects (files) walked here, grouped into tasks of about a partition's
bytes, each group scanned by a worker's Scanner, the same pipeline the local path runs.

A file is never split across tasks (EOF-n offsets and signatures cut at unbounded gaps need the
whole file), so a single huge file is one task.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterator

from seqsift.io.openers import STDIN, open_regular
from seqsift.io.pack import PackedObject
from seqsift import distributed
from seqsift.backend import check_backend, check_threads
from seqsift.scan.api import as_signatures, database_paths, objects_of
from seqsift.runner import Work, ordered
from seqsift.scan.pipeline import Scanner
from seqsift.scan.results import ObjectResult
from seqsift.scan.signatures import SignatureSet, load_databases

DEFAULT_PARTITION = 64 << 20


@dataclass
class Scanned:
    """One task's results in object order, the paths it could not read, and what it scanned."""

    results: list[ObjectResult]
    errors: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    bytes: int = 0


def scanner_from_files(paths: tuple[str, ...], options: dict) -> Scanner:
    return scanner_from_set(load_databases(list(paths)), options)


def scanner_from_set(signatures: SignatureSet, options: dict) -> Scanner:
    """A worker's Scanner: one filter thread unless told, as Dask runs one task per worker thread."""
    return Scanner(signatures, **{"threads": 1, **options})


def scan_objects(scanner: Scanner, objects: list[PackedObject]) -> Scanned:
    out = Scanned([])
    files, size = scanner.stats.files, scanner.stats.bytes
    out.results = list(scanner.scan(iter(objects), lambda path, why: out.errors.append((path, why))))
    out.files, out.bytes = scanner.stats.files - files, scanner.stats.bytes - size
    return out


def groups(objects: Iterator[PackedObject], partition: int, by_path: bool,
           report: Callable[[str, str], None]) -> Iterator[list[PackedObject]]:
    """Consecutive objects in tasks of about `partition` bytes. by_path: the workers see the
    files, which travel as absolute paths; otherwise their bytes are read here and sent."""
    group, size = [], 0
    for obj in objects:
        if obj.data is not None:
            obj.data, n = bytes(obj.data), len(obj.data)
        else:
            try:
                n = os.path.getsize(obj.open_path)
                if by_path:
                    obj.open_path = os.path.abspath(obj.open_path)
                else:
                    with open_regular(obj.open_path) as f:
                        obj.data = f.read()
            except OSError as exc:  # InputError (not a regular file) included
                report(obj.path, f"{getattr(exc, 'why', None) or exc.strerror or exc}, skipped")
                continue
        if group and size + n > partition:
            yield group
            group, size = [], 0
        group.append(obj)
        size += n
    if group:
        yield group


def work(signatures, options: dict) -> Work:
    """scan_objects on each group of files, by a Scanner with these options (threads aside): made
    here from the signatures, or on each worker from the database files (signatures naming
    some; read by path where every worker sees them, else sent) or from the set, sent."""
    check_backend(options.get("backend", "auto"))
    paths = database_paths(signatures)
    if paths is not None:
        share = lambda client: distributed.share_files(client, scanner_from_files, paths, (options,),  # noqa: E731
                                                       exclusive=True)
    else:
        signatures = as_signatures(signatures)
        share = lambda client: distributed.share_object(client, signatures, scanner_from_set, (options,),  # noqa: E731
                                                        exclusive=True)
    return Work(scan_objects, lambda: scanner_from_set(as_signatures(signatures), options), share)


def scan_groups(job: Work, objects: Iterator[PackedObject], report: Callable[[str, str], None], partition: int,
                client=None, roots: list = (), progress=None) -> Iterator[Scanned]:
    """job on groups of objects of about `partition` bytes, in order, each group's Scanned: on a
    client, files travelling as paths when every worker sees the roots they were walked from."""
    by_path = client is None or (STDIN not in roots and distributed.workers_see(client, list(roots), False))
    return ordered(job, groups(objects, partition, by_path, report), 1, client, progress)


# -- from Python: seqsift.scan on a client (seqsift.distributed names it) -------------------------------
def scan(client, sources, signatures, *, recursive: bool = False, backend: str = "auto", threads: int | None = None,
         buffer_size: int = 8 << 20, filter: str = "stride", verify: bool = True, partition: int | None = None):
    """seqsift.scan on the cluster: one ObjectResult per object, in order; unreadable paths last,
    with error set."""
    check_backend(backend)
    if isinstance(sources, (str, os.PathLike, bytes, bytearray, memoryview)):
        sources = [sources]
    sources = list(sources)
    options = {"backend": backend, "threads": 1 if threads is None else check_threads(threads),
               "buffer_size": buffer_size, "filter": filter, "verify": verify}
    if database_paths(signatures) is not None:
        as_signatures(signatures)  # a malformed database fails here, as locally
    job = work(signatures, options)
    errors: list[tuple[str, str]] = []
    report = lambda path, why: errors.append((path, why))  # noqa: E731
    roots = [os.fspath(s) for s in sources if isinstance(s, (str, os.PathLike))]
    results = []
    for done in scan_groups(job, objects_of(sources, recursive, report), report, partition or DEFAULT_PARTITION,
                            client, roots):
        errors += done.errors
        results += done.results
    return results + [ObjectResult(path, 0, [], why) for path, why in errors]
