"""The arrays an index holds and the limits of their layout (build.py's docstring describes
them); a module of its own so that searching an index imports neither the builder nor Numba."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WORDS = 8
NARROW = (1 << 32) - 1  # texts up to this many symbols keep 32-bit samples and k-mer rows
MAX_COUNT = (1 << 32) - 1  # occurrences of one base: the rank blocks' counts are 32-bit
MAX_TEXT = 1 << 40  # beyond NARROW: 64-bit samples and rows; each base's count must stay below 2^32
MAX_KMER = 14  # 4^14 intervals are 2 GiB of table


@dataclass(frozen=True)
class IndexArrays:
    blocks: np.ndarray  # uint64 (n // 64 + 1, 8)
    C: np.ndarray  # int64 (4,): rows whose suffix starts with a smaller symbol, per base
    samples: np.ndarray  # uint32 (uint64 past NARROW): text position of each marked row, in row order
    kmer_table: np.ndarray  # uint32/uint64 (4^k, 2): [lo, hi) of each k-mer, first base most significant
    packed: np.ndarray  # uint8: the text, 4 bases a byte (low bits first), non-ACGT as A
    gaps: np.ndarray  # int64 (m, 2): [start, end) of each run of '#'/'$' in the text
    n: int  # rows (text length, '$' included)
    sa_sample: int
    repeat_sample: int  # 0: no denser marks in repeats
    repeat_window: int
    kmer: int
