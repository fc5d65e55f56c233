"""An index array written to disk as it is made, so that the construction holds a window of it,
never all of it (issue 29: the rank blocks alone are a byte a base, the SA samples an eighth, the
k-mer table 128 MiB).

`seqsift index` fills the rank blocks, the SA samples and the k-mer table in row order (build.py):
each window of rows is appended to an unnamed temporary file beside the index, its CRC-32 carried along, and the
file is copied into the .ssx when that is written (ssx.py). The bytes are those the array would
have had in memory, so the index file is the same either way.
"""

from __future__ import annotations

import os
from typing import BinaryIO  # numpy, imported below, imports typing already

import numpy as np
from isal.isal_zlib import crc32

from seqsift.errors import OutputError

COPY = 1 << 20  # bytes copied at a time into the index file


class Spill:
    """Rows of `dtype` (each of `row_shape`), appended in order to a temporary file in
    `directory` (None: the system's temporary directory); dtype, shape and nbytes as an array's."""

    def __init__(self, directory: str | os.PathLike | None, dtype, row_shape: tuple[int, ...] = ()):
        import tempfile  # here, as shutil below: `map` and `search` import this module, and build no Spill (~5 ms)

        self.where = os.fspath(directory or tempfile.gettempdir())
        try:
            self.file = tempfile.TemporaryFile(prefix=".seqsift-index.", dir=directory)
        except OSError as exc:
            raise OutputError(self.where, exc.strerror or str(exc)) from None
        self.dtype, self.row_shape = np.dtype(dtype), tuple(row_shape)
        self.rows, self.crc = 0, 0

    def append(self, rows: np.ndarray) -> None:
        rows = np.ascontiguousarray(rows, self.dtype)
        if rows.shape[1:] != self.row_shape:
            raise AssertionError(f"rows of shape {rows.shape[1:]} appended to a spill of rows {self.row_shape}")
        if not rows.size:
            return
        data = memoryview(rows).cast("B")
        try:
            self.file.write(data)
        except OSError as exc:  # a full disk: said as the output's error, naming where
            raise OutputError(self.where, exc.strerror or str(exc)) from None
        self.crc = crc32(data, self.crc)
        self.rows += rows.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.rows, *self.row_shape)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def copy_to(self, out: BinaryIO) -> None:
        """Every byte appended, into out (from the file's start, COPY bytes at a time)."""
        self.file.flush()
        self.file.seek(0)
        import shutil

        shutil.copyfileobj(self.file, out, COPY)

    def close(self) -> None:
        self.file.close()
