"""`seqsift align` end to end: BLAST tabular and custom columns, readable pairs, SAM, bad input."""

import numpy as np
import pysam
import pytest

from seqsift.alignment import matrix
from seqsift.alignment import reference as ref
from seqsift.alignment.database import score_pair
from seqsift.cli import main
from tests import naive
from tests.conftest import LAMBDA, data_file


@pytest.fixture(scope="module")
def proteins(tmp_path_factory):
    """Two real queries and 150 real database proteins."""
    tmp = tmp_path_factory.mktemp("prot")
    queries = [r for r in naive.read_records(data_file("proteins_query.fa.gz")) if len(r[1]) >= 150][:2]
    db = naive.read_records(data_file("proteins_db.fa.gz"))[:150]
    db.append(("copy_of_q0", queries[0][1][10:120]))
    q_path, db_path = tmp / "q.fa", tmp / "db.fa"
    q_path.write_text("".join(f">{n} a description\n{s}\n" for n, s in queries))
    db_path.write_text("".join(f">{n}\n{s}\n" for n, s in db))
    return q_path, db_path, queries, db


def test_blast_tabular_top_hits(tmp_path, proteins):
    q_path, db_path, queries, db = proteins
    out = tmp_path / "out.tsv"
    assert main(["align", str(q_path), str(db_path), "--top", "3", "-o", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert len(rows) == 6 and all(len(r) == 12 for r in rows)
    scoring = matrix("BLOSUM62", 11, 1)
    names = [n for n, _ in db]
    for k, (qname, qseq) in enumerate(queries):
        all_scores = [score_pair(scoring.encode(qseq), scoring.encode(s), scoring, ref.LOCAL) for _, s in db]
        best = sorted(range(len(db)), key=lambda i: (-all_scores[i], i))[:3]
        assert [r[1] for r in rows[3 * k : 3 * k + 3]] == [names[i] for i in best]
        assert all(r[0] == qname for r in rows[3 * k : 3 * k + 3])
    top = rows[0]
    assert top[1] == "copy_of_q0" and float(top[2]) == 100.0 and top[3] == "110"
    assert (top[6], top[7], top[8], top[9]) == ("11", "120", "1", "110")
    assert float(top[10]) < 1e-40 and float(top[11]) > 200


@pytest.mark.parametrize("fmt", ["6", "7"])
def test_columns_of_scores_alone_run_no_traceback(tmp_path, proteins, monkeypatch, capsys, fmt):
    """Names, scores, e-values and lengths need no alignment: a report of those alone runs no
    traceback (the reference kernel fails here if called) and prints what the same columns of a
    full report print; a single column that needs the alignment brings the traceback back."""
    from seqsift.alignment import database

    q_path, db_path, _, _ = proteins
    light = "qseqid sseqid score evalue bitscore qlen slen"
    full, out = tmp_path / "full.tsv", tmp_path / "out.tsv"
    assert main(["align", str(q_path), str(db_path), "--top", "5", "--outfmt", f"{fmt} {light} qstart",
                 "-o", str(full)]) == 0

    def refused(*args, **kwargs):
        raise AssertionError("a traceback ran")

    monkeypatch.setattr(database, "align_codes", refused)
    assert main(["align", str(q_path), str(db_path), "--top", "5", "--outfmt", f"{fmt} {light}", "-o", str(out)]) == 0
    want = [line.rsplit("\t", 1)[0] if not line.startswith("#") else line for line in full.read_text().splitlines()]
    got = out.read_text().splitlines()
    assert [line for line in got if not line.startswith("# Fields")] == \
        [line for line in want if not line.startswith("# Fields")]
    assert len([line for line in got if not line.startswith("#")]) == 10
    capsys.readouterr()
    assert main(["align", str(q_path), str(db_path), "--outfmt", f"{fmt} {light} pident", "-o", str(out)]) != 0
    assert "a traceback ran" in capsys.readouterr().err


def test_custom_columns_pair_and_sam(tmp_path, proteins):
    q_path, db_path, queries, db = proteins
    out = tmp_path / "out.tsv"
    assert main(["align", str(q_path), str(db_path), "--top", "1", "--outfmt", "6 qseqid sseqid score cigar qlen",
                 "-o", str(out)]) == 0
    first = out.read_text().splitlines()[0].split("\t")
    assert first[1] == "copy_of_q0" and first[3] == "110M" and first[4] == str(len(queries[0][1]))
    assert main(["align", str(q_path), str(db_path), "--top", "1", "--outfmt", "pair", "-o", str(out)]) == 0
    assert "Query        11  " in out.read_text() and "|||||" in out.read_text()
    genome = naive.read_records(LAMBDA)[0][1]
    rng = np.random.default_rng(4)
    reads = tmp_path / "reads.fa"
    reads.write_text("".join(f">r{i}\n{genome[p : p + 80]}\n" for i, p in enumerate(rng.integers(0, 40000, 5))))
    targets = tmp_path / "targets.fa"
    targets.write_text(f">left\n{genome[:24000]}\n>right\n{genome[24000:]}\n")
    sam = tmp_path / "out.sam"
    assert main(["align", str(reads), str(targets), "--dna", "--match", "2", "--mismatch", "-3", "--gap-open", "5",
                 "--gap-extend", "2", "--top", "1", "--outfmt", "sam", "-o", str(sam)]) == 0
    with pysam.AlignmentFile(str(sam), "r") as f:
        records = list(f)
    assert len(records) == 5 and all(r.get_tag("AS") >= 2 * 70 for r in records)
    assert all(r.query_alignment_length + r.query_alignment_start <= 80 for r in records)


@pytest.mark.parametrize("argv,message", [
    (["--gap-open", "-1"], "gap penalties must be positive"),
    (["--outfmt", "6 qseqid nonsense"], "unknown column(s) nonsense"),
    (["--outfmt", "sam"], "--outfmt sam is for DNA"),
    (["--matrix", "BLOSUM7"], "not a file, nor one of"),
    (["--matrix", "BLOSUM80", "--match", "2"], "--match 2 score DNA and --matrix BLOSUM80 scores proteins"),
    (["--dna", "--matrix", "PAM30"], "--dna and --matrix PAM30: choose one"),
])
def test_bad_options(tmp_path, proteins, capsys, argv, message):
    q_path, db_path, _, _ = proteins
    out = tmp_path / "out.tsv"
    assert main(["align", str(q_path), str(db_path), "-o", str(out), *argv]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_bad_letters_and_matrix_file(tmp_path, capsys):
    q, db = tmp_path / "q.fa", tmp_path / "db.fa"
    q.write_text(">q\nMKV\n")
    db.write_text(">ok\nMKVL\n>bad\nMK*V-\n")
    assert main(["align", str(q), str(db)]) == 2
    assert "database sequence 'bad': letter '-' at position 5" in capsys.readouterr().err
    db.write_text(">ok\nMKVL\n")
    mat = tmp_path / "m.txt"
    mat.write_text("  M K\nM 1 0\nK 0\n")
    assert main(["align", str(q), str(db), "--matrix", str(mat)]) == 2
    assert "m.txt:3:" in capsys.readouterr().err
    empty = tmp_path / "e.fa"
    empty.write_text(">e\n\n")
    out = tmp_path / "o.tsv"
    assert main(["align", str(empty), str(db), "--outfmt", "6 qseqid sseqid score", "-o", str(out)]) == 0
    assert out.read_text() == ""  # a score of 0 is expected by chance far more than 10 times (--evalue)
    assert main(["align", str(empty), str(db), "--outfmt", "6 qseqid sseqid score", "-o", str(out),
                 "--evalue", "1e300"]) == 0
    assert out.read_text() == "e\tok\t0\n"


def test_match_and_mismatch_imply_dna(tmp_path):
    """Once ignored without --dna (BLOSUM62 scored the DNA): now they choose DNA scoring."""
    reads = tmp_path / "q.fa"
    reads.write_text(">q\nACGTACGTTTGACCA\n")
    targets = tmp_path / "t.fa"
    targets.write_text(">t\nGGACGTACGATTGACCAGG\n")
    outs = {}
    for flags in (["--match", "2", "--mismatch", "-3"], ["--dna", "--match", "2", "--mismatch", "-3"], []):
        out = tmp_path / f"{len(flags)}.tsv"
        assert main(["align", str(reads), str(targets), "--outfmt", "6 score cigar", "-o", str(out), *flags]) == 0
        outs[len(flags)] = out.read_text()
    want = naive.alignment_score("ACGTACGTTTGACCA", "GGACGTACGATTGACCAGG", lambda a, b: 2 if a == b else -3, 0, 2)
    assert outs[4] == outs[5] and outs[4].split("\t")[0] == str(want)
    assert outs[0] != outs[4]  # BLOSUM62 without them


def test_sam_aligns_both_strands_with_qualities_and_mapq(tmp_path, rng):
    """Reads cut from lambda at known places, half reverse-complemented, two bases changed in the
    middle: each comes back at its place, on its strand, SEQ and QUAL along the reference."""
    from seqsift.alignment.sam import mapping_quality

    genome = naive.read_records(LAMBDA)[0][1]
    reads, truth = [], {}
    for i in range(40):
        start = int(rng.integers(0, len(genome) - 90))
        piece = list(genome[start : start + 90])
        for k in (30, 61):
            piece[k] = "A" if piece[k] != "A" else "C"
        forward = "".join(piece)
        reverse = i % 2 == 1
        qual = "".join(chr(33 + int(q)) for q in rng.integers(2, 40, 90))
        reads.append((f"r{i}", naive.reverse_complement(forward) if reverse else forward, qual[::-1] if reverse else qual))
        truth[f"r{i}"] = (start, reverse, forward, qual)
    fq = tmp_path / "reads.fq"
    fq.write_text("".join(f"@{n}\n{s}\n+\n{q}\n" for n, s, q in reads))
    targets = tmp_path / "lambda.fa"
    targets.write_text(f">lambda\n{genome}\n>copy\n{genome[:3000]}\n")  # reads from the first 3 kbp occur twice
    out = tmp_path / "out.sam"
    assert main(["align", str(fq), str(targets), "--match", "2", "--mismatch", "-3", "--gap-open", "5",
                 "--gap-extend", "2", "--top", "2", "--outfmt", "sam", "-o", str(out)]) == 0
    with pysam.AlignmentFile(str(out), "r") as f:
        records = list(f)
    primaries = {r.query_name: r for r in records if not r.is_secondary}
    assert set(primaries) == set(truth)
    for name, (start, reverse, forward, qual) in truth.items():
        r = primaries[name]
        assert r.is_reverse == reverse and r.cigarstring == "90M" and r.get_tag("NM") == 2
        assert r.query_sequence == forward and pysam.qualities_to_qualitystring(r.query_qualities) == qual
        assert r.get_tag("AS") == 2 * 88 - 3 * 2
        assert r.mapping_quality == mapping_quality(r.get_tag("AS"), r.get_tag("XS") if r.has_tag("XS") else None)
        if start + 90 <= 3000:  # a second copy as good: MAPQ 0, the other copy secondary
            assert r.mapping_quality == 0
            assert any(s.query_name == name and s.is_secondary for s in records)
        else:
            assert r.reference_name == "lambda" and r.reference_start == start and r.mapping_quality > 0
    assert mapping_quality(100, None) == 60 and mapping_quality(100, 100) == 0 and mapping_quality(100, 90) == 25


def test_sam_refuses_dask(tmp_path, capsys):
    reads = tmp_path / "r.fa"
    reads.write_text(">r\nACGTACGT\n")
    assert main(["align", str(reads), str(reads), "--dna", "--outfmt", "sam", "--dask", "local:1"]) == 2
    assert "--outfmt sam runs on this machine" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["local", "semi-global"])
def test_sam_records_are_the_whole_target_alignments_in_each_mode(tmp_path, mode):
    """align --outfmt sam aligns reads in windows of the targets (alignment/reads.py) in every mode
    SAM takes: on bowtie2's simulated lambda reads (N-rich ones among them), both strands, its
    records are those that aligning each read over every whole target (stream.search) gives, and
    each CIGAR covers the read: soft clips only in local mode."""
    from seqsift.alignment import dna
    from seqsift.alignment.sam import BothStrands
    from seqsift.alignment.sam import reads as sam_reads
    from seqsift.alignment.stream import DatabaseParts, search

    fq = tmp_path / "reads.fq"
    fq.write_text("".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in naive.read_records(data_file(
        "lambda_reads_1.fq.gz"))[:12]))
    genome = naive.read_records(LAMBDA)[0][1]
    targets = tmp_path / "targets.fa"
    targets.write_text(f">left\n{genome[:9000]}\n>right\n{genome[9000:16000]}\n>copy\n{genome[2000:4000]}\n")
    out = tmp_path / "out.sam"
    assert main(["align", str(fq), str(targets), "--match", "2", "--mismatch", "-3", "--gap-open", "5", "--gap-extend",
                 "2", "--top", "2", "--mode", mode, "--outfmt", "sam", "-q", "-o", str(out)]) == 0
    both = BothStrands(sam_reads(fq), 2)
    want = b"".join(both.records(search(both.queries(), DatabaseParts(targets, dna(2, -3, 5, 2)), 3, mode, "cpu", 1)))
    got = b"".join(line + b"\n" for line in out.read_bytes().splitlines() if not line.startswith(b"@"))
    assert got == want
    with pysam.AlignmentFile(str(out), "r") as f:
        records = list(f)
    assert {r.query_name for r in records} == {f"r{i}" for i in range(1, 13)}
    for r in records:
        ops = dict.fromkeys(op for op, _ in r.cigartuples)
        length = r.infer_read_length()
        assert sum(n for op, n in r.cigartuples if op in (0, 1, 4)) == length and 0 <= r.mapping_quality <= 60
        if mode == "semi-global":
            assert 4 not in ops and 5 not in ops  # the whole read aligned
    if mode == "local":
        assert any(op == 4 for r in records for op, _ in r.cigartuples)  # local clips some read ends


def test_sam_refuses_global_alignment(tmp_path, capsys):
    """A global alignment spans every base of each target: a read against a genome would be
    thousands of deletions, so SAM output says so and names the modes it takes."""
    reads = tmp_path / "r.fa"
    reads.write_text(">r\nACGTACGTAAGT\n")
    out = tmp_path / "out.sam"
    assert main(["align", str(reads), str(LAMBDA), "--dna", "--mode", "global", "--outfmt", "sam", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--mode global" in err and "--mode semi-global" in err and not out.exists()


def test_sam_mapq_of_scores_at_or_below_zero():
    """Semi-global scores can be 0 or negative (an N-rich read): MAPQ 0, not bwa-sw's formula."""
    from seqsift.alignment.sam import mapping_quality

    assert mapping_quality(0, -5) == 0 and mapping_quality(-3, -6) == 0 and mapping_quality(-3, None) == 0
    assert mapping_quality(10, -6) == 60
