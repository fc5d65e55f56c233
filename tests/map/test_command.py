"""`seqsift map` end to end: SAM that htslib reads, the same records from a FASTA and its .ssx
index at any thread count, and bad input failing with exit 2 and no output file."""

from __future__ import annotations

from pathlib import Path

import pysam
import pytest

from seqsift.cli import main
from tests import naive
from tests.conftest import LAMBDA



@pytest.fixture(scope="module")
def lambda_reads(tmp_path_factory):
    """Simulated lambda reads (substitutions, both strands, 10% random) and the index."""
    from seqsift.fmindex.simulate import simulate

    d = tmp_path_factory.mktemp("map")
    reads = simulate(LAMBDA, 300, 80, 160, found_fraction=0.9, error_rate=0.01, seed=7)
    path = d / "reads.fq"
    path.write_text("".join(f"@{h}\n{s.decode()}\n+\n{'I' * len(s)}\n" for h, s in reads))
    index = d / "lambda.ssx"
    assert main(["index", str(LAMBDA), "-o", str(index), "-q"]) == 0
    return path, index, reads


def body(path) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if not line.startswith("@")]


def test_map_writes_sam_from_fasta_and_index_alike(lambda_reads, tmp_path, capsys, threads):
    reads, index, truth = lambda_reads
    from_fasta, from_index = tmp_path / "a.sam", tmp_path / "b.sam"
    assert main(["map", str(LAMBDA), str(reads), "-o", str(from_fasta), "-t", "1", "-R", "@RG\\tID:x\\tSM:y"]) == 0
    assert "indexing it in memory" in capsys.readouterr().err
    assert main(["map", str(index), str(reads), "-o", str(from_index), "-t", str(threads), "--batch-reads", "13",
                 "-R", "@RG\\tID:x\\tSM:y"]) == 0
    assert body(from_fasta) == body(from_index)
    with pysam.AlignmentFile(str(from_index)) as sam:
        assert sam.header["PG"][0]["CL"].startswith("seqsift")
        recs = [r for r in sam if not r.is_supplementary]
    assert [r.query_name for r in recs] == [h.split()[0] for h, _ in truth]
    for r, (h, _) in zip(recs, truth):
        assert r.get_tag("RG") == "x"
        if "random" in h:
            assert r.is_unmapped
            continue
        origin = h.split()[1][5:].rsplit(":", 2)
        assert not r.is_unmapped and r.is_reverse == (origin[2] == "-")
        assert abs(r.reference_start - int(origin[1])) <= 10


def test_map_reads_is_public(lambda_reads):
    import seqsift

    reads, index, truth = lambda_reads
    mapped = seqsift.map_reads(index, reads)
    assert len(mapped) == len(truth) and sum(m.mapped for m in mapped) == sum("random" not in h for h, _ in truth)
    assert {m.references[0] for m in mapped if m.mapped} == {"gi|9626243|ref|NC_001416.1|"}


