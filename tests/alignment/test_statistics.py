"""Bit scores and e-values as blastp prints them, and `align`'s --evalue and outfmt 7.

The rows below are blastp's own output (BLAST 2.12.0+, Debian's ncbi-blast+) for the first 5
queries of tests/data/proteins_query.fa.gz against the 300 proteins (126,450 residues) of
tests/data/proteins_db.fa.gz, made into a database with `makeblastdb -dbtype prot`, run as
`blastp -comp_based_stats 0 -seg no -evalue 1000 -max_target_seqs 500 -outfmt "6 qseqid sseqid
evalue bitscore score qlen slen"`: one row per decade of e-value. benchmarks/blast_statistics.py
compares every row (1,732 then; all agreed to the printed digits).
"""

import math
import re

import pytest

from seqsift.alignment.statistics import KarlinAltschul, format_bits, format_evalue
from seqsift.cli import main
from tests import naive
from tests.conftest import data_file

DB_RESIDUES = 126_450
BLASTP_ROWS = [  # evalue, bitscore, score, qlen, slen
    ("0.0", "1367", 3539, 921, 920),
    ("3.41e-73", "253", 645, 921, 882),
    ("2.50e-58", "187", 474, 361, 343),
    ("1.39e-08", "52.0", 123, 921, 645),
    ("3.71e-07", "47.4", 111, 921, 645),
    ("1.68e-04", "38.1", 87, 635, 672),
    ("0.007", "33.5", 75, 921, 645),
    ("0.010", "32.3", 72, 635, 672),
    ("0.62", "26.6", 57, 635, 648),
    ("1.8", "20.0", 40, 57, 1159),
    ("63", "15.8", 29, 57, 580),
    ("235", "14.2", 25, 57, 1159),
]


@pytest.mark.parametrize("evalue,bits,score,qlen,slen", BLASTP_ROWS)
def test_bit_scores_and_evalues_print_as_blastp(evalue, bits, score, qlen, slen):
    ka = KarlinAltschul.of("BLOSUM62", 11, 1)
    assert format_bits(ka.bit_score(score)) == bits
    assert format_evalue(ka.evalue(score, qlen, slen, DB_RESIDUES)) == evalue


def test_statistics_behave_as_karlin_altschul():
    ka = KarlinAltschul.of("blosum62", 11, 1)
    assert ka.bit_score(100) == pytest.approx((0.267 * 100 - math.log(0.041)) / math.log(2))
    # each extra point of score divides E by about e^lambda, and E grows with the database
    assert ka.evalue(60, 300, 300, 10**6) / ka.evalue(61, 300, 300, 10**6) == pytest.approx(math.exp(0.267), rel=0.05)
    assert ka.evalue(60, 300, 300, 2 * 10**6) == pytest.approx(2 * ka.evalue(60, 300, 300, 10**6))
    assert format_evalue(7.4712e-113) == "7.47e-113" and format_evalue(1e-181) == "0.0"  # as blastp prints them
    assert format_evalue(12.6) == "13" and format_bits(99.89) == "99.9" and format_bits(99.94) == "99" and format_bits(187.96) == "187"
    assert KarlinAltschul.of("BLOSUM62", 11, 3) is None and KarlinAltschul.of("mine.txt", 11, 1) is None
    for name, costs in (("BLOSUM45", (15, 2)), ("BLOSUM80", (10, 1)), ("PAM30", (9, 1)), ("PAM250", (14, 2))):
        assert KarlinAltschul.of(name, *costs) is not None  # blastp's default costs for each matrix


@pytest.fixture(scope="module")
def blast_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("blast")
    queries = tmp / "q.fa"
    queries.write_text("".join(f">{n}\n{s}\n" for n, s in naive.read_records(data_file("proteins_query.fa.gz"))[:5]))
    return queries, data_file("proteins_db.fa.gz")


