"""The scan pipeline: rotating buffers so reading, filtering and verifying overlap (section 5).

Three stages on three threads, handing buffers on through queues: a reader fills buffer k+2
while the filter (CPU kernel or GPU) runs on buffer k+1 and verification runs on buffer k. The
cost controls of section 6 sit between filter and verification:
- block threshold: a buffer whose filter candidates exceed it is not verified candidate by
  candidate; one full CPU multi-pattern pass (the stride prefilter and verifier) covers it;
- object threshold: an object part whose candidates exceed it is rescanned that way alone.
They matter where the filter's candidates are costly to bring back or check (the GPU, or the
key + tag table on the CPU, which the Lab drives); the CPU's default stride filter is itself the
full pass, so there they change nothing.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from seqsift import backend as backends
from seqsift.errors import UsageError
from seqsift.scan import DEFAULT_BUFFER, DEFAULT_STRIDE, FILTERS, MIN_BUFFERS
from seqsift.scan.kernels import PAD
from seqsift.scan.engine import Engine, FilterCount, Occurrences, _merge
from seqsift.scan.program import compile_program
from seqsift.io.pack import Filled, PackedObject, Packer
from seqsift.scan.results import Collector, ObjectResult
from seqsift.scan.signatures import SignatureSet
from seqsift.scan.table import SAMPLE_BYTES, TAG, stride_min_anchor

# Candidates per buffer byte, and per object-part byte (plus a floor), past which the
# candidates are dropped for a full CPU pass: the measured crossover was 1/95 to 1/23 candidates
# per byte (docs/benchmarks.md, "Thresholds"); 1/48 is its geometric middle.
DEFAULT_BLOCK_PER_BYTE = 1 / 48
DEFAULT_OBJECT_PER_BYTE = 1 / 48
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
        self.names = signatures.names()
        self.program = compile_program(signatures)
        self.filter = "table" if self.backend == "cuda" else filter
        if self.filter not in FILTERS:
            raise UsageError(f"filter {filter!r} is not one of {', '.join(FILTERS)}")
        self.stride = stride
        span = self.program.max_span
        if buffer_size < 4 * span:
            raise UsageError(f"--buffer-size {buffer_size} is too small: a signature part spans up to {span} bytes; "
                             f"give at least {4 * span}")
        self.buffer_size = buffer_size
        self.carry = max(span - 1, 0)
        self.buffers = buffers
        self.verify = verify
        self.block_threshold = block_threshold if block_threshold is not None else int(buffer_size * DEFAULT_BLOCK_PER_BYTE)
        self.object_threshold = object_threshold
        self.gpu_config = gpu_config
        # Built from the first buffer, whose bytes tell the filters where signatures are rarest.
        self.engine: Engine | None = None
        self.gpu = None
        self._full: Engine | None = None
        self._sample: np.ndarray | None = None
        self.stats = ScanStats(signatures=len(signatures))
        anchor = self.program.anchor_len
        strided = int(np.count_nonzero(anchor >= stride_min_anchor(stride))) if self.filter == "stride" else 0
        self.stats.pieces = {
            "total": self.program.n_pieces,
            "table": int(np.count_nonzero(anchor >= TAG + 2)),
            "stride": strided,
            "short_cpu": int(np.count_nonzero((anchor >= 2) & (anchor < TAG + 2))),
            "sweep_cpu": int(np.count_nonzero(anchor < 2)),
        }

    def prepare(self, sample: np.ndarray | None) -> Engine:
        """The engine (and GPU filter), built once from a sample of the data."""
        if self.engine is None:
            self._sample = None if sample is None else sample[:SAMPLE_BYTES].copy()
            self.engine = Engine(self.program, self.filter, self.stride, self.threads, self._sample)
            if self.backend == "cuda":
                from seqsift.scan._gpu import GpuFilter

                self.gpu = GpuFilter(self.engine.seed_table, self.gpu_config)
        return self.engine

    def table_stats(self) -> dict:
        """The key + tag table's statistics (building it on first use, in stride mode too)."""
        if not self.stats.table:
            self.stats.table = self.prepare(None).seed_table.stats.as_dict()
        return self.stats.table

    def close(self) -> None:
        """Nothing to release today (threads come from runner's process pool); kept so a Scanner
        is a context manager whatever it comes to hold."""

    def __enter__(self) -> "Scanner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the full CPU pass behind the thresholds ------------------------------------------------
    def full_engine(self) -> Engine:
        if self.engine.filter == "stride":
            return self.engine
        if self._full is None:
            self._full = Engine(self.program, "stride", self.stride, self.threads, self._sample)
        return self._full

    # -- the pipeline ----------------------------------------------------------------------------
    def scan(self, objects: Iterator[PackedObject], report: Callable[[str, str], None]) -> Iterator[ObjectResult]:
        """ObjectResults in object order as each object's last buffer is verified."""
        t0 = time.perf_counter()
        filler = Packer(objects, self.buffer_size, self.carry, report, pad=PAD)
        collector = Collector(self.program, self.names, raw=not self.verify)
        alloc = lambda n: np.empty(n, np.uint8)  # noqa: E731
        if self.backend == "cuda":
            from seqsift.scan._gpu import GpuFilter

            alloc = GpuFilter.host_buffer
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
        finally:  # wake both stages wherever they wait, so an early stop never hangs on them
            stop.set()
            free.put(None)
            filled_q.put(None)
            for t in threads:
                t.join(timeout=5)
            self.stats.wall = time.perf_counter() - t0

    def _filter(self, filled: Filled):
        """Stage 2 on one buffer: ("found", occurrences) from the CPU's stride path, which checks
        each candidate as it finds it; ("candidates", [(table, positions, entries)]) from the
        key + tag table (CPU or GPU); ("block", None) when the GPU's count passed the block
        threshold and its candidates were never read back."""
        count = FilterCount()
        t = time.perf_counter()
        engine = self.prepare(filled.buffer[PAD : PAD + filled.n])
        lo, hi = PAD, PAD + filled.n
        if self.gpu is None and engine.filter == "stride":
            seg_lo, seg_hi = filled.bounds()
            found = engine.scan(filled.buffer, seg_lo, seg_hi, count, self.verify)
            self.stats.seconds["filter"] += time.perf_counter() - t
            return "found", found, count
        tables = engine.candidate_tables()
        found = []
        if self.gpu is not None:
            n = self.gpu.count(filled.buffer, filled.n)
            self.stats.seconds["filter"] += time.perf_counter() - t
            if n > self.block_threshold:
                count.candidates += n
                return "block", None, count
            t = time.perf_counter()
            found.append((engine.seed_table, *self.gpu.candidates()))
            self.stats.seconds["readback"] += time.perf_counter() - t
            tables = [tb for tb in tables if tb is not engine.seed_table]
            t = time.perf_counter()
        for table in tables:  # held only up to the block threshold: past it, the full pass
            got = engine.table_candidates(table, filled.buffer, lo, hi, self.block_threshold)
            if got is None:
                self.stats.seconds["filter"] += time.perf_counter() - t
                return "block", None, count
            found.append((table, *got))
        self.stats.seconds["filter"] += time.perf_counter() - t
        return "candidates", found, count

    def _verify(self, filled: Filled, stage) -> Occurrences:
        """Stage 3: check the filter's candidates, or hand the buffer (or its heaviest object
        parts) to the full CPU pass past a threshold."""
        kind, payload, count = stage
        t = time.perf_counter()
        seg_lo, seg_hi = filled.bounds()
        if kind == "found":
            found = payload
        elif kind == "block" or sum(c[1].size for c in payload) > self.block_threshold:
            self.stats.block_fallbacks += 1
            if kind != "block":
                count.candidates += sum(c[1].size for c in payload)
            found = self.full_engine().scan(filled.buffer, seg_lo, seg_hi, count, self.verify)
        else:
            parts = []
            owner = [np.searchsorted(seg_lo, pos, "right") - 1 for _, pos, _ in payload]
            per_segment = sum(np.bincount(np.clip(o, 0, None), minlength=seg_lo.size) for o in owner)
            heavy = np.flatnonzero(per_segment > self._object_limits(seg_lo, seg_hi))
            if heavy.size:
                self.stats.object_fallbacks += heavy.size
                parts.append(self._rescan(filled, heavy, seg_lo, seg_hi, count))
            for (table, pos, entry), o in zip(payload, owner):
                if heavy.size:
                    light = ~np.isin(o, heavy)
                    count.candidates += int(np.count_nonzero(~light))
                    pos, entry = pos[light], entry[light]
                parts.append(self.engine.check(filled.buffer, table, pos, entry, seg_lo, seg_hi, count, self.verify))
            if self.engine.sweep_pieces.size and self.verify:
                parts.append(self.engine.sweep(filled.buffer, seg_lo, seg_hi, count))
            found = _merge(parts)
        for k in sorted(count.dropped):  # past engine.OCCURRENCE_LIMIT: that file is reported, the run goes on
            obj = filled.segments[k].obj
            obj.error = obj.error or ("too many signature matches in one buffer to hold (the bound is 2^25 "
                                      "over all threads), not scanned")
        self.stats.candidates += count.candidates
        self.stats.checks += count.checks
        self.stats.seconds["verify"] += time.perf_counter() - t
        return found

    def _object_limits(self, seg_lo: np.ndarray, seg_hi: np.ndarray) -> np.ndarray:
        if self.object_threshold is not None:
            return np.full(seg_lo.size, self.object_threshold)
        return OBJECT_FLOOR + (seg_hi - seg_lo) * DEFAULT_OBJECT_PER_BYTE

    def _rescan(self, filled: Filled, heavy: np.ndarray, seg_lo, seg_hi, count) -> Occurrences:
        """The heavy object parts alone through the full CPU pass, each as its own range."""
        parts = []
        for k in heavy.tolist():
            found = self.full_engine().scan(filled.buffer, seg_lo[k : k + 1], seg_hi[k : k + 1], count, self.verify)
            found.segment[:] = k
            parts.append(found)
        return _merge(parts)
