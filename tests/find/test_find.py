"""Exact search against the naive oracle: random, adversarial, chunked, real files, on the CPU; the
checks that hold on every backend also on the GPU kernel (tiny launches under the CUDA simulator;
launch shapes and streams are tested in test_gpu.py beside this file)."""

import gzip
import io
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import seqsift
from seqsift.find.cpu import MIN_STARTS_TO_SPLIT, CpuSearcher, partition
from seqsift.find.plan import PROBE_COUNTS, SearchPlan, byte_rates, choose_probes, failure_table, spread_rarest
from seqsift.find._gpu import GpuConfig
from seqsift.find.api import FindJob
from tests import naive
from tests.conftest import LAMBDA, data_file


TINY_GPU = GpuConfig(threads_per_block=8, blocks_per_sm=2, streams=2, out_capacity=4)


def random_text(rng, n, alphabet=b"AB"):
    return bytes(np.frombuffer(alphabet, np.uint8)[rng.integers(0, len(alphabet), n)])


def job(backend, pattern, chunk_size):
    """A FindJob on backend; on the GPU with tiny launches, as the simulator runs each thread in Python."""
    return FindJob(pattern, backend=backend, chunk_size=chunk_size, gpu_config=TINY_GPU if backend == "cuda" else None)


def offsets_and_count(backend, pattern, text, chunk_size):
    with job(backend, pattern, chunk_size) as j:
        parts = list(j.offsets(text, count_only=False))
        count = sum(j.offsets(text, count_only=True))
    return (np.concatenate(parts) if parts else np.empty(0, np.int64)).tolist(), count


def test_random_binary_text_many_chunks(rng, backend):
    """Chunks far smaller than the text: the buffers (on the GPU, the stream slots) are reused many times."""
    for _ in range(3):
        text = bytes(rng.integers(0, 2, 900).astype(np.uint8) + 65)
        pattern = text[400 : 400 + int(rng.integers(1, 6))]
        want = naive.find_all(text, pattern)
        assert offsets_and_count(backend, pattern, text, chunk_size=int(rng.integers(20, 200))) == (want, len(want))


def test_adversarial_and_edge_cases(backend):
    cases = [(b"a" * 40, b"a" * 400), (b"abc", b"ab"), (b"x", b""), (b"aab", b"aaab" * 50), (b"\x00\xff", bytes(range(256)) * 2)]
    for pattern, text in cases:
        want = naive.find_all(text, pattern)
        assert offsets_and_count(backend, pattern, text, chunk_size=256) == (want, len(want))


def test_records_match_the_oracle(tmp_path, backend):
    path = tmp_path / "r.fa"
    path.write_text(">a\nACGTACGTAC\nGTAC\n>b\nGTACGT\n>c\nAC\n")
    records = naive.read_records(path)
    for pattern in ("GTAC", "ACG", "CGTA"):
        want = naive.record_hits(records, pattern, revcomp=True)
        with job(backend, pattern.encode(), chunk_size=1 << 20) as j:
            assert [hit for part in j.record_hits(path, revcomp=True, count_only=False) for hit in part] == want
            assert sum(j.record_hits(path, revcomp=True, count_only=True)) == len(want)


def test_one_job_many_sources_and_an_abandoned_run(rng, backend):
    """Buffers (on the GPU, device buffers) are reused across sources; a run left halfway leaves nothing behind."""
    texts = [bytes(rng.integers(0, 2, int(rng.integers(50, 400))).astype(np.uint8) + 65) for _ in range(3)]
    with job(backend, b"ABA", chunk_size=40) as j:
        abandoned = j.offsets(texts[0], count_only=False)
        next(abandoned)
        abandoned.close()
        for text in texts:
            want = naive.find_all(text, b"ABA")
            assert np.concatenate(list(j.offsets(text, count_only=False))).tolist() == want
            assert sum(j.offsets(text, count_only=True)) == len(want)


