"""The kernels of windows.py (it calls them precompiled, see precompiled.py): window hashes of the
reference, row hashes of the patterns, and the base-by-base confirmation of each candidate."""

from __future__ import annotations

from numba import njit, uint64

_MULT = uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def window_hashes(text, length, out):
    """Hash of every window text[i:i+length] (uint64 polynomial, wrapping) into out (zeros, one
    per window)."""
    n = text.size
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


@njit(cache=True)
def row_hashes(patterns, out):
    """The window hash of each row (the same polynomial as window_hashes) into out."""
    for r in range(patterns.shape[0]):
        h = uint64(0)
        for x in patterns[r]:
            h = h * _MULT + uint64(x)
        out[r] = h


@njit(cache=True)
def confirm(text, order, patterns, lo, hi, starts, rows):
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
