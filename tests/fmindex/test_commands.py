"""`seqsift index / search / simulate / check / stats` end to end, against the naive oracle."""

import gzip

import numpy as np
import pysam
import pytest

from seqsift.cli import main
from tests import naive
from tests.conftest import LAMBDA


@pytest.fixture
def reference(tmp_path, rng):
    """Three records with N runs and IUPAC codes, and repeats across records and strands."""
    base = "".join(rng.choice(list("ACGT"), 1500))
    records = [("chrA", base[:700] + "NNNNN" + base[:60]), ("chrB", naive.reverse_complement(base[100:400]) + "RYKM" + base[900:]),
               ("chrC", base[200:260])]
    path = tmp_path / "ref.fa.gz"
    with gzip.open(path, "wt") as f:
        f.write("".join(f">{n} some description\n" + "\n".join(s[j : j + 70] for j in range(0, len(s), 70)) + "\n"
                        for n, s in records))
    return path, records


def reads_file(tmp_path, reads, fastq=True, name="reads.fq"):
    path = tmp_path / name
    if fastq:
        path.write_text("".join(f"@q{i} extra words\n{r}\n+\n{'I' * len(r)}\n" for i, r in enumerate(reads)))
    else:
        path.write_text("".join(f">q{i}\n{r[:7]}\n{r[7:]}\n" for i, r in enumerate(reads)))
    return path


def some_reads(records, rng, count=120):
    joined = [s for _, s in records]
    reads = []
    for i in range(count):
        seq = joined[i % len(joined)]
        m = int(rng.integers(3, 40))
        k = int(rng.integers(0, len(seq) - m))
        read = seq[k : k + m]
        if i % 3 == 1:
            read = naive.reverse_complement(read)
        if i % 7 == 2:
            read = read[:2] + "N" + read[3:]
        if i % 11 == 3:
            read = "".join(rng.choice(list("ACGT"), m))
        reads.append(read.lower() if i % 5 == 0 else read)
    return reads + ["", "A", "ACGTRY"]


def expected_tsv(records, reads, max_hits):
    lines = []
    for i, read in enumerate(reads):
        hits = naive.dna_hits(records, read)
        listed = ",".join(f"{n}:{p}:{s}" for n, p, s in hits[:max_hits]) or "-"
        lines.append(f"q{i}\t{len(hits)}\t{listed}\n")
    return "".join(lines)


def index_of(tmp_path, reference, *extra):
    out = tmp_path / "ref.ssx"
    assert main(["index", "-q", str(reference[0]), "-o", str(out), *extra]) == 0
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fastq", [True, False])
def test_search_tsv_matches_the_oracle(tmp_path, reference, rng, threads, fastq):
    ssx = index_of(tmp_path, reference, "--kmer", "4", "--sa-sample", "5")
    reads = some_reads(reference[1], rng)
    out = tmp_path / "out.tsv"
    code = main(["search", str(ssx), str(reads_file(tmp_path, reads, fastq)), "-t", str(threads), "--max-hits", "3",
                 "--batch-reads", "7", "-o", str(out)])
    assert code == 0
    assert out.read_text() == expected_tsv(reference[1], reads, 3)


@pytest.mark.parametrize("flags", [["--no-kmer-table"], ["--shortcut", "none"], ["--shortcut", "rank"],
                                   ["--verify-rows", "1"], ["--verify-rows", "9"], ["--interleave", "1"],
                                   ["--max-hits", "0"]])
def test_each_optimization_switch_keeps_the_output(tmp_path, reference, rng, flags):
    ssx = index_of(tmp_path, reference)
    reads = some_reads(reference[1], rng, 60)
    out = tmp_path / "out.tsv"
    assert main(["search", str(ssx), str(reads_file(tmp_path, reads)), "-o", str(out), *flags]) == 0
    want = expected_tsv(reference[1], reads, 0 if "0" in flags else 100)
    assert out.read_text() == want


