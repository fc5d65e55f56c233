"""FM-index construction, count and locate against the naive oracle (issue 3, first part)."""

import dataclasses

import numpy as np
import pytest

from seqsift.errors import FormatError, InputError
from seqsift.fmindex import _cpu
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.build import default_kmer, default_repeat_sample
from seqsift.fmindex.query import SearchOptions, Searcher
from seqsift.fmindex.reference import encode_reads
from tests import naive
from tests.conftest import LAMBDA, data_file


@pytest.fixture
def random_reference(tmp_path, rng):
    records = []
    for i in range(6):
        seq = "".join(rng.choice(list("ACGT"), int(rng.integers(0, 3000))))
        if len(seq) > 10:  # N runs and IUPAC codes inside records
            k = int(rng.integers(0, len(seq) - 5))
            seq = seq[:k] + "NNRY" + seq[k + 4 :]
        records.append((f"chr{i}", seq))
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n} desc\n" + "\n".join(s[j : j + 60] for j in range(0, len(s), 60)).lower() + "\n" for n, s in records))
    return path, [(n, s.upper()) for n, s in records]


def reads_for(records, rng, count=300):
    reads = []
    joined = "".join(s for _, s in records)
    for _ in range(count):
        m = int(rng.integers(1, 25))
        kind = rng.integers(0, 3)
        if kind == 0 and len(joined) > m:  # present (or spanning a record join: then absent)
            k = int(rng.integers(0, len(joined) - m))
            reads.append(joined[k : k + m])
        elif kind == 1:
            reads.append("".join(rng.choice(list("ACGT"), m)))
        else:
            reads.append("".join(rng.choice(list("ACGTN"), m)).lower())
    return reads


ALL_OPTIONS = [SearchOptions(kmer, shortcut, width) for kmer in (True, False)
               for shortcut in ("none", "rank", "verify") for width in (1, 3, 16)]
ALL_OPTIONS += [SearchOptions(kmer, "verify", 3, verify_rows) for kmer in (True, False) for verify_rows in (1, 8)]


@pytest.mark.parametrize("sa_sample,kmer", [(1, 3), (4, 0), (32, None), (7, 6)])
def test_count_and_locate_match_the_oracle(random_reference, rng, sa_sample, kmer):
    path, records = random_reference
    index = FMIndex.build(path, sa_sample=sa_sample, kmer=kmer)
    assert index.names == [n for n, _ in records]
    reads = reads_for(records, rng)
    want = [naive.dna_hits(records, r) for r in reads]
    assert index.count(reads).tolist() == [len(w) for w in want]
    got = index.locate(reads, max_hits=5)
    assert [c for c, _ in got] == [len(w) for w in want]
    assert [[tuple(h) for h in hits] for _, hits in got] == [w[:5] for w in want]


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
def test_every_optimization_setting_gives_the_same_hits(random_reference, rng, options):
    path, records = random_reference
    index = FMIndex.build(path, sa_sample=8, kmer=4)
    reads = reads_for(records, rng, count=200)
    codes, bounds = encode_reads(reads)
    found = index.searcher(options).hits(codes, bounds, max_hits=10**9)
    want = [naive.dna_hits(records, r) for r in reads]
    assert found.counts.tolist() == [len(w) for w in want]
    record, position = index.reference.to_record(found.text_pos)
    got = [(index.names[r], int(p), "+-"[s]) for r, p, s in zip(record, position, found.strand)]
    assert got == [h for w in want for h in w]


@pytest.fixture
def diverged_copies(tmp_path, rng):
    """Four copies of one sequence, each with ~2% substitutions (the 22 Mbp benchmark's shape in
    small): a read's interval holds 2-4 rows for much of its search."""
    unit = rng.choice(list("ACGT"), 3000)
    records = []
    for i in range(4):
        copy = unit.copy()
        at = rng.random(copy.size) < 0.02
        copy[at] = rng.choice(list("ACGT"), int(at.sum()))
        records.append((f"copy{i}", "".join(copy)))
    path = tmp_path / "copies.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    return path, records


def test_verify_rows_below_one_is_refused(diverged_copies):
    with pytest.raises(ValueError, match="verify_rows 0"):
        FMIndex.build(diverged_copies[0], kmer=3).searcher(SearchOptions(verify_rows=0))


