"""The scan pipeline: rotating buffers so reading, filtering and verifying overlap (section 5).

Three stages on three threads, handing buffers on through queues: a reader fills buffer k+2
while the filter (CPU kernel or GPU) runs on buffer k+1 and verification runs on buffer k. The
cost controls of section 6 sit between filter and verification:
- block threshold: a buffer whose filter candidates exceed it is not verified candidate by
  candidate; one full CPU multi-pattern pass (the stride prefilter and verifier) covers it;
- object threshold: an object part whose candidates exceed it is rescanned that way alone.
They matter where the filter's candidates are costly to bring back or check (the GPU, or the
seed's table on the CPU, which the Lab drives); the CPU's default stride filter is itself the
full pass, so there they change nothing.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from seqsift import backend as backends
from seqsift.errors import UsageError
from seqsift.scan._cpu import PAD
from seqsift.scan.engine import DEFAULT_STRIDE, Engine, FilterCount, Occurrences, _merge
from seqsift.scan.objects import BufferFiller, Filled, ScanObject
from seqsift.scan.results import Collector, ObjectResult
from seqsift.scan.signatures import SignatureSet

DEFAULT_BUFFER = 8 << 20
MIN_BUFFERS = 3
# Candidates per buffer byte, and per object-part byte (plus a floor), past which the
# candidates are dropped for a full CPU pass: see docs/benchmarks.md, "Scanning: thresholds".
DEFAULT_BLOCK_PER_BYTE = 1 / 64
DEFAULT_OBJECT_PER_BYTE = 1 / 16
OBJECT_FLOOR = 4096


@dataclass
class ScanStats:
    signatures: int = 0
    pieces: dict = field(default_factory=dict)
    table: dict = field(default_factory=dict)
    files: int = 0
    bytes: int = 0
    buffers: int = 0
    candidates: int = 0
    checks: int = 0
    verified: int = 0
    block_fallbacks: int = 0
    object_fallbacks: int = 0
    seconds: dict = field(default_factory=lambda: {"fill": 0.0, "filter": 0.0, "readback": 0.0, "verify": 0.0})
    wall: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Scanner:
    """A signature set compiled once, scanning any number of object lists."""

    def __init__(self, signatures: SignatureSet, *, backend: str = "cpu", threads: int | None = None,
                 buffer_size: int = DEFAULT_BUFFER, buffers: int = MIN_BUFFERS, filter: str = "stride",
                 stride: int = DEFAULT_STRIDE, verify: bool = True, block_threshold: int | None = None,
                 object_threshold: int | None = None, gpu_config=None):
        if not len(signatures):
            raise UsageError("no signatures: give at least one database with --db")
        if buffers < 1:
            raise UsageError(f"buffers={buffers}: give at least 1")
        self.threads = backends.check_threads(threads)
        self.backend = backends.resolve_unmeasured(backend)
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="seqsift-scan") if self.threads > 1 else None
        self.names = signatures.names()
        self.engine = Engine(signatures, "table" if self.backend == "cuda" else filter, stride, self.threads, self.pool)
        span = self.engine.program.max_span
        if buffer_size < 4 * span:
            raise UsageError(f"--buffer-size {buffer_size} is too small: a signature part spans up to {span} bytes; "
                             f"give at least {4 * span}")
        self.buffer_size = buffer_size
        self.carry = max(span - 1, 0)
        self.buffers = max(buffers, 1)
        self.verify = verify
        self.block_threshold = block_threshold if block_threshold is not None else int(buffer_size * DEFAULT_BLOCK_PER_BYTE)
        self.object_threshold = object_threshold
        self._full: Engine | None = None
        self._signatures = signatures
        self.gpu = None
        if self.backend == "cuda":
            from seqsift.scan._gpu import GpuFilter

            self.gpu = GpuFilter(self.engine.seed_table, gpu_config)
        self.stats = ScanStats(signatures=len(signatures))
        eng = self.engine
        self.stats.pieces = {
            "total": eng.program.n_pieces,
            "table": int(eng.seed_pieces.size),
            "stride": len(eng.stride_filter.piece) // stride if eng.stride_filter is not None else 0,
            "short_cpu": int(eng.short_pieces.size),
            "sweep_cpu": int(eng.sweep_pieces.size),
        }

    def table_stats(self) -> dict:
        """The seed table's statistics (building it on first use, in stride mode too)."""
        if not self.stats.table:
            self.stats.table = self.engine.seed_table.stats.as_dict()
        return self.stats.table

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "Scanner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the full CPU pass behind the thresholds ------------------------------------------------
    def full_engine(self) -> Engine:
        if self.engine.filter == "stride":
            return self.engine
        if self._full is None:
            self._full = Engine(self._signatures, "stride", self.engine.stride, self.threads, self.pool)
        return self._full

    # -- the pipeline ----------------------------------------------------------------------------
    def scan(self, objects: Iterator[ScanObject], report: Callable[[str, str], None]) -> Iterator[ObjectResult]:
        """ObjectResults in object order as each object's last buffer is verified."""
        t0 = time.perf_counter()
        filler = BufferFiller(objects, self.buffer_size, self.carry, report)
        collector = Collector(self.engine.program, self.names, raw=not self.verify)
        alloc = self.gpu.host_buffer if self.gpu is not None else (lambda n: np.empty(n, np.uint8))
        free: queue.Queue = queue.Queue()
        for _ in range(max(self.buffers, MIN_BUFFERS if self.buffers > 1 else 1)):
            free.put(alloc(PAD + self.buffer_size + PAD))
        filled_q: queue.Queue = queue.Queue()
        filtered_q: queue.Queue = queue.Queue()
        stop = threading.Event()

        def reader() -> None:
            try:
                while not stop.is_set():
                    buf = free.get()
                    if buf is None:
                        break
                    t = time.perf_counter()
                    got = filler.fill(buf)
                    self.stats.seconds["fill"] += time.perf_counter() - t
                    filled_q.put(got)
                    if got is None:
                        break
            except BaseException as exc:
                filled_q.put(exc)

        def filterer() -> None:
            try:
                while True:
                    got = filled_q.get()
                    if got is None or isinstance(got, BaseException):
                        filtered_q.put(got)
                        break
                    filtered_q.put((got, self._filter(got)))
            except BaseException as exc:
                filtered_q.put(exc)

        threads = [threading.Thread(target=reader, name="seqsift-fill", daemon=True),
                   threading.Thread(target=filterer, name="seqsift-filter", daemon=True)]
        if self.buffers == 1:
            threads = []
        for t in threads:
            t.start()
        try:
            while True:
                if self.buffers == 1:  # no overlap: each stage in turn on one buffer
                    buf = free.get()
                    t = time.perf_counter()
                    got = filler.fill(buf)
                    self.stats.seconds["fill"] += time.perf_counter() - t
                    item = None if got is None else (got, self._filter(got))
                else:
                    item = filtered_q.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                filled, candidates = item
                found = self._verify(filled, candidates)
                self.stats.buffers += 1
                self.stats.bytes += sum(s.hi - s.lo for s in filled.segments) - sum(
                    s.new_from - s.file_offset for s in filled.segments)
                self.stats.verified += len(found)
                done = collector.add(filled, found)
                free.put(filled.buffer)
                self.stats.files += len(done)
                yield from done
        finally:
            stop.set()
            free.put(None)
            for t in threads:
                t.join(timeout=5)
            self.stats.wall = time.perf_counter() - t0

    def _filter(self, filled: Filled):
        """Stage 2: raw candidates of one buffer, as (anchor, piece, count)."""
        count = FilterCount()
        t = time.perf_counter()
        if self.gpu is not None:
            n = self.gpu.count(filled.buffer, filled.n)
            count.candidates += n
            self.stats.seconds["filter"] += time.perf_counter() - t
            if n > self.block_threshold:
                return None, None, count
            t = time.perf_counter()
            pos, entry = self.gpu.candidates()
            table = self.engine.seed_table
            anchor, piece = pos - table.rel[entry], table.piece[entry]
            extra = self.engine.short_anchors(filled.buffer, PAD, PAD + filled.n, count)
            anchor, piece = np.concatenate([anchor, extra[0]]), np.concatenate([piece, extra[1]])
            self.stats.seconds["readback"] += time.perf_counter() - t
        else:
            anchor, piece = self.engine.anchors(filled.buffer, PAD, PAD + filled.n, count)
            self.stats.seconds["filter"] += time.perf_counter() - t
        return anchor, piece, count

    def _verify(self, filled: Filled, candidates) -> Occurrences:
        """Stage 3: candidates -> verified occurrences, or the full pass past a threshold."""
        anchor, piece, count = candidates
        t = time.perf_counter()
        seg_lo, seg_hi = filled.bounds()
        self.stats.candidates += count.candidates
        full = self.full_engine()
        if anchor is None or (full is not self.engine and count.candidates > self.block_threshold):
            self.stats.block_fallbacks += 1
            found = full.scan_segments(filled.buffer, seg_lo, seg_hi, count)
        elif not self.verify:
            found = self.engine.raw(anchor, piece, seg_lo, seg_hi)
        else:
            parts = []
            if full is not self.engine and anchor.size:
                per_segment = np.bincount(np.clip(np.searchsorted(seg_lo, anchor, "right") - 1, 0, None),
                                          minlength=seg_lo.size)
                limit = self._object_limits(seg_lo, seg_hi)
                heavy = np.flatnonzero(per_segment > limit)
                if heavy.size:
                    self.stats.object_fallbacks += heavy.size
                    seg = np.searchsorted(seg_lo, anchor, "right") - 1
                    light = ~np.isin(seg, heavy)
                    anchor, piece = anchor[light], piece[light]
                    parts.append(self._rescan(full, filled, heavy, seg_lo, seg_hi, count))
            parts.append(self.engine.verify(filled.buffer, anchor, piece, seg_lo, seg_hi, count))
            if self.engine.sweep_pieces.size:
                parts.append(self.engine.sweep(filled.buffer, seg_lo, seg_hi, count))
            found = _merge(parts)
        self.stats.checks += count.checks
        self.stats.seconds["verify"] += time.perf_counter() - t
        return found

    def _object_limits(self, seg_lo: np.ndarray, seg_hi: np.ndarray) -> np.ndarray:
        if self.object_threshold is not None:
            return np.full(seg_lo.size, self.object_threshold)
        return OBJECT_FLOOR + (seg_hi - seg_lo) * DEFAULT_OBJECT_PER_BYTE

    def _rescan(self, full: Engine, filled: Filled, heavy: np.ndarray, seg_lo, seg_hi, count) -> Occurrences:
        """The heavy object parts alone through the full CPU pass, each as its own range."""
        parts = []
        for k in heavy.tolist():
            found = full.scan_segments(filled.buffer, seg_lo[k : k + 1], seg_hi[k : k + 1], count)
            found.segment[:] = k
            parts.append(found)
        return _merge(parts)