def test_sam_output_is_valid_and_complete(tmp_path, reference, rng):
    ssx = index_of(tmp_path, reference)
    reads = some_reads(reference[1], rng, 60)
    out = tmp_path / "out.sam"
    fastq = reads_file(tmp_path, reads)
    assert main(["search", str(ssx), str(fastq), "--format", "sam", "--max-hits", "4", "-o", str(out)]) == 0
    again = tmp_path / "again.sam"  # the primary's choice does not depend on threads or batches
    assert main(["search", str(ssx), str(fastq), "--format", "sam", "--max-hits", "4", "-t", "2",
                 "--batch-reads", "5", "-o", str(again)]) == 0
    assert again.read_text() == out.read_text()
    with pysam.AlignmentFile(str(out), "r", check_sq=False) as sam:
        header = sam.header.to_dict()
        assert [sq["SN"] for sq in header["SQ"]] == [n for n, _ in reference[1]]
        assert [sq["LN"] for sq in header["SQ"]] == [len(s) for _, s in reference[1]]
        assert header["PG"][0]["ID"] == "seqsift"
        records = list(sam)
    by_read: dict = {}
    for rec in records:
        by_read.setdefault(rec.query_name, []).append(rec)
    assert list(by_read) == [f"q{i}" for i in range(len(reads))]
    primaries = 0
    for i, read in enumerate(reads):
        hits = naive.dna_hits(reference[1], read)
        recs = by_read[f"q{i}"]
        if not hits:
            assert len(recs) == 1 and recs[0].is_unmapped
            continue
        pick = naive.sam_primary(f"q{i}", len(hits))  # among all the sites, listed or not
        sites = [(r.reference_name, r.reference_start, "-" if r.is_reverse else "+") for r in recs]
        assert sites == [hits[pick]] + (hits[:pick] + hits[pick + 1 :])[:3]  # primary, then reference order
        primaries += pick != 0
        primary = recs[0]
        assert not primary.is_secondary and all(r.is_secondary for r in recs[1:])
        assert primary.get_tag("X0") == len(hits) and primary.cigarstring == f"{len(read)}M"
        assert primary.mapping_quality == (60 if len(hits) == 1 else 0)  # bwa: 0 for several equal sites
        assert all(r.get_tag("NM") == 0 and r.get_tag("MD") == str(len(read)) for r in recs)
        chrom = dict(reference[1])[primary.reference_name]
        assert primary.query_sequence == chrom[primary.reference_start : primary.reference_start + len(read)]
    assert primaries > 0  # not always the leftmost copy


def test_sam_primary_is_any_copy_of_a_repeat_at_any_threads(tmp_path, rng):
    """Issue 25: the primary of a read with several equally good places is picked among all of them
    (both strands, not only the --max-hits listed), by a hash of its name: over many reads of a
    repeat every copy is chosen, and the choice is the same at -t 1 and -t 2."""
    unit = "".join(rng.choice(list("ACGT"), 40))
    pieces = ["".join(rng.choice(list("ACGT"), int(rng.integers(20, 90)))) for _ in range(7)]
    copies = [unit, naive.reverse_complement(unit), unit, unit, naive.reverse_complement(unit), unit]
    records = [("one", pieces[0] + copies[0] + pieces[1] + copies[1] + pieces[2] + copies[2] + pieces[3]),
               ("two", pieces[4] + copies[3] + pieces[5] + copies[4] + copies[5] + pieces[6])]
    ref = tmp_path / "ref.fa"
    ref.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    ssx = tmp_path / "ref.ssx"
    assert main(["index", str(ref), "-o", str(ssx), "-q"]) == 0
    reads = [unit[3:33] if i % 2 else naive.reverse_complement(unit[5:37]) for i in range(240)]
    fastq = reads_file(tmp_path, reads)
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}.sam"
        assert main(["search", str(ssx), str(fastq), "--format", "sam", "--max-hits", "2", "-t", threads,
                     "--batch-reads", "17", "-o", str(out), "-q"]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    with pysam.AlignmentFile(str(tmp_path / "t1.sam"), "r", check_sq=False) as sam:
        primaries = [(r.query_name, r.reference_name, r.reference_start, "-" if r.is_reverse else "+", r.mapping_quality)
                     for r in sam if not r.is_secondary]
    chosen = set()
    for i, (name, *site, mapq) in enumerate(primaries):
        hits = naive.dna_hits(records, reads[i])
        assert name == f"q{i}" and len(hits) == 6 and mapq == 0
        assert tuple(site) == hits[naive.sam_primary(name, len(hits))]
        chosen.add((i % 2, site[0], site[1]))
    assert len(chosen) == 2 * 6  # every copy for either read, those past --max-hits 2 included


def test_simulate_then_search_then_check(tmp_path):
    genome = LAMBDA
    reads = tmp_path / "sim.fq"
    assert main(["simulate", str(genome), "-n", "400", "--length", "40", "--max-length", "60", "--found-fraction",
                 "0.8", "--error-rate", "0.01", "--seed", "3", "-o", str(reads)]) == 0
    records = naive.read_records(reads)
    assert len(records) == 400 and all(40 <= len(s) <= 60 for _, s in records)
    headers = [line for line in reads.read_text().splitlines() if line.startswith("@read")]
    exact = [h for h in headers if "errors=0" in h]
    assert 150 < len(exact) < 400 and sum("random" in h for h in headers) > 40
    ref = naive.read_records(genome)
    for header, (_, seq) in zip(headers, records):  # each error-free simulated read occurs where it says
        if "errors=0" in header:
            name, pos, strand = header.split("from=")[1].split()[0].split(":")
            assert (name, int(pos), strand) in naive.dna_hits(ref, seq)
    ssx, out = tmp_path / "lambda.ssx", tmp_path / "out.tsv"
    assert main(["index", "-q", str(genome), "-o", str(ssx)]) == 0
    assert main(["search", str(ssx), str(reads), "-o", str(out), "--max-hits", "2"]) == 0
    assert main(["check", str(genome), str(out), str(reads)]) == 0
    lines = out.read_text().splitlines()
    victim = next(i for i, line in enumerate(lines) if line.split("\t")[1] == "1")
    name, _, hits = lines[victim].split("\t")
    lines[victim] = f"{name}\t2\t{hits}"
    bad = tmp_path / "bad.tsv"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["check", str(genome), str(bad), str(reads)]) == 1


