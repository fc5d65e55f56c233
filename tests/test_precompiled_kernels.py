"""Every engine's precompiled kernels against the Numba dispatchers they were compiled from: each
engine runs a seeded random workload while every kernel call's arguments are recorded; each call
is then replayed twice on copies of its arguments, precompiled and through the dispatcher (the
JIT), and the results and every array written must be identical. The workload must reach every
kernel the engine has, so a kernel added without a replay here fails."""

import copy

import numpy as np
import pytest

import seqsift
from seqsift import precompiled
from seqsift.precompiled import Kernel
from tests.scan.test_scan import make_case

CALLS_PER_KERNEL = 6  # replayed per kernel (the first ones of each signature)


def _find_workload(rng, tmp_path):
    from array import array

    from seqsift.io.gather import ALONE, Names, gather

    paths = [str(tmp_path / "missing")]
    for k in range(20):
        (tmp_path / f"f{k}").write_bytes(rng.integers(0, 256, int(rng.integers(0, 500)), dtype=np.uint8).tobytes())
        paths.append(str(tmp_path / f"f{k}"))
    names, first = Names(paths), 0
    while first < len(paths):  # a buffer (bytearray: the replay copies it) filled again and again
        first, _, why = gather(names, first, bytearray(2000), 0, 1000, array("q", bytes(8 * len(paths))),
                               array("q", bytes(8 * len(paths))))
        first += why == ALONE  # the missing file
    text = rng.choice(np.frombuffer(b"ACGT", np.uint8), 300_000).tobytes()
    for length in (1, 3, 12, 40):
        at = int(rng.integers(0, len(text) - length))
        pattern = text[at : at + length]
        seqsift.find_count(pattern, text, backend="cpu", threads=2)
        seqsift.find(pattern, text, backend="cpu", threads=1)
    seqsift.find_count(b"a" * 50, b"a" * 200_000, backend="cpu", threads=1)  # repeats: the KMP hand-over


def _scan_workload(rng):
    seed = int(rng.integers(1 << 30))
    for alphabet, filter in ((256, "stride"), (4, "table"), (16, "stride")):
        objects, sigs = make_case(seed, alphabet)
        seqsift.scan(objects, [h for _, h in sigs] + ["4142??43{2-5}44(45|46)47", "61*6263"], backend="cpu",
                     threads=2, filter=filter, buffer_size=1 << 12)


def _database(sequences, scoring):
    from seqsift.alignment import Database

    return Database([f"s{k}" for k in range(len(sequences))], sequences, scoring)


def _alignment_workload(rng):
    from seqsift.alignment import align_pairs, dna, matrix, search_database

    protein = np.frombuffer(b"ARNDCQEGHILKMFPSTWYV", np.uint8)
    db = [rng.choice(protein, int(rng.integers(5, 300))).tobytes() for _ in range(300)]
    queries = [rng.choice(protein, int(rng.integers(5, 200))).tobytes() for _ in range(3)]
    search_database(queries + [db[7] * 3], _database(db, matrix("BLOSUM62")), top=3, backend="cpu", threads=1)
    dna_seqs = [rng.choice(np.frombuffer(b"ACGTN", np.uint8), int(rng.integers(1, 150))).tobytes() for _ in range(40)]
    align_pairs(dna_seqs[:20], dna_seqs[20:], dna(), backend="cpu", threads=1)
    big = dna(100, -1, 0, 2)  # 8-bit lanes saturate, then 16-bit ones: both widths, and the 32-bit rescoring
    long = [rng.choice(np.frombuffer(b"ACGT", np.uint8), 400).tobytes()]
    search_database(long, _database(long * 3 + dna_seqs[:5], big), top=2, backend="cpu", threads=1)
    for mode in ("global", "semi-global"):
        seqsift.align(dna_seqs[0] + dna_seqs[1], dna_seqs[1], dna(), mode)


def _fmindex_workload(rng, tmp_path):
    from seqsift.cli import main

    genome = rng.choice(np.frombuffer(b"ACGT", np.uint8), 20_000)
    genome[5000:5100] = ord("N")
    (tmp_path / "ref.fa").write_bytes(b">a\n" + genome[:12_000].tobytes() + b"\n>b\n" + genome[12_000:].tobytes() * 2 + b"\n")
    assert main(["index", str(tmp_path / "ref.fa"), "-o", str(tmp_path / "ref.ssx"), "-q"]) == 0
    assert main(["simulate", str(tmp_path / "ref.fa"), "-n", "300", "--length", "40", "--error-rate", "0.02",
                 "--seed", "5", "-o", str(tmp_path / "reads.fq"), "-q"]) == 0
    for extra in ([], ["--format", "sam"], ["-e", "2"], ["-e", "1", "--distance", "hamming", "--format", "sam"]):
        assert main(["search", str(tmp_path / "ref.ssx"), str(tmp_path / "reads.fq"), "-o", str(tmp_path / "out"), "-q",
                     *extra]) == 0
        if "sam" not in extra:  # `seqsift check`'s own kernels (windows.py), on the results
            assert main(["check", str(tmp_path / "ref.fa"), str(tmp_path / "out"), str(tmp_path / "reads.fq"),
                         "-o", str(tmp_path / "checked"), *extra]) == 0
    assert main(["stats", str(tmp_path / "ref.ssx"), str(tmp_path / "reads.fq"), "-o", str(tmp_path / "stats")]) == 0
    _construction_workload(tmp_path / "ref.fa")


