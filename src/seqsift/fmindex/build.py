"""Index construction: suffix array (pydivsufsort), BWT, C array, rank blocks, SA samples,
k-mer table and the 2-bit packed reference.

Rank structure, one level (the GEM paper, 4.2.6 and appendix D): one 64-byte block per 64 BWT rows,
as 8 uint64 words: [count A | count C << 32, count G | count T << 32, bitmap A, bitmap C,
bitmap G, bitmap T, sample-mark bitmap, samples before this block]. rank_c(i) is the block's
count plus a popcount, and locating touches the mark bits in the same cache line.

Locate (the GEM paper, 4.3.1 and D4, "inverse marking"): rows are marked where the suffix array
holds a multiple of `sa_sample`, and where the BWT symbol is '#' or '$' (so an LF walk never
crosses a boundary); walking LF from any row reaches a mark within sa_sample - 1 steps.
Repeats are marked more densely, at every multiple of `repeat_sample` whose next
`repeat_window` bases occur elsewhere too: a read there has a row to locate per copy, and the
rows of diverged copies are located only to be rejected, so walks are many where repeats are
(docs/benchmarks.md: four diverged copies of a genome, 15.5 -> 4.9 steps a row).

Memoization (the GEM paper, 4.2.1 and D5, strategy B2): the BWT interval of every k-mer, filled
completely at build time, replaces the last k steps of every backward search.

The passes over the text and the suffix array are _build_cpu.py's kernels, called precompiled
(precompiled.py), so building an index imports no Numba once they are built.
"""

from __future__ import annotations

import math

import numpy as np
from pydivsufsort import divsufsort

from seqsift.errors import UsageError
from seqsift.fmindex.layout import MAX_KMER, MAX_TEXT, NARROW, WORDS, IndexArrays
from seqsift.fmindex.reference import Reference
from seqsift.precompiled import Kernel

AHEAD = 16  # rows whose text is prefetched ahead in the passes over the suffix array, which read the text at random
_CPU = "seqsift.fmindex._build_cpu"
_SA = ("int32", "int64")  # the suffix array's type, as pydivsufsort chooses it for the length
_POSITIONS = ("uint32", "uint64")  # narrow or wide samples and k-mer rows
# text, sa, sa_sample, repeat_sample, width, blocks -> the number of marks
_FILL_BLOCKS = Kernel(_CPU, "fill_blocks", *(f"uint8[:] {sa}[:] int64 int64 int64 uint64[:,:]" for sa in _SA), results=1)
_FILL_SAMPLES = Kernel(_CPU, "fill_samples", *(f"uint64[:,:] {sa}[:] {p}[:]" for sa in _SA for p in _POSITIONS))
_FILL_KMER_TABLE = Kernel(_CPU, "fill_kmer_table", *(f"uint8[:] {sa}[:] int64 {p}[:,:]" for sa in _SA for p in _POSITIONS))
_SYMBOL_COUNTS = Kernel(_CPU, "symbol_counts", "uint8[:] int64[:]")
_PACK = Kernel(_CPU, "pack", "uint8[:] uint8[:]")
KMER_CAP = 12  # the default never exceeds 128 MiB of table (docs/benchmarks.md: k=10-12 beat k=9 since the search is compute-bound)


def default_kmer(n: int) -> int:
    """The k-mer table length for a text of n symbols: the largest k with 4^k <= n / 4, so the
    table (8 * 4^k bytes) is at most 2 bytes a base, capped at KMER_CAP for large genomes. Each
    base the table covers is a search step saved, and the one lookup a search makes costs less;
    a table 4x larger (k=12 on 22.7 Mbp, +100 MB) saved nothing once repeats were marked every
    4th base (docs/benchmarks.md; commit 9a62982, 2026-12-01)."""
    k = 1
    while k < KMER_CAP and 4 ** (k + 2) <= n:
        k += 1
    return k


DENSE_REPEATS_UP_TO = 1 << 27  # bases: marking every 4th base costs at most 128 MiB of 4-byte samples up to here