def test_check_reports_a_wrong_position(tmp_path, capsys):
    genome = LAMBDA
    seq = naive.read_records(genome)[0][1]
    reads = reads_file(tmp_path, [seq[1000:1030]])
    wrong = tmp_path / "wrong.tsv"
    wrong.write_text(f"q0\t1\t{naive.read_records(genome)[0][0]}:1001:+\n")
    assert main(["check", str(genome), str(wrong), str(reads)]) == 1
    assert "wrong.tsv:1: read q0: hit" in capsys.readouterr().out


def test_stats_reports_index_and_searches(tmp_path, reference, rng, capsys):
    ssx = index_of(tmp_path, reference, "--sa-sample", "8", "--repeat-sample", "2")
    reads = reads_file(tmp_path, some_reads(reference[1], rng, 30))
    assert main(["stats", str(ssx), str(reads)]) == 0
    out = capsys.readouterr().out
    assert "1 in 8 text positions, and 1 in 2 inside repeats (windows of 10 bases" in out
    assert "max 7 (bound 7)" in out or "max 6 (bound 7)" in out
    assert "reached hi-lo=1" in out and "30 reads" not in out and "33 reads" in out


def test_index_is_reusable_and_memory_mapped(tmp_path, reference, rng):
    from seqsift.fmindex.api import FMIndex

    ssx = index_of(tmp_path, reference)
    loaded = FMIndex.load(ssx)
    built = FMIndex.build(reference[0])
    assert not loaded.arrays.blocks.flags.writeable  # a view of the mapped file, not a copy
    reads = some_reads(reference[1], rng, 50)
    assert loaded.count(reads).tolist() == built.count(reads).tolist()
    assert loaded.names == ["chrA", "chrB", "chrC"]
    assert np.array_equal(loaded.reference.lengths, [len(s) for _, s in reference[1]])


