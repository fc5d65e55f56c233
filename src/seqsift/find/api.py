"""Public exact-search API: validate, encode, dispatch to a backend, wrap the results.

`FindJob` is the one place that turns a pattern and a source into per-chunk
results; the Python functions below and the CLI both go through it. Files searched on the CPU
(mapped, packed or read whole) go from buffer to kernel without numpy (precompiled.Kernel takes
any buffer), so `seqsift find` over files does not pay numpy's import (docs/benchmarks.md,
"Start-up"); numpy is imported where the data or the results are numpy arrays (in-memory
sources, records, the GPU, positions past the first chunk of a file).
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import sys
from array import array
from bisect import bisect_left

from seqsift import backend as backends
from seqsift.errors import InputError, UsageError
from seqsift.find import DEFAULT_CHUNK_SIZE
from seqsift.find.cpu import int64s
from seqsift.find.plan import SAMPLE_BYTES, SearchPlan, make_plan, reverse_complement
from seqsift.io.gather import ALONE, WINDOW, Names, gather
from seqsift.io.mapped import MappedFile, open_mapped
from seqsift.io.openers import STDIN, display_name, open_binary, open_regular_fd, stdin_file
from seqsift.io.pack import PackedObject, Packer, regular_size

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from typing import BinaryIO, Callable, Iterable, Iterator, Union

    import numpy as np

    from seqsift.io.chunks import ChunkReader
    from seqsift.io.fastx import SequenceBatch

    Source = Union[bytes, bytearray, memoryview, "np.ndarray", str, os.PathLike, BinaryIO]
    Progress = Callable[[int], None]

# Files up to this size are searched packed together (io.pack); larger ones are mapped or stream alone.
PACK_FILE_MAX = 1 << 20
# The buffer they are packed into: every page of a fresh buffer costs a fault and the kernel's
# zeroing, once a process, so it stays small (62 MB of small files, one thread, 2026-12-01:
# 0.104 s CPU through a fresh 64 MiB buffer, 0.055 s through 4 MiB; 0.046 s either way reused).
PACK_BUFFER = 4 << 20
_LOWER = bytes(range(256)).lower()  # ASCII A-Z to a-z, every other byte as it is
# Positions shifted by a chunk's base in Python up to this many, by numpy past it.
_SHIFT_IN_PYTHON = 4096


class Batch:
    """Files searched together, their results all in hand (FindJob.search_files with
    batches=True): paths, and per path its one result (a count, or its offsets as an int64
    buffer). A plain class: the dataclasses module imports inspect (docs/benchmarks.md, "Start-up")."""

    __slots__ = ("paths", "results")

    def __init__(self, paths: list[str], results: list):
        self.paths, self.results = paths, results

    def __len__(self) -> int:
        return len(self.paths)


class RecordHits:
    """Occurrences in FASTA/FASTQ records: record name (an object array of str), 0-based leftmost
    forward position (int64), strand ('<U1', '+' or '-'). A plain class: the dataclasses module
    imports inspect, ~10 ms of every command's start (docs/benchmarks.md, "Start-up")."""

    __slots__ = ("record", "position", "strand")

    def __init__(self, record: np.ndarray, position: np.ndarray, strand: np.ndarray):
        self.record, self.position, self.strand = record, position, strand

    def __len__(self) -> int:
        return int(self.position.size)

    def __iter__(self):
        return zip(self.record.tolist(), self.position.tolist(), self.strand.tolist())

    @staticmethod
    def concat(parts: list["RecordHits"]) -> "RecordHits":
        import numpy as np

        if not parts:
            return RecordHits(np.empty(0, object), np.empty(0, np.int64), np.empty(0, "<U1"))
        return RecordHits(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("record", "position", "strand")))


