"""The kernels of pieces.py (it calls them precompiled, see precompiled.py): the bucket histograms,
the collection and sorting of a piece, the ranking of the difference cover's sample by prefix
doubling, and the ordering of the suffixes still tied after v symbols."""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.fmindex.pieces import BUCKETS, PREFIX, SMALL_GROUP, SYMBOLS_PER_KEY, SYMBOLS_PER_WORD


@njit(cache=True)
def delta_table(v, member, table):
    """table[a, b] (v x v): the least t >= 0 with (a + t) mod v and (b + t) mod v both in the cover."""
    for a in range(v):
        for b in range(v):
            t = 0
            while not (member[(a + t) % v] >= 0 and member[(b + t) % v] >= 0):
                t += 1
            table[a, b] = t


@njit(inline="always")
def _slot(p, v, member, size):
    return (p // v) * size + member[p % v]


@njit(cache=True)
def histograms(text, v, member, every, sample):
    """Suffixes per bucket (by the first PREFIX symbols, base 6, '$' and past the end as 0): of
    all suffixes into every, and of the sample's into sample (both BUCKETS zeros)."""
    n = text.size
    code = 0
    for t in range(PREFIX):
        code = code * 6 + (np.int64(text[t]) if t < n else 0)
    for p in range(n):
        every[code] += 1
        if member[p % v] >= 0:
            sample[code] += 1
        nxt = np.int64(text[p + PREFIX]) if p + PREFIX < n else 0
        code = (code % (BUCKETS // 6)) * 6 + nxt


@njit(cache=True)
def collect(text, lo, hi, only_sample, v, member, at, out):
    """Positions whose bucket b lies in [lo, hi), each put at out[at[b - lo]] onwards (at: the
    buckets' first slots, advanced): sorted by bucket, in text order within one."""
    n = text.size
    code = 0
    for t in range(PREFIX):
        code = code * 6 + (np.int64(text[t]) if t < n else 0)
    for p in range(n):
        if lo <= code < hi and (not only_sample or member[p % v] >= 0):
            out[at[code - lo]] = p
            at[code - lo] += 1
        nxt = np.int64(text[p + PREFIX]) if p + PREFIX < n else 0
        code = (code % (BUCKETS // 6)) * 6 + nxt


@njit(inline="always")
def _key(text, p, depth, limit, count):
    """Symbols depth .. depth + count - 1 of suffix p as 3-bit codes (symbol + 1), first most
    significant; 0 past the text or at depth `limit` and beyond."""
    n = text.size
    key = np.uint64(0)
    for t in range(depth, depth + count):
        c = np.uint64(0)
        if t < limit and p + t < n:
            c = np.uint64(text[p + t]) + np.uint64(1)
        key = (key << np.uint64(3)) | c
    return key


@njit(cache=True, nogil=True)  # the JIT fallback's threads too sort at once (pieces._sorted_piece)
def refine(text, positions, bounds, limit, tied):
    """positions sorted by bucket (bounds: where each bucket starts, and the end) -> sorted by
    their first `limit` symbols, a group of suffixes at a time by the next 21 (numpy's sort, on
    groups that mostly fit in the cache); tied[i] = 1 where suffix i shares those `limit` symbols
    with suffix i - 1."""
    tied[:] = 0
    stack = [(0, 0, 0)]
    stack.pop()
    for b in range(bounds.size - 1):
        if bounds[b + 1] - bounds[b] > 1:
            stack.append((bounds[b], bounds[b + 1], PREFIX))
    while stack:
        lo, hi, depth = stack.pop()
        if depth >= limit:
            tied[lo + 1 : hi] = 1
            continue
        size = hi - lo
        group = positions[lo:hi]
        if size <= SMALL_GROUP:  # key and index in one word: a sort of the words, no gathers
            words = np.empty(size, np.uint64)
            same = True
            for t in range(size):
                words[t] = (_key(text, group[t], depth, limit, SYMBOLS_PER_WORD) << np.uint64(16)) | np.uint64(t)
                same = same and (words[t] >> np.uint64(16)) == (words[0] >> np.uint64(16))
            if same:  # a run or a copy: nothing to sort at this depth
                stack.append((lo, hi, depth + SYMBOLS_PER_WORD))
                continue
            words.sort()
            old = group.copy()
            for t in range(size):
                group[t] = old[words[t] & np.uint64(0xFFFF)]
                words[t] >>= np.uint64(16)
            sub, step = words, SYMBOLS_PER_WORD
        else:
            sub = np.empty(size, np.uint64)
            same = True
            for t in range(size):
                sub[t] = _key(text, group[t], depth, limit, SYMBOLS_PER_KEY)
                same = same and sub[t] == sub[0]
            if same:
                stack.append((lo, hi, depth + SYMBOLS_PER_KEY))
                continue
            order = np.argsort(sub)
            positions[lo:hi] = group[order]
            sub, step = sub[order], SYMBOLS_PER_KEY
        i = 0
        while i < size:
            j = i + 1
            while j < size and sub[j] == sub[i]:
                j += 1
            if j - i > 1:
                stack.append((lo + i, lo + j, depth + step))
            i = j


@njit(cache=True)
def name_sample(positions, tied, first_row, v, member, size, ranks):
    """Each sample suffix's rank by its first v symbols: the rows before its group."""
    name = first_row
    for i in range(positions.size):
        if not tied[i]:
            name = first_row + i
        ranks[_slot(positions[i], v, member, size)] = name


@njit(cache=True)
def double(members, heads, h, v, member, size, ranks):
    """One round of prefix doubling over the tied sample suffixes (grouped, each group's head
    rank in heads): ordered within their group by the rank of the suffix h further on, renamed,
    and those still tied moved to the front of members and heads (their new head ranks), for
    the next round. Returns how many are still tied."""
    m = members.size
    keys = np.empty(m, np.int64)
    for i in range(m):
        keys[i] = ranks[_slot(members[i] + h, v, member, size)]
    keep = np.zeros(m, np.uint8)
    names = np.empty(m, np.int64)
    i = 0
    while i < m:
        j = i + 1
        while j < m and heads[j] == heads[i]:
            j += 1
        order = np.argsort(keys[i:j], kind="mergesort")
        members[i:j] = members[i:j][order]
        keys[i:j] = keys[i:j][order]
        a = i
        while a < j:
            b = a + 1
            while b < j and keys[b] == keys[a]:
                b += 1
            for t in range(a, b):
                names[t] = heads[i] + (a - i)
                keep[t] = b - a > 1
            a = b
        i = j
    for i in range(m):
        ranks[_slot(members[i], v, member, size)] = names[i]
    k = 0
    for i in range(m):  # k <= i: each is moved forward, after it was read
        if keep[i]:
            members[k] = members[i]
            heads[k] = names[i]
            k += 1
    return k


@njit(inline="always")
def _less(x, y, v, member, size, delta, ranks):
    """Suffix x before suffix y, given that they share their first v symbols."""
    t = delta[x % v, y % v]
    return ranks[_slot(x + t, v, member, size)] < ranks[_slot(y + t, v, member, size)]


@njit(cache=True, nogil=True)  # the JIT fallback's threads too sort at once (pieces._sorted_piece)
def break_ties(positions, tied, v, member, size, delta, ranks):
    """Every group of suffixes that share v symbols, merge-sorted by the difference cover."""
    m = positions.size
    i = 0
    buffer = np.empty(0, np.int64)
    while i < m:
        j = i + 1
        while j < m and tied[j]:
            j += 1
        count = j - i
        if count > 1:
            if buffer.size < count:
                buffer = np.empty(count, np.int64)
            src, dst = positions[i:j], buffer[:count]
            width = 1
            while width < count:
                for a in range(0, count, 2 * width):
                    mid, end = min(a + width, count), min(a + 2 * width, count)
                    x, y, k = a, mid, a
                    while x < mid and y < end:
                        if _less(src[y], src[x], v, member, size, delta, ranks):
                            dst[k] = src[y]
                            y += 1
                        else:
                            dst[k] = src[x]
                            x += 1
                        k += 1
                    dst[k : k + mid - x] = src[x:mid]
                    k += mid - x
                    dst[k : k + end - y] = src[y:end]
                src, dst = dst, src
                width *= 2
            if src.ctypes.data != positions[i:j].ctypes.data:
                positions[i:j] = src
        i = j
