"""Public scanning API: `seqsift.scan(sources, signatures)`; the CLI goes through the same Scanner."""

from __future__ import annotations

import os
from typing import Callable, Iterable, Union

from seqsift.errors import InputError, UsageError
from seqsift.io.pack import PackedObject
from seqsift.io.tree import NAMED, walk
from seqsift.scan.pipeline import DEFAULT_BUFFER, Scanner
from seqsift.scan.results import ObjectResult
from seqsift.scan.signatures import SignatureSet, from_strings, load_databases

Source = Union[str, os.PathLike, bytes, bytearray, memoryview]


def as_signatures(signatures) -> SignatureSet:
    """A SignatureSet from one: a SignatureSet, database path(s), or a list of hex strings /
    (name, hex) pairs / .ndb lines."""
    if isinstance(signatures, SignatureSet):
        return signatures
    paths = database_paths(signatures)
    return load_databases(paths) if paths is not None else from_strings(list(signatures))


def database_paths(signatures) -> list | None:
    """The database files when signatures names some (one path, or a list of existing paths)."""
    if isinstance(signatures, (str, os.PathLike)):
        return [signatures]
    if isinstance(signatures, SignatureSet):
        return None
    items = list(signatures)
    if items and all(isinstance(s, (str, os.PathLike)) and os.path.exists(s) for s in items):
        return items
    return None


def objects_of(sources: Iterable[Source], recursive: bool = False, report: Callable[[str, str], None] | None = None,
               follow_dirs: int = NAMED, follow_files: int = NAMED):
    """PackedObjects in order: in-memory sources named <memory:k>, paths walked (symlinks as
    io.tree.walk's follow levels say: by default only those named). A path that cannot be scanned
    goes to report(path, why), the same callback Scanner.scan takes, or without one is an
    InputError."""
    if report is None:
        def report(path: str, why: str) -> None:
            raise InputError(path, why)
    index = 0
    for k, source in enumerate(sources):
        if isinstance(source, (bytes, bytearray, memoryview)):
            yield PackedObject(index, f"<memory:{k}>", None, data=memoryview(source).cast("B"))
            index += 1
            continue
        if not isinstance(source, (str, os.PathLike)):
            raise UsageError(f"cannot scan a {type(source).__name__}: give paths or bytes")
        for shown, path in walk([os.fspath(source)], recursive, report, follow_dirs, follow_files):
            yield PackedObject(index, shown, path)
            index += 1


def scan(sources: Source | Iterable[Source], signatures, *, recursive: bool = False, backend: str = "auto",
         threads: int | None = None, buffer_size: int = DEFAULT_BUFFER, filter: str = "stride",
         verify: bool = True) -> list[ObjectResult]:
    """Every (object, signature) match: one ObjectResult per object scanned, in order, each with
    its matches (signature name, count, first offsets). Unreadable paths are skipped and listed
    in the result with `error` set."""
    if isinstance(sources, (str, os.PathLike, bytes, bytearray, memoryview)):
        sources = [sources]
    errors: list[tuple[str, str]] = []
    with Scanner(as_signatures(signatures), backend=backend, threads=threads, buffer_size=buffer_size,
                 filter=filter, verify=verify) as scanner:
        report = lambda path, why: errors.append((path, why))  # noqa: E731
        results = list(scanner.scan(objects_of(sources, recursive, report), report))
    return results + [ObjectResult(path, 0, [], why) for path, why in errors]
