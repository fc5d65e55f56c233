"""Small files packed back to back into one buffer, so a tree of thousands of files costs one
kernel call per buffer (split across threads) instead of one call per file.

Each file is an object with a start and a size in the buffer (the object descriptors of GPU Gems
3, ch. 35); a search covers only the candidate starts whose match would end inside the same file, so
no match spans two files.
"""

from __future__ import annotations

import os
import stat

import numpy as np

from seqsift.errors import InputError
from seqsift.io.openers import display_name


class FilePack:
    """A reusable buffer of `capacity` bytes holding whole files one after another."""

    def __init__(self, capacity: int):
        self.buffer = np.empty(capacity, np.uint8)
        self.clear()

    def clear(self) -> None:
        self.paths: list[str] = []
        self.starts: list[int] = []
        self.sizes: list[int] = []
        self.used = 0

    def __len__(self) -> int:
        return len(self.paths)

    def room(self) -> int:
        return self.buffer.size - self.used

    def add(self, path: str, size: int) -> bool:
        """Read the whole file (expected `size` bytes) after the files already packed. False, with
        nothing added, when the file has grown past `size` since it was measured."""
        got = read_whole(path, self.buffer[self.used : self.used + size])
        if got is None:
            return False
        self.paths.append(path)
        self.starts.append(self.used)
        self.sizes.append(got)
        self.used += got
        return True

    def ranges(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(file indices, los, his): candidate-start ranges of the files at least m bytes long."""
        starts = np.asarray(self.starts, np.int64)
        his = starts + np.asarray(self.sizes, np.int64) - m + 1
        keep = np.flatnonzero(his > starts)
        return keep, starts[keep], his[keep]


def read_whole(path: str, into: np.ndarray) -> int | None:
    """Read a whole regular file into `into` (sized from its measured length); the bytes read,
    or None when the file holds more than `into` (it grew since it was measured)."""
    try:
        stream = open(path, "rb", buffering=0)
    except OSError as exc:
        raise InputError(display_name(path), exc.strerror or str(exc)) from None
    try:
        view = memoryview(into)
        got = 0
        while got < len(view) and (n := stream.readinto(view[got:])):
            got += n
        return None if stream.read(1) else got
    except OSError as exc:
        raise InputError(display_name(path), f"read failed: {exc.strerror or exc}") from None
    finally:
        stream.close()


def regular_size(path: str) -> int | None:
    """The size of a regular file, or None for stdin, a pipe or a device (which stream instead)."""
    if str(path) == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # reported when it is opened
    return st.st_size if stat.S_ISREG(st.st_mode) else None
