"""`seqsift scan` on Dask: the objects (files) walked here, grouped into tasks of about a partition's
bytes, each group scanned by a worker's Scanner, the same pipeline the local path runs.

A file is never split across tasks (EOF-n offsets and signatures cut at unbounded gaps need the
whole file), so a single huge file is one task.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterator

from seqsift.io.pack import PackedObject
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
                    with open(obj.open_path, "rb") as f:
                        obj.data = f.read()
            except OSError as exc:
                report(obj.path, f"{exc.strerror or exc}, skipped")
                continue
        if group and size + n > partition:
            yield group
            group, size = [], 0
        group.append(obj)
        size += n
    if group:
        yield group
