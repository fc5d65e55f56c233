"""One prepared device check of every GPU path on a real GPU: correctness against the CPU, then
timings. Run it in one call through the device tool; record what it prints in docs/gpu.md.

    python benchmarks/gpu_check.py [--gib 4] [--out DIR] [--skip find,fmindex,align,scan]

Scanning: 30,000 signatures over 256 MiB of /usr/bin; the GPU key + tag filter's candidates equal
to the CPU's, filter GB/s on device-resident data, and the whole pipeline end to end (CPU and GPU
backends, same verified hits).

FM-index: a random 5 Mbp genome, 1,000,000 simulated 100 bp reads; GPU counts and hits equal to
the CPU's on 200,000 of them, then reads/s for count and count+locate. Alignment: a random protein
database (20,000 sequences of 50-800 residues), scores of the portable and the DPX kernels equal to
the CPU's, then GCUPS for query lengths 100-1000 with and without DPX.

find:
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


def fmindex_check(report: dict) -> None:
    import tempfile

    from seqsift.fmindex.api import FMIndex
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.fmindex.simulate import simulate

    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as tmp:
        fasta = Path(tmp) / "g.fa"
        fasta.write_bytes(b">g\n" + np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, 5_000_000)].tobytes() + b"\n")
        index = FMIndex.build(fasta)
        reads = [s for _, s in simulate(fasta, 1_000_000, 100, found_fraction=0.9, seed=1)]
    flat = np.frombuffer(b"".join(reads), np.uint8)
    codes, bounds = READ_CODE[flat], np.arange(0, flat.size + 1, 100, dtype=np.int64)
    cpu, gpu = index.searcher(), index.searcher(backend="cuda")
    part = bounds[: 200_001]
    a, b = cpu.hits(codes, part, 100), gpu.hits(codes, part, 100)
    report["fmindex_correct"] = bool(np.array_equal(a.counts, b.counts) and np.array_equal(a.text_pos, b.text_pos)
                                     and np.array_equal(a.strand, b.strand))
    for label, fn in (("count", lambda: gpu.count(codes, bounds)), ("count+locate", lambda: gpu.hits(codes, bounds, 100)),
                      ("cpu count+locate", lambda: cpu.hits(codes, bounds, 100))):
        fn()
        start = time.perf_counter()
        fn()
        report[f"fmindex_{label}_reads_per_s"] = round(1_000_000 / (time.perf_counter() - start))
    print(json.dumps({k: v for k, v in report.items() if k.startswith("fmindex")}), flush=True)


def align_check(report: dict) -> None:
    from seqsift.alignment import Database, matrix
    from seqsift.alignment._gpu import GpuAligner
    from seqsift.alignment.database import scores

    rng = np.random.default_rng(4)
    letters = np.frombuffer(b"ARNDCQEGHILKMFPSTWYV", np.uint8)
    seqs = [letters[rng.integers(0, 20, int(rng.integers(50, 800)))].tobytes() for _ in range(20_000)]
    scoring = matrix("BLOSUM62", 11, 1)
    db = Database([str(i) for i in range(len(seqs))], seqs, scoring)
    residues = db.residues()
    aligners = {dpx: GpuAligner(db.codes, scoring.matrix, 11, 1, dpx=dpx) for dpx in (False, True)}
    # without link-time optimization (no nvJitLink) every DPX instruction is a call: docs/gpu.md
    report["align_dpx_lto"] = bool(aligners[True]._kernel.targetoptions.get("lto"))
    rows = []
    for length in (100, 250, 500, 1000):
        q = scoring.encode(letters[rng.integers(0, 20, length)].tobytes())
        want = scores(q, db)
        row = {"query_length": length}
        for dpx, aligner in aligners.items():
            got, too_long = aligner.scores(q)
            ok = bool(np.array_equal(got[np.setdiff1d(np.arange(len(seqs)), too_long)],
                                     want[np.setdiff1d(np.arange(len(seqs)), too_long)]))
            start = time.perf_counter()
            aligner.scores(q)
            row[f"{'dpx' if dpx else 'portable'}_GCUPS"] = round(length * residues / (time.perf_counter() - start) / 1e9, 1)
            row[f"{'dpx' if dpx else 'portable'}_correct"] = ok
        rows.append(row)
        print(json.dumps(row), flush=True)
    report["align_rows"] = rows


def scan_check(report: dict) -> None:
    """Signature scanning: the GPU key + tag filter's candidates equal to the CPU's on real-like
    bytes, then filter throughput on device-resident data and the whole pipeline end to end
    (rotating pinned buffers), at ~0 and 1% of 30,000 signatures present."""
    from seqsift.scan._cpu import PAD
    from seqsift.scan._gpu import GpuConfig as ScanConfig
    from seqsift.scan._gpu import GpuFilter, _table_kernel
    from seqsift.scan.api import objects_of
    from seqsift.scan.engine import Engine
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import from_strings

    rng = np.random.default_rng(6)
    data = np.concatenate([np.fromfile(p, np.uint8) for p in sorted(Path("/usr/bin").iterdir())[:400]
                           if p.is_file() and not p.is_symlink()])[: 256 << 20]
    rows = []
    for present in (0.0, 0.01):
        sigs = []
        for k in range(30_000):
            n = int(rng.integers(16, 65))
            if rng.random() < present:
                a = int(rng.integers(0, data.size - n))
                sigs.append(data[a : a + n].tobytes().hex())
            else:
                sigs.append(rng.integers(0, 256, n, dtype=np.uint8).tobytes().hex())
        signatures = from_strings(sigs)
        eng = Engine(signatures, filter="table", sample=data[: 4 << 20])
        buf = GpuFilter.host_buffer(PAD + (8 << 20) + PAD)
        buf[:] = 0
        buf[PAD : PAD + (8 << 20)] = data[: 8 << 20]
        gpu = GpuFilter(eng.seed_table, ScanConfig())
        want = eng.table_candidates(eng.seed_table, buf, PAD, PAD + (8 << 20))
        gpu.count(buf, 8 << 20)
        got = gpu.candidates()
        row = {"present": present, "candidates_equal": bool(np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])),
               "candidates_8MiB": int(want[0].size)}
        whole = cuda.to_device(np.concatenate([np.zeros(PAD, np.uint8), data, np.zeros(PAD, np.uint8)]))
        out = (cuda.device_array(1 << 24, np.int64), cuda.device_array(1 << 24, np.int64))
        counter = cuda.to_device(np.zeros(1, np.int64))
        cfg = ScanConfig()
        blocks = max(1, min(cfg.blocks * 16, data.size // cfg.threads_per_block))
        _table_kernel[blocks, cfg.threads_per_block](whole, data.size, gpu.starts, gpu.tags, gpu.masks, *out, counter)
        cuda.synchronize()
        start = time.perf_counter()
        for _ in range(5):
            counter.copy_to_device(np.zeros(1, np.int64))
            _table_kernel[blocks, cfg.threads_per_block](whole, data.size, gpu.starts, gpu.tags, gpu.masks, *out, counter)
        cuda.synchronize()
        row["filter_kernel_GBps"] = round(5 * data.size / (time.perf_counter() - start) / 1e9, 2)
        objects = [data[i : i + (1 << 20)].tobytes() for i in range(0, data.size, 1 << 20)]
        for backend in ("cpu", "cuda"):
            with Scanner(signatures, backend=backend, threads=os.cpu_count()) as scanner:
                start = time.perf_counter()
                found = list(scanner.scan(objects_of(objects), lambda p, w: None))
                row[f"{backend}_end_to_end_GBps"] = round(data.size / (time.perf_counter() - start) / 1e9, 2)
                row[f"{backend}_pairs"] = sum(len(r.matches) for r in found)
                row[f"{backend}_seconds"] = {k: round(v, 3) for k, v in scanner.stats.seconds.items()}
        row["hits_equal"] = row["cpu_pairs"] == row["cuda_pairs"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    report["scan_rows"] = rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=4.0)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: find, fmindex, align, scan")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    dev = cuda.get_current_device()
    report = {"device": str(dev.name), "sms": dev.MULTIPROCESSOR_COUNT}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, check in (("scan", scan_check), ("fmindex", fmindex_check), ("align", align_check)):
        if name not in skip:
            try:
                check(report)
            except Exception as exc:  # one failing section must not hide the others' numbers
                report[f"{name}_error"] = repr(exc)
                print(json.dumps({f"{name}_error": repr(exc)}), flush=True)
            (args.out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    if "find" in skip:
        return
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
    (args.out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}))


if __name__ == "__main__":
    main()