def as_pattern(pattern: bytes | bytearray | memoryview | str, hex: bool = False) -> bytes:
    """The pattern as bytes; str is UTF-8 (or hex digits with hex=True). Empty is an error."""
    if hex:
        text = pattern.decode() if isinstance(pattern, (bytes, bytearray)) else str(pattern)
        try:
            pattern = bytes.fromhex(text)
        except ValueError:
            raise UsageError(f"pattern {text!r} is not valid hex: give pairs of hex digits, e.g. 4d5a9000") from None
    elif isinstance(pattern, str):
        pattern = pattern.encode()
    elif isinstance(pattern, (bytes, bytearray, memoryview)):
        pattern = bytes(pattern)
    else:
        raise UsageError(f"pattern must be bytes or str, not {type(pattern).__name__}")
    if not pattern:
        raise UsageError("the pattern is empty: give at least one byte")
    return pattern


def sequence_pattern(pattern: bytes) -> bytes:
    """Upper-case a pattern for record search; only sequence letters, '*' and '-' may match there."""
    from seqsift.io.fastx import FOLD

    folded = pattern.translate(FOLD)
    bad = next((chr(pattern[i]) for i, c in enumerate(folded) if c == 0 or c in b"\r\n \t"), None)
    if bad is not None:
        raise UsageError(f"pattern {pattern!r} has {bad!r}: with --fasta a pattern holds sequence letters only")
    return folded


def memory_view(source: Source) -> np.ndarray | None:
    """A zero-copy uint8 view of an in-memory source, or None for paths and streams."""
    if isinstance(source, (str, os.PathLike)) or hasattr(source, "read"):
        return None
    import numpy as np

    if isinstance(source, np.ndarray):
        if source.dtype != np.uint8 or source.ndim != 1:
            raise UsageError(f"an array source must be 1-D uint8, not {source.ndim}-D {source.dtype}")
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return np.frombuffer(memoryview(source).cast("B"), np.uint8)
    return None


