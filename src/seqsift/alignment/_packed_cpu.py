"""The packed two-sequence kernel (packed.py) compiled for the CPU: the exact emulation of the
GPU's 16-bit pair arithmetic, run in the tests so the packed logic is proven without a GPU."""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.alignment import packed

align_pair = njit(nogil=True)(packed.make_pair_aligner(packed.vimax3_s16x2_relu, packed.viaddmax_s16x2,
                                                        packed.vadd_s16x2))


def query_profile(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(alphabet + 1, m) int16: each letter's score against each query position; the extra last
    row is the padding letter, scoring NEG everywhere."""
    profile = np.full((matrix.shape[0] + 1, query.size), packed.NEG, np.int16)
    profile[:-1] = matrix[:, query].astype(np.int16) if query.size else profile[:-1]
    return profile


def pair_order(lengths: np.ndarray, query_len: int, largest: int) -> tuple[np.ndarray, np.ndarray]:
    """(pairs of database indices sorted by length, indices too long for 16 bits). A pair's
    second index is -1 when the count is odd."""
    fits = np.minimum(lengths, query_len) * max(largest, 1) <= packed.GUARD
    order = np.argsort(lengths, kind="stable")
    ok = order[fits[order]]
    if ok.size % 2:
        ok = np.append(ok, -1)
    return ok.reshape(-1, 2), np.flatnonzero(~fits)


def packed_scores(query: np.ndarray, codes: list[np.ndarray], matrix: np.ndarray, gap_open: int,
                  gap_extend: int) -> tuple[np.ndarray, np.ndarray]:
    """(local scores of query against each sequence, indices left for the 32-bit kernel)."""
    profile = query_profile(query, matrix).ravel()
    lengths = np.array([c.size for c in codes], np.int64)
    pairs, too_long = pair_order(lengths, query.size, int(matrix.max(initial=0)))
    neg_oe = packed.pack(-(gap_open + gap_extend), -(gap_open + gap_extend))
    neg_e = packed.pack(-gap_extend, -gap_extend)
    H = np.empty(query.size + 1, np.uint32)
    D = np.empty(query.size + 1, np.uint32)
    empty = np.zeros(0, np.uint8)
    out = np.zeros(len(codes), np.int64)
    pad = matrix.shape[0]
    for a, b in pairs.tolist():
        seq_b = codes[b] if b >= 0 else empty
        best = align_pair(profile, query.size, codes[a], codes[a].size, seq_b, seq_b.size, pad, neg_oe, neg_e, H, D)
        out[a] = packed.lo16(best)
        if b >= 0:
            out[b] = packed.hi16(best)
    return out, too_long
