"""CPU kernels of the scanner: the filters (key + tag table, stride prefilter) and the verifier.

Kernels take a padded buffer: PAD (kernels.py) bytes before and after the data, so a window or a tag read
near either end stays inside the array (what it reads there is checked away by verification).
Positions passed in and out are indices into the padded array. A filter writes at most
len(out) candidates and returns (count, where it stopped), so the caller resumes with a new
output array instead of guessing a size. The engine calls these kernels precompiled, through
kernels.py, which names each one's argument types.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint32, uint64

from seqsift.intrinsics import equal16, equal32, load_u64
from seqsift.scan.kernels import EMPTY, GROUP_STARTS
from seqsift.scan.table import KEYS, TAG, WINDOW
_HASH = uint64(0x9E3779B97F4A7C15)
_SALT = uint64(0x5BD1E9955BD1E995)


@njit(inline="always", nogil=True)
def window_hash(w):
    """A hash of an 8-byte window: fold the high bits down before the multiply, so windows that
    differ only in their top bytes (common in binaries) still spread; salt so zero does not hash
    to zero."""
    return ((w ^ (w >> uint64(29))) ^ _SALT) * _HASH


@njit(nogil=True, cache=True)
def hash_windows(values, out):
    """out[k] = window_hash of values[k] (the tables are built with the kernels' own hash)."""
    for k in range(values.size):
        out[k] = window_hash(values[k])


@njit(inline="always", nogil=True, boundscheck=False)
def bloom_test(bloom, word_shift, h):
    """Blocked Bloom filter: the top bits of the hash h pick a 64-bit word, three 6-bit fields
    below them pick the bits that must all be set (one memory access per probe)."""
    mask = (uint64(1) << ((h >> uint64(26)) & uint64(63))) | (uint64(1) << ((h >> uint64(32)) & uint64(63))) \
        | (uint64(1) << ((h >> uint64(38)) & uint64(63)))
    return (bloom[h >> uint64(word_shift)] & mask) == mask


@njit(nogil=True, boundscheck=False, cache=True)
def table_filter(data, lo, hi, starts, tags, masks, bloom, bloom_shift, out_pos, out_entry):
    """The key + tag filter: for every key position i in [lo, hi) (key data[i:i+2], tag data[i-4:i]),
    each entry of bucket key whose tag matches becomes a candidate (i - 4, entry). With a Bloom
    filter (bloom_shift > 0) the hashed 6-byte window must be present in it first."""
    base = uint64(data.ctypes.data)
    cap = out_pos.size
    n = 0
    i = lo
    while i < hi:
        w = load_u64(base + uint64(i - 4))
        if bloom_shift > 0 and not bloom_test(bloom, bloom_shift, window_hash(w << uint64(16))):
            i += 1
            continue
        key = (w >> uint64(32)) & uint64(0xFFFF)
        tag = uint32(w & uint64(0xFFFFFFFF))
        e0, e1 = starts[key], starts[key + 1]
        if e1 - e0 > cap - n:
            return n, i
        for e in range(e0, e1):
            if (tag & masks[e]) == tags[e]:
                out_pos[n] = i - 4
                out_entry[n] = e
                n += 1
        i += 1
    return n, hi


@njit(inline="always", nogil=True, boundscheck=False)
def same_bytes(x, i, y, j, length):
    """Whether x[i:i+length] equals y[j:j+length] (uint8 arrays, both ranges inside them), in 32-,
    16- or 8-byte blocks, the last overlapping the one before so nothing outside is read: a
    verified candidate agrees with its signature over most of it, where a byte loop paid every
    byte."""
    a, b = uint64(x.ctypes.data) + uint64(i), uint64(y.ctypes.data) + uint64(j)
    if length >= 32:
        k = 0
        while k + 32 < length:
            if not equal32(a + uint64(k), b + uint64(k)):
                return False
            k += 32
        return equal32(a + uint64(length - 32), b + uint64(length - 32))
    if length >= 16:
        return equal16(a, b) and equal16(a + uint64(length - 16), b + uint64(length - 16))
    if length >= 8:
        return load_u64(a) == load_u64(b) and load_u64(a + uint64(length - 8)) == load_u64(b + uint64(length - 8))
    for k in range(length):
        if x[i + k] != y[j + k]:
            return False
    return True


@njit(inline="always", nogil=True, boundscheck=False)
def _segment(seg_lo, x):
    """Index of the last segment starting at or before x; -1 before the first."""
    lo, hi = 0, seg_lo.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if seg_lo[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@njit(inline="always", nogil=True, boundscheck=False)
def _row(anchor, p, seg_lo, seg_hi, rows, n):
    """A candidate, piece p's anchor at `anchor`, as a row (anchor, segment, piece) when the
    anchor lies in an object; returns the new row count."""
    s = _segment(seg_lo, anchor)
    if s < 0 or anchor >= seg_hi[s]:
        return n
    r_anchor, r_seg, r_piece = rows
    r_anchor[n], r_seg[n], r_piece[n] = anchor, s, p
    return n + 1


@njit(nogil=True, boundscheck=False, cache=True)
def stride_rows(data, lo, hi, f, seg_lo, seg_hi, per, rows, counts):
    """The CPU's default filter: probe lo, lo+stride, ... < hi (Bloom filter, then the hash
    table of distinct 8-byte windows, then the pieces owning the window found), one row per
    candidate. Stops early, returning (rows, where to resume), when rows might not hold one
    probe's worth (`per`). Verification is a separate kernel (verify_rows): with the matcher
    inlined here, every candidate cost five times as much."""
    stride, bloom, bloom_shift, slot_shift, slots, owner_start, owners = f
    base = uint64(data.ctypes.data)
    mask = uint64(slots.shape[0] - 1)
    r_anchor, r_seg, r_piece = rows
    cap = r_anchor.size
    n = 0
    near, near_lo, near_hi = -1, lo, lo  # the segment of the last probe that hit, and its bounds
    for i in range(lo, hi, stride):
        w = load_u64(base + uint64(i))
        h = window_hash(w)
        if not bloom_test(bloom, bloom_shift, h):
            continue
        if per > cap - n:
            return n, i
        k = h >> uint64(slot_shift)
        while slots[k, 1] != EMPTY:
            if slots[k, 0] == w:
                u = slots[k, 1]
                counts[0] += owner_start[u + 1] - owner_start[u]
                if not near_lo <= i < near_hi:
                    near = _segment(seg_lo, i)
                    near_lo, near_hi = (seg_lo[near], seg_hi[near]) if near >= 0 else (lo, lo)
                for e in range(owner_start[u], owner_start[u + 1]):
                    meta = owners[e]
                    anchor = i - np.int64(np.int32(meta & uint64(0xFFFFFFFF)))
                    piece = np.int64(meta >> uint64(32))
                    if near_lo <= anchor < near_hi:  # bounds in registers: reading seg_hi here cost 2x
                        r_anchor[n], r_seg[n], r_piece[n] = anchor, near, piece
                        n += 1
                    else:
                        n = _row(anchor, piece, seg_lo, seg_hi, rows, n)
                break
            k = (k + uint64(1)) & mask
    return n, hi


@njit(cache=True)
def fill_slots(hashes, values, slot_shift, slots):
    """Linear-probing insertion of each distinct value k as (value, k) at hash >> slot_shift."""
    mask = slots.shape[0] - 1
    for k in range(values.size):
        j = np.int64(hashes[k] >> uint64(slot_shift))
        while slots[j, 1] != EMPTY:
            j = (j + 1) & mask
        slots[j, 0] = values[k]
        slots[j, 1] = k


@njit(nogil=True, boundscheck=False, cache=True)
def table_rows(pos, entry, e_piece, e_rel, seg_lo, seg_hi, rows):
    """Candidates (tag position, entry) of a key + tag table as rows; rows holds one per candidate."""
    n = 0
    for k in range(pos.size):
        e = entry[k]
        n = _row(pos[k] - e_rel[e], np.int64(e_piece[e]), seg_lo, seg_hi, rows, n)
    return n


@njit(nogil=True, boundscheck=False, cache=True)
def verify_rows(data, rows, n, seg_lo, seg_hi, prog, out):
    """Rows of pieces of one start and length: exact bytes (Program.literal, compared in blocks)
    or single bytes some of them masked (Program.fixed, byte by byte), each compared at its one
    start inside its object; every match goes to out (segment, piece, start, end), which must hold
    a row per row. Returns the count. Pieces with gaps or alternatives go to verify_groups."""
    kind, a, b, opt_lo, opt_len, opt_val, opt_mask, info, op_byte = prog
    r_anchor, r_seg, r_piece = rows
    o_seg, o_piece, o_start, o_end = out
    m = 0
    for r in range(n):
        s, p = r_seg[r], r_piece[r]
        end = seg_hi[s]
        st = max(r_anchor[r] - info[p, 3], seg_lo[s])
        j0, j1 = info[p, 0], info[p, 1]
        if st + (j1 - j0) > end:
            continue
        if info[p, 5] == 1:
            ok = same_bytes(data, st, op_byte, j0, j1 - j0)
        else:
            ok = True
            for j in range(j0, j1):
                if (data[st + (j - j0)] & b[j]) != a[j]:
                    ok = False
                    break
        if ok:
            o_seg[m], o_piece[m], o_start[m], o_end[m] = s, p, st, st + (j1 - j0)
            m += 1
    return m


INF = np.int64(1) << np.int64(62)


@njit(nogil=True, boundscheck=False, cache=True)
def verify_groups(data, rows, n, seg_lo, seg_hi, prog, alt, first_row, E, F, dq, out):
    """verify_rows for rows sorted by (segment, piece, anchor), in time linear in the bytes they
    cover: the rows of one piece in one object part whose windows overlap form a group, and one
    backward pass over the group's bytes per op of the piece gives, for every position q, the
    least end of the piece's remaining ops matched from q (a byte: the next position's; a gap
    {lo-hi}: the least over q+lo..q+hi, a sliding-window minimum kept in a deque; alternatives:
    the least over the options matching at q, only those whose first byte fits data[q] tried:
    alt is Program.alt_index()). Every start the rows allow is then read off once.
    A piece's worst case is (the bytes its candidates' windows cover + one span per group of
    GROUP_STARTS starts) x (its ops + its alternatives' bytes), whatever the gaps: trying each
    start forward cost a span's worth of positions per start, a span squared per candidate.
    Starts from first_row on; returns (occurrences written, the row to resume at): it stops
    before a group whose starts might not fit in out."""
    kind, a, b, opt_lo, opt_len, opt_val, opt_mask, info, op_byte = prog
    alt_row, bucket_start, bucket_opt = alt
    r_anchor, r_seg, r_piece = rows
    o_seg, o_piece, o_start, o_end = out
    cap = o_seg.size
    m = 0
    r = first_row
    while r < n:
        s, p = r_seg[r], r_piece[r]
        end = seg_hi[s]
        j0, j1 = info[p, 0], info[p, 1]
        span = 0
        for j in range(j0, j1):  # the piece's longest span: bytes and options count 1 or more, gaps their maximum
            if kind[j] == 0:
                span += 1
            elif kind[j] == 1:
                span += b[j]
            else:
                longest = 0
                for o in range(a[j], a[j] + b[j]):
                    longest = max(longest, opt_len[o])
                span += longest
        lo_start = max(r_anchor[r] - info[p, 3], seg_lo[s])
        hi_start = r_anchor[r] - info[p, 2]
        g = r + 1
        while g < n and r_seg[g] == s and r_piece[g] == p:  # the group: windows that overlap, starts capped
            nxt_lo = max(r_anchor[g] - info[p, 3], seg_lo[s])
            nxt_hi = r_anchor[g] - info[p, 2]
            if nxt_lo > hi_start + span or nxt_hi - lo_start >= GROUP_STARTS:
                break
            hi_start = max(hi_start, nxt_hi)
            g += 1
        if hi_start < lo_start:
            r = g
            continue
        if m + (hi_start - lo_start + 1) > cap:
            return m, r
        top = min(hi_start + span, end)  # no path from these starts reaches past it
        width = top - lo_start + 1
        for x in range(width):
            F[x] = lo_start + x  # after the last op: the end is where it stands
        for j in range(j1 - 1, j0 - 1, -1):
            k = kind[j]
            if k == 0:
                v = a[j]
                mk = b[j]
                for x in range(width):
                    q = lo_start + x
                    E[x] = F[x + 1] if q < top and (data[q] & mk) == v else INF
            elif k == 1:
                gl, gh = a[j], b[j]
                head, tail = 0, 0  # dq[head:tail]: indices, decreasing, with increasing F
                for x in range(width - 1, -1, -1):
                    y = x + gl
                    if y < width:
                        while tail > head and F[dq[tail - 1]] >= F[y]:
                            tail -= 1
                        dq[tail] = y
                        tail += 1
                    while tail > head and dq[head] > x + gh:
                        head += 1
                    E[x] = F[dq[head]] if tail > head else INF
            else:
                bucket = alt_row[j] * 256
                for x in range(width):
                    q = lo_start + x
                    best = INF
                    if q >= top:
                        E[x] = INF
                        continue
                    at = bucket + np.int64(data[q])
                    for i in range(bucket_start[at], bucket_start[at + 1]):
                        o = bucket_opt[i]
                        length = opt_len[o]
                        if q + length > top:
                            continue
                        so = opt_lo[o]
                        ok = True
                        for u in range(length):
                            if (data[q + u] & opt_mask[so + u]) != opt_val[so + u]:
                                ok = False
                                break
                        if ok and F[x + length] < best:
                            best = F[x + length]
                    E[x] = best
            for x in range(width):
                F[x] = E[x]
            F[width] = INF
        for st in range(lo_start, hi_start + 1):
            e = F[st - lo_start]
            if e < INF:
                o_seg[m], o_piece[m], o_start[m], o_end[m] = s, p, st, e
                m += 1
        r = g
    return m, n


# -- the tables' builders (table.py) ------------------------------------------------------------
@njit(nogil=True, cache=True)
def count_pairs(data, counts):
    """counts[a | b << 8] += 1 for every byte a followed by b (one pass, no int64 copies: this
    runs on the filter thread before the first buffer is filtered)."""
    for i in range(data.size - 1):
        counts[np.int64(data[i]) | (np.int64(data[i + 1]) << 8)] += 1


@njit(cache=True)
def place_keys(flat, offsets, pair_logp, keys, tags, masks, rels):
    """Per anchor flat[offsets[k]:offsets[k+1]]: its key, tag, tag mask and tag offset in the run.
    A 6-byte or longer run takes the key position whose bucket is least full so far and, among
    those, the tag + key the pair model finds rarest; a shorter run takes its last two bytes as
    key and masks off the tag bytes it lacks. Into keys, tags, masks, rels (one per anchor)."""
    n = offsets.size - 1
    load = np.zeros(KEYS, np.int64)
    for k in range(n):
        lo = offsets[k]
        r = offsets[k + 1] - lo
        if r >= TAG + 2:
            best, best_load, best_lp = 0, np.int64(1) << 62, np.inf
            for t in range(r - TAG - 1):
                key = np.int64(flat[lo + t + TAG]) | (np.int64(flat[lo + t + TAG + 1]) << 8)
                lp = window_logp(flat, lo + t, TAG + 2, pair_logp)
                if load[key] < best_load or (load[key] == best_load and lp < best_lp):
                    best, best_load, best_lp = t, load[key], lp
            t = best
        else:
            t = r - TAG - 2
        tag = np.uint32(0)
        mask = np.uint32(0)
        for j in range(TAG):
            if t + j >= 0:
                tag |= np.uint32(flat[lo + t + j]) << np.uint32(8 * j)
                mask |= np.uint32(0xFF) << np.uint32(8 * j)
        key = np.int64(flat[lo + t + TAG]) | (np.int64(flat[lo + t + TAG + 1]) << 8)
        load[key] += 1
        keys[k], tags[k], masks[k], rels[k] = key, tag, mask, t


@njit(inline="always")
def window_logp(flat, at, length, pair_logp):
    """log P of flat[at:at+length] under the pair model, as independent disjoint pairs."""
    lp = 0.0
    for i in range(0, length - 1, 2):
        lp += pair_logp[np.int64(flat[at + i]) | (np.int64(flat[at + i + 1]) << 8)]
    return lp


@njit(cache=True)
def stride_offsets(flat, offsets, stride, pair_logp, out):
    """Per anchor, where its S consecutive windows start: the place where the pair model
    expects the fewest chance hits (the sum of the windows' probabilities), into out."""
    n = offsets.size - 1
    for k in range(n):
        lo = offsets[k]
        span = offsets[k + 1] - lo - (WINDOW + stride - 1)
        q = np.empty(span + stride)  # each window's probability, once
        for i in range(q.size):
            q[i] = np.exp(window_logp(flat, lo + i, WINDOW, pair_logp))
        best, best_p = 0, np.inf
        for o in range(span + 1):
            p = 0.0
            for j in range(stride):
                p += q[o + j]
            if p < best_p:
                best, best_p = o, p
        out[k] = lo + best
