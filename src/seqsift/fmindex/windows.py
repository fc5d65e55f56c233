"""Exact occurrences found without the FM-index, for `seqsift check`'s exact and approximate
checks: every window of the reference is hashed (a wrapping uint64 polynomial), a pattern's hash
picks the candidate windows, and each candidate is compared base by base."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

_MULT = uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _window_hashes(text, length):
    """Hash of every window text[i:i+length] (uint64 polynomial, wrapping)."""
    n = text.size
    out = np.zeros(max(n - length + 1, 0), np.uint64)
    power = uint64(1)
    for _ in range(length):
        power *= _MULT
    h = uint64(0)
    for i in range(n):
        h = h * _MULT + uint64(text[i])
        if i >= length:
            h -= power * uint64(text[i - length])
        if i >= length - 1:
            out[i - length + 1] = h
    return out


def windows(text: np.ndarray, clean: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted hashes, window starts in that order) of the windows made only of A, C, G, T."""
    hashes = _window_hashes(text, length)
    ok = np.flatnonzero(clean[length:] == clean[:-length])
    order = ok[np.argsort(hashes[ok], kind="stable")]
    return hashes[order], order


@njit(cache=True)
def _row_hashes(patterns):
    """The window hash of each row (the same polynomial as _window_hashes)."""
    out = np.zeros(patterns.shape[0], np.uint64)
    for r in range(patterns.shape[0]):
        h = uint64(0)
        for x in patterns[r]:
            h = h * _MULT + uint64(x)
        out[r] = h
    return out


@njit(cache=True)
def _confirm(text, order, patterns, lo, hi, starts, rows):
    """Compare every hash candidate with its pattern base by base; the true ones go to
    starts/rows. Returns how many."""
    found = 0
    length = patterns.shape[1]
    for r in range(patterns.shape[0]):
        for k in range(lo[r], hi[r]):
            p = order[k]
            same = True
            for i in range(length):
                if text[p + i] != patterns[r, i]:
                    same = False
                    break
            if same:
                starts[found] = p
                rows[found] = r
                found += 1
    return found


def occurrences(text, windows, patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(text start, pattern row) of every window equal to a row of patterns (text codes)."""
    hashes, order = windows
    h = _row_hashes(patterns)
    lo, hi = np.searchsorted(hashes, h, "left"), np.searchsorted(hashes, h, "right")
    size = int((hi - lo).sum())
    starts, rows = np.empty(size, np.int64), np.empty(size, np.int64)
    found = _confirm(text, order, patterns, lo, hi, starts, rows)
    return starts[:found], rows[:found]