def default_repeat_sample(n: int) -> int:
    """How densely repeats are marked by default for a text of n symbols: every 4th base while
    that costs at most 128 MiB of samples even if the whole genome were repeats (the k-mer
    table's budget), every 8th beyond. On 22.7 Mbp of diverged copies 4 against 8 located each
    row in 34 against 48 ns, for an index 13% larger (docs/benchmarks.md; commit f610c05, 2026-12-01);
    on a mammal 4 would add ~0.25 bytes a base (~16%)."""
    return 4 if n <= DENSE_REPEATS_UP_TO else 8


def repeat_window(n: int) -> int:
    """Bases a window shares with another place in the text for it to count as a repeat: 4 more
    than log4(n), so that a random window recurs by chance less than about once in 256."""
    return math.ceil(math.log(max(n, 4), 4)) + 4


def _packed(text: np.ndarray) -> np.ndarray:
    """The text 4 bases a byte (_build_cpu.pack)."""
    packed = np.zeros((text.size + 3) // 4, np.uint8)
    _PACK(text, packed)
    return packed


def _gaps(text: np.ndarray) -> np.ndarray:
    """[start, end) of each run of '#' or '$'."""
    flags = np.concatenate((np.zeros(1, np.int8), (text < 2).view(np.int8), np.zeros(1, np.int8)))
    edges = np.flatnonzero(np.diff(flags))
    return edges.reshape(-1, 2).astype(np.int64)


def build_arrays(reference: Reference, sa_sample: int = 32, repeat_sample: int | None = None, kmer: int | None = None,
                 wide: bool | None = None) -> IndexArrays:
    """repeat_sample 0, or not below sa_sample, marks no more in repeats (None: by the genome's
    size, default_repeat_sample); wide: 64-bit samples and k-mer rows (automatic past NARROW
    symbols; tests force it)."""
    text = np.ascontiguousarray(reference.text)  # pydivsufsort needs a writable array
    n = int(text.size)
    repeat_sample = default_repeat_sample(n) if repeat_sample is None else repeat_sample
    if sa_sample < 1:
        raise UsageError(f"--sa-sample {sa_sample}: give a whole number of at least 1")
    if repeat_sample < 0:
        raise UsageError(f"--repeat-sample {repeat_sample}: give 0 (none) or a whole number")
    if not text.flags.writeable:
        text = text.copy()
    if n > MAX_TEXT:
        raise UsageError(f"the reference holds {n:,} symbols; this index format takes at most {MAX_TEXT:,}")
    symbol_counts = np.zeros(6, np.int64)
    _SYMBOL_COUNTS(text, symbol_counts)
    if symbol_counts[2:].max() > NARROW:
        raise UsageError("one base occurs more than 2^32 - 1 times: the rank blocks' 32-bit counts cannot hold it")
    wide = n > NARROW if wide is None else wide
    positions = np.uint64 if wide else np.uint32
    k = default_kmer(n) if kmer is None else kmer
    if not 0 <= k <= MAX_KMER:
        raise UsageError(f"--kmer {k}: give 0 (no table) to {MAX_KMER}")
    sa = divsufsort(text)  # int32 or int64, as the library chooses for the length
    repeat_sample = repeat_sample if repeat_sample < sa_sample else 0
    window = repeat_window(n) if repeat_sample else 0
    blocks = np.zeros((n // 64 + 1, WORDS), np.uint64)
    samples = np.empty(_FILL_BLOCKS(text, sa, sa_sample, repeat_sample, window, blocks), positions)
    _FILL_SAMPLES(blocks, sa, samples)
    table = np.zeros((4**k, 2), positions)
    _FILL_KMER_TABLE(text, sa, k, table)
    del sa  # the largest array: gone before the packing and the gap scan make theirs
    C = np.cumsum(symbol_counts)[1:5].astype(np.int64)  # symbols below A, C, G, T
    return IndexArrays(blocks=blocks, C=C, samples=samples, kmer_table=table, packed=_packed(text), gaps=_gaps(text),
                       n=n, sa_sample=sa_sample, repeat_sample=repeat_sample, repeat_window=window, kmer=k)
