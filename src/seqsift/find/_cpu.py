"""CPU kernels: filter on two, four or six probe bytes 64 positions at a time, verify, hand over to KMP.
cpu.py cuts the work and calls `scan_ranges` precompiled (precompiled.py), without importing Numba.

Data-parallel KMP (the OpenCL KMP paper) splits the candidate start positions into equal
partitions, one per work item, each reading P-1 bytes past its end and
reporting only matches that start inside it. Here a work item is a list of
candidate-start ranges (one per FASTA record piece, or one per chunk), cut so
that every item holds the same number of starts, and items run on a thread
pool with the GIL released. Inside a range the fast path tests two, four or six
spread, rare pattern bytes (plan.py chooses how many) for 64 positions with two
32-byte vector compares each; survivors are verified byte by byte. When verification costs more than a couple of bytes per
text byte (repetitive text: `a`*1000 in `a`*20M), the range hands over to the
KMP automaton until the automaton returns to state 0, so the worst case stays
linear.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from seqsift.intrinsics import cttz64, eq_mask32
from seqsift.find.kmp import kmp_step

# Verification may cost COST_PER_BYTE bytes compared per text byte, plus COST_SLACK, before KMP takes over.
COST_PER_BYTE = 2
COST_SLACK = 4096
# A KMP stretch lasts at least this many bytes before the filter is tried again.
KMP_MIN_STRETCH = 1 << 16
# Starts the filter tests at once: two 32-byte compares a probe, one branch for both. Against
# one compare and one branch a block (32 starts), one thread, 2026-12-02, the 0.97 GB of the
# tree's large binaries in memory: 0.097-0.106 s against 0.116-0.123 (glibc's memchr over the
# same bytes: 0.086-0.098); 515 MiB of DNA: 0.067-0.072 against 0.077-0.085.
BLOCK = 64

_kmp_step = njit(inline="always", nogil=True, boundscheck=False)(kmp_step)


@njit(nogil=True, boundscheck=False, cache=True)
def _matches(text, s, pattern):
    """(is a match at s, bytes compared)."""
    m = pattern.size
    for q in range(m):
        if text[s + q] != pattern[q]:
            return False, q + 1
    return True, m


@njit(nogil=True, boundscheck=False, cache=True)
def _kmp_stretch(text, pattern, fail, start, hi, out, n, store):
    """Run the automaton from `start` (state 0) over starts < hi until it is back in state 0
    after at least KMP_MIN_STRETCH bytes. Returns (n, next start, output full)."""
    m = pattern.size
    end = hi + m - 1
    q = 0
    j = start
    while j < end:
        q = _kmp_step(q, text[j], pattern, fail)
        if q == m:
            s = j - m + 1
            if store:
                if n == out.size:
                    return n, s, True
                out[n] = s
            n += 1
            q = fail[m - 1]
        j += 1
        if q == 0 and j - start >= KMP_MIN_STRETCH:
            break
    return n, j, False


@njit(nogil=True, boundscheck=False, inline="always")
def _pair_mask(a, b, c, d, u):
    """Bit j set where the bytes at a + u + j and b + u + j are c and d, 64 starts: two 32-byte
    compares a probe."""
    v = u + uint64(32)
    low = uint64(eq_mask32(a + u, c) & eq_mask32(b + u, d))
    return low | (uint64(eq_mask32(a + v, c) & eq_mask32(b + v, d)) << uint64(32))


@njit(nogil=True, boundscheck=False, inline="always")
def _block_mask(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5, k, u):
    """Bit j set where the probes (2, 4 or 6 of them, k) all match at start u + j, BLOCK starts."""
    mask = _pair_mask(a0, a1, b0, b1, u)
    if k > 2:
        mask &= _pair_mask(a2, a3, b2, b3, u)
        if k > 4:
            mask &= _pair_mask(a4, a5, b4, b5, u)
    return mask


@njit(nogil=True, boundscheck=False, cache=True)
def _scan_range(text, pattern, fail, probes, lo, hi, out, n, store):
    """Matches starting in [lo, hi); text holds at least hi + m - 1 bytes. probes holds 2, 4 or 6
    positions, all tested (the branches on their number are taken the same way at every step).
    Returns (n, resume): resume == hi when done, else the start where `out` filled up."""
    base = uint64(text.ctypes.data)
    k = probes.size
    a0 = base + uint64(probes[0])
    a1 = base + uint64(probes[1 % k])
    a2 = base + uint64(probes[2 % k])
    a3 = base + uint64(probes[3 % k])
    a4 = base + uint64(probes[4 % k])
    a5 = base + uint64(probes[5 % k])
    b0 = pattern[probes[0]]
    b1 = pattern[probes[1 % k]]
    b2 = pattern[probes[2 % k]]
    b3 = pattern[probes[3 % k]]
    b4 = pattern[probes[4 % k]]
    b5 = pattern[probes[5 % k]]
    i = lo
    mark = lo
    cost = 0
    while i < hi:
        mask = uint64(0)
        # Blocks without a candidate, the common case, in a loop of their own: kept apart from
        # the verification below, this loop runs near the memory's speed (0.075 s against 0.086
        # for 0.97 GB of binaries, one thread, 2026-12-02).
        while i + BLOCK <= hi:
            mask = _block_mask(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5, k, uint64(i))
            if mask != 0:
                break
            i += BLOCK
        if i + BLOCK <= hi:
            nxt = i + BLOCK
        else:
            mask = uint64(0)
            for j in range(hi - i):
                passed = True
                for p in probes:
                    if text[i + j + p] != pattern[p]:
                        passed = False
                        break
                if passed:
                    mask |= uint64(1) << uint64(j)
            nxt = hi
        while mask != 0:
            s = i + np.int64(cttz64(mask))
            mask &= mask - uint64(1)
            hit, compared = _matches(text, s, pattern)
            cost += compared
            if hit:
                if store:
                    if n == out.size:
                        return n, s
                    out[n] = s
                n += 1
            if cost > COST_PER_BYTE * (s - mark) + COST_SLACK:
                n, nxt, full = _kmp_stretch(text, pattern, fail, s + 1, hi, out, n, store)
                if full:
                    return n, nxt
                mark = nxt
                cost = 0
                break
        i = nxt
    return n, hi


@njit(nogil=True, boundscheck=False, cache=True)
def scan_ranges(text, pattern, fail, probes, los, his, k, resume, out, store, tally):
    """Scan ranges k.. of (los, his), the first from `resume`, adding each range's count to
    tally[k] when tally is not empty. Returns (n, k, resume) where k == len(los) when done,
    else where `out` filled up. Types: cpu.py's SCAN_RANGES."""
    n = 0
    while k < los.size:
        lo = max(los[k], resume)
        before = n
        n, stop = _scan_range(text, pattern, fail, probes, lo, his[k], out, n, store)
        if tally.size:
            tally[k] += n - before
        if stop < his[k]:
            return n, k, stop
        k += 1
        resume = 0
    return n, k, 0