@pytest.mark.parametrize("verify_rows", [1, 2, 4, 8])
@pytest.mark.parametrize("sa_sample,repeat_sample", [(8, 8), (32, 0), (32, 8)])
def test_verify_shortcut_on_repeats_matches_the_oracle(diverged_copies, rng, verify_rows, sa_sample, repeat_sample):
    """Reads from diverged copies, exact and with one base changed: the verify shortcut locates
    and checks intervals of up to verify_rows rows, some of whose rows fail the check."""
    path, records = diverged_copies
    index = FMIndex.build(path, sa_sample=sa_sample, repeat_sample=repeat_sample, kmer=5)
    reads = []
    for _ in range(300):
        name, seq = records[int(rng.integers(0, 4))]
        m = int(rng.integers(40, 101))
        k = int(rng.integers(0, len(seq) - m))
        read = list(seq[k : k + m])
        if rng.random() < 0.3:
            read[int(rng.integers(0, m))] = "ACGT"[int(rng.integers(0, 4))]
        reads.append("".join(read))
    codes, bounds = encode_reads(reads)
    searcher = index.searcher(SearchOptions(verify_rows=verify_rows))
    lo, hi, left = searcher.intervals(codes, bounds)
    stopped = left > 0
    assert np.all(hi[stopped] - lo[stopped] <= verify_rows) and np.any(stopped)
    if verify_rows > 1:  # intervals of several rows were stopped too
        assert np.any(stopped & (hi - lo > 1))
    query_of, _, keep, _ = searcher._settled(codes, bounds, lo, np.where(stopped, hi - lo, 0), left)
    assert np.any(keep == 0) and np.any(keep == 1)  # some stopped rows failed the text check, some passed
    want = [naive.dna_hits(records, r) for r in reads]
    got = searcher.hits(codes, bounds, max_hits=10)
    assert got.counts.tolist() == [len(w) for w in want]
    record, position = index.reference.to_record(got.text_pos)
    listed = [(index.names[r], int(p), "+-"[s]) for r, p, s in zip(record, position, got.strand)]
    assert listed == [h for w in want for h in w[:10]]


@pytest.mark.parametrize("shortcut", ["none", "rank", "verify"])
def test_no_match_crosses_an_n_run_or_a_record_join(tmp_path, rng, shortcut):
    """Reads that would match if the N run (or the join of two records) held one of A, C, G,
    T: the search stops early on the unique part after the gap, so the verify shortcut's
    comparison of the rest spans the gap, and must still find nothing there."""
    left_part, right_part, tail = ("".join(rng.choice(list("ACGT"), 400)) for _ in range(3))
    records = [("a", left_part + "NNNNN" + right_part), ("b", tail)]
    path = tmp_path / "gaps.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    index = FMIndex.build(path, kmer=4)
    reads = [left_part[-12:] + run + right_part[:40] for b in "ACGT" for run in (b * 5, b * 4 + "C")]
    reads += [right_part[-12:] + b + tail[:40] for b in "ACGT"]  # across the join of a and b
    reads += [right_part[-12:] + tail[:40], left_part[:52]]  # the join itself, and a control that matches
    codes, bounds = encode_reads(reads)
    searcher = index.searcher(SearchOptions(shortcut=shortcut))
    if shortcut == "verify":  # the comparisons really do span the gaps
        assert np.all(searcher.intervals(codes, bounds)[2][0:20:2] > 12)
    got = searcher.hits(codes, bounds, max_hits=10)
    assert got.counts.tolist() == [len(naive.dna_hits(records, r)) for r in reads] == [0] * 13 + [1]


