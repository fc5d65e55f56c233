"""CPU kernels: backward search and locate over the 64-byte rank blocks (see build.py).

Queries are read/strand pairs: query q is read q >> 1, on the forward strand when q is even
and as its reverse complement when odd (read backwards with complemented codes, never
copied). A batch goes through three passes, each a loop simple enough for the branch
predictor (one loop that switched between searching, walking and checking cost more in
mispredictions than in memory: docs/benchmarks.md):
  search   the backward searches, interleaved (the GEM paper, 4.2.3 and D6): `width` queries
           advance in lockstep, each prefetching the rank block of its next step, so their
           independent cache misses overlap instead of queuing;
  locate   LF walks from rows to marked rows, interleaved the same way;
  settle   the rows' text positions turned into read positions, and checked where the search
           stopped early.

Shortcuts once an interval is small (hi-lo=1, section 4.2.2):
  SHORTCUT_NONE   two ranks per step to the end
  SHORTCUT_RANK   one rank per step once hi-lo=1: the row survives only if its BWT symbol is the base
  SHORTCUT_VERIFY once the interval holds at most `verify_rows` rows (1: the GEM paper's hi-lo=1),
                  the search stops; locate then finds each row's text position (at most
                  sa_sample - 1 LF steps) and settle compares the bases still unsearched directly
                  against the 2-bit packed reference. The position found is the answer, so a
                  unique read needs no separate locate. It stops only once the interval has
                  stayed that small for _SURVIVE steps, so reads about to fail never walk
"""

from __future__ import annotations

import numpy as np
from numba import int64, njit, uint64

from seqsift.fmindex.steps import compile_steps
from seqsift.intrinsics import bswap64, load_u64, popcount64, prefetch

SHORTCUT_NONE, SHORTCUT_RANK, SHORTCUT_VERIFY = 0, 1, 2
_EMPTY, _LOOKUP, _SEARCH = 0, 1, 2
_INSERTION_SORTED = 32  # reads with at most this many rows have their hits sorted by insertion
_SURVIVE = 4  # small-interval steps before the verify shortcut stops a search: a random read rarely lasts 4


@njit(inline="always", nogil=True, boundscheck=False)
def _below(bit):
    """Mask of the bits below `bit` (0..63)."""
    return (uint64(1) << uint64(bit)) - uint64(1)


_, backward_step, _lf = compile_steps(njit(inline="always", nogil=True, boundscheck=False), popcount64)


@njit(inline="always", nogil=True, boundscheck=False)
def _touch(base, row):
    prefetch(base + uint64(row >> 6) * uint64(64))


@njit(inline="always", nogil=True, boundscheck=False)
def _sample_index(blocks, row):
    """Index in samples of marked row `row`."""
    blk = row >> 6
    return np.int64(blocks[blk, 7] + popcount64(blocks[blk, 6] & _below(row & 63)))


@njit(inline="always", nogil=True, boundscheck=False)
def _touch_sample(samples, i):
    prefetch(uint64(samples.ctypes.data) + uint64(i) * uint64(samples.itemsize))


_WORD = 24  # bases a packed word compares at once: 48 bits, all inside one unaligned 8-byte text load
_COMPLEMENT8 = uint64(0x0303030303030303)


@njit(inline="always", nogil=True, boundscheck=False)
def _text_base(packed, t):
    return uint64((packed[t >> uint64(2)] >> ((t & uint64(3)) * uint64(2))) & uint64(3))


@njit(inline="always", nogil=True, boundscheck=False)
def _pack8(x):
    """8 read codes (0-3, one a byte, first lowest) to 16 bits, 2 a base, first lowest: the
    packed reference's order."""
    x = (x | (x >> uint64(6))) & uint64(0x000F000F000F000F)
    x = (x | (x >> uint64(12))) & uint64(0x000000FF000000FF)
    return (x | (x >> uint64(24))) & uint64(0xFFFF)