@settings(max_examples=300, deadline=None)
@given(text=st.binary(max_size=300), pattern=st.binary(min_size=1, max_size=12), chunk=st.integers(1, 64))
def test_matches_naive_on_any_bytes(text, pattern, chunk):
    want = naive.find_all(text, pattern)
    assert seqsift.find(pattern, text, backend="cpu", threads=1, chunk_size=chunk).tolist() == want
    assert seqsift.find_count(pattern, io.BytesIO(text), backend="cpu", threads=1, chunk_size=chunk) == len(want)


@pytest.mark.parametrize("alphabet", [b"A", b"AB", b"ACGT", bytes(range(256))])
def test_random_small_alphabets(rng, threads, alphabet):
    for _ in range(60):
        text = random_text(rng, int(rng.integers(0, 5000)), alphabet)
        m = int(rng.integers(1, 70))
        pattern = text[len(text) // 3 : len(text) // 3 + m] or random_text(rng, m, alphabet)
        want = naive.find_all(text, pattern)
        assert seqsift.find(pattern, text, backend="cpu", threads=threads).tolist() == want
        assert seqsift.find_count(pattern, text, backend="cpu", threads=threads) == len(want)


def test_work_items_split_large_chunks_exactly(rng, threads):
    """Above MIN_STARTS_TO_SPLIT the chunk is cut into work items; no match lost or doubled at the cuts."""
    text = random_text(rng, 3 * MIN_STARTS_TO_SPLIT, b"ACGT")
    for m in (1, 3, 8, 33):
        pattern = text[777 : 777 + m]
        want = naive.find_all_fast(text, pattern)
        assert seqsift.find(pattern, text, backend="cpu", threads=threads).tolist() == want


def test_one_thread_searches_a_chunk_in_one_kernel_call(rng, monkeypatch):
    """One thread: a chunk above MIN_STARTS_TO_SPLIT is one work item, one kernel call (each
    item more is a call more, ~30 us of Python); two threads cut it into items. Both find what
    the oracle finds, matches planted across the places where two threads' items are cut."""
    from seqsift.find import cpu

    calls = []
    kernel = cpu.SCAN_RANGES
    monkeypatch.setattr(cpu, "SCAN_RANGES", lambda *args: calls.append(1) or kernel(*args))
    n, m = 2 * MIN_STARTS_TO_SPLIT, 24
    text = bytearray(random_text(rng, n, b"ACGT"))
    pattern = random_text(rng, m, b"ACGT")
    parts = 2 * cpu.ITEMS_PER_THREAD
    for p in range(1, parts):
        at = (n - m + 1) * p // parts - m // 2
        text[at : at + m] = pattern
    text = bytes(text)
    want = naive.find_all_fast(text, pattern)
    assert len(want) >= parts - 1
    for threads, items in ((1, 1), (2, parts)):
        del calls[:]
        assert seqsift.find(pattern, text, backend="cpu", threads=threads, chunk_size=n).tolist() == want
        assert len(calls) == items
        assert seqsift.find_count(pattern, text, backend="cpu", threads=threads, chunk_size=n) == len(want)


@pytest.mark.parametrize("count", PROBE_COUNTS)
def test_every_probe_count_matches_the_oracle(rng, threads, count):
    """The filter with each number of probes it may be given (plan.choose_probes), on random
    bytes of small and large alphabets with the pattern planted, planted with one byte changed
    (survivors of some probes that verification must reject), and in ranges that cut through
    matches: every match starting in a range, none outside."""
    for _ in range(25):
        alphabet = bytes(rng.permutation(256)[: int(rng.choice([2, 4, 20, 256]))].astype(np.uint8))
        m = int(rng.integers(1, 40))
        pattern = random_text(rng, m, alphabet)
        text = bytearray(random_text(rng, int(rng.integers(m, 6000)), alphabet))
        for at in rng.integers(0, len(text) - m + 1, int(rng.integers(0, 30))):
            text[at : at + m] = pattern
            if rng.random() < 0.5:  # the same, one byte off
                text[at + int(rng.integers(0, m))] ^= 1 + int(rng.integers(0, 255))
        text = bytes(text)
        probes = spread_rarest(pattern, byte_rates(np.frombuffer(text, np.uint8)), count)
        plan = SearchPlan(np.frombuffer(pattern, np.uint8).copy(), failure_table(pattern), probes)
        cuts = np.sort(rng.integers(0, len(text) - m + 2, 6))
        los, his = cuts[0::2].astype(np.int64), cuts[1::2].astype(np.int64)
        want = [s for s in naive.find_all(text, pattern) if any(lo <= s < hi for lo, hi in zip(los, his))]
        searcher = CpuSearcher(plan, threads)
        data = np.frombuffer(text, np.uint8)
        assert searcher.positions(data, los, his).tolist() == want
        assert searcher.count(data, los, his) == len(want)
        assert searcher.count_ranges(data, los, his).tolist() == [sum(lo <= s < hi for s in want) for lo, hi in zip(los, his)]


def test_probe_count_follows_the_bytes_rarity():
    """Two probes where the pattern's bytes are rare in the sample (binaries), six on DNA, where
    four letters leave a survivor every 256 positions, and never more positions than the pattern
    has bytes."""
    rng = np.random.default_rng(26)
    binary = rng.integers(0, 256, 1 << 16).astype(np.uint8)
    dna = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, 1 << 16)]
    protein = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)[rng.integers(0, 20, 1 << 16)]
    assert len(choose_probes(bytes(binary[100:120]), binary)) == 2
    assert len(choose_probes(bytes(dna[100:120]), dna)) == 6
    assert len(choose_probes(bytes(protein[100:120]), protein)) == 4
    assert len(choose_probes(b"AC", dna)) == 2 and set(choose_probes(b"AC", dna)) == {0, 1}
    assert len(choose_probes(b"GATTACA", None)) == 2  # no sample: every byte 1/256


