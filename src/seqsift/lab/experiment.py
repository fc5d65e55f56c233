"""The Filter Lab's experiments (GPU Gems 3, ch. 35, section 6): one real scan on synthetic data made to give
a chosen hit rate, measured stage by stage.

The data is random bytes with copies of signatures planted in a chosen fraction of its 64-byte
slots, so the filter's candidates (and the CPU's checks) rise with the hit rate. The scan runs the
2-byte key + 4-byte tag table (`filter="table"`), the pipeline the Lab is about, with its rotating
buffers, full verification and thresholds switchable. Experiments are bounded (data size, signature
count, wall time) and cancellable.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass

import numpy as np

from seqsift.errors import UsageError

SLOT = 64
LIMITS = {"signatures": (1_000, 200_000), "hit_rate": (0.0, 0.5), "buffer_mb": (1, 64), "data_mb": (1, 256),
          "threads": (1, 64), "seed": (0, 2**63 - 1)}
MAX_SECONDS = 120.0


@dataclass
class Settings:
    signatures: int = 30_000
    buffer_mb: int = 8
    hit_rate: float = 0.0  # fraction of 64-byte slots holding a planted signature
    rotating: bool = True  # three rotating buffers (else one, stages in turn)
    verify: bool = True  # full verification (else raw filter candidates)
    block_threshold: int | None = None  # None: the scanner's measured default
    object_threshold: int | None = None
    backend: str = "cpu"
    threads: int = 1
    data_mb: int = 64
    seed: int = 1

    def check(self) -> "Settings":
        """Every field inside its limits, or a UsageError naming the field, the value and the range."""
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise UsageError(f"{name}={value} is outside {lo}-{hi}")
        for name in ("block_threshold", "object_threshold"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise UsageError(f"{name}={value}: give 0 or more, or leave it empty for the default")
        if self.backend not in ("cpu", "cuda"):
            raise UsageError(f"backend={self.backend!r}: use cpu or cuda")
        if self.backend == "cuda":
            from seqsift.backend import cuda_status

            usable, why = cuda_status()
            if not usable:
                raise UsageError(f"backend='cuda': no usable GPU here ({why}); use cpu")
        return self


class Cancelled(Exception):
    """The experiment was cancelled or ran past its time limit."""


def synthetic(settings: Settings) -> tuple[list[str], list[bytes]]:
    """Hex signatures (16-64 random bytes) and the data as 1 MiB objects, with signature copies
    planted in hit_rate of the 64-byte slots."""
    rng = np.random.default_rng(settings.seed)
    lengths = rng.integers(16, 65, settings.signatures)
    sigs = [rng.integers(0, 256, int(n), dtype=np.uint8) for n in lengths]
    data = rng.integers(0, 256, settings.data_mb << 20, dtype=np.uint8)
    slots = data.size // SLOT
    planted = rng.choice(slots, int(round(settings.hit_rate * slots)), replace=False) if settings.hit_rate else []
    which = rng.integers(0, len(sigs), len(planted))
    for slot, k in zip(np.asarray(planted).tolist(), which.tolist()):
        sig = sigs[k][: SLOT]
        data[slot * SLOT : slot * SLOT + sig.size] = sig
    objects = [data[i : i + (1 << 20)].tobytes() for i in range(0, data.size, 1 << 20)]
    return [s.tobytes().hex() for s in sigs], objects


def run(settings: Settings, cancel: threading.Event | None = None) -> dict:
    """One experiment: what was scanned, throughput, per-stage and per-buffer seconds, candidates,
    confirmed hits, and the key + tag table's statistics (overflow of a one-entry-per-key table)."""
    from seqsift.scan.api import objects_of
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import from_strings

    settings.check()
    cancel = cancel or threading.Event()
    deadline = time.monotonic() + MAX_SECONDS

    def stop_if_asked() -> None:
        if cancel.is_set():
            raise Cancelled("cancelled")
        if time.monotonic() > deadline:
            raise Cancelled(f"stopped after {MAX_SECONDS:.0f} s: lower the data size or the hit rate")

    def objects_until_cancelled(objects):
        """Each 1 MiB object handed to the scanner only while no cancel is asked: the reader
        stops within a MiB, not at the end of the data."""
        for obj in objects_of(objects):
            stop_if_asked()
            yield obj

    hexes, objects = synthetic(settings)
    stop_if_asked()
    signatures = from_strings(hexes)
    stop_if_asked()
    with Scanner(signatures, backend=settings.backend, threads=settings.threads,
                 buffer_size=settings.buffer_mb << 20, buffers=3 if settings.rotating else 1, filter="table",
                 verify=settings.verify, block_threshold=settings.block_threshold,
                 object_threshold=settings.object_threshold) as scanner:
        engine = scanner.prepare(np.frombuffer(objects[0], np.uint8))  # tables built before the clock starts
        engine.stop = stop_if_asked  # asked between kernel calls: a buffer in flight stops too
        stop_if_asked()
        stats = scanner.stats
        confirmed = 0
        start = time.perf_counter()
        for result in scanner.scan(objects_until_cancelled(objects), lambda path, why: None):
            confirmed += sum(m.count for m in result.matches)
            stop_if_asked()
        wall = time.perf_counter() - start
        table = scanner.table_stats()
    buffers = max(stats.buffers, 1)
    return {
        "settings": asdict(settings),
        "bytes": stats.bytes,
        "seconds": wall,
        "throughput_mbps": stats.bytes / wall / 1e6 if wall > 0 else 0.0,
        "stage_seconds": dict(stats.seconds),
        "stage_ms_per_buffer": {k: 1e3 * v / buffers for k, v in stats.seconds.items()},
        "buffers": stats.buffers,
        "candidates": stats.candidates,
        "confirmed": confirmed,
        "block_fallbacks": stats.block_fallbacks,
        "object_fallbacks": stats.object_fallbacks,
        "table": table,
    }
