"""CPU kernels: backward search and locate over the 64-byte rank blocks (see build.py).

Queries are read/strand pairs: query q is read q >> 1, on the forward strand when q is even
and as its reverse complement when odd (read backwards with complemented codes, never
copied). The searches of a batch run interleaved (seed section 4.2.3, annex D6): `width`
queries advance in lockstep, each prefetching the rank block of its next step, so their
independent cache misses overlap instead of queuing.

Shortcuts once an interval holds a single row (hi-lo=1, section 4.2.2):
  SHORTCUT_NONE   two ranks per step, as before
  SHORTCUT_RANK   one rank per step: the row survives only if its BWT symbol is the base
  SHORTCUT_VERIFY locate the row (at most sa_sample - 1 LF steps) and compare the bases still
                  unsearched directly against the 2-bit packed reference; this also yields the
                  position, so a unique read needs no separate locate; it starts once the row
                  has survived _SURVIVE one-rank steps, so reads about to fail never walk
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from seqsift.intrinsics import popcount64, prefetch

SHORTCUT_NONE, SHORTCUT_RANK, SHORTCUT_VERIFY = 0, 1, 2
_LOW32 = uint64(0xFFFFFFFF)
_EMPTY, _LOOKUP, _SEARCH, _WALK, _CHECK = 0, 1, 2, 3, 4
_CORRUPT = -2
_SURVIVE = 4  # single-row steps before the verify shortcut walks: a random read rarely lasts 4


@njit(inline="always", nogil=True, boundscheck=False)
def _below(bit):
    """Mask of the bits below `bit` (0..63)."""
    return (uint64(1) << uint64(bit)) - uint64(1)


@njit(inline="always", nogil=True, boundscheck=False)
def rank(blocks, b, i):
    """Occurrences of base b (0..3) in BWT rows [0, i)."""
    blk = i >> 6
    count = (blocks[blk, b >> 1] >> uint64(32 * (b & 1))) & _LOW32
    return np.int64(count + popcount64(blocks[blk, 2 + b] & _below(i & 63)))


@njit(inline="always", nogil=True, boundscheck=False)
def _touch(base, row):
    prefetch(base + uint64(row >> 6) * uint64(64))


@njit(inline="always", nogil=True, boundscheck=False)
def _lf(blocks, C, r):
    """(next row by LF, or -1 when row r is marked)."""
    blk = r >> 6
    bit = uint64(r & 63)
    if (blocks[blk, 6] >> bit) & uint64(1):
        return -1
    # the row's base without branches: an unmarked row has exactly one of the four bits set
    b = np.int64((blocks[blk, 3] >> bit) & uint64(1)) + 2 * np.int64((blocks[blk, 4] >> bit) & uint64(1)) \
        + 3 * np.int64((blocks[blk, 5] >> bit) & uint64(1))
    return C[b] + rank(blocks, b, r)


@njit(inline="always", nogil=True, boundscheck=False)
def _sample(blocks, samples, row):
    blk = row >> 6
    return np.int64(samples[np.int64(blocks[blk, 7] + popcount64(blocks[blk, 6] & _below(row & 63)))])


@njit(inline="always", nogil=True, boundscheck=False)
def _walk_step(blocks, C, samples, sa_sample, base, row_of, steps_of, s):
    """One LF step of walker s towards a marked row: its text position once there, -1 while still
    walking (the next row's block prefetched), _CORRUPT past sa_sample steps (a corrupt index)."""
    row = _lf(blocks, C, row_of[s])
    if row < 0:
        return _sample(blocks, samples, row_of[s]) + steps_of[s]
    if steps_of[s] >= sa_sample:
        return _CORRUPT
    row_of[s] = row
    steps_of[s] += 1
    _touch(base, row)
    return -1


@njit(inline="always", nogil=True, boundscheck=False)
def query_base(codes, start, length, strand, i):
    """Base i (0-based) of the query: the read, or its reverse complement (codes > 3 stay > 3)."""
    if strand == 0:
        return np.int64(codes[start + i])
    c = np.int64(codes[start + length - 1 - i])
    return 3 - c if c <= 3 else c


@njit(inline="always", nogil=True, boundscheck=False)
def _text_base(packed, t):
    return np.int64((packed[t >> 2] >> ((t & 3) * 2)) & 3)


@njit(inline="always", nogil=True, boundscheck=False)
def _prefix_matches(packed, gap_starts, gap_ends, codes, start, length, strand, j, p):
    """Do query bases [0, j) equal the text just before position p, inside one record?"""
    if p - j < 0:
        return False
    g = np.searchsorted(gap_starts, p) - 1  # the last gap starting before p
    if g >= 0 and gap_ends[g] > p - j:
        return False
    first = p - j
    diff = 0  # no early exit: the loops stay simple enough to vectorize
    if strand == 0:
        for i in range(j):
            diff |= _text_base(packed, first + i) ^ np.int64(codes[start + i])
    else:
        last = start + length - 1
        for i in range(j):
            diff |= _text_base(packed, first + i) ^ (3 - np.int64(codes[last - i]))
    return diff == 0


@njit(nogil=True, boundscheck=False, cache=True)
def first_kmers(codes, bounds, k, out):
    """Per query, the code of its last k bases (the k-mer table's index; 0 when the read is
    shorter than k), or -1 for an empty read or one with a letter other than A, C, G, T. A tight
    pass of its own, so the interleaved search loop below stays small."""
    for r in range(bounds.size - 1):
        start, end = bounds[r], bounds[r + 1]
        worst = 0
        for i in range(start, end):
            worst = max(worst, np.int64(codes[i]))
        if end == start or worst > 3:
            out[2 * r] = -1
            out[2 * r + 1] = -1
            continue
        forward = 0
        reverse = 0
        if end - start >= k:
            for i in range(end - k, end):  # forward strand: its last k bases
                forward = (forward << 2) | np.int64(codes[i])
            for i in range(start + k - 1, start - 1, -1):  # reverse complement: the first k, complemented
                reverse = (reverse << 2) | (3 - np.int64(codes[i]))
        out[2 * r] = forward
        out[2 * r + 1] = reverse


@njit(nogil=True, boundscheck=False, cache=True)
def search(blocks, C, n, table, k, packed, gap_starts, gap_ends, samples, sa_sample,
           codes, bounds, kmers, width, shortcut, lo_out, hi_out, pos_out):
    """Backward search of every query (2 per read) into lo_out/hi_out; pos_out gets the text
    position where the verify shortcut already located the single hit, else -1. Returns -1
    if an LF walk ran past sa_sample steps (a corrupt index), else 0."""
    nq = 2 * (bounds.size - 1)
    base = uint64(blocks.ctypes.data)
    state = np.zeros(width, np.int64)
    q_of = np.zeros(width, np.int64)
    j_of = np.zeros(width, np.int64)
    lo_of = np.zeros(width, np.int64)
    hi_of = np.zeros(width, np.int64)
    row_of = np.zeros(width, np.int64)
    steps_of = np.zeros(width, np.int64)
    table_base = uint64(table.ctypes.data)
    packed_base = uint64(packed.ctypes.data)
    next_q = 0
    active = 0
    while True:
        for s in range(width):
            if state[s] == _EMPTY:  # take the next valid query; its table entry is fetched ahead
                while next_q < nq:
                    q = next_q
                    next_q += 1
                    r = q >> 1
                    start = bounds[r]
                    length = bounds[r + 1] - start
                    pos_out[q] = -1
                    code = kmers[q]
                    if code < 0:  # empty, or a letter other than A, C, G, T
                        lo_out[q] = 0
                        hi_out[q] = 0
                        continue
                    q_of[s], j_of[s] = q, code
                    prefetch(table_base + uint64(code) * uint64(8))
                    state[s] = _LOOKUP
                    active += 1
                    break
                continue
            q = q_of[s]
            r = q >> 1
            start = bounds[r]
            length = bounds[r + 1] - start
            if state[s] == _LOOKUP:
                if length >= k:
                    lo = np.int64(table[j_of[s], 0])
                    hi = np.int64(table[j_of[s], 1])
                    j = length - k
                else:
                    lo, hi, j = 0, n, length
                if hi <= lo or j == 0:
                    lo_out[q] = lo
                    hi_out[q] = max(lo, hi)
                    pos_out[q] = -1
                    state[s] = _EMPTY
                    active -= 1
                else:
                    state[s] = _SEARCH
                    j_of[s], lo_of[s], hi_of[s], steps_of[s] = j, lo, hi, 0
                    _touch(base, lo)
                    _touch(base, hi)
                continue
            j = j_of[s]
            lo, hi = lo_of[s], hi_of[s]
            done = False
            if state[s] == _CHECK:
                p = row_of[s]
                if _prefix_matches(packed, gap_starts, gap_ends, codes, start, length, q & 1, j, p):
                    pos_out[q] = p - j
                else:
                    hi = lo
                j = 0
                done = True
            elif state[s] == _WALK:
                p = _walk_step(blocks, C, samples, sa_sample, base, row_of, steps_of, s)
                if p == _CORRUPT:
                    return -1
                if p >= 0:  # the text position is known: fetch the reference bases before it
                    row_of[s] = p
                    state[s] = _CHECK
                    if p >= j:
                        prefetch(packed_base + uint64((p - j) >> 2))
                        prefetch(packed_base + uint64((p - 1) >> 2))
            elif hi - lo == 1 and shortcut == SHORTCUT_VERIFY and steps_of[s] >= _SURVIVE and j >= (sa_sample >> 1):
                state[s] = _WALK
                row_of[s] = lo
                steps_of[s] = 0
            else:
                b = query_base(codes, start, length, q & 1, j - 1)
                if hi - lo == 1 and shortcut != SHORTCUT_NONE:
                    blk = lo >> 6
                    if (blocks[blk, 2 + b] >> uint64(lo & 63)) & uint64(1):
                        lo = C[b] + rank(blocks, b, lo)
                        hi = lo + 1
                        steps_of[s] += 1
                    else:
                        hi = lo
                else:
                    lo = C[b] + rank(blocks, b, lo)
                    hi = C[b] + rank(blocks, b, hi)
                j -= 1
                done = lo >= hi or j == 0
                _touch(base, lo)
                _touch(base, hi)
            if done:
                lo_out[q] = lo
                hi_out[q] = max(lo, hi)
                state[s] = _EMPTY
                active -= 1
            else:
                j_of[s], lo_of[s], hi_of[s] = j, lo, hi
        if active == 0 and next_q >= nq:
            return 0


@njit(nogil=True, boundscheck=False, cache=True)
def locate(blocks, C, samples, sa_sample, rows, width, out):
    """Text position of each row into out, `width` LF walks in lockstep. Returns -1 if a walk
    ran past sa_sample steps (a corrupt index), else 0."""
    base = uint64(blocks.ctypes.data)
    slot_k = np.full(width, -1, np.int64)
    row_of = np.zeros(width, np.int64)
    steps_of = np.zeros(width, np.int64)
    next_k = 0
    active = 0
    while True:
        for s in range(width):
            if slot_k[s] < 0:
                if next_k >= rows.size:
                    continue
                slot_k[s] = next_k
                row_of[s] = rows[next_k]
                steps_of[s] = 0
                next_k += 1
                active += 1
                _touch(base, row_of[s])
                continue
            p = _walk_step(blocks, C, samples, sa_sample, base, row_of, steps_of, s)
            if p == _CORRUPT:
                return -1
            if p >= 0:
                out[slot_k[s]] = p
                slot_k[s] = -1
                active -= 1
        if active == 0 and next_k >= rows.size:
            return 0


@njit(nogil=True, boundscheck=False, cache=True)
def locate_steps_histogram(blocks, C, n):
    """How many rows need 0, 1, 2, ... LF steps to reach a mark (the locate bound, for tests and
    stats); walks longer than 64 are counted at 64."""
    hist = np.zeros(65, np.int64)
    for r in range(n):
        steps = 0
        row = _lf(blocks, C, r)
        while row >= 0:
            steps += 1
            row = _lf(blocks, C, row)
        hist[min(steps, 64)] += 1
    return hist


@njit(nogil=True, boundscheck=False, cache=True)
def gather_hits(lo, hi, pos, walk_start, located, max_hits, offsets, text_pos, strand):
    """Per read, its hits from both strands (positions found by the verify shortcut, pos >= 0,
    or located rows, located[walk_start[q]:...]) sorted by position then strand, the first
    max_hits of them into text_pos/strand at offsets[r]. offsets must hold the listed counts'
    running sum."""
    for r in range(offsets.size - 1):
        total = 0
        for q in (2 * r, 2 * r + 1):
            total += hi[q] - lo[q]
        keys = np.empty(total, np.int64)
        k = 0
        for q in (2 * r, 2 * r + 1):
            if pos[q] >= 0:
                keys[k] = pos[q] * 2 + (q & 1)
                k += 1
            else:
                for i in range(hi[q] - lo[q]):
                    keys[k] = located[walk_start[q] + i] * 2 + (q & 1)
                    k += 1
        if total > 1:
            keys.sort()
        at = offsets[r]
        for i in range(offsets[r + 1] - offsets[r]):
            text_pos[at + i] = keys[i] >> 1
            strand[at + i] = keys[i] & 1
