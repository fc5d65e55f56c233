"""Construction in pieces (fmindex/pieces.py, build.py's memory limit; issue 29): the suffix
array against the obvious sort, and the index against the one-piece construction, byte for byte."""

import gzip
import re

import numpy as np
import pytest

from seqsift.cli import main
from seqsift.errors import UsageError
from seqsift.fmindex import build, reference
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.build import build_arrays, plan_pieces
from seqsift.fmindex.pieces import PREFIX, Cover, difference_cover, suffix_pieces
from seqsift.fmindex.reference import Reference, load_reference
from seqsift.fmindex.spill import Spill
from seqsift.fmindex.ssx import write_index
from tests import naive
from tests.conftest import LAMBDA, data_file
from tests.fmindex.test_fmindex import reads_for

ARRAYS = ("blocks", "C", "samples", "kmer_table", "packed", "gaps")


def naive_suffix_array(text: np.ndarray) -> list[int]:
    raw = text.tobytes()
    return sorted(range(len(raw)), key=lambda i: raw[i:])


def hostile_text(rng, n: int) -> np.ndarray:
    """Codes with what makes suffix sorting slow or subtle: long runs of one base and of '#',
    a short period repeated, exact and diverged copies, and the one '$' last."""
    text = rng.integers(2, 6, n).astype(np.uint8)
    kind = int(rng.integers(0, 5))
    a, b = sorted(rng.integers(0, n, 2).tolist())
    if kind == 0:
        text[a:b] = 2
    elif kind == 1:
        text[a:b] = 1
    elif kind == 2:
        period = rng.integers(2, 6, int(rng.integers(1, 8))).astype(np.uint8)
        text[a:b] = np.resize(period, b - a)
    elif kind == 3 and b - a > 1:
        copy = text[a:b].copy()
        copy[rng.random(copy.size) < 0.02] = 3
        at = int(rng.integers(0, n - copy.size + 1))
        text[at : at + copy.size] = copy
    text[rng.random(n) < 0.01] = 1
    text[-1] = 0
    return text


def pieced(text: np.ndarray, capacity: int, v: int, threads: int = 1) -> np.ndarray:
    sa = np.full(text.size, -1, np.int64)
    row = 0
    for first, rows in suffix_pieces(text, capacity, v, threads):
        assert first == row and rows.size  # pieces come in row order, none empty
        sa[first : first + rows.size] = rows
        row += rows.size
    assert row == text.size
    return sa


@pytest.mark.parametrize("v", [PREFIX, 9, 16, 64])
@pytest.mark.parametrize("capacity", [1, 50, 1 << 20])
def test_suffix_pieces_match_the_obvious_sort(rng, v, capacity):
    for _ in range(6):
        text = hostile_text(rng, int(rng.integers(1, 700)))
        text[-1] = 0
        assert pieced(text, capacity, v).tolist() == naive_suffix_array(text)


def test_long_runs_and_periods_are_sorted_past_the_cover(rng):
    """Suffixes sharing thousands of symbols (a run of one base, a run of '#', a period of 3)
    are ordered by the difference cover's ranks, after prefix doubling over the sample."""
    for filler in (np.full(1500, 2, np.uint8), np.full(1500, 1, np.uint8), np.resize(np.array([3, 5, 4], np.uint8), 1500)):
        text = np.concatenate((rng.integers(2, 6, 300).astype(np.uint8), filler, filler, np.zeros(1, np.uint8)))
        assert pieced(text, 500, 16).tolist() == naive_suffix_array(text)


def n_runs_text(rng, n: int, ends_in_n: bool) -> np.ndarray:
    """Random bases with runs of '#' (N) from 1 to 2,000 long, some followed by the same 1,100 bases
    (followers alike for more than any cover's v) and some of equal length; '#' before the '$'
    when ends_in_n."""
    text = rng.integers(2, 6, n).astype(np.uint8)
    follower = rng.integers(2, 6, 1100).astype(np.uint8)
    for _ in range(int(rng.integers(2, 9))):
        length = int(rng.choice([1, 7, 8, 9, 40, 300, 300, int(rng.integers(1, 2000))]))
        at = int(rng.integers(0, n - length))
        text[at : at + length] = 1
        if rng.random() < 0.5 and at + length + follower.size < n:
            text[at + length : at + length + follower.size] = follower
    text[int(rng.integers(0, n - 300)) :][:300] = 1  # one long run at least
    if ends_in_n:
        text[-int(rng.integers(1, 600)) :] = 1
    text[-1] = 0
    return text


