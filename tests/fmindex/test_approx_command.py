"""`seqsift search --errors E` end to end: TSV, --best-only and SAM against the oracle."""

import numpy as np
import pysam
import pytest

from seqsift.cli import main
from tests import naive
from tests.fmindex.test_approx import LAMBDA, _mutate, _reads
from tests.fmindex.test_commands import index_of, reads_file


@pytest.fixture
def reference(tmp_path, rng):
    unit = "".join(rng.choice(list("ACGT"), 30))
    chr_a = "".join(rng.choice(list("ACGT"), 60)) + unit + "NNN" + "".join(rng.choice(list("ACGT"), 40))
    chr_b = _mutate(rng, unit, 2, "edit") + "".join(rng.choice(list("ACGT"), 50)) + naive.reverse_complement(unit)
    records = [("chrA", chr_a), ("chrB", chr_b), ("chrC", unit[:20])]
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n} desc\n{s}\n" for n, s in records))
    return path, records


def _expected(records, reads, errors, distance, max_hits, best_only=False):
    lines = []
    for i, read in enumerate(reads):
        hits = naive.approx_hits(records, read, errors, distance)
        listed = [h for h in hits if h[3] == hits[0][3]] if best_only and hits else hits
        text = ",".join(f"{n}:{p}:{s}:{d}" for n, p, s, d in listed[:max_hits]) or "-"
        lines.append(f"q{i}\t{len(hits)}\t{text}\n")
    return "".join(lines)


@pytest.mark.parametrize("distance", ["hamming", "edit"])
@pytest.mark.parametrize("threads", [1, 2])
def test_search_errors_tsv_matches_the_oracle(tmp_path, reference, rng, distance, threads):
    ssx = index_of(tmp_path, reference)
    reads = _reads(reference[1], rng, 2, distance, 30)
    out = tmp_path / "out.tsv"
    assert main(["search", str(ssx), str(reads_file(tmp_path, reads)), "--errors", "2", "--distance", distance,
                 "-t", str(threads), "--batch-reads", "7", "--max-hits", "3", "-o", str(out)]) in (0, 1)
    assert out.read_text() == _expected(reference[1], reads, 2, distance, 3)


@pytest.mark.parametrize("distance", ["hamming", "edit"])
def test_best_only_lists_the_fewest_differences(tmp_path, reference, rng, distance):
    ssx = index_of(tmp_path, reference)
    reads = _reads(reference[1], rng, 3, distance, 30)
    out = tmp_path / "out.tsv"
    assert main(["search", str(ssx), str(reads_file(tmp_path, reads)), "-e", "3", "--distance", distance,
                 "--best-only", "-o", str(out)]) in (0, 1)
    assert out.read_text() == _expected(reference[1], reads, 3, distance, 100, best_only=True)


@pytest.mark.parametrize("max_hits", [100, 2])
@pytest.mark.parametrize("distance", ["hamming", "edit"])
def test_sam_has_cigar_nm_and_md_of_each_place(tmp_path, reference, rng, distance, max_hits):
    ssx = index_of(tmp_path, reference)
    reads = _reads(reference[1], rng, 3, distance, 40)
    out = tmp_path / "out.sam"
    assert main(["search", str(ssx), str(reads_file(tmp_path, reads)), "-e", "3", "--distance", distance,
                 "--format", "sam", "--max-hits", str(max_hits), "-o", str(out)]) == 0
    chroms = dict(reference[1])
    by_read: dict = {}
    with pysam.AlignmentFile(str(out), "r", check_sq=False) as sam:
        for rec in sam:
            by_read.setdefault(rec.query_name, []).append(rec)
    assert list(by_read) == [f"q{i}" for i in range(len(reads))]
    for i, read in enumerate(reads):
        hits = naive.approx_hits(reference[1], read, 3, distance)
        recs = by_read[f"q{i}"]
        if not hits:
            assert len(recs) == 1 and recs[0].is_unmapped
            continue
        got = [(r.reference_name, r.reference_start, "-" if r.is_reverse else "+", r.get_tag("NM")) for r in recs]
        tied = sum(1 for h in hits if h[3] == hits[0][3])  # the places with the fewest differences, listed or not
        pick = naive.sam_primary(f"q{i}", tied)
        assert got == [hits[pick]] + (hits[:pick] + hits[pick + 1 :])[: max_hits - 1]
        assert recs[0].mapping_quality == (60 if tied == 1 else 0)
        assert all(r.get_tag("X0") == len(hits) for r in recs)
        assert not recs[0].is_secondary and all(r.is_secondary for r in recs[1:])
        for r in recs:
            ops = r.cigartuples
            assert sum(n for op, n in ops if op in (0, 1)) == len(read)  # M and I cover the read
            if distance == "hamming":
                assert ops == [(0, len(read))]
        primary = recs[0]
        want = read if not primary.is_reverse else naive.reverse_complement(read)
        assert primary.query_sequence == want.upper()
        # MD and the read give back the reference the CIGAR spans
        span = primary.reference_length
        ref = chroms[primary.reference_name][primary.reference_start : primary.reference_start + span]
        assert primary.get_reference_sequence().upper() == ref