@pytest.mark.parametrize("argv, message", [
    (["--backend", "cuda"], "CPU only"),
    (["-R", "@RG\\tSM:y"], "ID:"),
    (["-k", "33"], "seed_length"),
])
def test_bad_options_exit_2(lambda_reads, tmp_path, capsys, argv, message):
    reads, index, _ = lambda_reads
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    out = [] if "-o" in argv else ["-o", str(tmp_path / "o.sam")]
    assert main(["map", str(index), str(reads), *out, *argv]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_malformed_reads_exit_2_without_output(lambda_reads, tmp_path, capsys):
    _, index, _ = lambda_reads
    bad = tmp_path / "bad.fq"
    bad.write_text("@r1\nACGTACGTACGTACGTACGTAC\n+\nIIIIIIIIIIIIIIIIIIIIII\n@r2\nACGT\nIIII\n")
    out = tmp_path / "o.sam"
    assert main(["map", str(index), str(bad), "-o", str(out)]) == 2
    assert "bad.fq:5: file ends inside a FASTQ record" in capsys.readouterr().err
    assert not out.exists()
    assert main(["map", str(index), str(tmp_path / "missing.fq"), "-o", str(out)]) == 2
    assert not out.exists()


def test_reverse_strand_records_carry_the_reverse_complement(lambda_reads, tmp_path):
    _, index, _ = lambda_reads
    genome = naive.read_records(LAMBDA)[0][1]
    read = naive.reverse_complement(genome[1000:1100])
    path = tmp_path / "r.fq"
    path.write_text(f"@rc\n{read}\n+\n{'#' * 50 + 'I' * 50}\n")
    out = tmp_path / "o.sam"
    assert main(["map", str(index), str(path), "-o", str(out)]) == 0
    with pysam.AlignmentFile(str(out)) as sam:
        (r,) = list(sam)
    assert r.is_reverse and r.reference_start == 1000 and r.cigarstring == "100M"
    assert r.query_sequence == genome[1000:1100]
    assert pysam.qualities_to_qualitystring(r.query_qualities) == "I" * 50 + "#" * 50
    assert r.get_tag("NM") == 0 and r.get_tag("MD") == "100" and r.mapping_quality == 60


def test_bam_output_and_a_typed_tab_in_the_read_group(lambda_reads, tmp_path):
    """-o NAME.bam writes BAM (htslib reads the same records as from SAM); a read group typed
    with real tabs gives the same header, and the @PG command line stays one field."""
    reads, index, _ = lambda_reads
    sam, bam = tmp_path / "o.sam", tmp_path / "o.bam"
    assert main(["map", str(index), str(reads), "-o", str(sam), "-R", "@RG\tID:x\tSM:y", "-q"]) == 0
    assert main(["map", str(index), str(reads), "-o", str(bam), "-R", "@RG\tID:x\tSM:y", "-q"]) == 0
    with pysam.AlignmentFile(str(sam)) as a, pysam.AlignmentFile(str(bam), "rb") as b:
        assert [r.to_string() for r in a] == [r.to_string() for r in b]
        assert b.header["RG"] == [{"ID": "x", "SM": "y"}]
    (pg,) = [line for line in sam.read_text().splitlines() if line.startswith("@PG")]
    assert [f[:3] for f in pg.split("\t")] == ["@PG", "ID:", "PN:", "VN:", "CL:", "DS:"]


def test_simulated_indels_are_placed(tmp_path):
    """`seqsift simulate --indel-rate`: reads of the asked length whose headers count their
    indels; `seqsift map` places them where they came from, with the indels in the CIGAR."""
    reads = tmp_path / "indels.fq"
    assert main(["simulate", str(LAMBDA), "-n", "400", "--length", "120", "--error-rate", "0.005", "--indel-rate",
                 "0.004", "--found-fraction", "1", "--seed", "5", "-o", str(reads)]) == 0
    headers = [line[1:].split() for line in reads.read_text().splitlines()[0::4]]
    assert all(len(s) == 120 for s in reads.read_text().splitlines()[1::4])
    indels = [int(h[3].split("=")[1]) for h in headers]
    assert sum(i > 0 for i in indels) > 50
    out = tmp_path / "o.sam"
    assert main(["map", str(LAMBDA), str(reads), "-o", str(out), "-q"]) == 0
    with pysam.AlignmentFile(str(out)) as sam:
        recs = [r for r in sam if not r.is_supplementary]
    gapped = 0
    for r, h, k in zip(recs, headers, indels):
        _, pos, strand = h[1][5:].rsplit(":", 2)
        assert not r.is_unmapped and r.is_reverse == (strand == "-")
        assert abs(r.reference_start - int(pos)) <= 12 or abs(r.reference_start - r.query_alignment_start - int(pos)) <= 12
        gapped += k > 0 and any(op in (1, 2) for op, _ in r.cigartuples)
    assert gapped > 0.5 * sum(k > 0 for k in indels)


def test_a_broken_reference_exits_2_without_output(lambda_reads, tmp_path, capsys):
    reads, index, _ = lambda_reads
    broken = tmp_path / "broken.ssx"
    broken.write_bytes(index.read_bytes()[:5000])
    out = tmp_path / "o.sam"
    for reference in (broken, tmp_path, tmp_path / "missing.fa"):
        assert main(["map", str(reference), str(reads), "-o", str(out)]) == 2
        assert str(reference.name) in capsys.readouterr().err
        assert not out.exists()