def _construction_workload(path):
    """The index built in one piece and in pieces forced small (pieces.py: a repeat longer than
    the cover's period, so ties go to prefix doubling; the run of 100 N, whose suffixes
    _runs_cpu.py writes out in order), with 32- and 64-bit rows; the first pieced build sorts on
    two threads, so the calls replayed first are the threaded sort's (slices of one piece)."""
    from seqsift.fmindex.build import build_arrays
    from seqsift.fmindex.reference import load_reference

    ref = load_reference(path)
    for wide in (False, True):
        for piece, threads in ((None, 1), (3000, 2 if not wide else 1)):
            build_arrays(ref, sa_sample=8, repeat_sample=2, kmer=5, wide=wide, piece=piece, threads=threads)


def _map_workload(rng, tmp_path):
    """Single reads of every kind (substitutions, indels, a chimera, repeats, -a) and pairs with
    ends that need a rescue, so every map kernel is reached."""
    from seqsift.cli import main
    from tests.map.test_map import random_dna, simulate, write_fastq
    from tests.map.test_pairs import simulate_pairs, write_pairs

    records = {"one": random_dna(rng, 20_000), "two": random_dna(rng, 8_000)}
    records["two"] += records["one"][3000:3400]  # a repeat: reads with two places
    ref = tmp_path / "ref.fa"
    ref.write_text("".join(f">{n}\n{s}\n" for n, s in records.items()))
    reads = simulate(rng, records, 120) + [("chimera", records["one"][1000:1080] + records["two"][500:580], None)]
    single = write_fastq(tmp_path / "single.fq", reads)
    for extra in ([], ["-a"]):
        assert main(["map", str(ref), str(single), "-o", str(tmp_path / "s.sam"), "-q", *extra]) == 0
    r1, r2 = write_pairs(tmp_path, simulate_pairs(rng, records, 90))
    assert main(["map", str(ref), str(r1), str(r2), "-o", str(tmp_path / "p.sam"), "-q"]) == 0
    # the Python pair path (pairs whose ends need more than one record): its rescues call place_chain
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.map.mapper import Mapper, load_index
    from seqsift.map.pairs import PairBatches, paired_batches

    job = PairBatches(Mapper(load_index(ref)))
    for batches in paired_batches(r1, r2, 1000, READ_CODE):
        job.in_python(batches)


WORKLOADS = {"find": (_find_workload, ("seqsift.find._cpu", "seqsift.io._gather_cpu")), "scan": (_scan_workload, ("seqsift.scan._cpu",)),
             "alignment": (_alignment_workload, ("seqsift.alignment.",)),
             "fmindex": (_fmindex_workload, ("seqsift.fmindex.", "seqsift.io._reads_cpu")),
             "map": (_map_workload, ("seqsift.map.",))}


def _record(workload, monkeypatch) -> list[tuple[Kernel, tuple]]:
    calls, seen = [], {}
    real = Kernel.__call__

    def record(kernel, *args):
        key = (kernel.module, kernel.name, tuple(precompiled._describe(a) for a in args))
        if seen.get(key, 0) < CALLS_PER_KERNEL:
            seen[key] = seen.get(key, 0) + 1
            calls.append((kernel, copy.deepcopy(args)))
        return real(kernel, *args)

    with monkeypatch.context() as patch:
        patch.setattr(Kernel, "__call__", record)
        workload()
    return calls


def _arrays(values):
    """The bytes of every array argument: numpy arrays, and the other buffers a Kernel takes
    (array.array, bytes, maps: what `seqsift find` passes over files)."""
    for value in values:
        if isinstance(value, tuple):
            yield from _arrays(value)
        elif not isinstance(value, (int, float, np.generic)):
            yield memoryview(value).tobytes()


@pytest.mark.parametrize("engine", sorted(WORKLOADS))
def test_every_kernel_gives_the_dispatchers_results(engine, rng, monkeypatch, tmp_path):
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SEQSIFT_PRECOMPILED", "1")
    workload, prefixes = WORKLOADS[engine]
    calls = _record(lambda: workload(rng, tmp_path) if engine in ("find", "fmindex", "map") else workload(rng), monkeypatch)
    for module in precompiled.KERNEL_MODULES:
        __import__(module)
    expected = {f"{k.module}.{k.name}" for k in precompiled.KERNELS if k.module.startswith(prefixes)}
    reached = {f"{k.module}.{k.name}" for k, _ in calls if k.module.startswith(prefixes)}
    assert expected and reached == expected  # the workload reaches them all (map's reaches the FM-index's too)
    for kernel, args in calls:
        ours, theirs = copy.deepcopy(args), copy.deepcopy(args)
        got = kernel(*ours)
        want = kernel.dispatcher()(*precompiled._as_numpy(theirs))  # other buffers as numpy views, as its JIT path
        if isinstance(want, tuple):
            want = tuple(int(x) for x in want)
        elif want is not None:
            want = int(want)
        assert got == want, kernel
        for a, b in zip(_arrays(ours), _arrays(theirs)):
            assert a == b, kernel
    assert not any(kernel.jit for kernel, _ in calls)  # the precompiled form ran, not a fallback
