"""Writers shared by the API and the CLI: atomic output files, TSV and JSON Lines rows.

An output file is written under a temporary name beside its target and renamed
only when the run succeeds, so a failed or interrupted run leaves no half file.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
from typing import BinaryIO, Iterable, Iterator, Sequence

from seqsift.errors import OutputError

FORMATS = ("tsv", "json")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike | None) -> Iterator[BinaryIO]:
    """Yield a binary stream: stdout for None or '-', else a temp file renamed to path on success.
    A symlink is followed (its target is replaced, not the link); an existing target that is not
    a regular file (/dev/null, a FIFO, a terminal) is written directly, never replaced."""
    if path is None or str(path) == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    target = os.path.realpath(os.fspath(path))
    if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
        with open(target, "wb") as out:
            yield out
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".part", dir=os.path.dirname(target))
    except OSError as exc:
        raise OutputError(os.fspath(path), exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            yield out
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class RowWriter:
    """Rows of named fields as TSV lines or JSON Lines; the JSON form opens with a provenance object."""

    def __init__(self, out: BinaryIO, fields: Sequence[str], fmt: str = "tsv", provenance: dict | None = None):
        if fmt not in FORMATS:
            raise ValueError(f"format {fmt!r} is not one of {FORMATS}")
        self.out = out
        self.fields = tuple(fields)
        self.fmt = fmt
        if fmt == "json" and provenance is not None:
            self._write_json(provenance)

    def write_rows(self, rows: Iterable[Sequence]) -> None:
        if self.fmt == "tsv":
            self.out.write(b"".join(("\t".join(map(str, row)) + "\n").encode() for row in rows))
        else:
            for row in rows:
                self._write_json(dict(zip(self.fields, row)))

    def _write_json(self, obj: dict) -> None:
        self.out.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