@pytest.mark.parametrize("content,message", [
    (b"", "has no records"),
    (b">only_n\nNNNNRYNN\n", "no A, C, G or T"),
    (b">r\nACGT\nAC!T\n", "ref.fa:3: invalid character '!'"),
    (b"ACGT\n", "not FASTA or FASTQ"),
])
def test_bad_reference_is_a_clear_error_and_writes_nothing(tmp_path, capsys, content, message):
    ref, out = tmp_path / "ref.fa", tmp_path / "ref.ssx"
    ref.write_bytes(content)
    assert main(["index", str(ref), "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [ref]


@pytest.mark.parametrize("content,message", [
    (b"@a\nACGT\n+\nIII\n", "reads.fq:4: quality length 3"),
    (b"@a\nACGT\n+\nIIII\n@b\nAC\n", "reads.fq:5: file ends inside"),
    (b"@a\nAC#T\n+\nIIII\n", "reads.fq:2: invalid character '#'"),
])
def test_malformed_reads_leave_no_output(tmp_path, reference, capsys, content, message):
    ssx = index_of(tmp_path, reference)
    reads, out = tmp_path / "reads.fq", tmp_path / "out.tsv"
    reads.write_bytes(b"@ok\nACGTACGT\n+\nIIIIIIII\n" * 50_000 + content)  # the error comes after whole batches
    assert main(["search", str(ssx), str(reads), "-o", str(out), "-t", "2", "--batch-reads", "1000"]) == 2
    err = capsys.readouterr().err
    line = int(message.split(":")[1]) + 200_000
    assert f"reads.fq:{line}:" in err and message.split(": ", 1)[1] in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reads.fq", "ref.fa.gz", "ref.ssx"]


def test_unwritable_output_and_missing_files(tmp_path, reference, capsys):
    ssx = index_of(tmp_path, reference)
    reads = reads_file(tmp_path, ["ACGT"])
    assert main(["search", str(ssx), str(reads), "-o", str(tmp_path / "no" / "out.tsv")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main(["index", str(reference[0]), "-o", str(tmp_path / "no" / "x.ssx")]) == 2
    assert main(["search", str(ssx), str(tmp_path / "missing.fq")]) == 2
    assert main(["search", str(tmp_path / "missing.ssx"), str(reads)]) == 2
    assert "missing" in capsys.readouterr().err
    assert main(["search", str(ssx), str(reads), "--max-hits", "-1"]) == 2
    assert main(["index", str(reference[0]), "-o", str(tmp_path / "x.ssx"), "--repeat-sample", "-1"]) == 2
    assert "--repeat-sample -1" in capsys.readouterr().err and not (tmp_path / "x.ssx").exists()


def test_empty_and_over_long_reads_count_zero(tmp_path, reference, capsys):
    ssx = index_of(tmp_path, reference)
    longest = max(len(s) for _, s in reference[1])
    reads = tmp_path / "reads.fq"
    reads.write_text(f"@empty\n\n+\n\n@long\n{'A' * (longest + 5000)}\n+\n{'I' * (longest + 5000)}\n")
    out = tmp_path / "out.tsv"
    assert main(["search", str(ssx), str(reads), "-o", str(out)]) == 0  # nothing matched: still 0, as bwa
    assert out.read_text() == "empty\t0\t-\nlong\t0\t-\n"


def test_default_index_name_and_reads_from_stdin(tmp_path):
    import shutil
    import subprocess
    import sys

    genome = tmp_path / "lambda.fa.gz"
    shutil.copy(LAMBDA, genome)
    assert main(["index", "-q", str(genome)]) == 0  # lambda.fa.gz -> lambda.ssx beside it
    seq = naive.read_records(genome)[0][1]
    reads = f"@a\n{seq[100:130]}\n+\n{'I' * 30}\n@b\nNNNN\n+\nIIII\n".encode()
    r = subprocess.run([sys.executable, "-m", "seqsift", "search", str(tmp_path / "lambda.ssx"), "-"], input=reads,
                       capture_output=True, check=True)
    assert r.stdout.decode().splitlines() == [f"a\t1\t{naive.read_records(genome)[0][0]}:100:+", "b\t0\t-"]


def test_check_accepts_correct_results_for_awkward_reads(tmp_path, reference, rng):
    """Empty reads, reads with N, lower case, repeats on both strands: search then check agree."""
    ssx = index_of(tmp_path, reference)
    reads = some_reads(reference[1], rng, 80) + ["", "acgtnacgt"]
    path = reads_file(tmp_path, reads)
    fasta = tmp_path / "ref.fa"
    fasta.write_text("".join(f">{n}\n{s}\n" for n, s in reference[1]))
    out = tmp_path / "out.tsv"
    main(["search", str(ssx), str(path), "--max-hits", "2", "-o", str(out)])
    assert main(["check", str(fasta), str(out), str(path)]) == 0


@pytest.mark.parametrize("value", [0, 1, 9, 10, 99, 100, 5_333_941, 10**12 - 1, 10**12, 2**63 - 1])
def test_numbers_are_written_in_decimal(value):
    """The formatters' digit writer on every digit count, up to the largest position an index holds."""
    from seqsift.fmindex._output_cpu import _put_int

    out = np.zeros(40, np.uint8)
    end = _put_int(out, 3, value)
    assert out[3:end].tobytes() == str(value).encode() and not out[:3].any() and not out[end:].any()


def test_index_help_names_the_default_output(capsys):
    """`index` writes REFERENCE.ssx, not standard output, and its -o help says so."""
    assert main(["index", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "REF.fa.gz -> REF.ssx" in help_text and "standard output" not in help_text
    assert main(["search", "--help"]) == 0  # the other commands keep the shared -o
    assert "write results to FILE (default: standard output)" in " ".join(capsys.readouterr().out.split())


def test_the_primary_pick_is_one_function_of_the_name(tmp_path, rng):
    """output.primary_seeds (the exact and the approximate SAM's pick) is FNV-1a of the read's name
    from the seeded basis, as naive.sam_primary computes it, and spreads over the sites."""
    from seqsift.fmindex.output import primary_seeds
    from seqsift.io.reads import read_reads

    names = [f"read{int(k)}/{int(rng.integers(1, 3))}" for k in rng.integers(0, 10**9, 300)]
    fasta = tmp_path / "names.fa"
    fasta.write_text("".join(f">{n} some description\nACGT\n" for n in names))
    seeds = np.concatenate([primary_seeds(batch) for batch in read_reads(str(fasta), 64)])
    picks = [int(seed) % 3 for seed in seeds]
    assert picks == [naive.sam_primary(n, 3) for n in names]
    assert {0, 1, 2} <= set(picks)
