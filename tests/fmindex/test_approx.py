"""Approximate search (`--errors E`, both distances) against the every-start oracle in naive.py."""

import numpy as np
import pytest

from seqsift.errors import UsageError
from seqsift.fmindex import _verify_cpu
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.reference import READ_CODE
from tests import naive
from tests.conftest import LAMBDA, data_file


def _random(rng, n, letters="ACGT"):
    return "".join(rng.choice(list(letters), n))


def _mutate(rng, seq, edits, distance, at_ends=False):
    """seq with `edits` random substitutions (hamming) or substitutions/insertions/deletions."""
    seq = list(seq)
    for _ in range(edits):
        if not seq:
            break
        i = int(rng.choice([0, len(seq) - 1])) if at_ends else int(rng.integers(0, len(seq)))
        kind = 0 if distance == "hamming" else int(rng.integers(0, 3))
        if kind == 0:
            seq[i] = rng.choice([b for b in "ACGT" if b != seq[i]])
        elif kind == 1:
            seq.insert(i, rng.choice(list("ACGT")))
        elif len(seq) > 1:
            del seq[i]
    return "".join(seq)


@pytest.fixture
def repeats_reference(tmp_path, rng):
    """Small records with planted near-copies, N runs, a palindrome and a tiny record."""
    unit = _random(rng, 30)
    records = []
    for i in range(3):
        parts = [_random(rng, int(rng.integers(20, 60)))]
        for _ in range(2):
            parts += [_mutate(rng, unit, int(rng.integers(0, 3)), "edit"), _random(rng, int(rng.integers(0, 20)))]
        seq = "".join(parts)
        k = int(rng.integers(0, len(seq) - 4))
        seq = seq[:k] + "NN" + seq[k + 2 :]
        records.append((f"chr{i}", seq))
    half = _random(rng, 12)
    records.append(("pal", _random(rng, 10) + half + naive.reverse_complement(half) + _random(rng, 10)))
    records.append(("tiny", _random(rng, 15)))
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    return path, records


def _reads(records, rng, errors, distance, count):
    joined = [s for _, s in records]
    reads = []
    for k in range(count):
        m = int(rng.integers(max(errors + 1, 8), 30))
        seq = joined[int(rng.integers(0, len(joined)))]
        kind = k % 5
        if kind < 3 and len(seq) > m:
            s = int(rng.integers(0, len(seq) - m + 1))
            read = seq[s : s + m]
            if rng.random() < 0.5:
                read = naive.reverse_complement(read)
            read = _mutate(rng, read, int(rng.integers(0, errors + 2)), distance, at_ends=kind == 2)
        elif kind == 3:
            read = _random(rng, m, "ACGTN" if rng.random() < 0.5 else "ACGT")
        else:  # longer than the tiny record, or a whole record with errors
            read = _mutate(rng, seq, int(rng.integers(0, errors + 1)), distance)[:40] + "A" * int(rng.integers(0, 3))
        if len(read) <= errors:
            read += "ACGT"
        reads.append(read)
    return reads


@pytest.mark.parametrize("distance", ["hamming", "edit"])
@pytest.mark.parametrize("errors", [1, 2, 3, 4])
def test_every_place_within_errors_matches_the_oracle(repeats_reference, rng, distance, errors):
    path, records = repeats_reference
    index = FMIndex.build(path, sa_sample=4, kmer=3)
    reads = _reads(records, rng, errors, distance, 25)
    want = [naive.approx_hits(records, r, errors, distance) for r in reads]
    got = index.locate(reads, max_hits=1000, errors=errors, distance=distance)
    for read, w, (count, hits) in zip(reads, want, got):
        assert (count, [tuple(h) for h in hits]) == (len(w), w), read
    assert index.count(reads, errors=errors, distance=distance).tolist() == [len(w) for w in want]


@pytest.mark.parametrize("distance", ["hamming", "edit"])
def test_max_hits_and_best_only_cut_the_list_not_the_count(repeats_reference, rng, distance):
    path, records = repeats_reference
    index = FMIndex.build(path)
    reads = _reads(records, rng, 3, distance, 30)
    full = index.locate(reads, max_hits=1000, errors=3, distance=distance)
    for (count, hits), (c2, two) in zip(full, index.locate(reads, max_hits=2, errors=3, distance=distance)):
        assert c2 == count and two == hits[:2]
    for (count, hits), (c2, best) in zip(full, index.locate(reads, max_hits=1000, errors=3, distance=distance,
                                                             best_only=True)):
        assert c2 == count
        assert best == [h for h in hits if h.differences == hits[0].differences]


