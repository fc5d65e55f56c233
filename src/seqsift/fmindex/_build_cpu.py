"""The kernels of build.py (it calls them precompiled, see precompiled.py): the passes over the
suffix array rows that fill the rank blocks, SA samples and k-mer table, and the passes over the
text that count its symbols, pack it and find its gaps."""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.intrinsics import prefetch

AHEAD = 16  # rows whose text is prefetched ahead in the passes over the suffix array, which read the text at random


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
def fill_rows(text, sa, lo, hi, row0, sa_sample, repeat_sample, width, blocks, counts, marks, samples):
    """Rows row0.. of the BWT from sa[lo:hi] (sa[lo - 1] and sa[hi], where given, are the rows
    beside them; each row's symbol is read from the text, so no BWT array is built): per 64-row
    block the counts before it (two per word), one bitmap per base, the marks and the marks before
    it (the running counts and marks are carried from piece to piece). The text positions of the
    marked rows go to samples, in row order; returns how many."""
    n = text.size
    base = np.uint64(text.ctypes.data)
    k = 0
    for i in range(lo, hi):
        r = row0 + (i - lo)
        blk = r >> 6
        if r & 63 == 0:
            blocks[blk, 0] = counts[0] | (counts[1] << np.uint64(32))
            blocks[blk, 1] = counts[2] | (counts[3] << np.uint64(32))
            blocks[blk, 7] = marks[0]
        if i + AHEAD < hi:
            prefetch(base + np.uint64(sa[i + AHEAD]))
        bit = np.uint64(1) << np.uint64(r & 63)
        p = sa[i]
        symbol = np.int64(text[p - 1 if p > 0 else n - 1])  # the whole text is preceded by its last symbol, '$'
        b = symbol - 2
        if b >= 0:
            blocks[blk, 2 + b] |= bit
            counts[b] += np.uint64(1)
        if _marked(text, sa, i, symbol, sa_sample, repeat_sample, width):
            blocks[blk, 6] |= bit
            marks[0] += np.uint64(1)
            samples[k] = p
            k += 1
    return k


@njit(cache=True)
def close_blocks(blocks, counts, marks, n):
    """The counts of a last block that holds no row (n a multiple of 64)."""
    if n & 63 == 0:
        blk = n >> 6
        blocks[blk, 0] = counts[0] | (counts[1] << np.uint64(32))
        blocks[blk, 1] = counts[2] | (counts[3] << np.uint64(32))
        blocks[blk, 7] = marks[0]


@njit(cache=True)
def fill_kmer_table(text, sa, lo, hi, row0, k, code0, table):
    """[lo, hi) of every k-mer: the rows whose suffix starts with it are contiguous in the SA, so one
    pass in row order finds each k-mer's first and last row. table[c - code0] holds k-mer c's (the
    table whole, code0 0, or the codes these rows can have, build._Table)."""
    n = text.size
    base = np.uint64(text.ctypes.data)
    for i in range(lo, hi):
        if i + AHEAD < hi:
            prefetch(base + np.uint64(sa[i + AHEAD]))
        r = row0 + (i - lo)
        p = sa[i]
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
        code -= code0
        if table[code, 1] == 0:
            table[code, 0] = r
        table[code, 1] = r + 1


@njit(cache=True)
def symbol_counts(text, counts):
    """Occurrences of each symbol code 0-5 into counts (six zeros; np.bincount would first copy
    the text to 8 bytes a symbol)."""
    for c in text:
        counts[c] += 1


@njit(cache=True)
def pack(text, packed):
    """The text 4 bases a byte into packed (zeros, a byte per 4 symbols), first base in the low
    bits; '#' and '$' as A (the gaps say where they are)."""
    for i in range(text.size):
        c = text[i]
        if c >= 2:
            packed[i >> 2] |= np.uint8((c - 2) << (2 * (i & 3)))


@njit(cache=True)
def count_gaps(text):
    """Runs of '#' or '$' (numpy's way would make arrays of a byte a base)."""
    runs = 0
    for i in range(text.size):
        if text[i] < 2 and (i == 0 or text[i - 1] >= 2):
            runs += 1
    return runs


@njit(cache=True)
def fill_gaps(text, gaps):
    """[start, end) of each run of '#' or '$' into gaps (count_gaps rows of 2)."""
    k = 0
    for i in range(text.size):
        if text[i] < 2:
            if i == 0 or text[i - 1] >= 2:
                gaps[k, 0] = i
            if i + 1 == text.size or text[i + 1] >= 2:
                gaps[k, 1] = i + 1
                k += 1