@njit(inline="always", nogil=True, boundscheck=False)
def _pack_query(codes, first, last, strand, j, words):
    """The query's first j bases (strand 1: the read's last j, complemented, backwards), 2 bits
    each, _WORD a word: base i at bits 2 (i % _WORD) of words[i // _WORD]. 8 codes a load."""
    reads = uint64(codes.ctypes.data)
    uj = uint64(j)
    for w in range((j + _WORD - 1) // _WORD):
        word = uint64(0)
        at = uint64(w * _WORD)
        for g in range(_WORD // 8):
            i = at + uint64(8 * g)
            if i + uint64(8) <= uj:
                if strand == 0:
                    x = load_u64(reads + first + i)
                else:
                    x = bswap64(load_u64(reads + last - i - uint64(7))) ^ _COMPLEMENT8
                word |= _pack8(x) << uint64(16 * g)
            else:
                while i < uj:
                    c = uint64(codes[first + i]) if strand == 0 else uint64(3) - uint64(codes[last - i])
                    word |= c << (uint64(2) * (i - at))
                    i += uint64(1)
                break
        words[w] = word


@njit(inline="always", nogil=True, boundscheck=False)
def _text_bits(packed, t, count):
    """Text bases [t, t + count), count <= _WORD, packed as _pack_query packs a word: one
    unaligned load, or base by base within 8 bytes of the text's end."""
    if (t >> uint64(2)) + uint64(8) <= uint64(packed.size):
        bits = load_u64(uint64(packed.ctypes.data) + (t >> uint64(2))) >> ((t & uint64(3)) * uint64(2))
        return bits & ((uint64(1) << (uint64(2) * count)) - uint64(1))
    bits = uint64(0)
    for m in range(count):
        bits |= _text_base(packed, t + uint64(m)) << (uint64(2) * uint64(m))
    return bits


@njit(nogil=True, boundscheck=False, cache=True)
def first_kmers(codes, bounds, k, out):
    """Per query, the code of its last k bases (the k-mer table's index; 0 when the read is
    shorter than k), or -1 for an empty read or one with a letter other than A, C, G, T. A tight
    pass of its own, so the interleaved search loop below stays small."""
    for r in range(bounds.size - 1):
        start, end = bounds[r], bounds[r + 1]
        read = codes[start:end]  # a view: indexes from 0 carry no negative-index code, so the OR vectorizes
        letters = np.uint8(0)
        for i in range(read.size):  # codes are 0-3, or 255 for another letter
            letters |= read[i]
        if end == start or letters > 3:
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
def search(blocks, C, n, table, k, codes, bounds, kmers, width, shortcut, verify_rows, sa_sample,
           lo_out, hi_out, left_out):
    """Backward search of every query (2 per read) into [lo_out, hi_out). left_out gets the
    bases still unsearched: 0 when the search ran to the end or emptied, > 0 when the verify
    shortcut stopped it (settle compares them with the text before each row's position)."""
    nq = 2 * (bounds.size - 1)
    base = uint64(blocks.ctypes.data)
    table_base = uint64(table.ctypes.data)
    state = np.zeros(width, np.int64)
    q_of = np.zeros(width, np.int64)
    j_of = np.zeros(width, np.int64)
    lo_of = np.zeros(width, np.int64)
    hi_of = np.zeros(width, np.int64)
    steps_of = np.zeros(width, np.int64)
    at_of = np.zeros(width, np.int64)  # index in codes of the query's next base
    small = verify_rows if shortcut == SHORTCUT_VERIFY else 0
    stop_from = max(1, sa_sample >> 1)  # a verify walks up to sa_sample - 1 steps: stop only before that many bases
    next_q = 0
    active = 0
    while True:
        for s in range(width):
            if state[s] == _SEARCH:
                lo, hi, j = lo_of[s], hi_of[s], j_of[s]
                strand = q_of[s] & 1  # the reverse complement reads its codes forwards, complemented
                b = np.int64(codes[at_of[s]]) ^ (3 * strand)
                at_of[s] += 2 * strand - 1
                lo, hi = backward_step(blocks, C, b, lo, hi, shortcut == SHORTCUT_RANK)
                j -= 1
                steps = steps_of[s] + 1 if hi - lo <= small else 0
                if lo >= hi or j == 0 or (steps >= _SURVIVE and j >= stop_from):
                    q = q_of[s]
                    lo_out[q] = lo
                    hi_out[q] = max(lo, hi)
                    left_out[q] = j if lo < hi else 0
                    state[s] = _EMPTY
                    active -= 1
                else:
                    lo_of[s], hi_of[s], j_of[s], steps_of[s] = lo, hi, j, steps
                    _touch(base, lo)
                    _touch(base, hi)
            elif state[s] == _LOOKUP:
                q = q_of[s]
                r = q >> 1
                length = bounds[r + 1] - bounds[r]
                if length >= k:
                    lo = np.int64(table[j_of[s], 0])
                    hi = np.int64(table[j_of[s], 1])
                    j = length - k
                else:
                    lo, hi, j = 0, n, length
                if hi <= lo or j == 0:
                    lo_out[q] = lo
                    hi_out[q] = max(lo, hi)
                    left_out[q] = 0
                    state[s] = _EMPTY
                    active -= 1
                else:
                    state[s] = _SEARCH
                    lo_of[s], hi_of[s], j_of[s], steps_of[s] = lo, hi, j, 0
                    at_of[s] = bounds[r] + length - j if q & 1 else bounds[r] + j - 1
                    _touch(base, lo)
                    _touch(base, hi)
            else:  # take the next valid query; its table entry is fetched ahead
                while next_q < nq:
                    q = next_q
                    next_q += 1
                    code = kmers[q]
                    if code < 0:  # empty, or a letter other than A, C, G, T
                        lo_out[q] = 0
                        hi_out[q] = 0
                        left_out[q] = 0
                        continue
                    q_of[s], j_of[s] = q, code
                    prefetch(table_base + uint64(code) * uint64(8))
                    state[s] = _LOOKUP
                    active += 1
                    break
        if active == 0 and next_q >= nq:
            return


@njit(nogil=True, boundscheck=False, cache=True)
def expand_rows(lo, starts, query_of, rows):
    """The rows to locate: query q's are lo[q], lo[q] + 1, ... at rows[starts[q]:starts[q + 1]],
    with q at the same places of query_of. One pass: numpy's two repeats and an arange took 26 ms
    a million reads on 22 Mbp, this 13 (docs/benchmarks.md; commit 49422fa, 2026-12-01)."""
    for q in range(lo.size):
        first = lo[q] - starts[q]
        for i in range(starts[q], starts[q + 1]):
            query_of[i] = q
            rows[i] = first + i


@njit(nogil=True, boundscheck=False, cache=True)
def locate(blocks, C, samples, sa_sample, rows, width, out):
    """Text position of each row into out, `width` LF walks in lockstep. A walk that reaches a
    mark fetches its sample ahead and reads it on its next turn, so that miss overlaps too.
    Returns -1 if a walk ran past sa_sample steps (a corrupt index), else 0."""
    base = uint64(blocks.ctypes.data)
    slot_k = np.full(width, -1, np.int64)
    row_of = np.zeros(width, np.int64)
    steps_of = np.zeros(width, np.int64)
    sample_of = np.full(width, -1, np.int64)  # >= 0: the walk ended, its sample is on its way
    next_k = 0
    active = 0
    while True:
        for s in range(width):
            if sample_of[s] >= 0:  # the walk's result, then the slot takes the next row at once
                out[slot_k[s]] = np.int64(samples[sample_of[s]]) + steps_of[s]
                sample_of[s] = -1
                slot_k[s] = -1
                active -= 1
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
            row = _lf(blocks, C, row_of[s])
            if row >= 0:
                if steps_of[s] >= sa_sample:
                    return -1
                row_of[s] = row
                steps_of[s] += 1
                _touch(base, row)
            else:
                sample_of[s] = _sample_index(blocks, row_of[s])
                _touch_sample(samples, sample_of[s])
        if active == 0 and next_k >= rows.size:
            return 0


@njit(nogil=True, boundscheck=False, cache=True)
def settle(packed, gap_starts, gap_ends, codes, bounds, left, query_of, located, keep):
    """Located rows to read positions, in place: a row of query q lies left[q] bases after the
    read's start, and where the search stopped early (left[q] > 0) the read's first left[q]
    bases must also match the text there, inside one record (keep[i] = 0 where they do not).
    A query's rows are consecutive: its bases are packed once and compared with each row's text
    a word at a time, stopping at the first word that differs (most rows of a repeat do)."""
    ahead = 8  # rows whose reference bytes are fetched ahead of the compare
    longest = 0
    for r in range(bounds.size - 1):
        longest = max(longest, bounds[r + 1] - bounds[r])
    words = np.empty(longest // _WORD + 1, np.uint64)
    packed_q = -1
    for i in range(located.size + ahead):
        if i + ahead < located.size:
            j = left[query_of[i + ahead]]
            p = located[i + ahead]
            if j and p >= j:
                prefetch(uint64(packed.ctypes.data) + uint64((p - j) >> 2))
                prefetch(uint64(packed.ctypes.data) + uint64((p - 1) >> 2))
        if i >= located.size:
            break
        q = query_of[i]
        j = left[q]
        keep[i] = 1
        if j == 0:
            continue
        p = located[i]
        located[i] = p - j
        if p < j:
            keep[i] = 0
            continue
        if q != packed_q:
            r = q >> 1
            _pack_query(codes, uint64(bounds[r]), uint64(bounds[r + 1] - 1), q & 1, j, words)
            packed_q = q
        t = uint64(p - j)
        diff = uint64(0)
        for w in range((j + _WORD - 1) // _WORD):
            diff = _text_bits(packed, t + uint64(w * _WORD), uint64(min(_WORD, j - w * _WORD))) ^ words[w]
            if diff:
                break
        if diff:
            keep[i] = 0
        else:
            g = np.searchsorted(gap_starts, p) - 1  # the last gap starting before p
            keep[i] = g < 0 or gap_ends[g] <= p - j


@njit(nogil=True, boundscheck=False, cache=True)
def locate_steps_histogram(blocks, C, n, limit):
    """How many rows need 0, 1, 2, ... LF steps to reach a mark (the locate bound, for tests and
    stats); walks longer than 64 are counted at 64. A walk is followed `limit` steps at most (a
    crafted index may hold an LF cycle without a mark): hist[65] counts those stopped there."""
    hist = np.zeros(66, np.int64)
    for r in range(n):
        steps = 0
        row = _lf(blocks, C, r)
        while row >= 0 and steps < limit:
            steps += 1
            row = _lf(blocks, C, row)
        hist[65 if row >= 0 else min(steps, 64)] += 1
    return hist


@njit(nogil=True, boundscheck=False, cache=True)
def gather_hits(starts, located, keep, max_hits, seeds, offsets, text_pos, strand):
    """Per read, its kept hits from both strands (query q's are located[starts[q]:starts[q+1]])
    sorted by position then strand, max_hits of them into text_pos/strand at offsets[r]: the
    first ones; or, where seeds is not empty (one number a read), the one that seeds[r] modulo
    the read's count picks among all of them first, then the first others. offsets must hold the
    listed counts' running sum. A read's few hits are sorted by insertion as they come: Numba's
    sort costs ~0.3 us a call, the most of this pass on a reference with repeats
    (docs/benchmarks.md)."""
    longest = 0
    for r in range(offsets.size - 1):
        longest = max(longest, starts[2 * r + 2] - starts[2 * r])
    scratch = np.empty(longest, np.int64)  # one allocation, not one a read
    for r in range(offsets.size - 1):
        first, last = starts[2 * r], starts[2 * r + 2]
        few = last - first <= _INSERTION_SORTED
        k = 0
        for i in range(first, last):
            if keep[i]:
                key = located[i] * 2 + (i >= starts[2 * r + 1])
                j = k
                while few and j > 0 and scratch[j - 1] > key:
                    scratch[j] = scratch[j - 1]
                    j -= 1
                scratch[j] = key
                k += 1
        keys = scratch[:k]
        if not few:
            keys.sort()
        at = offsets[r]
        listed = offsets[r + 1] - offsets[r]
        pick = int64(seeds[r] % uint64(k)) if seeds.size > 0 and k > 0 else 0
        for i in range(listed):
            # the picked hit first, then the others in order (with no seeds: all in order)
            h = pick if i == 0 else i - 1 if i <= pick else i
            text_pos[at + i] = keys[h] >> 1
            strand[at + i] = keys[h] & 1


@njit(nogil=True, boundscheck=False, cache=True)
def block_invariants(blocks, tail, totals_out):
    """One pass over the rank blocks (build.py's layout): each block's four counts are the base
    bits of the blocks before it, no row has two bases, every row holds a base or a mark and no
    bit lies past the last row (tail: rows in the last block), and word 7 counts the marks
    before the block. Returns (0 or the first broken invariant's key in ssx._BLOCK_INVARIANTS,
    the marks), the four base totals into totals_out. Compiled: numpy's temporaries made this
    50 ms of a 22.7 Mbp index's load and would make it seconds for a mammal's."""
    totals = np.zeros(4, np.uint64)
    marks = uint64(0)
    low = uint64(0xFFFFFFFF)
    last = blocks.shape[0] - 1
    for b in range(blocks.shape[0]):
        w0, w1 = blocks[b, 0], blocks[b, 1]
        if (w0 & low) != totals[0] or (w0 >> uint64(32)) != totals[1] or (w1 & low) != totals[2] \
                or (w1 >> uint64(32)) != totals[3]:
            return 1, np.int64(marks)
        union = uint64(0)
        for c in range(4):
            bitmap = blocks[b, 2 + c]
            if union & bitmap:
                return 2, np.int64(marks)
            union |= bitmap
            totals[c] += popcount64(bitmap)
        rows = ~uint64(0) if b < last else (uint64(1) << uint64(tail)) - uint64(1)
        if (union | blocks[b, 6]) != rows:
            return 3, np.int64(marks)
        if blocks[b, 7] != marks:
            return 4, np.int64(marks)
        marks += popcount64(blocks[b, 6])
    for c in range(4):
        totals_out[c] = totals[c]
    return 0, np.int64(marks)
