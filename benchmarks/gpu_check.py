"""One prepared device check of every GPU path on a real GPU: correctness against the CPU, then
timings. Run it in one call through the device tool; record what it prints in docs/gpu.md.

    python benchmarks/gpu_check.py [--gib 4] [--out DIR] [--skip find,fmindex,align,scan]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_check.py --smoke   # every path, tiny, no GPU

`--smoke` runs every section at toy sizes under the CUDA simulator (tests/test_gpu_check.py, in
`make test`), so the script a short GPU run spends its minutes on has run before.

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
k+1 overlapping the kernel on chunk k and the copy back of k-1). The claim of GPU Gems 3, ch. 35 to check: with
overlap, total time approaches max(transfer, compute) rather than their sum.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np
from numba import cuda

from seqsift.backend import GpuConfig
from seqsift.find._gpu import GpuSearcher, _kmp_kernel
from seqsift.find.api import FindJob
from seqsift.find.plan import make_plan
from seqsift.io.chunks import ArrayStream, ChunkReader

GENOME = Path(__file__).resolve().parents[1] / "src" / "seqsift" / "data" / "lambda_virus.fa.gz"
MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class Plan:
    """Sizes and launch shapes: FULL on a GPU, SMOKE under the simulator (each thread is Python)."""

    find_config: GpuConfig = GpuConfig()
    find_text: int = 64 * MIB  # DNA for the correctness checks, and its chunk sizes
    find_chunks: tuple = (8 * MIB, 3 * MIB, 1 * MIB)
    find_binary: int = 16 * MIB
    find_shapes: tuple = ((256, 8), (128, 16), (512, 4))  # (threads per block, blocks per SM) timed
    find_timed_chunk: int = 64 * MIB
    h2d_bytes: int = 1 << 30
    fm_genome: int = 5_000_000
    fm_reads: int = 1_000_000
    fm_read_length: int = 100
    fm_checked: int = 200_000
    align_sequences: int = 20_000
    align_lengths: tuple = (50, 800)  # database sequence lengths, low and high
    align_queries: tuple = (100, 250, 500, 1000)
    align_dpx: tuple = (False, True)  # the simulator has no DPX: declare_device needs a real GPU
    scan_bytes: int = 256 * MIB
    scan_signatures: int = 30_000
    scan_present: tuple = (0.0, 0.01)  # fractions of the signatures taken from the data
    scan_buffer: int = 8 * MIB
    scan_out: int = 1 << 24
    scan_config: dict = dataclasses.field(default_factory=dict)  # GpuConfig(**scan_config) for the scan filter
    scan_pipeline_buffer: int | None = None  # Scanner's default


FULL = Plan()
SMOKE = Plan(find_config=GpuConfig(threads_per_block=8, blocks_per_sm=2, streams=2, out_capacity=4),
             find_text=600, find_chunks=(600, 400, 250), find_binary=300, find_shapes=((8, 2),),
             find_timed_chunk=300, h2d_bytes=1 << 16, fm_genome=2000, fm_reads=16, fm_read_length=24, fm_checked=8,
             align_sequences=6, align_lengths=(3, 20), align_queries=(9,), align_dpx=(False,),
             scan_bytes=3000, scan_signatures=40, scan_present=(0.0, 0.3), scan_buffer=3000, scan_out=256,
             scan_config={"threads_per_block": 8, "blocks": 1, "capacity": 8},
             scan_pipeline_buffer=1024)


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


def check_correctness(report: dict, plan: Plan) -> None:
    rng = np.random.default_rng(7)
    text = genome_text(plan.find_text)
    base = plan.find_config
    checks = []
    at = (plan.find_text // 13, plan.find_text // 7)  # 5000 and 9000 at 64 MiB would do as well
    for pattern in (b"GATC", bytes(text[at[0] : at[0] + 20]), bytes(text[at[1] : at[1] + 100]), b"A" * 12):
        want = cpu_offsets(pattern, text)
        configs = (base, base._replace(streams=1), base._replace(out_capacity=min(16, base.out_capacity)))
        for config, chunk in zip(configs, plan.find_chunks):
            got, count = gpu_offsets(pattern, text, config, chunk)
            checks.append(bool(np.array_equal(got, want) and count == want.size))
    binary = rng.integers(0, 4, plan.find_binary).astype(np.uint8)
    want = cpu_offsets(b"\x01\x02\x03", binary)
    got, count = gpu_offsets(b"\x01\x02\x03", binary, base, plan.find_binary // 4)
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


def fmindex_check(report: dict, plan: Plan) -> None:
    import tempfile

    from seqsift.fmindex.api import FMIndex
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.fmindex.simulate import simulate

    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as tmp:
        fasta = Path(tmp) / "g.fa"
        fasta.write_bytes(b">g\n" + np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, plan.fm_genome)].tobytes() + b"\n")
        index = FMIndex.build(fasta)
        reads = [s for _, s in simulate(fasta, plan.fm_reads, plan.fm_read_length, found_fraction=0.9, seed=1)]
    flat = np.frombuffer(b"".join(reads), np.uint8)
    codes, bounds = READ_CODE[flat], np.arange(0, flat.size + 1, plan.fm_read_length, dtype=np.int64)
    cpu, gpu = index.searcher(), index.searcher(backend="cuda")
    part = bounds[: plan.fm_checked + 1]
    a, b = cpu.hits(codes, part, 100), gpu.hits(codes, part, 100)
    report["fmindex_correct"] = bool(np.array_equal(a.counts, b.counts) and np.array_equal(a.text_pos, b.text_pos)
                                     and np.array_equal(a.strand, b.strand))
    for label, fn in (("count", lambda: gpu.count(codes, bounds)), ("count+locate", lambda: gpu.hits(codes, bounds, 100)),
                      ("cpu count+locate", lambda: cpu.hits(codes, bounds, 100))):
        fn()
        start = time.perf_counter()
        fn()
        report[f"fmindex_{label}_reads_per_s"] = round(plan.fm_reads / (time.perf_counter() - start))
    print(json.dumps({k: v for k, v in report.items() if k.startswith("fmindex")}), flush=True)


def align_check(report: dict, plan: Plan) -> None:
    from seqsift.alignment import Database, matrix
    from seqsift.alignment._gpu import GpuAligner
    from seqsift.alignment.database import scores

    rng = np.random.default_rng(4)
    letters = np.frombuffer(b"ARNDCQEGHILKMFPSTWYV", np.uint8)
    seqs = [letters[rng.integers(0, 20, int(rng.integers(*plan.align_lengths)))].tobytes() for _ in range(plan.align_sequences)]
    scoring = matrix("BLOSUM62", 11, 1)
    db = Database([str(i) for i in range(len(seqs))], seqs, scoring)
    residues = db.residues()
    aligners = {dpx: GpuAligner(db.codes, scoring.matrix, 11, 1, dpx=dpx) for dpx in plan.align_dpx}
    if True in aligners:  # without link-time optimization (no nvJitLink) every DPX instruction is a call
        report["align_dpx_lto"] = bool(aligners[True]._kernel.targetoptions.get("lto"))
    rows = []
    for length in plan.align_queries:
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


def scan_check(report: dict, plan: Plan) -> None:
    """Signature scanning: the GPU key + tag filter's candidates equal to the CPU's on real-like
    bytes, then filter throughput on device-resident data and the whole pipeline end to end
    (rotating pinned buffers), at ~0 and 1% of 30,000 signatures present."""
    from seqsift.scan.kernels import PAD
    from seqsift.scan._gpu import GpuFilter, _table_kernel
    from seqsift.scan.api import objects_of
    from seqsift.scan.engine import Engine
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import from_strings

    rng = np.random.default_rng(6)
    parts, have = [], 0
    for path in sorted(Path("/usr/bin").iterdir())[:400]:
        if have < plan.scan_bytes and path.is_file() and not path.is_symlink():
            parts.append(np.fromfile(path, np.uint8))
            have += parts[-1].size
    data = np.concatenate(parts)[: plan.scan_bytes]
    size = plan.scan_buffer
    cfg = GpuConfig(**plan.scan_config)
    rows = []
    for present in plan.scan_present:
        sigs = []
        for k in range(plan.scan_signatures):
            n = int(rng.integers(16, 65))
            if rng.random() < present:
                a = int(rng.integers(0, data.size - n))
                sigs.append(data[a : a + n].tobytes().hex())
            else:
                sigs.append(rng.integers(0, 256, n, dtype=np.uint8).tobytes().hex())
        signatures = from_strings(sigs)
        eng = Engine(signatures, filter="table", sample=data[: 4 * MIB])
        buf = GpuFilter.host_buffer(PAD + size + PAD)
        buf[:] = 0
        buf[PAD : PAD + size] = data[:size]
        gpu = GpuFilter(eng.seed_table, cfg)
        want = eng.table_candidates(eng.seed_table, buf, PAD, PAD + size)
        gpu.count(buf, size)
        got = gpu.candidates()
        row = {"present": present, "candidates_equal": bool(np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])),
               "buffer_bytes": size, "candidates": int(want[0].size)}
        whole = cuda.to_device(np.concatenate([np.zeros(PAD, np.uint8), data, np.zeros(PAD, np.uint8)]))
        out = (cuda.device_array(plan.scan_out, np.int64), cuda.device_array(plan.scan_out, np.int64))
        counter = cuda.to_device(np.zeros(1, np.int64))
        blocks = max(1, min(cfg.blocks * 16, data.size // cfg.threads_per_block))
        _table_kernel[blocks, cfg.threads_per_block](whole, data.size, gpu.starts, gpu.tags, gpu.masks, *out, counter)
        cuda.synchronize()
        start = time.perf_counter()
        for _ in range(5):
            counter.copy_to_device(np.zeros(1, np.int64))
            _table_kernel[blocks, cfg.threads_per_block](whole, data.size, gpu.starts, gpu.tags, gpu.masks, *out, counter)
        cuda.synchronize()
        row["filter_kernel_GBps"] = round(5 * data.size / (time.perf_counter() - start) / 1e9, 2)
        objects = [data[i : i + MIB].tobytes() for i in range(0, data.size, MIB)]
        sizes = {"buffer_size": plan.scan_pipeline_buffer} if plan.scan_pipeline_buffer else {}
        for backend in ("cpu", "cuda"):
            with Scanner(signatures, backend=backend, threads=os.cpu_count(), gpu_config=cfg, **sizes) as scanner:
                start = time.perf_counter()
                found = list(scanner.scan(objects_of(objects), lambda p, w: None))
                row[f"{backend}_end_to_end_GBps"] = round(data.size / (time.perf_counter() - start) / 1e9, 2)
                row[f"{backend}_pairs"] = sum(len(r.matches) for r in found)
                row[f"{backend}_seconds"] = {k: round(v, 3) for k, v in scanner.stats.seconds.items()}
        row["hits_equal"] = row["cpu_pairs"] == row["cuda_pairs"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    report["scan_rows"] = rows


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=4.0)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: find, fmindex, align, scan")
    parser.add_argument("--smoke", action="store_true", help="toy sizes, for the CUDA simulator")
    args = parser.parse_args(argv)
    plan = SMOKE if args.smoke else FULL
    skip = set(args.skip.split(","))
    dev = cuda.get_current_device()
    report = {"device": str(getattr(dev, "name", "CUDA simulator")), "sms": getattr(dev, "MULTIPROCESSOR_COUNT", None), "smoke": args.smoke}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, check in (("scan", scan_check), ("fmindex", fmindex_check), ("align", align_check)):
        if name not in skip:
            try:
                check(report, plan)
            except Exception as exc:  # one failing section must not hide the others' numbers
                report[f"{name}_error"] = repr(exc)
                print(json.dumps({f"{name}_error": repr(exc)}), flush=True)
            (args.out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    if "find" in skip:
        return report
    check_correctness(report, plan)
    print(json.dumps(report), flush=True)
    text = genome_text(plan.find_text if args.smoke else int(args.gib * (1 << 30)))
    report["h2d_GBps"] = round(h2d_bandwidth(plan.h2d_bytes), 2)
    rows = []
    at = text.size // 3
    for pattern in (bytes(text[at : at + 8]), bytes(text[at : at + 20]), bytes(text[at : at + 100])):
        for tpb, bps in plan.find_shapes:
            config = plan.find_config._replace(threads_per_block=tpb, blocks_per_sm=bps)
            row = {"m": len(pattern), "threads_per_block": tpb, "blocks_per_sm": bps,
                   "kernel_GBps": round(kernel_only(pattern, text[: 1 << 30], config), 2)}
            for streams in (1, 3):
                rate, count = end_to_end(pattern, text, config._replace(streams=streams), plan.find_timed_chunk)
                row[f"end_to_end_{streams}_streams_GBps"] = round(rate, 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    report["rows"] = rows
    (args.out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}))
    return report


if __name__ == "__main__":
    main()