class FindJob:
    """One pattern, one backend, `threads` threads; searches any number of sources in turn."""

    def __init__(
        self,
        pattern: bytes,
        *,
        backend: str = "auto",
        threads: int | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        gpu_config=None,
        ignore_case: bool = False,
    ):
        # ignore_case (grep -i, ASCII letters only): the pattern and every chunk of raw bytes are
        # lower-cased before the search, a copy of each chunk (record search folds case anyway)
        self.ignore_case = ignore_case
        self.pattern = pattern.lower() if ignore_case else pattern
        self.threads = backends.check_threads(threads)
        if chunk_size < 1:
            raise UsageError(f"chunk size {chunk_size} must be at least 1 byte")
        # A chunk must hold several pattern lengths for the P-1 overlap to stay a small cost.
        self.chunk_size = max(chunk_size, 4 * len(pattern))
        self.backend = backends.resolve(backend)
        if backend == "auto" and self.backend == "cuda" and len(pattern) > _gpu_max_pattern():
            self.backend = "cpu"
        self.gpu_config = gpu_config
        self._plans: dict[bytes, SearchPlan] = {}
        self._buffers: list[np.ndarray] | None = None  # streaming buffers, reused file after file
        self._cpu_searchers: dict = {}
        self._gpu_searchers: dict = {}
        self._pack: mmap.mmap | None = None  # the buffer small files are packed into
        self._whole: mmap.mmap | None = None  # the buffer a file of up to chunk_size is read into

    def close(self) -> None:
        """Nothing to release today (threads come from runner's process pool); kept so a job is a
        context manager whatever it comes to hold."""

    def __enter__(self) -> "FindJob":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- raw bytes ---------------------------------------------------------------------------
    def offsets(self, source: Source, count_only: bool, progress: Progress | None = None) -> Iterator[array | int]:
        """Per chunk, in order: the absolute offsets of matches (an int64 buffer: array.array on
        the CPU, a numpy array on the GPU), or their count."""
        m = len(self.pattern)
        data = memory_view(source)
        if self.backend == "cuda":
            with self._reader(source, data) as reader:
                yield from self._gpu_offsets(reader, count_only, progress)
            return
        searcher = None
        for base, chunk in self._cpu_chunks(source, data):
            if self.ignore_case:
                chunk = bytes(chunk).translate(_LOWER)
            if searcher is None:
                searcher = self._cpu_searcher(self._plan(self.pattern, chunk))
            size = len(chunk)
            los, his = _whole_chunk(size, m)
            if count_only:
                yield searcher.count(chunk, los, his)
            else:
                yield _shifted(searcher.positions(chunk, los, his), base)
            if progress:
                progress(max(size - (m - 1), 0) if base else size)

    def search_files(
        self, paths: list[str], count_only: bool, progress: Progress | None = None, regular: bool = False,
        batches: bool = False,
    ) -> Iterator[tuple[str, Iterable[array | int]] | tuple[Batch, None]]:
        """(path, its results) per path, in order: what offsets() would yield, as an iterator to
        consume before the next path, or for a file searched in a packed buffer a tuple of its one
        result (results in hand, which no read can fail any more). On the CPU, regular files are
        opened by compiled code that reads those of at most PACK_FILE_MAX bytes straight into one
        buffer, searched together (_search_opened); with batches=True, the files of one buffer
        come as one item, (Batch, None), their results in hand (a tree of thousands of small
        files: no Python per file here). regular=True says the paths are regular files found by
        a walk (io.tree), opened unseen (one that is not regular by then is an error); else each
        path is stat'ed first, and standard input, a fifo or a device streams (offsets())."""
        if self.backend == "cuda":
            for path in paths:
                yield path, self.offsets(path, count_only, progress)
            return
        if regular:
            yield from self._search_opened(paths, count_only, progress, batches)
            return
        run: list[str] = []  # regular files in a row, read as a walk's are
        for path in paths:
            if regular_size(path) is not None:
                run.append(path)
                continue
            yield from self._search_opened(run, count_only, progress, batches)
            run = []
            yield path, self.offsets(path, count_only, progress)
        yield from self._search_opened(run, count_only, progress, batches)

    def _pack_buffer(self) -> mmap.mmap:
        """The job's buffer that search_files packs small files into (an anonymous map: its pages
        are touched only once filled)."""
        if self._pack is None:
            self._pack = mmap.mmap(-1, min(self.chunk_size, max(PACK_BUFFER, 4 * len(self.pattern))))
        return self._pack

    def _search_opened(self, paths: list[str], count_only: bool, progress: Progress | None, batches: bool = False):
        """search_files over regular files (a walk's, or named ones a stat found regular): small
        files are read whole one after another into the job's buffer by compiled code (io.gather:
        one open, lseek, read and close a file, no Python between them), and each buffer is
        searched in one kernel call over the files' ranges (_search_batch). A file the loop
        leaves alone (larger, not a regular file any more, failing to open or to read, or read
        to another size than lseek said: see io.gather) is searched on its own in its place
        (_search_alone)."""
        buffer = self._pack_buffer()
        with memoryview(buffer) as view:
            for start in range(0, len(paths), WINDOW):
                names = Names(paths[start : start + WINDOW])
                n = len(names.paths)
                los, his = int64s(bytes(8 * n)), int64s(bytes(8 * n))
                k = 0
                while k < n:
                    first = k
                    k, _, why = gather(names, first, buffer, 0, PACK_FILE_MAX, los, his)
                    yield from self._search_batch(view, names.paths[first:k], los[first:k], his[first:k],
                                                  count_only, progress, batches)
                    if why == ALONE:
                        yield from self._search_alone(names.paths[k], count_only, progress)
                        k += 1

    def _search_alone(self, path: str, count_only: bool, progress: Progress | None):
        """(path, its results) for a regular file searched on its own: one swapped for a fifo or
        device since it was found is an InputError naming it (opened without blocking, and
        checked on its descriptor, before offsets() opens it again); one that cannot be opened is
        left to offsets(), which names the error as for any path."""
        if path != STDIN:
            try:
                fd, _ = open_regular_fd(path)
            except InputError:
                raise
            except OSError:
                pass
            else:
                os.close(fd)
        yield path, self.offsets(path, count_only, progress)

    def _search_batch(self, buffer: memoryview, names: list[str], los: array, his: array, count_only: bool,
                      progress: Progress | None, batches: bool = False):
        """(name, (its one result,)) per file of a batch read by _search_opened, whose bytes
        lie at buffer[lo:hi], in one kernel call; with batches=True, (Batch, None) for each run
        of them. A file passed over as large (lo -1) is searched alone in its place."""
        if not names:
            return
        skipped = min(los) < 0
        read = [j for j, lo in enumerate(los) if lo >= 0] if skipped else range(len(names))
        if read:
            starts, ends = (array("q", (los[j] for j in read)), array("q", (his[j] for j in read))) if skipped else (los, his)
            with buffer[: ends[-1]] as text:
                results = self._search_ranges(text, starts, ends, count_only)
            if progress:
                progress(ends[-1])
        if not skipped:
            if batches:
                yield Batch(names, results), None
            else:
                yield from zip(names, ((result,) for result in results))
            return
        done = dict(zip(read, results)) if read else {}
        run: list[int] = []
        for j in range(len(names) + 1):
            if j < len(names) and j in done:
                run.append(j)
                continue
            if run:  # the files read since the last large one
                if batches:
                    yield Batch([names[i] for i in run], [done[i] for i in run]), None
                else:
                    yield from ((names[i], (done[i],)) for i in run)
                run = []
            if j < len(names):
                yield from self._search_alone(names[j], count_only, progress)

    def _search_ranges(self, text: memoryview, starts: list[int], ends: list[int], count_only: bool) -> list:
        """Per range [start, end) of text: the matches wholly inside it, counted, or as offsets
        from its start; all ranges in one kernel call."""
        m = len(self.pattern)
        if self.ignore_case:
            text = bytes(text).translate(_LOWER)
        searcher = self._cpu_searcher(self._plan(self.pattern, text))
        his = [hi - m + 1 for hi in ends]
        keep = [k for k, (lo, hi) in enumerate(zip(starts, his)) if hi > lo]
        los, his = int64s(starts[k] for k in keep), int64s(his[k] for k in keep)
        if count_only:
            counts = [0] * len(starts)
            for k, c in zip(keep, searcher.count_ranges(text, los, his)):
                counts[k] = c
            return counts
        found = searcher.positions(text, los, his)
        cuts = [bisect_left(found, lo) for lo in starts]
        return [_shifted(found[a:b], -lo) for a, b, lo in zip(cuts, cuts[1:] + [len(found)], starts)]

    def _cpu_chunks(self, source: Source, data: np.ndarray | None) -> Iterator[tuple[int, np.ndarray | memoryview]]:
        if data is not None:  # in memory: chunks are views, nothing is copied
            step = self.chunk_size
            for base in range(0, max(data.size - len(self.pattern) + 1, 1), step):
                yield base, data[base : base + step + len(self.pattern) - 1]
            return
        size = regular_size(source) if isinstance(source, (str, os.PathLike)) else None
        redirected = stdin_file() if str(source) == STDIN else None  # `< file`: mapped as the file is
        if redirected is not None and (mapped := open_mapped(redirected, PACK_FILE_MAX + 1)) is not None:
            yield from self._mapped_chunks(source, mapped)
            return
        if size is not None and size > PACK_FILE_MAX and (mapped := open_mapped(source, PACK_FILE_MAX)) is not None:
            yield from self._mapped_chunks(source, mapped)
            return
        if size is not None and size <= self.chunk_size:  # one read, no reader thread
            path = os.fspath(source)
            packer = Packer(iter([PackedObject(0, path, path)]), self.chunk_size, 0)
            try:
                if self._whole is None:
                    self._whole = mmap.mmap(-1, self.chunk_size)
                filled = packer.fill(self._whole)
                failed = filled.segments[-1].obj.error if filled is not None else None
                whole = filled is not None and filled.segments[-1].last and not failed
            finally:
                packer.close()
            if failed:  # named here, not read again in chunks: procfs's pagemap, sized 0, fails only
                # reads of some sizes, and read in chunks would give its 256 GiB
                raise InputError(display_name(path), failed)
            if whole:  # else it grew: the reader below reads it as it is now
                with memoryview(filled.buffer) as view:
                    yield 0, view[: filled.n]
                return
        with self._reader(source, None) as reader:
            yield from self._streamed(reader)

    def _streamed(self, reader: ChunkReader) -> Iterator[tuple[int, np.ndarray]]:
        """The reader's chunks through the job's two streaming buffers, reused file after file."""
        import numpy as np

        from seqsift.io.chunks import iter_chunks

        if self._buffers is None or self._buffers[0].size != reader.buffer_size:
            self._buffers = [np.empty(reader.buffer_size, np.uint8) for _ in range(2)]
        yield from iter_chunks(reader, buffers=self._buffers)

    def _mapped_chunks(self, path: str | os.PathLike, mapped: MappedFile) -> Iterator[tuple[int, memoryview]]:
        """Chunks of a memory-mapped file as views of the map (io.mapped), laid out as those of
        an in-memory source; if a writer starts waiting on the file, the map is given up before
        the next chunk and the rest is read from the file (what a file changing while read gives).
        Every view is released before the map is closed, so none can read it after."""
        m, step = len(self.pattern), self.chunk_size
        with mapped:
            with memoryview(mapped.memory) as whole:
                for base in range(0, max(mapped.size - m + 1, 1), step):
                    if not mapped.intact:
                        break
                    with whole[base : base + step + m - 1] as chunk:
                        yield base, chunk
                else:
                    return
        with self._reader(path, None, offset=base) as reader:
            yield from self._streamed(reader)

    @contextlib.contextmanager
    def _reader(self, source: Source, data: np.ndarray | None, offset: int = 0) -> Iterator[ChunkReader]:
        """A ChunkReader over any source; a file opened here from a path is closed after. With an
        offset (a path only), the file is read from there on."""
        from seqsift.io.chunks import ArrayStream, ChunkReader

        overlap = len(self.pattern) - 1
        if data is not None:
            yield ChunkReader(ArrayStream(data), self.chunk_size, overlap, "(memory)")
        elif isinstance(source, (str, os.PathLike)):
            stream = open_binary(source)
            try:
                if offset:
                    stream.seek(offset)
                yield ChunkReader(stream, self.chunk_size, overlap, display_name(source), offset)
            finally:
                if stream is not sys.stdin.buffer:
                    stream.close()
        elif hasattr(source, "readinto"):
            yield ChunkReader(source, self.chunk_size, overlap, getattr(source, "name", "(stream)"))
        elif hasattr(source, "read"):
            yield ChunkReader(io.BufferedReader(ReadOnly(source)), self.chunk_size, overlap, "(stream)")
        else:
            raise UsageError(f"cannot search a {type(source).__name__}: give bytes, a numpy uint8 array, a path or a binary file")

    def _gpu_offsets(self, reader: ChunkReader, count_only: bool, progress: Progress | None):
        import numpy as np

        searcher = self._gpu_searcher(self._plan(self.pattern, None))
        lower = np.frombuffer(_LOWER, np.uint8)

        def folded(host: np.ndarray):  # -i: each chunk lower-cased in the host buffer before it is sent
            got = reader.fill(host)
            if got is not None:
                np.take(lower, host[: got[1]], out=host[: got[1]])
            return got

        fill = folded if self.ignore_case else reader.fill
        for base, count, positions in searcher.run(fill, reader.buffer_size, store=not count_only):
            yield count if count_only else positions + base
            if progress:
                progress(reader.chunk_size)

    # -- FASTA/FASTQ records -----------------------------------------------------------------
    def record_hits(
        self, source: str | os.PathLike, revcomp: bool, count_only: bool, progress: Progress | None = None
    ) -> Iterator[RecordHits | int]:
        """Per batch of records, in order: RecordHits sorted by record, position, strand; or a count."""
        from seqsift.io.fastx import read_batches

        m = len(sequence_pattern(self.pattern))
        for batch in read_batches(source, self.chunk_size, overlap=m - 1):
            yield self.batch_hits(batch, revcomp, count_only)
            if progress:
                progress(int(batch.seq.size))

    def batch_hits(self, batch: SequenceBatch, revcomp: bool, count_only: bool) -> RecordHits | int:
        """One batch of record pieces (carrying the pattern's overlap): its hits, or their count."""
        found = self.strand_hits(batch, revcomp, count_only)
        if count_only:
            return sum(f for _, f in found)
        return _record_hits(batch, [(s, pos, 0) for s, pos in found])[0]

    def strand_hits(self, batch: SequenceBatch, revcomp: bool, count_only: bool, longest: int = 0) -> list[tuple]:
        """(strand, flat positions in batch.seq or their count) per strand searched. longest: the
        longest of the patterns searched in the same batches (PatternSet), whose overlap the
        batches carry: the starts of a cut last piece that the next batch holds whole again are
        left to it, so each occurrence is found once and in position order."""
        forward = sequence_pattern(self.pattern)
        strands = [("+", forward)]
        if revcomp:
            strands.append(("-", reverse_complement(forward)))
        m = len(forward)
        return [(s, self._record_searcher(self._plan(p, batch.seq))(batch, m, count_only, longest)) for s, p in strands]

    def _plan(self, pattern: bytes, data: np.ndarray | None) -> SearchPlan:
        """The plan for pattern, made once per job: its probe bytes are chosen by their rarity
        at the start of the first data searched."""
        if pattern not in self._plans:
            self._plans[pattern] = make_plan(pattern, None if data is None else memoryview(data)[:SAMPLE_BYTES])
        return self._plans[pattern]

    def _record_searcher(self, plan: SearchPlan):
        """A function (batch, m, count_only) -> count or flat positions of matches inside pieces."""
        import numpy as np

        from seqsift.io.chunks import ArrayStream, ChunkReader

        if self.backend == "cuda":
            gpu = self._gpu_searcher(plan)

            def search_gpu(batch: SequenceBatch, m: int, count_only: bool, longest: int = 0):
                reader = ChunkReader(ArrayStream(batch.seq), max(batch.seq.size, 1), m - 1)
                pos = np.concatenate([p + b for b, _, p in gpu.run(reader.fill, reader.buffer_size, True)] or [np.empty(0, np.int64)])
                piece = np.searchsorted(batch.bounds, pos, "right") - 1
                pos = pos[pos < _piece_ends(batch, m, longest)[piece]]  # none spanning two pieces
                return pos.size if count_only else pos

            return search_gpu
        cpu = self._cpu_searcher(plan)

        def search_cpu(batch: SequenceBatch, m: int, count_only: bool, longest: int = 0):
            los, his = batch.bounds[:-1], _piece_ends(batch, m, longest)
            keep = his > los
            los, his = los[keep], his[keep]
            if count_only:
                return cpu.count(batch.seq, los, his)
            return np.frombuffer(cpu.positions(batch.seq, los, his), np.int64)

        return search_cpu

    def _cpu_searcher(self, plan: SearchPlan):
        """One CpuSearcher per pattern for the whole job (many small files stay cheap)."""
        from seqsift.find.cpu import CpuSearcher

        key = plan.pattern
        if key not in self._cpu_searchers:
            self._cpu_searchers[key] = CpuSearcher(plan, self.threads)
        return self._cpu_searchers[key]

    def _gpu_searcher(self, plan: SearchPlan):
        """One GpuSearcher per pattern for the whole job, so its device buffers are reused."""
        from seqsift.backend import GpuConfig
        from seqsift.find._gpu import GpuSearcher

        key = plan.pattern
        if key not in self._gpu_searchers:
            self._gpu_searchers[key] = GpuSearcher(plan, self.gpu_config or GpuConfig())
        return self._gpu_searchers[key]


