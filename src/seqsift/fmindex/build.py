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
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
from pydivsufsort import divsufsort

from seqsift.errors import UsageError
from seqsift.fmindex.layout import MAX_COUNT, MAX_KMER, MAX_TEXT, NARROW, WORDS, IndexArrays
from seqsift.fmindex.pieces import BUCKETS, BYTES_PER_SUFFIX, DEFAULT_COVER, difference_cover, suffix_pieces
from seqsift.fmindex.reference import Reference
from seqsift.fmindex.spill import Spill
from seqsift.precompiled import Kernel

KMER_CAP = 12  # the default never exceeds 128 MiB of table (docs/benchmarks.md: k=10-12 beat k=9 since the search is compute-bound)
# The passes, _build_cpu.py's kernels, called precompiled (precompiled.py). The suffix array comes
# as divsufsort gives it (32-bit below 2^31 symbols) or as int64; samples and k-mer rows are
# 64-bit in a wide index.
_CPU = "seqsift.fmindex._build_cpu"
_SA, _ROWS = ("int32", "int64"), ("uint32", "uint64")
# text, sa, lo, hi, row0, sa_sample, repeat_sample, width, blocks, counts, marks, samples -> how many samples
_FILL_ROWS = Kernel(_CPU, "fill_rows", *(f"uint8[:] {sa}[:] int64 int64 int64 int64 int64 int64 uint64[:,:] uint64[:] "
                                         f"uint64[:] {rows}[:]" for sa in _SA for rows in _ROWS), results=1)
_CLOSE_BLOCKS = Kernel(_CPU, "close_blocks", "uint64[:,:] uint64[:] uint64[:] int64")
_FILL_KMER_TABLE = Kernel(_CPU, "fill_kmer_table", *(f"uint8[:] {sa}[:] int64 int64 int64 int64 int64 {rows}[:,:]"
                                                     for sa in _SA for rows in _ROWS))
_SYMBOL_COUNTS = Kernel(_CPU, "symbol_counts", "uint8[:] int64[:]")
_PACK = Kernel(_CPU, "pack", "uint8[:] uint8[:]")
_COUNT_GAPS = Kernel(_CPU, "count_gaps", "uint8[:]", results=1)
_FILL_GAPS = Kernel(_CPU, "fill_gaps", "uint8[:] int64[:,:]")


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


WINDOW = 1 << 20  # rows filled at a time: 8 MiB of copies (and of spilled blocks and samples' buffers) at most


class _Blocks:
    """The rank blocks being filled: all of them in memory or, given a Spill (spill.py), a
    window's: after each window the complete blocks are appended to it and only the one still
    open is kept, so the construction holds 64 bytes per 64 rows of a window, not of the text.
    `first` is the block buffer[0] holds (always 0 in memory)."""

    def __init__(self, n: int, spill: Spill | None = None):
        self.total, self.spill, self.first = n // 64 + 1, spill, 0
        rows = self.total if spill is None else (WINDOW + 1) // 64 + 3  # a window's rows and the open block
        self.buffer = np.zeros((rows, WORDS), np.uint64)

    def done_before(self, row: int) -> None:
        """Rows before `row` are filled: the blocks they complete go to the spill."""
        if self.spill is None:
            return
        complete = min(row >> 6, self.total) - self.first
        self.spill.append(self.buffer[:complete])
        self.buffer[: self.buffer.shape[0] - complete] = self.buffer[complete:]
        self.buffer[self.buffer.shape[0] - complete :] = 0
        self.first += complete

    def result(self) -> np.ndarray | Spill:
        if self.spill is None:
            return self.buffer
        self.done_before(self.total << 6)
        return self.spill


