"""One prepared device check for `seqsift find` on a real GPU: correctness against the CPU, then
timings. Run it in one call through the device tool; record what it prints in docs/gpu.md.

    python benchmarks/gpu_check.py [--gib 4] [--out DIR]

Measures: pinned host-to-device bandwidth; the kernel alone on resident data; end to end
(host memory in, counts out) with 1 stream (copy and kernel in turn) and 3 streams (copy of chunk
k+1 overlapping the kernel on chunk k and the copy back of k-1). The seed's claim to check: with
overlap, total time approaches max(transfer, compute) rather than their sum.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np
from numba import cuda

from seqsift.find._gpu import GpuConfig, GpuSearcher, _kmp_kernel
from seqsift.find.api import FindJob
from seqsift.find.plan import make_plan
from seqsift.io.chunks import ArrayStream, ChunkReader

GENOME = Path(__file__).resolve().parents[1] / "src" / "seqsift" / "data" / "lambda_virus.fa.gz"


def genome_text(size: int) -> np.ndarray:
    with gzip.open(GENOME, "rb") as f:
        seq = b"".join(line.strip() for line in f if not line.startswith(b">"))
    return np.resize(np.frombuffer(seq, np.uint8), size)


def cpu_offsets(pattern: bytes, text: np.ndarray) -> np.ndarray:
    with FindJob(pattern, backend="cpu") as job:
        return np.concatenate(list(job.offsets(text, count_only=False)))


def gpu_offsets(pattern: bytes, text: np.ndarray, config: GpuConfig, chunk: int) -> tuple[np.ndarray, int]:
    with FindJob(pattern, backend="cuda", gpu_config=config, chunk_size=chunk) as job:
        pos = np.concatenate(list(job.offsets(text, count_only=False)))
        count = sum(job.offsets(text, count_only=True))
    return pos, count


def check_correctness(report: dict) -> None:
    rng = np.random.default_rng(7)
    text = genome_text(64 << 20)
    checks = []
    for pattern in (b"GATC", bytes(text[5000:5020]), bytes(text[9000:9100]), b"A" * 12):
        want = cpu_offsets(pattern, text)
        for config, chunk in ((GpuConfig(), 8 << 20), (GpuConfig(streams=1), 3 << 20), (GpuConfig(out_capacity=16), 1 << 20)):
            got, count = gpu_offsets(pattern, text, config, chunk)
            checks.append(bool(np.array_equal(got, want) and count == want.size))
    binary = rng.integers(0, 4, 16 << 20).astype(np.uint8)
    want = cpu_offsets(b"\x01\x02\x03", binary)
    got, count = gpu_offsets(b"\x01\x02\x03", binary, GpuConfig(), 4 << 20)
    checks.append(bool(np.array_equal(got, want) and count == want.size))
    report["correct"] = all(checks)
    report["checks"] = len(checks)


def h2d_bandwidth(nbytes: int) -> float:
    host = cuda.pinned_array(nbytes, np.uint8)
    dev = cuda.device_array(nbytes, np.uint8)
    dev.copy_to_device(host)
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        dev.copy_to_device(host)
    cuda.synchronize()
    return 3 * nbytes / (time.perf_counter() - start) / 1e9


def kernel_only(pattern: bytes, text: np.ndarray, config: GpuConfig) -> float:
    plan = make_plan(pattern)
    searcher = GpuSearcher(plan, config)
    dev = cuda.to_device(text)
    counter = cuda.device_array(1, np.int64)
    out = cuda.device_array(1, np.int64)
    n = text.size
    part = max(1, -(-(n - plan.length + 1) // searcher.work_items))
    args = (dev, n, searcher.pattern, searcher.fail, plan.length, part, out, counter, False)
    _kmp_kernel[searcher.blocks, config.threads_per_block](*args)
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        _kmp_kernel[searcher.blocks, config.threads_per_block](*args)
    cuda.synchronize()
    return 3 * n / (time.perf_counter() - start) / 1e9


def end_to_end(pattern: bytes, text: np.ndarray, config: GpuConfig, chunk: int) -> float:
    searcher = GpuSearcher(make_plan(pattern), config)
    best = []
    for _ in range(3):
        reader = ChunkReader(ArrayStream(text), chunk, len(pattern) - 1)
        start = time.perf_counter()
        total = sum(c for _, c, _ in searcher.run(reader.fill, reader.buffer_size, store=False))
        best.append(time.perf_counter() - start)
    return text.size / float(np.median(best)) / 1e9, total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=4.0)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    args = parser.parse_args()
    dev = cuda.get_current_device()
    report = {"device": str(dev.name), "sms": dev.MULTIPROCESSOR_COUNT}
    check_correctness(report)
    print(json.dumps(report), flush=True)
    text = genome_text(int(args.gib * (1 << 30)))
    report["h2d_GBps"] = round(h2d_bandwidth(1 << 30), 2)
    rows = []
    for pattern in (bytes(text[4000:4008]), bytes(text[4000:4020]), bytes(text[4000:4100])):
        for tpb, bps in ((256, 8), (128, 16), (512, 4)):
            config = GpuConfig(threads_per_block=tpb, blocks_per_sm=bps)
            row = {"m": len(pattern), "threads_per_block": tpb, "blocks_per_sm": bps,
                   "kernel_GBps": round(kernel_only(pattern, text[: 1 << 30], config), 2)}
            for streams in (1, 3):
                rate, count = end_to_end(pattern, text, GpuConfig(threads_per_block=tpb, blocks_per_sm=bps, streams=streams), 64 << 20)
                row[f"end_to_end_{streams}_streams_GBps"] = round(rate, 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    report["rows"] = rows
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}))


if __name__ == "__main__":
    main()
