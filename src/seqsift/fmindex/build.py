"""Index construction: suffix array (pydivsufsort), BWT, C array, rank blocks, SA samples.

Rank structure, one level (seed section 4.2.6, annex D): one 64-byte block per 64 BWT rows,
as 8 uint64 words: [count A | count C << 32, count G | count T << 32, bitmap A, bitmap C,
bitmap G, bitmap T, sample-mark bitmap, samples before this block]. rank_c(i) is the block's
count plus a popcount, and locating touches the mark bits in the same cache line.

Locate (section 4.3.1, annex D4, "inverse marking"): rows are marked where the suffix array
holds a multiple of `sa_sample`, and where the BWT symbol is '#' or '$' (so an LF walk never
crosses a boundary); walking LF from any row reaches a mark within sa_sample - 1 steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydivsufsort import divsufsort

from seqsift.errors import UsageError
from seqsift.fmindex.reference import Reference

WORDS = 8
MAX_TEXT = (1 << 32) - 1  # block counts are 32-bit


@dataclass(frozen=True)
class IndexArrays:
    blocks: np.ndarray  # uint64 (n // 64 + 1, 8)
    C: np.ndarray  # int64 (4,): rows whose suffix starts with a smaller symbol, per base
    samples: np.ndarray  # int64: text position of each marked row, in row order
    n: int  # rows (text length, '$' included)
    sa_sample: int


def _bits(flags: np.ndarray, nblocks: int) -> np.ndarray:
    """Little-endian bitmaps, one uint64 per 64 flags."""
    padded = np.zeros(nblocks * 64, bool)
    padded[: flags.size] = flags
    return np.packbits(padded, bitorder="little").view("<u8").astype(np.uint64)


def _exclusive_counts(flags: np.ndarray, nblocks: int) -> np.ndarray:
    padded = np.zeros(nblocks * 64, np.int64)
    padded[: flags.size] = flags
    per_block = padded.reshape(nblocks, 64).sum(1)
    return np.concatenate(([0], np.cumsum(per_block)[:-1])).astype(np.uint64)


def build_arrays(reference: Reference, sa_sample: int = 32) -> IndexArrays:
    if sa_sample < 1:
        raise UsageError(f"--sa-sample {sa_sample}: give a whole number of at least 1")
    text = np.ascontiguousarray(reference.text)  # pydivsufsort needs a writable array
    if not text.flags.writeable:
        text = text.copy()
    n = int(text.size)
    if n > MAX_TEXT:
        raise UsageError(f"the reference holds {n:,} symbols; this index format takes at most {MAX_TEXT:,}")
    sa = divsufsort(text).astype(np.int64)
    bwt = text[sa - 1]  # sa == 0 wraps to text[-1], the '$'
    nblocks = n // 64 + 1
    blocks = np.zeros((nblocks, WORDS), np.uint64)
    counts = [_exclusive_counts(bwt == b + 2, nblocks) for b in range(4)]
    blocks[:, 0] = counts[0] | (counts[1] << np.uint64(32))
    blocks[:, 1] = counts[2] | (counts[3] << np.uint64(32))
    for b in range(4):
        blocks[:, 2 + b] = _bits(bwt == b + 2, nblocks)
    marked = (sa % sa_sample == 0) | (bwt < 2)
    blocks[:, 6] = _bits(marked, nblocks)
    blocks[:, 7] = _exclusive_counts(marked, nblocks)
    symbol_counts = np.bincount(text, minlength=6)
    C = np.cumsum(symbol_counts)[1:5].astype(np.int64)  # symbols below A, C, G, T
    return IndexArrays(blocks=blocks, C=C, samples=sa[marked], n=n, sa_sample=sa_sample)
