"""alignment.reads (align --outfmt sam): the reads in the lanes and each target cut into windows
give stream.search's hits exactly (targets, scores, tie-breaking, every alignment column), local
and semi-global, on seeded reads with substitutions and indels from long targets with repeats,
on both strands."""

import numpy as np
import pytest

from seqsift.alignment import dna, reads
from seqsift.alignment.stream import DatabaseParts, search
from tests import naive
from tests.alignment.test_stream import write_fasta


def mutated(rng, seq: str, rate: float) -> str:
    """seq with substitutions, 1-3 base insertions and deletions at about `rate` a base."""
    out, k = [], 0
    while k < len(seq):
        roll = rng.random()
        if roll < rate / 3:
            out.append("ACGT"[int(rng.integers(4))])
            k += 1
        elif roll < 2 * rate / 3:
            out.append("".join(rng.choice(list("ACGT"), int(rng.integers(1, 4)))))
        elif roll < rate:
            k += int(rng.integers(1, 4))
        else:
            out.append(seq[k])
            k += 1
    return "".join(out)


@pytest.fixture
def case(tmp_path, rng):
    unit = "".join(rng.choice(list("ACGT"), 150))  # a repeat: copies tie within and across targets
    targets = ["".join(rng.choice(list("ACGT"), n)) for n in (5000, 2600, 40, 0, 900)]
    targets[0] = targets[0][:1000] + unit + targets[0][1000:3000] + naive.reverse_complement(unit) + targets[0][3000:]
    targets[1] = targets[1][:700] + unit + targets[1][700:]
    records = [(f"t{k}", t) for k, t in enumerate(targets)]
    queries = []
    for k in range(40):
        t = targets[k % 2] if k % 5 else unit
        at = int(rng.integers(0, len(t) - 120))
        read = mutated(rng, t[at : at + int(rng.integers(20, 120))], 0.08)
        queries.append((f"r{k}", read if k % 3 else naive.reverse_complement(read)))
    queries += [("random", "".join(rng.choice(list("ACGT"), 60))), ("short", "AC"), ("empty", ""),
                ("with-n", "ACGTNNNNACGT" + targets[4][100:160])]
    sequences = [(name, s.encode()) for name, s in queries]
    both = [q for name, s in sequences for q in ((name, s), (name, naive.reverse_complement(s.decode()).encode()))]
    return write_fasta(tmp_path / "targets.fa", records), both


@pytest.mark.parametrize("mode", reads.MODES)
@pytest.mark.parametrize("scoring", [dna(), dna(2, -3, 5, 2), dna(1, -1, 0, 1)])
@pytest.mark.parametrize("window", [0, 1 << 10])  # many short windows, and the default
def test_the_same_hits_as_the_whole_targets(case, threads, scoring, window, mode, monkeypatch):
    path, queries = case
    monkeypatch.setattr(reads, "MIN_WINDOW", window)
    monkeypatch.setattr(reads, "WINDOW_REACHES", 1 if window == 0 else reads.WINDOW_REACHES)
    for db_batch, query_batch in ((1 << 20, 1 << 20), (3000, 700)):  # one part and batch; several
        want = list(search(queries, DatabaseParts(path, scoring, db_batch), 3, mode, "cpu", 1, query_batch))
        got = list(reads.search(queries, DatabaseParts(path, scoring, db_batch), 3, "cpu", threads, query_batch, mode))
        assert got == want
    assert any(len({h.score for h in hits}) < len(hits) for _, _, hits in want)  # ties were met
    assert max(h.alignment.cigar.count("I") + h.alignment.cigar.count("D") for _, _, hits in want for h in hits) > 1


def test_reach_bounds_every_alignment(rng):
    """No local alignment of a read scoring at least S spans more target columns than reach(): a
    read aligned across a long deletion, at the score the deletion leaves."""
    scoring = dna(1, -1, 0, 2)
    target = "".join(rng.choice(list("ACGT"), 400))
    read = target[:100] + target[130:230]  # 30 target bases deleted: 200 - 30 * 2 = 140
    score = naive.alignment_score(read, target, lambda a, b: 1 if a == b else -1, 0, 2, "local")
    assert score >= 140 and reads.reach(len(read), score, scoring) >= 230
    assert reads.reach(50, 50, scoring) == 50 and reads.reach(50, 1, scoring) == 50 + 49 // 2
    assert np.all([reads.reach(n, 2 * n, dna(2, -3, 5, 2)) == n for n in (0, 1, 77)])