class _Table:
    """The k-mer table being filled: whole in memory or, given a Spill, the codes a window's rows
    can have. Rows come in suffix order, so their k-mers' codes never decrease, and the first and
    last rows of a window bound its codes (_bound). Every code below a window's least is complete
    and goes to the spill (absent k-mers as zeros), the buffer holding the rest."""

    def __init__(self, text: np.ndarray, k: int, positions, spill: Spill | None = None):
        self.text, self.k, self.spill, self.first = text, k, spill, 0  # first: the code buffer[0] holds
        self.buffer = np.zeros((4**k if spill is None else 0, 2), positions)

    def _bound(self, p: int, upper: bool) -> int:
        """The least (greatest) code of a k-mer whose suffix sorts at or after (before) the one
        at p: its bases up to the first '#' or '$', then A (then below that '#': one less)."""
        symbols = self.text[p : p + self.k].astype(np.int64)  # the text ends with '$': a short one has it
        bases = int(np.argmax(symbols < 2)) if np.any(symbols < 2) else self.k
        code = 0
        for c in symbols[:bases].tolist():
            code = code * 4 + c - 2
        code *= 4 ** (self.k - bases)
        return code - 1 if upper and bases < self.k else code

    def window(self, first_position: int, last_position: int) -> np.ndarray:
        """The buffer for rows from the suffix at first_position to the one at last_position
        (self.first: its code0)."""
        if self.spill is None:
            return self.buffer
        self._done_before(self._bound(first_position, False))
        need = self._bound(last_position, True) + 1 - self.first
        if need > self.buffer.shape[0]:
            grown = np.zeros((need, 2), self.buffer.dtype)
            grown[: self.buffer.shape[0]] = self.buffer
            self.buffer = grown
        return self.buffer

    def _done_before(self, code: int) -> None:
        """Codes below `code` are complete: to the spill, and the buffer moved on."""
        if code <= self.first:
            return
        held = min(code - self.first, self.buffer.shape[0])
        self.spill.append(self.buffer[:held])
        for at in range(self.first + held, code, WINDOW):  # codes past the buffer: k-mers absent
            self.spill.append(np.zeros((min(WINDOW, code - at), 2), self.buffer.dtype))
        self.buffer = self.buffer[held:].copy()
        self.first = code

    def result(self) -> np.ndarray | Spill:
        if self.spill is None:
            return self.buffer
        self._done_before(4**self.k)
        return self.spill


class _Rows:
    """Fills the rank blocks, SA samples and k-mer table from suffix array rows given in order,
    in pieces of any size: each row's repeat mark needs the rows on either side of it, so the last
    row of a piece is filled with the next piece. The blocks and the samples are held whole, or
    appended to Spills in `spill_dir` as they are filled."""

    def __init__(self, text, k, sa_sample, repeat_sample, window, positions, spill_dir=None):
        self.text, self.k = text, k
        spills = spill_dir is not None
        self.blocks = _Blocks(text.size, Spill(spill_dir, np.uint64, (WORDS,)) if spills else None)
        self.table = _Table(text, k, positions, Spill(spill_dir, positions, (2,)) if spills else None)
        self.sa_sample, self.repeat_sample, self.window = sa_sample, repeat_sample, window
        self.positions = positions
        self.counts, self.marks = np.zeros(4, np.uint64), np.zeros(1, np.uint64)
        self.tail = np.empty(0, np.int64)  # [row before the pending one,] the pending row
        self.row = 0  # the next row to be given
        self.samples: list[np.ndarray] | Spill = Spill(spill_dir, positions) if spills else []

    def add(self, row: int, sa: np.ndarray) -> None:
        """Rows row.. of the suffix array, WINDOW at a time (the copies and the samples' buffer
        are a window's, whatever the piece's size)."""
        for at in range(0, sa.size, WINDOW):
            self._window(row + at, sa[at : at + WINDOW])

    def _window(self, row: int, sa: np.ndarray, last: bool = False) -> None:
        if row != self.row:
            raise AssertionError(f"suffix array rows given out of order: {row}, expected {self.row}")
        self.row += sa.size
        rows = np.concatenate((self.tail, sa)) if self.tail.size else sa
        lo = self.tail.size - 1 if self.tail.size else 0
        hi = rows.size if last else rows.size - 1
        first = row - (self.tail.size > 0)
        if hi > lo:
            out = np.empty(hi - lo, self.positions)
            blocks = self.blocks
            kept = _FILL_ROWS(self.text, rows, lo, hi, first - (blocks.first << 6), self.sa_sample,
                              self.repeat_sample, self.window, blocks.buffer, self.counts, self.marks, out)
            if isinstance(self.samples, Spill):
                self.samples.append(out[:kept])
            else:
                self.samples.append(out[:kept].copy())
            table = self.table.window(int(rows[lo]), int(rows[hi - 1]))
            _FILL_KMER_TABLE(self.text, rows, lo, hi, first, self.k, self.table.first, table)
            blocks.done_before(first + hi - lo)
        self.tail = np.asarray(rows[max(rows.size - 2, 0) :], np.int64) if not last else np.empty(0, np.int64)

    def finish(self) -> tuple[np.ndarray | Spill, np.ndarray | Spill, np.ndarray | Spill]:
        """(the rank blocks, the SA samples, the k-mer table), once every row is given."""
        if self.tail.size:
            self._window(self.row, np.empty(0, np.int64), last=True)
        blocks = self.blocks
        _CLOSE_BLOCKS(blocks.buffer, self.counts, self.marks, self.text.size - (blocks.first << 6))
        if isinstance(self.samples, Spill):
            return blocks.result(), self.samples, self.table.result()
        samples = np.concatenate(self.samples) if self.samples else np.empty(0, self.positions)
        return blocks.result(), samples, self.table.result()


