"""`seqsift align` in bounded batches: a database read in parts and queries in batches give the
result of one in-memory database (same hits, same order, same tie-breaking), on seeded random data."""

import pytest

from seqsift.alignment import Database, dna, matrix, search_database
from seqsift.alignment.stream import DatabaseParts, search
from seqsift.cli import main
from seqsift.io.fastx import record_batches
from tests import naive

PROTEIN = list("ACDEFGHIKLMNPQRSTVWY")


def write_fasta(path, records, width=13):
    path.write_text("".join(f">{n}\n" + "".join(s[k : k + width] + "\n" for k in range(0, len(s), width))
                            for n, s in records))
    return path


def random_database(rng, letters, n=60):
    seqs = ["".join(rng.choice(letters, int(rng.integers(0, 90)))) for _ in range(n)]
    for k in range(0, n - 10, 9):  # copies far apart: ties broken by database order across parts
        seqs[k + 9] = seqs[k]
    return [(f"s{k}", s) for k, s in enumerate(seqs)]


@pytest.mark.parametrize("mode", ["local", "global", "semi-global"])
@pytest.mark.parametrize("db_batch,query_batch", [(1, 1), (37, 20), (200, 1000)])
def test_tiny_batches_equal_one_batch(tmp_path, rng, threads, mode, db_batch, query_batch):
    scoring = matrix("BLOSUM62", 11, 1)
    records = random_database(rng, PROTEIN)
    seqs = [s for _, s in records]
    queries = [(f"q{k}", seqs[int(rng.integers(0, len(seqs)))][3:40].encode()) for k in range(6)]
    queries += [("random", "".join(rng.choice(PROTEIN, 50)).encode()), ("empty", b"")]
    whole = search_database([q for _, q in queries], Database([n for n, _ in records], seqs, scoring), top=7,
                            mode=mode)
    parts = DatabaseParts(write_fasta(tmp_path / "db.fa", records), scoring, db_batch)
    streamed = list(search(queries, parts, 7, mode, "cpu", threads, query_batch))
    assert [(name, seq) for name, seq, _ in streamed] == queries
    assert [hits for _, _, hits in streamed] == whole
    assert parts.total_residues == sum(map(len, seqs))


def test_streamed_hits_follow_the_oracle(tmp_path, rng):
    scoring = matrix("BLOSUM62", 11, 1)
    records = random_database(rng, PROTEIN, 25)
    letters = set("".join(s for _, s in records)) | set(PROTEIN)
    table = {(a, b): int(scoring.matrix[scoring.encode(a)[0], scoring.encode(b)[0]]) for a in letters for b in letters}
    queries = [("q0", records[3][1][2:30].encode()), ("q1", "".join(rng.choice(PROTEIN, 25)).encode())]
    parts = DatabaseParts(write_fasta(tmp_path / "db.fa", records), scoring, 1)
    for name, q, hits in search(queries, parts, 6, "local", "cpu", 1, 1):
        scores = [naive.alignment_score(q.decode(), s, lambda a, b: table[a, b], 11, 1, "local") for _, s in records]
        assert [(-h.score, h.target) for h in hits] == sorted((-score, k) for k, score in enumerate(scores))[:6]
        assert [h.name for h in hits] == [records[h.target][0] for h in hits]


def test_parts_of_a_database_are_bounded(tmp_path, rng):
    records = random_database(rng, list("ACGT"), 40)
    parts = DatabaseParts(write_fasta(tmp_path / "db.fa", records), dna(), 100)
    seen = []
    for first, db in parts:
        assert first == len(seen)
        assert db.residues() < 100 + 90 or len(db) == 1
        seen += db.names
    assert seen == [n for n, _ in records]
    assert len(list(parts)) > 1  # several parts: read again, not kept


def test_record_batches_join_records_cut_by_the_reader(tmp_path, rng):
    records = [(f"r{k}", "".join(rng.choice(list("ACGTN"), int(rng.integers(0, 3000))))) for k in range(30)]
    path = write_fasta(tmp_path / "r.fa", records, width=61)
    for size in (1, 50, 1000, 1 << 20):
        batches = list(record_batches(path, size))
        assert [(n, s.decode()) for batch in batches for n, s in batch] == naive.read_records(path)
        assert all(batch for batch in batches)
        if size == 1000:
            assert all(sum(len(s) for _, s in batch[:-1]) < 1000 for batch in batches)


@pytest.mark.parametrize("outfmt", ["6 qseqid sseqid score slen qlen evalue bitscore cigar", "pair"])
def test_align_command_in_tiny_batches_equals_one_batch(tmp_path, rng, outfmt):
    records = random_database(rng, PROTEIN, 50)
    db = write_fasta(tmp_path / "db.fa", records)
    q = write_fasta(tmp_path / "q.fa", [(f"q{k}", s[5:60]) for k, (_, s) in enumerate(records[::7])])
    common = ["align", "-q", str(q), str(db), "--top", "5", "--outfmt", outfmt]
    assert main([*common, "-o", str(tmp_path / "one.txt")]) == 0
    assert main([*common, "--db-batch", "60", "--query-batch", "1", "-o", str(tmp_path / "tiny.txt")]) == 0
    assert (tmp_path / "tiny.txt").read_text() == (tmp_path / "one.txt").read_text()
    assert (tmp_path / "one.txt").read_text().count("\n") >= 5


def test_align_sam_in_tiny_batches_lists_every_database_sequence(tmp_path, rng):
    records = random_database(rng, list("ACGT"), 30)
    db = write_fasta(tmp_path / "db.fa", records)
    q = write_fasta(tmp_path / "q.fa", [(f"q{k}", s[2:50]) for k, (_, s) in enumerate(records[::5])])
    common = ["align", "-q", str(q), str(db), "--dna", "--top", "3", "--outfmt", "sam"]
    assert main([*common, "-o", str(tmp_path / "one.sam")]) == 0
    assert main([*common, "--db-batch", "50", "--query-batch", "10", "-o", str(tmp_path / "tiny.sam")]) == 0
    one = (tmp_path / "one.sam").read_text()
    assert (tmp_path / "tiny.sam").read_text() == one
    assert [line.split("\t")[1] for line in one.splitlines() if line.startswith("@SQ")] == [f"SN:{n}" for n, _ in records]