def _gpu_max_pattern() -> int:
    from seqsift.find._gpu import MAX_PATTERN

    return MAX_PATTERN


def _whole_chunk(n: int, m: int) -> tuple[array, array]:
    if n < m:
        return int64s(), int64s()
    return int64s([0]), int64s([n - m + 1])


def _shifted(found: array, base: int) -> array:
    """found (an int64 array.array of its own) with base added to every position, in place: in
    Python for a few, through a numpy view of the same memory for many."""
    if not base or not found:
        return found
    if len(found) <= _SHIFT_IN_PYTHON:
        for k in range(len(found)):
            found[k] += base
        return found
    import numpy as np

    view = np.frombuffer(found, np.int64)
    view += base
    return found


def _piece_ends(batch: SequenceBatch, m: int, longest: int) -> np.ndarray:
    """Per piece, the end of the starts searched for a pattern of m bases: the last where it fits
    in the piece, or for the cut last piece of a batch read with the overlap of a longer pattern
    (longest - 1 bases) the last the next batch does not hold whole (io.fastx)."""
    his = batch.bounds[1:] - m + 1
    if batch.cut and longest > m:
        his = his.copy()
        his[-1] -= longest - m
    return his


def _record_hits(batch: SequenceBatch, found: list[tuple[str, np.ndarray, int]]) -> tuple[RecordHits, np.ndarray]:
    """The hits of (strand, flat positions, pattern number) in record, position, strand and
    pattern order, and the pattern number of each."""
    import numpy as np

    flat = np.concatenate([pos for _, pos, _ in found])
    strand = np.concatenate([np.full(pos.size, s, "<U1") for s, pos, _ in found])
    which = np.concatenate([np.full(pos.size, k, np.int64) for _, pos, k in found])
    order = np.lexsort((which, strand, flat))
    flat, strand = flat[order], strand[order]
    piece = np.searchsorted(batch.bounds, flat, "right") - 1
    names = np.asarray(batch.names, dtype=object)
    return RecordHits(names[piece], batch.start[piece] + flat - batch.bounds[piece], strand), which[order]


