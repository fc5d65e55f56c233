"""Exact occurrences found without the FM-index, for `seqsift check`'s exact and approximate
checks: every window of the reference is hashed (a wrapping uint64 polynomial), a pattern's hash
picks the candidate windows, and each candidate is compared base by base. The passes are
_windows_cpu.py's kernels, called precompiled (precompiled.py)."""

from __future__ import annotations

import numpy as np

from seqsift.precompiled import Kernel

_CPU = "seqsift.fmindex._windows_cpu"
_WINDOW_HASHES = Kernel(_CPU, "window_hashes", "uint8[:] int64 uint64[:]")
_ROW_HASHES = Kernel(_CPU, "row_hashes", "uint8[:,:] uint64[:]")
# text, order, patterns, lo, hi, starts, rows -> how many
_CONFIRM = Kernel(_CPU, "confirm", "uint8[:] int64[:] uint8[:,:] int64[:] int64[:] int64[:] int64[:]", results=1)


def windows(text: np.ndarray, clean: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted hashes, window starts in that order) of the windows made only of A, C, G, T."""
    hashes = np.zeros(max(text.size - length + 1, 0), np.uint64)
    _WINDOW_HASHES(text, length, hashes)
    ok = np.flatnonzero(clean[length:] == clean[:-length])
    order = ok[np.argsort(hashes[ok], kind="stable")]
    return hashes[order], order


def occurrences(text, windows, patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(text start, pattern row) of every window equal to a row of patterns (text codes)."""
    hashes, order = windows
    h = np.zeros(patterns.shape[0], np.uint64)
    _ROW_HASHES(patterns, h)
    lo, hi = np.searchsorted(hashes, h, "left"), np.searchsorted(hashes, h, "right")
    size = int((hi - lo).sum())
    starts, rows = np.empty(size, np.int64), np.empty(size, np.int64)
    found = _CONFIRM(text, order, patterns, lo, hi, starts, rows)
    return starts[:found], rows[:found]