@pytest.mark.parametrize("n", [5, 37, 1000])
def test_settle_checks_rows_as_the_text_says(rng, n):
    """The verify shortcut's check, kernel against a direct comparison: queries of 1-120 bases
    on both strands, rows anywhere in a short text (its last bytes take the base-by-base path),
    before their prefix fits, and across a gap; half of them planted to match."""
    text = rng.integers(0, 4, n)
    packed = np.zeros((n + 3) // 4, np.uint8)
    np.bitwise_or.at(packed, np.arange(n) >> 2, (text << (2 * (np.arange(n) & 3))).astype(np.uint8))
    gaps = np.array([[n // 3, n // 3 + 1]], np.int64)
    reads, left, rows = [], [], []
    for r in range(60):
        length = int(rng.integers(1, 121))
        read = rng.integers(0, 4, length)
        for strand in (0, 1):
            j = int(rng.integers(1, length + 1))
            for _ in range(int(rng.integers(0, 4))):
                p = int(rng.integers(0, n + 1))
                if p >= j and rng.random() < 0.5:  # plant the text there as the query's prefix
                    prefix = text[p - j : p]
                    if strand == 0:
                        read[:j] = prefix
                    else:
                        read[length - j :] = (3 - prefix)[::-1]
                rows.append((2 * r + strand, p))
            left.append(j)
        reads.append(read.copy())
    query_of = np.array([q for q, _ in rows], np.int64)
    located = np.array([p for _, p in rows], np.int64)
    codes = np.concatenate(reads).astype(np.uint8)
    bounds = np.concatenate(([0], np.cumsum([len(x) for x in reads]))).astype(np.int64)
    left = np.array(left, np.int64)
    keep = np.empty(len(rows), np.uint8)
    _cpu.settle(packed, gaps[:, 0].copy(), gaps[:, 1].copy(), codes, bounds, left, query_of, located, keep)
    want = []
    for q, p in rows:
        read, j = reads[q >> 1], left[q]
        query = read if q % 2 == 0 else (3 - read)[::-1]
        gap_free = all(end <= p - j for start, end in gaps if start < p)
        want.append(int(p >= j and gap_free and np.array_equal(query[:j], text[p - j : p])))
    assert keep.tolist() == want and 0 < sum(want) < len(want)
    assert located.tolist() == [p - left[q] for q, p in rows]


@pytest.mark.parametrize("sa_sample", [1, 5, 32])
def test_locate_needs_at_most_sa_sample_minus_one_steps(random_reference, sa_sample):
    index = FMIndex.build(random_reference[0], sa_sample=sa_sample)
    a = index.arrays
    hist = _cpu.locate_steps_histogram(a.blocks, a.C, a.n, a.n)
    assert hist.sum() == a.n and np.flatnonzero(hist).max() <= sa_sample - 1


@pytest.mark.parametrize("sa_sample,repeat_sample", [(32, 8), (16, 3), (5, 1)])
def test_repeats_are_sampled_at_every_repeat_sample_position(diverged_copies, sa_sample, repeat_sample):
    """The samples are exactly the positions the rule names, found by brute force: multiples of
    sa_sample, boundaries, and multiples of repeat_sample whose next window bases occur twice."""
    from seqsift.fmindex.build import repeat_window

    path, records = diverged_copies
    a = FMIndex.build(path, sa_sample=sa_sample, repeat_sample=repeat_sample).arrays
    text = "#".join(s for _, s in records) + "$"
    w = repeat_window(len(text))
    assert (a.repeat_sample, a.repeat_window) == (repeat_sample, w)
    want = {p for p in range(len(text)) if p % sa_sample == 0 or text[p - 1] == "#"}  # p = 0: '$' precedes it
    for p in range(0, len(text), repeat_sample):
        window = text[p : p + w]
        if len(window) == w and "#" not in window and "$" not in window and text.find(window, text.find(window) + 1) >= 0:
            want.add(p)
    assert sorted(int(x) for x in a.samples) == sorted(want)


def test_repeat_samples_shorten_the_walks(diverged_copies):
    path, _ = diverged_copies
    steps = {}
    for repeat_sample in (0, 4):
        a = FMIndex.build(path, sa_sample=32, repeat_sample=repeat_sample).arrays
        hist = _cpu.locate_steps_histogram(a.blocks, a.C, a.n, a.n)
        assert np.flatnonzero(hist).max() <= 31
        steps[repeat_sample] = (hist * np.arange(hist.size)).sum() / hist.sum()
    assert steps[4] < steps[0] / 2


def test_default_kmer_table_is_at_most_2_bytes_a_base_and_128_mib():
    """The largest k with 4^k <= bases/4, k at most 12: the table (8 bytes a k-mer) costs at most
    2 bytes a base, and 128 MiB on any genome."""
    for n in (16, 63, 64, 48_502, 4**12 - 1, 4**12, 5_682_322, 22_729_292, 4**14, 3_100_000_000):
        k = default_kmer(n)
        assert k >= 1 and 8 * 4**k <= 2 * n and 8 * 4**k <= 128 << 20
        assert k == 12 or 8 * 4 ** (k + 1) > 2 * n  # no larger k fits
    assert (default_kmer(1), default_kmer(5_682_322), default_kmer(22_729_292)) == (1, 10, 11)


def test_default_repeat_sample_costs_at_most_128_mib():
    """Every 4th base of a repeat is marked while 4-byte samples at every 4th base of the whole
    genome fit in 128 MiB, every 8th beyond."""
    assert [default_repeat_sample(n) for n in (48_502, 22_729_292, 1 << 27, (1 << 27) + 1, 3_100_000_000)] \
        == [4, 4, 4, 8, 8]


def test_real_genome_and_reads():
    path = LAMBDA
    records = naive.read_records(path)
    index = FMIndex.build(path)
    reads = [seq[:30] for _, seq in naive.read_records(data_file("lambda_reads_1.fq.gz"))[:300]]
    reads += [records[0][1][i : i + 50] for i in range(0, 48_000, 997)]
    want = [naive.dna_hits(records, r) for r in reads]
    assert index.count(reads).tolist() == [len(w) for w in want]
    assert [[tuple(h) for h in hits] for _, hits in index.locate(reads)] == [w[:100] for w in want]


def test_bad_references(tmp_path):
    (tmp_path / "empty.fa").write_text("")
    (tmp_path / "n.fa").write_text(">a\nNNNN\n>b\n\n")
    with pytest.raises(FormatError, match="no records"):
        FMIndex.build(tmp_path / "empty.fa")
    with pytest.raises(FormatError, match="no A, C, G or T"):
        FMIndex.build(tmp_path / "n.fa")


def test_wide_layout_gives_the_same_answers(random_reference, rng, tmp_path):
    """64-bit samples and k-mer rows (used past 2^32 symbols), forced on a small genome: same
    counts and hits, and the .ssx round trip keeps the width."""
    path, records = random_reference
    narrow = FMIndex.build(path, sa_sample=8, repeat_sample=2, kmer=4)
    wide = FMIndex.build(path, sa_sample=8, repeat_sample=2, kmer=4, wide=True)
    assert wide.arrays.samples.dtype == np.uint64 and narrow.arrays.samples.dtype == np.uint32
    assert np.array_equal(wide.arrays.samples, narrow.arrays.samples)
    wide.save(tmp_path / "wide.ssx")
    loaded = FMIndex.load(tmp_path / "wide.ssx")
    assert loaded.arrays.kmer_table.dtype == np.uint64
    reads = reads_for(records, rng, 150)
    want = [naive.dna_hits(records, r) for r in reads]
    for index in (wide, loaded):
        got = index.locate(reads, max_hits=1000)
        assert [c for c, _ in got] == [len(w) for w in want]
        assert [[tuple(h) for h in hits] for _, hits in got] == [w[:1000] for w in want]
        for options in (SearchOptions(kmer_table=False), SearchOptions(shortcut="rank")):
            assert index.searcher(options).count(*encode_reads(reads)).tolist() == [len(w) for w in want]


def unmarked(arrays):
    """The index's arrays with every sampled-row mark cleared: no LF walk can end."""
    blocks = arrays.blocks.copy()
    blocks[:, 6] = 0
    return dataclasses.replace(arrays, blocks=blocks)


@pytest.mark.parametrize("shortcut", ["rank", "verify"])
def test_a_walk_past_the_sample_bound_is_an_error_not_a_hang(random_reference, shortcut):
    """Marks the loader's checks missed would send walks on forever: locate stops each at
    sa_sample steps and reports the index inconsistent (the GPU kernel too: test_gpu.py)."""
    path, records = random_reference
    index = FMIndex.build(path, sa_sample=8)
    seq = max((s for _, s in records), key=len)
    codes, bounds = encode_reads([seq[100:130]])
    searcher = Searcher(unmarked(index.arrays), "ref.ssx", SearchOptions(shortcut=shortcut))
    with pytest.raises(InputError, match="ref.ssx: the index is inconsistent: an LF walk never reached a sampled row"):
        searcher.hits(codes, bounds, max_hits=10)