@pytest.mark.parametrize("distance", ["hamming", "edit"])
def test_sam_primary_is_any_copy_of_a_repeat_at_any_threads(tmp_path, rng, distance):
    """Issue 25: with --errors, the primary of a read with several places at its fewest differences
    is picked among all of them (both strands, not only the --max-hits listed), by a hash of its
    name, as the exact search picks: over many reads of a repeat, each read with substitutions
    against every copy, every copy is chosen, MAPQ is 0, and -t 1 and -t 2 agree."""
    unit = "".join(rng.choice(list("ACGT"), 40))
    pieces = ["".join(rng.choice(list("ACGT"), int(rng.integers(20, 90)))) for _ in range(7)]
    copies = [unit, naive.reverse_complement(unit), unit, unit, naive.reverse_complement(unit), unit]
    records = [("one", pieces[0] + copies[0] + pieces[1] + copies[1] + pieces[2] + copies[2] + pieces[3]),
               ("two", pieces[4] + copies[3] + pieces[5] + copies[4] + pieces[6][:20] + copies[5] + pieces[6])]
    ref = tmp_path / "ref.fa"
    ref.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    ssx = tmp_path / "ref.ssx"
    assert main(["index", str(ref), "-o", str(ssx), "-q"]) == 0
    reads = []
    for i in range(240):  # substitutions inside the copies' common stretch: every copy stays as good
        read = list(unit[4:34])
        for at in rng.choice(np.arange(2, 28), 1 + i % 2, replace=False).tolist():
            read[at] = rng.choice([b for b in "ACGT" if b != read[at]])
        reads.append("".join(read) if i % 2 else naive.reverse_complement("".join(read)))
    fastq = reads_file(tmp_path, reads)
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}.sam"
        assert main(["search", str(ssx), str(fastq), "-e", "2", "--distance", distance, "--format", "sam",
                     "--max-hits", "2", "-t", threads, "--batch-reads", "17", "-o", str(out), "-q"]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    with pysam.AlignmentFile(str(tmp_path / "t1.sam"), "r", check_sq=False) as sam:
        primaries = [(r.query_name, r.reference_name, r.reference_start, "-" if r.is_reverse else "+", r.mapping_quality,
                      r.get_tag("NM")) for r in sam if not r.is_secondary]
    chosen = set()
    for i, (name, *site, mapq, nm) in enumerate(primaries):
        hits = naive.approx_hits(records, reads[i], 2, distance)
        best = [h for h in hits if h[3] == hits[0][3]]
        assert name == f"q{i}" and len(best) == 6 and mapq == 0 and nm == best[0][3] == 1 + i % 2
        assert tuple(site) + (nm,) == best[naive.sam_primary(name, len(best))]
        chosen.add((i % 2, site[0], site[1]))
    assert len(chosen) == 2 * 6  # every copy for either kind of read, those past --max-hits 2 included


def test_bad_errors_and_too_short_reads_are_usage_errors(tmp_path, reference, capsys):
    ssx = index_of(tmp_path, reference)
    out = tmp_path / "out.tsv"
    assert main(["search", str(ssx), str(reads_file(tmp_path, ["ACGTACGT", "ACG"])), "-e", "3", "-o", str(out)]) == 2
    assert "q1" in capsys.readouterr().err and not out.exists()
    assert main(["search", str(ssx), str(reads_file(tmp_path, ["ACGTACGT"])), "-e", "99", "-o", str(out)]) == 2
    assert "--errors" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("distance", ["hamming", "edit"])
def test_simulate_then_search_then_check_with_errors(tmp_path, distance, capsys):
    genome = LAMBDA
    reads = tmp_path / "sim.fq"
    assert main(["simulate", str(genome), "-n", "150", "--length", "40", "--max-length", "70", "--error-rate", "0.03",
                 "--seed", "5", "-o", str(reads)]) == 0
    ssx, out = tmp_path / "lambda.ssx", tmp_path / "out.tsv"
    assert main(["index", "-q", str(genome), "-o", str(ssx)]) == 0
    assert main(["search", str(ssx), str(reads), "-e", "3", "--distance", distance, "--max-hits", "2",
                 "-o", str(out)]) == 0
    assert main(["check", str(genome), str(out), str(reads), "-e", "3", "--distance", distance]) == 0
    lines = out.read_text().splitlines()
    assert any(":1," in line or line.endswith(":1") for line in lines)  # some reads carry errors
    victim = next(i for i, line in enumerate(lines) if line.split("\t")[1] == "1")
    name, _, hits = lines[victim].split("\t")
    record, position, strand, d = hits.split(":")
    for wrong in (f"{name}\t2\t{hits}", f"{name}\t1\t{record}:{position}:{strand}:{int(d) + 1}",
                  f"{name}\t1\t{record}:{int(position) + 4}:{strand}:{d}"):
        lines[victim] = wrong
        bad = tmp_path / "bad.tsv"
        bad.write_text("\n".join(lines) + "\n")
        assert main(["check", str(genome), str(bad), str(reads), "-e", "3", "--distance", distance]) == 1
        assert f"read {name}" in capsys.readouterr().out