# bytes: the interpreter, numpy and the kernels (`seqsift index` of a 205 kbp excerpt of Klebsiella:
# 87 MiB in all, 2026-12-01), and what the allocator keeps
BASE_MEMORY = 128 << 20
ONE_PIECE_UP_TO = 2 << 30  # bytes: the default --memory is the larger of this and 4 bytes a base


def default_memory(n: int) -> int:
    """The default memory limit for a text of n symbols: 4 bytes a base (the goal past 2^31 of
    issue 29), but never less than 2 GiB, within which divsufsort's one-piece sort, the fastest,
    indexes genomes up to ~250 Mbp."""
    return max(4 * n, ONE_PIECE_UP_TO)


def _held(n: int, k: int, sa_sample: int, repeat_sample: int, itemsize: int, spilled: bool = False) -> int:
    """Bytes every construction holds: the text, the k-mer table, the process itself and the rank
    blocks and samples, whole (repeats counted as half the genome; more repeats, more samples)
    or, spilled, a window's of them and of the rows' copies."""
    if spilled:  # blocks, samples, copies of the window
        rows = WINDOW * (8 + itemsize + 1) + 2 * WINDOW * 8
    else:
        rows = (n // 64 + 1) * 64 + (n // sa_sample + (n // repeat_sample // 2 if repeat_sample else 0)) * itemsize
    # the k-mer table counted whole even spilled: planned without it, 0.25 Gbp at --memory 553M
    # peaked at 586 MiB (ede31c5, 2026-12-01), a part of the peak not yet accounted for
    return BASE_MEMORY + n + 2 * 4**k * itemsize + rows


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


def map_large_arrays() -> None:
    """Have glibc map and unmap every allocation of 1 MiB or more on its own, from now on in this
    process. By default it raises that threshold to the size of each large block freed, up to
    32 MiB, after which the construction's many batch-, window- and piece-sized arrays come from
    the heap, and the heap keeps what they leave: `seqsift index --memory 520M` of 64 Mbp peaked
    at 483 MiB that way against 367 MiB (2026-12-01). Elsewhere than glibc, nothing is done."""
    try:
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, 1 << 20)
    except (OSError, AttributeError):
        pass


THREAD_MEMORY = 80 << 20  # bytes a sorting thread beyond the first adds (docs/benchmarks.md: 79 MB at -t 2, 0.25 Gbp)