def test_partition_covers_every_start_once():
    los = np.array([0, 10, 5000, 2_000_000], np.int64)
    his = np.array([5, 3_000_000 - 1, 7000, 4_500_000], np.int64)
    for parts in (1, 2, 3, 8):
        items = partition(los, his, parts)
        covered = np.concatenate([np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)]) for _, lo, hi in items])
        expect = np.concatenate([np.arange(a, b) for a, b in zip(los, his)])
        assert np.array_equal(covered, expect)
        for first, lo, hi in items:  # each item's ranges lie inside the ranges it says they come from
            assert np.all(lo >= los[first : first + lo.size]) and np.all(hi <= his[first : first + hi.size])
        sizes = [int((hi - lo).sum()) for _, lo, hi in items]
        assert max(sizes) - min(sizes) <= 1 or parts == 1
        # the ranges of a file search come as int64 array.array (no numpy): the same items
        plain = partition(array("q", los.tolist()), array("q", his.tolist()), parts)
        assert [(f, list(lo), list(hi)) for f, lo, hi in plain] == [(f, lo.tolist(), hi.tolist()) for f, lo, hi in items]


@pytest.mark.parametrize("m", [20, 1000])
def test_adversarial_run_of_one_letter(threads, m):
    """`a`*m in `a`*N: every position matches; verification would be quadratic, KMP takes over."""
    text = b"a" * 300_000
    got = seqsift.find(b"a" * m, text, backend="cpu", threads=threads)
    assert np.array_equal(got, np.arange(len(text) - m + 1))
    assert seqsift.find_count(b"a" * m, text, backend="cpu", threads=threads) == len(text) - m + 1


def test_filter_and_kmp_hand_over_back_and_forth(rng, threads):
    """Runs of `a` of random length separated by `b`: the filter degenerates inside long runs
    and recovers after them, many times over."""
    runs = rng.integers(0, 400, 20_000)
    text = b"b".join(b"a" * int(r) for r in runs)
    for pattern in (b"a" * 120, b"a" * 120 + b"b", b"b" + b"a" * 50 + b"b", b"ab" * 3):
        want = naive.find_all_fast(text, pattern)
        assert seqsift.find(pattern, text, backend="cpu", threads=threads).tolist() == want