@pytest.mark.parametrize("v,capacity", [(PREFIX, 1), (16, 37), (64, 1 << 20), (1024, 37)])
def test_suffixes_in_long_n_runs_are_written_in_order(rng, v, capacity):
    """The bucket of '#' runs (runs.py, put in order without a sort): against the obvious sort,
    with the runs' suffixes cut into parts of `capacity` (1: every row a piece)."""
    for ends_in_n in (False, True):
        for _ in range(2):
            text = n_runs_text(rng, int(rng.integers(3000, 5000)), ends_in_n)
            want = naive_suffix_array(text)
            sa = pieced(text, capacity, v)
            assert sa.tolist() == want
            in_runs = [rows.size for _, rows in suffix_pieces(text, capacity, v)
                       if (text[rows[0] : rows[0] + PREFIX] == 1).sum() == PREFIX]
            assert in_runs and max(in_runs) <= capacity  # however many suffixes the '#' bucket holds


@pytest.mark.parametrize("threads", [2, 3])
def test_buckets_sorted_on_threads_give_the_same_rows(rng, threads):
    """A piece's buckets sorted at once, runs of them on each thread (pieces._parts): the rows of
    the obvious sort, whatever thread sorted which bucket."""
    for make in (hostile_text, lambda rng, n: n_runs_text(rng, n, False)):
        for _ in range(3):
            text = make(rng, int(rng.integers(1500, 4000)))
            assert pieced(text, int(rng.integers(200, 2000)), 16, threads).tolist() == naive_suffix_array(text)