def plan_pieces(n: int, memory: int, held: int, cover: int = DEFAULT_COVER, threads: int = 1) -> int:
    """Suffixes a piece may hold within `memory` bytes, or 0 where the one-piece sort fits. Each
    thread past the first that sorts a piece's buckets holds its own scratch and allocator arena
    (THREAD_MEMORY), taken from the pieces' room."""
    if held + n * (4 if n < 1 << 31 else 8) <= memory:
        return 0
    spare = memory - held - -(-n // cover) * difference_cover(cover).size * 4 - 4 * cover * cover - 2 * 8 * BUCKETS
    spare -= (threads - 1) * THREAD_MEMORY
    capacity = spare // BYTES_PER_SUFFIX
    least = max((1 << 16) * BYTES_PER_SUFFIX, n // 4)  # a piece, or the packed text made after the last one
    if spare < least:
        need = math.ceil((memory - spare + least) / 2**30 * 100) / 100  # rounded up: accepted as said
        raise UsageError(f"--memory {memory / 2**30:.2f} GiB is too little for {n:,} symbols: the index itself "
                         f"and its construction need at least {need:.2f} GiB")
    return int(capacity)


def build_arrays(reference: Reference, sa_sample: int = 32, repeat_sample: int | None = None, kmer: int | None = None,
                 wide: bool | None = None, memory: int | None = None, piece: int | None = None,
                 threads: int = 1, spill_dir: str | None = None) -> IndexArrays:
    """repeat_sample 0, or not below sa_sample, marks no more in repeats (None: by the genome's
    size, default_repeat_sample); wide: 64-bit samples and k-mer rows (automatic past NARROW
    symbols; tests force it); memory: bytes the construction may hold (default_memory), beyond
    which the suffix array is sorted in pieces (pieces.py); piece: suffixes a piece holds, forcing
    the piecewise sort (tests); threads: how many sort a piece's buckets at once. Both sorts give
    the same index, byte for byte, on any number of threads. spill_dir: a directory where the rank
    blocks, SA samples and k-mer table are written as they are filled (spill.py), for an index
    that is only written to a file (ssx.write_index takes them; nothing searches them)."""
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
    if symbol_counts[2:].max() > MAX_COUNT:
        raise UsageError("one base occurs more than 2^32 - 1 times: the rank blocks' 32-bit counts cannot hold it")
    wide = n > NARROW if wide is None else wide
    positions = np.uint64 if wide else np.uint32
    k = default_kmer(n) if kmer is None else kmer
    if not 0 <= k <= MAX_KMER:
        raise UsageError(f"--kmer {k}: give 0 (no table) to {MAX_KMER}")
    repeat_sample = repeat_sample if repeat_sample < sa_sample else 0
    window = repeat_window(n) if repeat_sample else 0
    if piece is None:
        held = _held(n, k, sa_sample, repeat_sample, np.dtype(positions).itemsize, spill_dir is not None)
        piece = plan_pieces(n, default_memory(n) if memory is None else memory, held, threads=threads)
    rows = _Rows(text, k, sa_sample, repeat_sample, window, positions, spill_dir)
    if piece:
        for row, sa in suffix_pieces(text, piece, threads=threads):
            rows.add(row, sa)
            del sa
    else:
        sa = divsufsort(text)  # int32 or int64, as the library chooses for the length
        rows.add(0, sa)
        del sa  # the largest array: gone before the packing and the gap scan make theirs
    blocks, samples, table = rows.finish()
    C = np.cumsum(symbol_counts)[1:5].astype(np.int64)  # symbols below A, C, G, T
    return IndexArrays(blocks=blocks, C=C, samples=samples, kmer_table=table, packed=_packed(text), gaps=_gaps(text),
                       n=n, sa_sample=sa_sample, repeat_sample=repeat_sample, repeat_window=window, kmer=k)


def _packed(text: np.ndarray) -> np.ndarray:
    """The text 4 bases a byte (_build_cpu.pack)."""
    packed = np.zeros((text.size + 3) // 4, np.uint8)
    _PACK(text, packed)
    return packed


def _gaps(text: np.ndarray) -> np.ndarray:
    """[start, end) of each run of '#' or '$', one row each."""
    gaps = np.empty((_COUNT_GAPS(text), 2), np.int64)
    _FILL_GAPS(text, gaps)
    return gaps