class PatternSet:
    """Several patterns searched in the same batches of records (find --fasta with -e or -f):
    each batch is read once, with the overlap of the longest pattern, and searched by each
    pattern's FindJob. A shorter pattern leaves the last starts of a cut piece to the next
    batch, which holds them whole again, so every occurrence is reported once, in order."""

    def __init__(self, jobs: list[FindJob]):
        self.jobs = jobs
        self.longest = max(len(job.pattern) for job in jobs)
        self.chunk_size = max(job.chunk_size for job in jobs)

    def batch_hits(self, batch: SequenceBatch, revcomp: bool, count_only: bool) -> tuple[RecordHits, np.ndarray] | int:
        """FindJob.batch_hits of every pattern merged: (hits in record, position, strand and
        pattern order, the pattern number of each), or their count."""
        found = [(s, pos, k) for k, job in enumerate(self.jobs)
                 for s, pos in job.strand_hits(batch, revcomp, count_only, self.longest)]
        if count_only:
            return sum(f for _, f, _ in found)
        return _record_hits(batch, found)


class ReadOnly(io.RawIOBase):
    """Adapts an object with only read() to readinto(), for io.BufferedReader."""

    def __init__(self, f):
        self.f = f

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.f.read(len(b))
        b[: len(data)] = data
        return len(data)