def test_errors_zero_is_the_exact_search(repeats_reference, rng):
    path, records = repeats_reference
    index = FMIndex.build(path)
    reads = _reads(records, rng, 0, "hamming", 30)
    assert index.locate(reads, errors=0, distance="hamming") == index.locate(reads)


def test_lambda_genome_hamming_and_edit(rng):
    records = naive.read_records(LAMBDA)
    index = FMIndex.build(LAMBDA)
    genome = records[0][1]
    reads = []
    for k in range(10):
        s = int(rng.integers(0, len(genome) - 60))
        read = genome[s : s + 50]
        reads.append(_mutate(rng, read if k % 2 else naive.reverse_complement(read), 2, "edit", at_ends=k < 2))
    for distance in ("hamming", "edit"):
        want = [naive.approx_hits(records, r, 2, distance, seeded=True) for r in reads]
        got = index.locate(reads, errors=2, distance=distance)
        assert [(c, [tuple(h) for h in hits]) for c, hits in got] == [(len(w), w) for w in want]


@pytest.mark.parametrize("errors", [1, 3])
def test_klebsiella_records_hamming_and_edit(rng, errors):
    """The real genome's slice in tests/data (a chromosome stretch and two plasmids): reads from
    every record, both strands, errors anywhere, against the seeded oracle."""
    path = data_file("klebsiella_HS11286.fa.gz")
    records = naive.read_records(path)
    index = FMIndex.build(path)
    reads = []
    for k in range(12):
        name, genome = records[k % len(records)]
        s = int(rng.integers(0, len(genome) - 120))
        read = genome[s : s + 100]
        reads.append(_mutate(rng, read if k % 2 else naive.reverse_complement(read), int(rng.integers(0, errors + 1)),
                             "edit", at_ends=k % 5 == 0))
    for distance in ("hamming", "edit"):
        want = [naive.approx_hits(records, r, errors, distance, seeded=True) for r in reads]
        got = index.locate(reads, errors=errors, distance=distance, threads=2)
        assert [(c, [tuple(h) for h in hits]) for c, hits in got] == [(len(w), w) for w in want]
        assert sum(len(w) for w in want) >= 6  # most reads are found (hamming misses the indel reads)


def test_bad_parameters_are_named(repeats_reference):
    index = FMIndex.build(repeats_reference[0])
    with pytest.raises(UsageError, match="distance"):
        index.locate(["ACGTACGT"], errors=1, distance="levenshtein")
    with pytest.raises(UsageError, match="errors"):
        index.locate(["ACGTACGT"], errors=-1)
    with pytest.raises(UsageError, match="errors 3 needs reads longer"):
        index.locate(["ACG"], errors=3)


def _dp_start_scores(read, window):
    """Every start's fewest edits over all ends, by the oracle's dynamic program."""
    return [naive.edit_distance_from(read, window, s, len(window)) for s in range(len(window))]


@pytest.mark.parametrize("m", [1, 5, 63, 64, 65, 130])
def test_myers_start_scores_equal_the_dynamic_program(rng, m):
    for _ in range(5):
        read = _random(rng, m, "ACGTN" if rng.random() < 0.3 else "ACGT")
        window = _mutate(rng, read, int(rng.integers(0, 6)), "edit") + _random(rng, int(rng.integers(0, 10)))
        window = _random(rng, int(rng.integers(0, 10))) + window
        r = READ_CODE[np.frombuffer(read.encode(), np.uint8)]
        w = READ_CODE[np.frombuffer(window.encode(), np.uint8)]
        w = np.where(w > 3, _verify_cpu.NO_BASE, w).astype(np.uint8)
        words = (m + 63) // 64
        out = np.empty(len(window), np.int64)
        _verify_cpu.myers_start_scores(r, m, w, len(window), np.empty((4, words), np.uint64),
                                       np.empty(words, np.uint64), np.empty(words, np.uint64), out)
        assert out.tolist() == _dp_start_scores(read, window)


@pytest.mark.parametrize("distance", ["hamming", "edit"])
def test_the_seeded_oracle_equals_the_every_start_oracle(repeats_reference, rng, distance):
    records = repeats_reference[1]
    for read in _reads(records, rng, 3, distance, 10):
        assert naive.approx_hits(records, read, 3, distance, seeded=True) == naive.approx_hits(records, read, 3, distance)
