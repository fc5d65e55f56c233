"""The index builder's kernels (build.py calls them precompiled, see precompiled.py): one pass over
the suffix array for the rank blocks and marks, the samples, the k-mer table, the symbol counts
and the packed text."""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.fmindex.build import AHEAD
from seqsift.intrinsics import prefetch


@njit(inline="always")
def _same_window(text, p, q, width):
    """Are the `width` symbols from text positions p and q the same bases ('#' and '$' match nothing)?"""
    if max(p, q) + width > text.size:
        return False
    for t in range(width):
        c = text[p + t]
        if c < 2 or c != text[q + t]:
            return False
    return True


@njit(inline="always")
def _marked(text, sa, r, symbol, sa_sample, repeat_sample, width):
    """Is row r sampled? Its suffix starts at a multiple of sa_sample, or at a multiple of
    repeat_sample inside a repeat (its first `width` bases shared with a neighbouring suffix, so
    they occur elsewhere too), or its BWT symbol is '#' or '$'."""
    p = sa[r]
    if symbol < 2 or p % sa_sample == 0:
        return True
    if repeat_sample == 0 or p % repeat_sample:
        return False
    return (r > 0 and _same_window(text, p, sa[r - 1], width)) or (r + 1 < sa.size and _same_window(text, p, sa[r + 1], width))


@njit(cache=True)
def fill_blocks(text, sa, sa_sample, repeat_sample, width, blocks):
    """One pass over the BWT (each row's symbol read from the text, so no BWT array is built): per
    64-row block the counts before it (two per word), one bitmap per base, the marks and the marks
    before it. Returns the number of marks."""
    counts = np.zeros(4, np.uint64)
    total = np.uint64(0)
    n = sa.size
    base = np.uint64(text.ctypes.data)
    for blk in range(blocks.shape[0]):
        blocks[blk, 0] = counts[0] | (counts[1] << np.uint64(32))
        blocks[blk, 1] = counts[2] | (counts[3] << np.uint64(32))
        blocks[blk, 7] = total
        for r in range(blk * 64, min(blk * 64 + 64, n)):
            if r + AHEAD < n:
                prefetch(base + np.uint64(sa[r + AHEAD]))
            bit = np.uint64(1) << np.uint64(r & 63)
            p = sa[r]
            symbol = np.int64(text[p - 1 if p > 0 else n - 1])  # the whole text is preceded by its last symbol, '$'
            b = symbol - 2
            if b >= 0:
                blocks[blk, 2 + b] |= bit
                counts[b] += np.uint64(1)
            if _marked(text, sa, r, symbol, sa_sample, repeat_sample, width):
                blocks[blk, 6] |= bit
                total += np.uint64(1)
    return total


@njit(cache=True)
def fill_samples(blocks, sa, samples):
    """The text position of every marked row, in row order."""
    k = 0
    for r in range(sa.size):
        if (blocks[r >> 6, 6] >> np.uint64(r & 63)) & np.uint64(1):
            samples[k] = sa[r]
            k += 1


@njit(cache=True)
def fill_kmer_table(text, sa, k, table):
    """[lo, hi) of every k-mer: the rows whose suffix starts with it are contiguous in the SA, so one
    pass in row order finds each k-mer's first and last row."""
    n = text.size
    base = np.uint64(text.ctypes.data)
    for r in range(n):
        if r + AHEAD < n:
            prefetch(base + np.uint64(sa[r + AHEAD]))
        p = sa[r]
        if p + k > n:
            continue
        code = 0
        for t in range(k):
            c = np.int64(text[p + t])
            if c < 2:
                code = -1
                break
            code = code * 4 + (c - 2)
        if code < 0:
            continue
        if table[code, 1] == 0:
            table[code, 0] = r
        table[code, 1] = r + 1


@njit(cache=True)
def symbol_counts(text, counts):
    """counts[c] += occurrences of each symbol code c, 0-5 (np.bincount would first copy the text to
    8 bytes a symbol)."""
    for c in text:
        counts[c] += 1


@njit(cache=True)
def pack(text, packed):
    """The text 4 bases a byte into packed (zeros, a byte per 4 bases), first base in the low bits;
    '#' and '$' as A (the gaps say where they are)."""
    for i in range(text.size):
        c = text[i]
        if c >= 2:
            packed[i >> 2] |= np.uint8((c - 2) << (2 * (i & 3)))