def test_sources_agree(tmp_path, rng):
    text = random_text(rng, 20_000, b"ACGT")
    path = tmp_path / "t.bin"
    path.write_bytes(text)
    pattern = text[5000:5006]
    want = naive.find_all_fast(text, pattern)

    class ReadOnly:  # a file-like object with read() only
        def __init__(self):
            self.f = io.BytesIO(text)

        def read(self, n=-1):
            return self.f.read(n)

    sources = [text, bytearray(text), memoryview(text), np.frombuffer(text, np.uint8), str(path), path,
               io.BytesIO(text), open(path, "rb"), ReadOnly()]
    for source in sources:
        for chunk in (6, 7, 1000, 1 << 20):
            if hasattr(source, "seek"):
                source.seek(0)
            if isinstance(source, ReadOnly):
                source.f.seek(0)
            got = seqsift.find(pattern, source, backend="cpu", threads=2, chunk_size=chunk)
            assert got.tolist() == want, (type(source), chunk)


def test_pattern_longer_than_text():
    assert seqsift.find(b"abcdef", b"abc", backend="cpu").size == 0
    assert seqsift.find_count(b"abcdef", b"", backend="cpu") == 0


def test_bad_arguments_are_named():
    with pytest.raises(seqsift.SeqsiftError, match="empty"):
        seqsift.find(b"", b"abc")
    with pytest.raises(seqsift.SeqsiftError, match="uint8"):
        seqsift.find(b"a", np.zeros(4, np.int32))
    with pytest.raises(seqsift.SeqsiftError, match="threads"):
        seqsift.find(b"a", b"abc", threads=0)
    with pytest.raises(seqsift.SeqsiftError, match="no such file"):
        seqsift.find(b"a", "/nonexistent/file")


def test_real_genome_bytes(threads):
    """The Klebsiella genome as plain text, patterns of 8, 20 and 100 bytes present and absent."""
    text = gzip.open(data_file("klebsiella_HS11286.fa.gz")).read()
    for pattern in (text[1_000:1_008], text[100_000:100_020], text[150_000:150_100], b"ACGTTGCA" * 3, b"\x00\x01"):
        want = naive.find_all_fast(text, pattern)
        assert seqsift.find(pattern, text, backend="cpu", threads=threads, chunk_size=1 << 15).tolist() == want


def test_real_genome_records(threads):
    path = data_file("klebsiella_HS11286.fa.gz")
    records = naive.read_records(path)
    for pattern in ("GAATTC", "acgtacgt", "TTTTTTTTTTTTTT", records[1][1][100:130]):  # records[1]: a plasmid
        want = naive.record_hits(records, pattern, revcomp=True)
        hits = seqsift.find_records(pattern, path, revcomp=True, backend="cpu", threads=threads, chunk_size=1 << 15)
        assert list(hits) == want


def test_records_of_fastq_reads():
    path = data_file("lambda_reads_1.fq.gz")
    records = naive.read_records(path)
    for pattern in ("GATC", "GGGCGGCGACCTCGCG"):
        want = naive.record_hits(records, pattern, revcomp=True)
        assert list(seqsift.find_records(pattern, path, revcomp=True, backend="cpu")) == want


def test_record_matches_never_span_records_or_pieces(tmp_path, rng):
    """Records cut into pieces (small batches) still report every match once, none across records."""
    seqs = [random_text(rng, int(rng.integers(0, 3000)), b"ACGT").decode() for _ in range(30)]
    fasta = "".join(f">r{i} some description\n" + "\n".join(s[j : j + 61] for j in range(0, len(s), 61)) + "\n"
                    for i, s in enumerate(seqs))
    path = tmp_path / "r.fa"
    path.write_text(fasta.lower())
    records = [(f"r{i}", s) for i, s in enumerate(seqs)]
    for m in (1, 4, 9):
        pattern = seqs[5][100 : 100 + m] or "ACGT"[:m]
        want = naive.record_hits(records, pattern, revcomp=True)
        for chunk in (4 * m, 500, 1 << 20):
            got = seqsift.find_records(pattern, path, revcomp=True, backend="cpu", threads=2, chunk_size=chunk)
            assert list(got) == want


def test_record_pattern_must_be_sequence_letters():
    with pytest.raises(seqsift.SeqsiftError, match="sequence letters"):
        seqsift.find_records("AC GT", LAMBDA)
