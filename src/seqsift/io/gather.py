"""Many small files read into one buffer by compiled code: the open, size, read and close of
each file are calls into the C library from a kernel (_gather_cpu.py), not Python's wrappers.

Why: a tree of small files costs the Python of its system calls more than their work (8,318
files of 13 KB, 2026-12-02: ~12 us a file through os.open, os.fstat, os.readv and os.close, where
a C loop of the same calls takes ~6 us, and rg -j1 ~11 us a file in all). The loop is only the
common case: anything else about a file (it cannot be opened, is not a regular file, is large,
fails a read) stops it at that file, which the caller handles with its own checks and messages.
"""

from __future__ import annotations

import os
import sys
from array import array
from itertools import accumulate

from seqsift.io.openers import OPEN_FLAGS, STDIN
from seqsift.precompiled import Kernel

# Why the loop stopped (the kernel's third result).
DONE, ROOM, ALONE = 0, 1, 2
# Paths named to one kernel call at most: a caller that starts again after a failing file
# (find's `isolated`) encodes at most this many names again.
WINDOW = 4096

# names, starts, first, flags, buffer, used, largest, los, his -> (next file, bytes used, why)
_GATHER = Kernel("seqsift.io._gather_cpu", "gather", "uint8[:] int64[:] int64 int64 uint8[:] int64 int64 int64[:] int64[:]",
                 results=3)


class Names:
    """Paths as the kernel takes them: their bytes (as os.fsencode gives them) NUL-terminated
    back to back, and where each starts (-1 for standard input, which the kernel leaves to the
    caller). All are encoded in one call; where that changes their lengths (a name not in
    ASCII), each is measured encoded."""

    __slots__ = ("paths", "names", "starts")

    def __init__(self, paths: list[str]):
        joined = "\0".join(paths) + "\0"
        self.paths = paths
        self.names = joined.encode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())
        lengths = map(len, paths) if len(self.names) == len(joined) else (len(os.fsencode(p)) for p in paths)
        self.starts = array("q", accumulate((n + 1 for n in lengths), initial=0))
        self.starts.pop()  # the end of the last name
        if STDIN in paths:
            for k, path in enumerate(paths):
                if path == STDIN:
                    self.starts[k] = -1


def gather(names: Names, first: int, buffer, used: int, largest: int, los: array, his: array) -> tuple[int, int, int]:
    """Read names.paths[first], ... into buffer[used:] (any writable uint8 buffer), one after
    another, until one does not fit (ROOM: the rest may, once the buffer is emptied) or is not
    for this loop (ALONE: it cannot be opened, is not a regular file, its read fails or does
    not give the size lseek said, as a file that changed or procfs's files: the caller opens it
    itself, and says why); DONE once every path is read. File k lies at
    buffer[los[k]:his[k]] (los and his: int64 buffers of one entry a path); a regular file of
    more than `largest` bytes is passed over, its los[k] and his[k] -1 (for the caller to search
    alone: one call then covers a buffer's small files whatever large ones lie among them).
    Returns (the first file not read, the bytes of buffer in use, why it stopped)."""
    return _GATHER(names.names, names.starts, first, OPEN_FLAGS, buffer, used, largest, los, his)