# -- the public functions ------------------------------------------------------------------------
def find(
    pattern: bytes | str,
    source: Source,
    *,
    backend: str = "auto",
    threads: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> np.ndarray:
    """0-based offsets (int64, ascending) of every occurrence of pattern in source, overlapping ones included.

    source: bytes-like or a 1-D uint8 array (searched in place), a path (str or PathLike;
    '-' is stdin) or a binary file object (streamed in chunks of chunk_size bytes).
    """
    import numpy as np

    with FindJob(as_pattern(pattern), backend=backend, threads=threads, chunk_size=chunk_size) as job:
        parts = list(job.offsets(source, count_only=False))
    return np.concatenate([np.frombuffer(p, np.int64) for p in parts]) if parts else np.empty(0, np.int64)


def find_count(
    pattern: bytes | str,
    source: Source,
    *,
    backend: str = "auto",
    threads: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> int:
    """The number of occurrences find() would return, without materialising their positions."""
    with FindJob(as_pattern(pattern), backend=backend, threads=threads, chunk_size=chunk_size) as job:
        return int(sum(job.offsets(source, count_only=True)))


def find_records(
    pattern: bytes | str,
    source: str | os.PathLike,
    *,
    revcomp: bool = False,
    backend: str = "auto",
    threads: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> RecordHits:
    """Occurrences in the sequences of a FASTA/FASTQ file (plain, gz, bz2, xz), case-insensitive,
    never spanning two records; with revcomp=True also the reverse complement, on strand '-'."""
    with FindJob(as_pattern(pattern), backend=backend, threads=threads, chunk_size=chunk_size) as job:
        return RecordHits.concat(list(job.record_hits(source, revcomp, count_only=False)))