def test_align_reports_blastp_statistics_and_cuts_at_evalue(tmp_path, blast_files):
    queries, db = blast_files
    out = tmp_path / "all.tsv"
    assert main(["align", "-q", str(queries), str(db), "--top", "500", "--evalue", "1000", "-o", str(out),
                 "--outfmt", "6 qseqid sseqid score evalue bitscore qlen slen"]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    ka = KarlinAltschul.of("BLOSUM62", 11, 1)
    for _, _, score, evalue, bits, qlen, slen in rows:
        assert evalue == format_evalue(ka.evalue(int(score), int(qlen), int(slen), DB_RESIDUES))
        assert bits == format_bits(ka.bit_score(int(score)))
    printed = {(int(r[2]), int(r[5]), int(r[6])): (r[3], r[4]) for r in rows}
    seen = [row for row in BLASTP_ROWS if row[2:] in printed]
    assert seen and all(printed[row[2:]] == row[:2] for row in seen)  # the hits blastp also found
    default = tmp_path / "default.tsv"
    assert main(["align", "-q", str(queries), str(db), "--top", "500", "-o", str(default),
                 "--outfmt", "6 qseqid sseqid score evalue bitscore qlen slen"]) == 0
    kept = [line.split("\t") for line in default.read_text().splitlines()]
    exact = [ka.evalue(int(r[2]), int(r[5]), int(r[6]), DB_RESIDUES) for r in rows]
    assert kept == [r for r, e in zip(rows, exact) if e <= 10]  # blastp's default -evalue 10
    assert len(kept) < len(rows)


def test_outfmt_7_and_std(tmp_path, blast_files):
    queries, db = blast_files
    out6, out7 = tmp_path / "6.tsv", tmp_path / "7.tsv"
    assert main(["align", "-q", str(queries), str(db), "--outfmt", "6 std score", "-o", str(out6)]) == 0
    assert main(["align", "-q", str(queries), str(db), "--outfmt", "7 std score", "-o", str(out7)]) == 0
    lines = out7.read_text().splitlines()
    assert [line for line in lines if not line.startswith("#")] == out6.read_text().splitlines()
    names = [n for n, _ in naive.read_records(queries)]
    assert [line[len("# Query: "):] for line in lines if line.startswith("# Query: ")] == names
    fields = "# Fields: query id, subject id, % identity, alignment length, mismatches, gap opens, q. start, q. end, " \
             "s. start, s. end, evalue, bit score, score"
    assert fields in lines and f"# Database: {db}" in lines
    counts = [int(line.split()[1]) for line in lines if line.endswith("hits found")]
    assert sum(counts) == len(out6.read_text().splitlines()) and len(counts) == len(names)
    assert len(out6.read_text().splitlines()[0].split("\t")) == 13


def test_a_bad_evalue_is_a_usage_error(tmp_path, blast_files, capsys):
    queries, db = blast_files
    for value in ("0", "-1", "nan"):
        assert main(["align", str(queries), str(db), "--evalue", value]) == 2
        assert f"--evalue {float(value)}" in capsys.readouterr().err


# blastp's comment lines for the first 2 queries of tests/data/proteins_query.fa.gz and a query of
# ten W (no hit), against tests/data/proteins_db.fa.gz made into a database with
# `makeblastdb -dbtype prot`, run as `blastp -comp_based_stats 0 -seg no -outfmt "7 std score"`
# (BLAST 2.12.0+, Debian's ncbi-blast+), the Fields line shortened.
BLASTP_7 = """\
# BLASTP 2.12.0+
# Query: tr|A7TBS3|A7TBS3_NEMVE Predicted protein (Fragment) OS=Nematostella vectensis GN=v1g153959 PE=4 SV=1 Split=0
# Database: db
# Fields: query acc.ver, subject acc.ver, % identity, alignment length, mismatches, gap opens, q. start, q. end, ...
# 6 hits found
# BLASTP 2.12.0+
# Query: tr|Q8WWJ3|Q8WWJ3_HUMAN T cell surface glycoprotein CD6 isoform b OS=Homo sapiens GN=CD6 PE=4 SV=1 Split=0
# Database: db
# Fields: query acc.ver, subject acc.ver, % identity, alignment length, mismatches, gap opens, q. start, q. end, ...
# 15 hits found
# BLASTP 2.12.0+
# Query: nohit
# Database: db
# 0 hits found
# BLAST processed 3 queries
"""


def _comment_shape(text: str) -> list[str]:
    """Each comment line's kind, with the count it carries where blastp's and ours must agree."""
    kinds = []
    for line in (line for line in text.splitlines() if line.startswith("#")):
        for kind, pattern in (("program", r"# (BLASTP \S+|seqsift align \S+)$"), ("query", r"# Query: \S"),
                              ("database", r"# Database: \S"), ("fields", r"# Fields: \S"),
                              ("hits", r"# (\d+) hits found$"), ("processed", r"# BLAST processed (\d+) queries$")):
            found = re.match(pattern, line)
            if found:
                hits_are_none = kind == "hits" and found.group(1) == "0"
                kinds.append(f"{kind} {found.group(1)}" if kind == "processed" else "no hits" if hits_are_none else kind)
                break
        else:
            kinds.append(f"unknown: {line}")
    return kinds


def test_outfmt_7_comment_lines_have_blastps_shape(tmp_path):
    """Per query: program, Query, Database, Fields (only when it has hits), 'N hits found'; after the
    last query, '# BLAST processed N queries' with N the queries read."""
    queries, out = tmp_path / "q.fa", tmp_path / "7.tsv"
    records = naive.read_records(data_file("proteins_query.fa.gz"))[:2] + [("nohit", "W" * 10)]
    queries.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    assert main(["align", "-q", str(queries), str(data_file("proteins_db.fa.gz")), "--outfmt", "7 std score",
                 "-o", str(out)]) == 0
    assert _comment_shape(out.read_text()) == _comment_shape(BLASTP_7)
    assert _comment_shape(BLASTP_7)[-1] == "processed 3" and out.read_text().endswith("# BLAST processed 3 queries\n")
    out6 = tmp_path / "6.tsv"
    assert main(["align", "-q", str(queries), str(data_file("proteins_db.fa.gz")), "-o", str(out6)]) == 0
    assert "#" not in out6.read_text()  # outfmt 6 has no comment lines, the closing one neither


@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
def test_outfmt_7_query_lines_are_blastps(tmp_path, monkeypatch, stdin):
    """Issue 25: '# Query:' gives the whole header line as blastp does; qseqid stays its first word."""
    import gzip
    import io
    import sys

    text = gzip.decompress(data_file("proteins_query.fa.gz").read_bytes()).decode()
    two = ">" + ">".join(text.split(">")[1:3]) + ">nohit\nWWWWWWWWWW\n"
    queries, out = tmp_path / "q.fa", tmp_path / "7.tsv"
    queries.write_text(two)
    if stdin:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(two.encode())))
    assert main(["align", "-q", "-" if stdin else str(queries), str(data_file("proteins_db.fa.gz")),
                 "--outfmt", "7 std score", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    ours = [line for line in lines if line.startswith("# Query: ")]
    assert ours == [line for line in BLASTP_7.splitlines() if line.startswith("# Query: ")]
    firsts = {line.split("\t")[0] for line in lines if not line.startswith("#")}
    assert firsts == {"tr|A7TBS3|A7TBS3_NEMVE", "tr|Q8WWJ3|Q8WWJ3_HUMAN"}