def test_an_index_of_a_reference_with_long_n_runs_is_the_same_in_small_pieces(tmp_path, rng):
    """Records with runs of N (thousands long, one at a record's end, one at the reference's
    end): the .ssx written from pieces of 1/50 of the text equals the one-piece file."""
    bases = lambda k: "".join(rng.choice(list("ACGT"), k))  # noqa: E731
    records = [("chr1", bases(3000) + "N" * 5000 + bases(2000) + "N" * 900 + bases(50)),
               ("chr2", "N" * 2500 + bases(4000) + "N" * 5000),
               ("chr3", bases(1000) + "N" * 5000 + bases(1000) + "N" * 700)]
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    ref = load_reference(path)
    one, pieces = tmp_path / "one.ssx", tmp_path / "pieces.ssx"
    FMIndex(ref, build_arrays(ref, sa_sample=8, kmer=4), "ref").save(one)
    FMIndex(ref, build_arrays(ref, sa_sample=8, kmer=4, piece=ref.text.size // 50), "ref").save(pieces)
    assert one.read_bytes() == pieces.read_bytes()
    FMIndex(ref, build_arrays(ref, sa_sample=8, kmer=4, piece=ref.text.size // 50, threads=2), "ref").save(pieces)
    assert one.read_bytes() == pieces.read_bytes()


@pytest.mark.parametrize("v", [8, 13, 64, 1024, 4096])
def test_the_difference_cover_covers_every_difference(v):
    cover = difference_cover(v)
    assert cover.size <= 2 * (int(np.sqrt(v - 1)) + 1)
    assert {(b - a) % v for a in cover.tolist() for b in cover.tolist()} == set(range(v))
    delta = Cover(v).delta
    for i, j in [(0, 1), (5, 3), (v - 1, 2)]:
        t = int(delta[i % v, j % v])
        assert t < v and (i + t) % v in cover and (j + t) % v in cover
        assert not any((i + s) % v in cover and (j + s) % v in cover for s in range(t))


def test_a_cover_shorter_than_the_buckets_prefix_is_refused():
    with pytest.raises(ValueError, match="prefix"):
        Cover(PREFIX - 1)


def same_arrays(a, b) -> None:
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


@pytest.mark.parametrize("sa_sample,repeat_sample,kmer,wide", [(32, None, None, False), (8, 2, 3, True),
                                                               (1, 0, 0, False), (7, 4, 6, False)])
def test_pieces_give_the_one_piece_index_on_random_references(rng, monkeypatch, sa_sample, repeat_sample, kmer, wide):
    """Pieces of 1 to 1000 suffixes, rows filled in windows of 5 or of the default."""
    for _ in range(3):
        text = hostile_text(rng, int(rng.integers(2, 3000)))
        ref = Reference(text=text, names=["a"], starts=np.zeros(1, np.int64), lengths=np.array([text.size - 1]))
        one = build_arrays(ref, sa_sample, repeat_sample, kmer, wide)
        for piece in (1, 97, 1000):
            same_arrays(one, build_arrays(ref, sa_sample, repeat_sample, kmer, wide, piece=piece))
        monkeypatch.setattr(build, "WINDOW", 5)
        same_arrays(one, build_arrays(ref, sa_sample, repeat_sample, kmer, wide, piece=400))
        same_arrays(one, build_arrays(ref, sa_sample, repeat_sample, kmer, wide))
        monkeypatch.undo()


@pytest.mark.parametrize("path", [data_file("klebsiella_HS11286.fa.gz"), LAMBDA], ids=["klebsiella", "lambda"])
def test_pieces_give_the_same_index_file_on_real_references(tmp_path, path):
    """Written .ssx files equal byte for byte: one piece, and pieces of 1/20 of the genome on one
    thread and on two."""
    ref = load_reference(path)
    one, pieces = tmp_path / "one.ssx", tmp_path / "pieces.ssx"
    FMIndex(ref, build_arrays(ref), "ref").save(one)
    for threads in (1, 2):
        FMIndex(ref, build_arrays(ref, piece=ref.text.size // 20, threads=threads), "ref").save(pieces)
        assert one.read_bytes() == pieces.read_bytes()


def test_search_on_an_index_built_in_pieces_matches_the_oracle(tmp_path, rng):
    records = [(f"chr{i}", "".join(rng.choice(list("ACGT"), int(rng.integers(50, 2500))))) for i in range(4)]
    records.append(("copy", records[0][1][:1500] + "N" * 30 + records[1][1][:800]))  # repeats and an N run
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    ref = load_reference(path)
    index = FMIndex(ref, build_arrays(ref, sa_sample=8, repeat_sample=2, kmer=4, piece=300), "ref")
    reads = reads_for(records, rng, 200)
    want = [naive.dna_hits(records, r) for r in reads]
    got = index.locate(reads, max_hits=10_000)
    assert [c for c, _ in got] == [len(w) for w in want]
    assert [[tuple(h) for h in hits] for _, hits in got] == want


def test_a_narrow_width_forced_small_makes_positions_past_it_64_bit(tmp_path, rng, monkeypatch):
    """Past NARROW symbols samples and k-mer rows are 64-bit: with NARROW made 1,000 (a test-only
    width), a 6,000-symbol reference is built, saved and searched wide, in pieces, and its hits
    past the width are exact."""
    monkeypatch.setattr(build, "NARROW", 1000)
    records = [(f"chr{i}", "".join(rng.choice(list("ACGT"), 1500))) for i in range(4)]
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    ref = load_reference(path)
    index = FMIndex(ref, build_arrays(ref, sa_sample=8, kmer=3, piece=700), "ref")
    assert index.arrays.samples.dtype == np.uint64 and index.arrays.kmer_table.dtype == np.uint64
    index.save(tmp_path / "wide.ssx")
    loaded = FMIndex.load(tmp_path / "wide.ssx")
    reads = [records[3][1][k : k + 30] for k in range(0, 1400, 97)]  # all past text position 4,500
    want = [naive.dna_hits(records, r) for r in reads]
    assert all(hit[1] + 4 * 1501 > 1000 for w in want for hit in w)
    for searched in (index, loaded):
        assert [[tuple(h) for h in hits] for _, hits in searched.locate(reads, max_hits=100)] == want


def test_memory_decides_one_piece_or_pieces():
    n = 1 << 30
    assert plan_pieces(n, 64 << 30, held=2 * n) == 0  # one-piece sort fits
    capacity = plan_pieces(n, 4 * n, held=2 * n)
    assert 0 < capacity < n
    assert plan_pieces(n, 5 * n, held=2 * n) > capacity
    assert plan_pieces(n, 4 * n, held=2 * n, threads=4) < capacity  # each sorting thread's own memory
    assert plan_pieces(n, 64 << 30, held=2 * n, threads=64) == 0  # threads never turn one piece into pieces
    with pytest.raises(UsageError, match="too little"):
        plan_pieces(n, 2 * n, held=2 * n)


def test_index_memory_option(tmp_path, capsys):
    """`seqsift index --memory`: a limit the one-piece sort fits in writes the default's file; one
    below what the index itself needs is a usage error (exit 2) naming --memory, no file written.
    (Small genomes never sort in pieces by --memory: the pieces' own tables outweigh their sort.)"""
    fasta = data_file("klebsiella_HS11286.fa.gz")
    assert main(["index", str(fasta), "-o", str(tmp_path / "default.ssx"), "--quiet"]) == 0
    assert main(["index", str(fasta), "-o", str(tmp_path / "roomy.ssx"), "--memory", "8G", "--quiet"]) == 0
    assert (tmp_path / "default.ssx").read_bytes() == (tmp_path / "roomy.ssx").read_bytes()
    assert main(["index", str(fasta), "-o", str(tmp_path / "none.ssx"), "--memory", "1M"]) == 2
    err = capsys.readouterr().err
    assert "--memory" in err and not (tmp_path / "none.ssx").exists()
    least = re.search(r"need at least (\d+\.\d\d) GiB", err).group(1)  # given back as written
    assert main(["index", str(fasta), "-o", str(tmp_path / "least.ssx"), "--memory", f"{least}G", "--quiet"]) == 0
    assert (tmp_path / "default.ssx").read_bytes() == (tmp_path / "least.ssx").read_bytes()


def naive_text(records) -> list[int]:
    """Codes of records joined by '#' (any letter but ACGT as '#'), '$' last."""
    code = {"A": 2, "C": 3, "G": 4, "T": 5}
    return [c for i, (_, seq) in enumerate(records) for c in ([1] if i else []) + [code.get(b, 1) for b in seq]] + [0]


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_records_cut_across_reading_batches_are_joined(tmp_path, monkeypatch, rng, compressed):
    """Batches of 7 bases, and (gzip) a text many times the file's size, so its room is grown."""
    records = [(f"r{i}", "".join(rng.choice(list("ACGTN"), int(rng.integers(0, 200))))) for i in range(8)]
    if compressed:
        records.append(("run", "ACGT" * 300_000))
    path = tmp_path / ("ref.fa.gz" if compressed else "ref.fa")
    raw = "".join(f">{n}\n{s}\n" for n, s in records).encode()
    path.write_bytes(gzip.compress(raw) if compressed else raw)
    whole = load_reference(path)
    assert whole.text.tolist() == naive_text(records)
    monkeypatch.setattr(reference, "BATCH_BASES", 7)
    cut = load_reference(path)
    assert cut.names == whole.names == [n for n, _ in records]
    for name in ("text", "starts", "lengths"):
        assert np.array_equal(getattr(cut, name), getattr(whole, name))
    assert whole.lengths.tolist() == [len(s) for _, s in records]


def written(path, ref, arrays) -> bytes:
    write_index(path, ref, arrays, "ref")
    return path.read_bytes()


@pytest.mark.parametrize("threads", [1, 2])
def test_spilled_arrays_give_the_same_index_file(tmp_path, rng, monkeypatch, threads):
    """Rank blocks, samples and k-mer table written to temporary files as they are filled
    (spill.py), in one piece and in pieces, rows filled in windows of 5, 64 and 1000: the .ssx of
    the arrays held in memory, byte for byte, and no temporary file left behind."""
    spills = tmp_path / "spills"
    spills.mkdir()
    for sa_sample, repeat_sample, kmer, wide in [(8, 2, 3, False), (1, 0, 0, True), (32, None, None, False),
                                                 (4, 2, 7, True)]:  # k=7: more codes than suffixes, most absent
        text = hostile_text(rng, int(rng.integers(2, 3000)))
        ref = Reference(text=text, names=["a"], starts=np.zeros(1, np.int64), lengths=np.array([text.size - 1]))
        want = written(tmp_path / "one.ssx", ref, build_arrays(ref, sa_sample, repeat_sample, kmer, wide))
        for window in (5, 64, 1000):
            monkeypatch.setattr(build, "WINDOW", window)
            for piece in (None, 1, 97):
                arrays = build_arrays(ref, sa_sample, repeat_sample, kmer, wide, piece=piece, threads=threads,
                                      spill_dir=str(spills))
                spilled = (arrays.blocks, arrays.samples, arrays.kmer_table)
                assert all(isinstance(array, Spill) for array in spilled)
                assert written(tmp_path / "spilled.ssx", ref, arrays) == want
                for array in spilled:
                    array.close()
                assert not list(spills.iterdir())


def test_seqsift_index_in_pieces_writes_the_in_memory_index(tmp_path, monkeypatch):
    """`seqsift index` (FMIndex.build_file: spilled, the text let go before writing) in pieces of
    1/20 of Klebsiella on one thread and two: the file FMIndex.build(...).save() writes."""
    fasta = data_file("klebsiella_HS11286.fa.gz")
    FMIndex.build(fasta).save(tmp_path / "memory.ssx")
    want = (tmp_path / "memory.ssx").read_bytes()
    monkeypatch.setattr(build, "plan_pieces", lambda n, *args, **kwargs: n // 20)
    for threads in ("1", "2"):
        assert main(["index", str(fasta), "-o", str(tmp_path / "cli.ssx"), "-t", threads, "--quiet"]) == 0
        assert (tmp_path / "cli.ssx").read_bytes() == want
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli.ssx", "memory.ssx"]


def test_seqsift_index_to_standard_output_writes_the_file(tmp_path, capsysbinary):
    """`-o -`: the index on stdout (blocks and samples spilled to the system's temporary
    directory), the bytes of the file `-o FILE` writes, and the summary on stderr."""
    assert main(["index", str(LAMBDA), "-o", str(tmp_path / "lambda.ssx"), "--quiet"]) == 0
    capsysbinary.readouterr()
    assert main(["index", str(LAMBDA), "-o", "-"]) == 0
    out, err = capsysbinary.readouterr()
    assert out == (tmp_path / "lambda.ssx").read_bytes() and b"48,502 bases" in err
