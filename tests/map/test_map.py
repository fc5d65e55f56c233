"""The read mapper: the extension kernel against the full-matrix oracle, simulated reads of known
origin placed where they came from, NM/MD/AS recomputed from SEQ, POS and CIGAR, and the SAM
read back by htslib (pysam)."""

from __future__ import annotations

import re

import numpy as np
import pysam
import pytest

from seqsift.errors import InputError, UsageError
from seqsift.map._extend import NEG, OP_D, OP_I, OP_M, alignment_floor, clip_align
from seqsift.map.api import map_reads
from seqsift.map.scoring import MapOptions, mapq
from tests.naive import clip_alignment_score, cigar_tags, reverse_complement

O = MapOptions()
SCORES = (O.match, O.mismatch, O.ambiguous, O.gap_open, O.gap_extend)
CODE = {c: i for i, c in enumerate("ACGT")}


def codes(seq: str) -> np.ndarray:
    return np.array([CODE.get(c, 4) for c in seq], np.int8)


def run_kernel(q: str, t: str, dlo: int, dhi: int, clip5=O.clip, clip3=O.clip, floor=NEG, scores=SCORES):
    width = dhi - dlo + 1
    trace = np.empty((len(q) + 1) * width, np.int8)
    ops = np.empty(len(q) + len(t) + 1, np.int64)
    lens = np.empty_like(ops)
    total, score, qb, qe, tb, te, runs = clip_align(codes(q), codes(t), dlo, dhi, *scores, clip5, clip3, floor, trace,
                                                    ops, lens)
    return total, score, qb, qe, tb, te, list(zip(ops[:runs].tolist(), lens[:runs].tolist()))


def rescore(q: str, t: str, qb: int, tb: int, runs) -> tuple[int, int, int]:
    """(score, read end, window end) of CIGAR runs walked over the sequences."""
    cigar = "".join(f"{n}{'MID'[op]}" for op, n in runs)
    nm, md, score = cigar_tags(q[qb:], t, tb, cigar, *SCORES)
    read_used = sum(n for op, n in runs if op != OP_D)
    ref_used = sum(n for op, n in runs if op != OP_I)
    return score, qb + read_used, tb + ref_used


def random_dna(rng, n: int) -> str:
    return "".join("ACGT"[c] for c in rng.integers(0, 4, n))


def mutate(rng, seq: str, subs: float, indels: float) -> str:
    out = []
    i = 0
    while i < len(seq):
        x = rng.random()
        if x < indels / 2:  # deletion of 1-3 bases
            i += int(rng.integers(1, 4))
            continue
        if x < indels:  # insertion of 1-3 bases
            out.append(random_dna(rng, int(rng.integers(1, 4))))
        c = seq[i]
        if rng.random() < subs:
            c = "ACGT".replace(c, "")[int(rng.integers(0, 3))]
        out.append(c)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("case", range(40))
def test_kernel_matches_oracle(rng, case):
    """Random reads against windows that hold a mutated copy of them (or not), full band and
    narrow band: the kernel's best score is the oracle's, and its CIGAR rescored gives it."""
    m = int(rng.integers(1, 40))
    q = random_dna(rng, m)
    if case % 3 == 0:
        q = q[:5] + "N" + q[6:]
    if case % 2:
        t = random_dna(rng, int(rng.integers(0, 10))) + mutate(rng, q, 0.1, 0.1) + random_dna(rng, int(rng.integers(0, 10)))
    else:
        t = random_dna(rng, int(rng.integers(1, 50)))
    q = q[:m]
    clip5, clip3 = int(rng.integers(0, 8)), int(rng.integers(0, 8))
    for dlo, dhi in ((-len(q), len(t)), (int(rng.integers(-5, 3)), int(rng.integers(3, 12)))):
        total, score, qb, qe, tb, te, runs = run_kernel(q, t, dlo, dhi, clip5, clip3)
        assert total == clip_alignment_score(q, t, *SCORES, clip5, clip3, band=(dlo, dhi))
        assert score == total + (clip5 if qb > 0 else 0) + (clip3 if qe < len(q) else 0)
        got_score, got_qe, got_te = rescore(q, t, qb, tb, runs)
        assert (got_score, got_qe, got_te) == (score, qe, te)
        assert all(dlo <= j - i <= dhi for i, j in ((qb, tb), (qe, te)))



@pytest.mark.parametrize("case", range(60))
def test_a_floor_prunes_the_band_without_changing_the_answer(rng, case):
    """alignment_floor against tests/naive.floor_alignments (the same few alignments, listed
    one by one) and never above the band's best (the full-matrix oracle); clip_align given that
    floor returns what it returns without one, score, ends and CIGAR alike: reads copied with
    substitutions, indels and N near the chain's two diagonals, random windows, other scores."""
    from tests.naive import floor_alignments

    m = int(rng.integers(1, 60))
    q = random_dna(rng, m)
    if case % 5 == 0:
        q = q[: m // 2] + "N" + q[m // 2 + 1 :]
    flank = int(rng.integers(0, 12))
    if case % 4 == 3:
        t = random_dna(rng, m + 2 * flank + int(rng.integers(0, 6)))
    else:
        t = random_dna(rng, flank) + mutate(rng, q, 0.08, 0.05) + random_dna(rng, int(rng.integers(0, 12)))
    q = q[:m]
    d_lo = flank - int(rng.integers(0, 3))
    d_hi = d_lo + int(rng.integers(0, 6))
    scores = SCORES if case % 3 else (int(rng.integers(1, 3)), int(rng.integers(0, 6)), int(rng.integers(0, 3)),
                                      int(rng.integers(0, 7)), int(rng.integers(1, 3)))
    clip = int(rng.integers(0, 8))
    band = int(rng.integers(0, 8))
    dlo, dhi = d_lo - band, d_hi + band
    floor = alignment_floor(codes(q), codes(t), d_lo, d_hi, *scores, clip)
    expected = floor_alignments(q, t, d_lo, d_hi, *scores, clip)
    assert floor == (NEG if expected is None else expected)
    if floor == NEG:
        return
    assert floor <= clip_alignment_score(q, t, *scores, clip, clip, band=(dlo, dhi))
    assert run_kernel(q, t, dlo, dhi, clip, clip, floor, scores) == run_kernel(q, t, dlo, dhi, clip, clip, NEG, scores)

def test_kernel_prefers_clipping_only_when_it_pays():
    ref = "ACGTTGCAAGGCTTACGATCGATCGGATCCATGCAAGTC"
    read = "CATG" + ref[4:30]  # 4 mismatching first bases cost more than the clip
    total, score, qb, *_ = run_kernel(read, ref, -len(read), len(ref))
    assert qb == 4 and score == 26 and total == 21
    read = "T" + ref[1:30]  # one mismatch costs 4 < clip 5: aligned end to end
    total, score, qb, *_ = run_kernel(read, ref, -len(read), len(ref))
    assert qb == 0 and score == total == 25


@pytest.mark.parametrize("clip", [5, 4, 3, 0])
def test_ungapped_shortcut_is_the_band_optimum(rng, clip):
    """A read laid on one diagonal with no or one differing base skips the band only where no
    alignment can beat it: the placement's score is the full-matrix oracle's on its window."""
    from seqsift.fmindex.reference import Reference
    from seqsift.map.extend import Extender

    options = MapOptions(clip=clip)
    text = random_dna(rng, 400)
    reference = Reference(text=None, names=["x"], starts=np.array([0]), lengths=np.array([400]))
    ext = Extender(reference, codes(text), options)
    for case in range(12):
        m = int(rng.integers(30, 90))
        at = int(rng.integers(20, 400 - m - 20))
        read = list(text[at : at + m])
        where = [0, m - 1, 1, int(rng.integers(0, m))][case % 4]
        if case % 3 == 1:
            read[where] = "ACGT"[("ACGT".index(read[where]) + 1) % 4]
        elif case % 3 == 2:
            read[where] = "N"
        read = "".join(read)
        p = ext.place(codes(read), 0, at, at, at)
        lo, hi = max(0, at - options.band), min(400, at + m + options.band)
        best = clip_alignment_score(read, text[lo:hi], *SCORES[:3], options.gap_open, options.gap_extend, clip, clip)
        assert p.total == best, (case, where, p)
        assert rescore(read, text, p.qb, p.position, list(zip(p.ops, p.lens)))[0] == p.score


def test_an_extension_past_the_traceback_limit_is_skipped(monkeypatch):
    from seqsift.fmindex.reference import Reference
    from seqsift.map import extend

    text = "ACGTTGCAAGGCTTACGATCGATCGGATCCATGCAAGTC" * 4
    reference = Reference(text=None, names=["x"], starts=np.array([0]), lengths=np.array([len(text)]))
    ext = extend.Extender(reference, codes(text), MapOptions())
    read = codes(text[10:70])
    assert ext.place(read, 0, 10, 12, 10) is not None
    monkeypatch.setattr(extend, "MAX_TRACE", 61 * 35 - 1)  # 60 bases + 1 rows, diagonals 10-12 and 16 each side
    assert extend.Extender(reference, codes(text), MapOptions()).place(read, 0, 10, 12, 10) is None


def test_the_batch_kernel_places_as_one_chain_at_a_time(genome, rng, tmp_path):
    """Extender.place_all (every read's chains in one compiled call) gives each read the
    placements Extender.place gives chain by chain, with the same chain selection."""
    from seqsift.map.api import batches_of
    from seqsift.map.extend import oriented
    from seqsift.map.mapper import Mapper, load_index
    from seqsift.map.seeding import find_chains

    ref_path, records, _ = genome
    path = write_fastq(tmp_path / "reads.fq", simulate(rng, records, 80))
    mapper = Mapper(load_index(ref_path), MapOptions(band=6))
    ext, o = mapper.extender(), mapper.options
    (batch,) = list(batches_of(path))
    chains = find_chains(mapper.searcher, batch.codes, batch.bounds, o)
    forward, reverse = oriented(batch.codes)
    together = ext.place_all(forward, reverse, batch.bounds, chains)
    size, placed = forward.size, 0
    for r, got in enumerate(together):
        lo, hi = batch.bounds[r], batch.bounds[r + 1]
        reads = forward[lo:hi], reverse[size - hi : size - lo]
        first, last = chains.offsets[r], chains.offsets[r + 1]
        one_by_one = []
        for c in range(first, min(last, first + o.max_chains)):
            if chains.weight[c] < o.drop_ratio * chains.weight[first]:
                break
            s = int(chains.strand[c])
            p = ext.place(reads[s], s, int(chains.diag_lo[c]), int(chains.diag_hi[c]), int(chains.anchor[c]))
            one_by_one += [p] if p is not None else []
        assert got == one_by_one
        placed += len(got)
    assert placed > 60


def test_one_placement_is_chosen_as_the_general_path_would(genome, rng, tmp_path):
    from seqsift.map.api import batches_of
    from seqsift.map.choose import choose
    from seqsift.map.mapper import Mapper, load_index

    ref_path, records, _ = genome
    path = write_fastq(tmp_path / "reads.fq", simulate(rng, records, 60))
    mapper = Mapper(load_index(ref_path))
    singles = 0
    for batch in batches_of(path):
        for _, placements in mapper.candidates(batch):
            if len(placements) == 1:
                singles += 1
                assert choose(placements, O) == choose(placements, O, primary=placements[0])  # the general path
    assert singles > 20


def test_mapq_follows_bwa():
    assert mapq(O, 150, 150, 0, 150, 150) == 0  # two equally good places
    assert mapq(O, 150, 0, 0, 150, 150) == 60
    assert 0 < mapq(O, 150, 140, 0, 150, 150) < 60
    assert mapq(O, 150, 140, 3, 150, 150) < mapq(O, 150, 140, 0, 150, 150)


# -- whole reads ---------------------------------------------------------------------------------------------------
@pytest.fixture
def genome(rng, tmp_path):
    """Two records; a 300-base segment appears in both (reads inside it have two equal places);
    record two holds a run of N."""
    repeat = random_dna(rng, 300)
    one = random_dna(rng, 6000) + repeat + random_dna(rng, 6000)
    two = random_dna(rng, 3000) + "N" * 50 + random_dna(rng, 2000) + repeat + random_dna(rng, 2500)
    path = tmp_path / "ref.fa"
    path.write_text(f">one first record\n{one}\n>two\n{two}\n")
    return path, {"one": one, "two": two}, (6000, 6300)


def simulate(rng, records, n=150):
    """(name, seq, truth) reads: truth = (record, leftmost origin, strand) or None for random
    ones. Substitutions, 1-3 base indels, both strands, lengths 70-180, some with N."""
    reads = []
    names = list(records)
    for k in range(n):
        if k % 15 == 0:
            reads.append((f"r{k}", random_dna(rng, int(rng.integers(70, 180))), None))
            continue
        name = names[int(rng.integers(0, 2))]
        seq = records[name]
        length = int(rng.integers(70, 180))
        start = int(rng.integers(0, len(seq) - length))
        piece = seq[start : start + length]
        if "N" in piece:
            continue
        read = mutate(rng, piece, 0.01, 0.004)
        if k % 7 == 0:
            at = int(rng.integers(20, len(read) - 20))
            read = read[:at] + "N" + read[at + 1 :]
        strand = int(rng.integers(0, 2))
        if strand:
            read = reverse_complement(read)
        reads.append((f"r{k}", read, (name, start, "+-"[strand])))
    return reads


def write_fastq(path, reads):
    path.write_text("".join(f"@{name} extra words\n{seq}\n+\n{'I' * len(seq)}\n" for name, seq, _ in reads))
    return path


def leading_clip(cigar: str) -> int:
    m = re.match(r"(\d+)S", cigar)
    return int(m.group(1)) if m else 0


def test_simulated_reads_are_placed_and_tagged_truly(genome, rng, tmp_path):
    ref_path, records, (rep_lo, rep_hi) = genome
    reads = simulate(rng, records)
    # a read across the end of record one: its last 90 bases, then 60 random ones
    reads.append(("across_end", records["one"][-90:] + random_dna(rng, 60), ("one", len(records["one"]) - 90, "+")))
    reads.append(("empty", "", None))
    out = tmp_path / "out.sam"
    counts = map_reads(ref_path, write_fastq(tmp_path / "reads.fq", reads), out, read_group="@RG\\tID:g1\\tSM:s1")
    assert counts["reads"] == len(reads)
    with pysam.AlignmentFile(str(out), "r") as sam:
        assert sam.header["RG"][0]["ID"] == "g1"
        assert [sq["SN"] for sq in sam.header["SQ"]] == ["one", "two"]
        records_out = list(sam)
    primary = [r for r in records_out if not r.is_secondary and not r.is_supplementary]
    assert [r.query_name for r in primary] == [name for name, _, _ in reads]  # every read once, in input order
    wrong, placed = [], 0
    for r, (name, seq, truth) in zip(primary, reads):
        assert r.get_tag("RG") == "g1"
        if truth is None:
            assert r.is_unmapped, name
            assert r.query_sequence in (seq, None)
            continue
        assert not r.is_unmapped, name
        record, start, strand = truth
        assert r.is_reverse == (strand == "-")
        assert r.query_sequence == (reverse_complement(seq) if r.is_reverse else seq)
        in_repeat = record in ("one", "two") and r.reference_start < rep_hi + 300 and rep_lo - 300 < r.reference_end \
            and r.mapping_quality == 0
        implied = r.reference_start - leading_clip(r.cigarstring)
        if r.reference_name == record and abs(implied - start) <= 10:
            placed += 1
        elif not in_repeat:
            wrong.append((name, truth, r.reference_name, r.reference_start, r.cigarstring))
        ref = records[r.reference_name]
        nm, md, score = cigar_tags(r.query_sequence, ref, r.reference_start, r.cigarstring, *SCORES)
        assert (r.get_tag("NM"), r.get_tag("MD"), r.get_tag("AS")) == (nm, md, score), name
        assert 0 <= r.mapping_quality <= 60
    assert not wrong
    assert placed >= 0.9 * sum(t is not None for _, _, t in reads)
    end = next(r for r in primary if r.query_name == "across_end")
    assert end.cigarstring.endswith("S") and end.reference_end == len(records["one"])


@pytest.mark.parametrize("deleted, inserted", [(20, 0), (35, 0), (60, 0), (0, 18), (0, 30)])
def test_a_long_indel_between_seeds_is_one_alignment(genome, rng, tmp_path, deleted, inserted):
    """Seeds on both sides of an indel longer than the band form one chain (chain_gap), so the
    read aligns in one piece with the indel in its CIGAR, as bwa mem aligns it."""
    ref_path, records, _ = genome
    seq = records["one"]
    start = int(rng.integers(100, 5000))
    read = seq[start : start + 75] + random_dna(rng, inserted) + seq[start + 75 + deleted : start + 150 + deleted]
    (m,) = map_reads(ref_path, write_fastq(tmp_path / "r.fq", [("indel", read, None)]))
    (c,) = m.alignments
    p = c.placement
    # the gap may sit a few bases either way where the bases beside it repeat: any place is as good
    shape = re.fullmatch(rf"(\d+)M{deleted or inserted}{'D' if deleted else 'I'}(\d+)M", p.cigar())
    assert p.position == start and shape and int(shape[1]) + int(shape[2]) == 150, p.cigar()
    nm, md, score = cigar_tags(read, seq, p.position, p.cigar(), *SCORES)
    assert (m.nm[0], m.md[0], p.score) == (nm, md, score)
    (split,) = [map_reads(ref_path, tmp_path / "r.fq", options=MapOptions(chain_gap=10))]
    assert len(split[0].alignments) == 2  # chained apart, the read is a primary and a supplementary part


@pytest.mark.parametrize("period", [40, 80])
def test_a_read_inside_a_tandem_repeat_has_mapq_zero(rng, tmp_path, period):
    """Seeds of a tandem repeat hit every copy: they are not taken for an indel (one chain), so
    the copies compete and the read gets MAPQ 0 with XS equal to AS, as bwa mem gives; a read
    reaching into unique sequence keeps MAPQ 60 with a lower XS."""
    unit = random_dna(rng, period)
    genome = random_dna(rng, 2000) + unit * (320 // period) + random_dna(rng, 2000)
    ref = tmp_path / "tandem.fa"
    ref.write_text(f">t\n{genome}\n")
    reads = [("inside", genome[2005:2155], None), ("edge", genome[1940:2090], None)]
    inside, edge = map_reads(ref, write_fastq(tmp_path / "r.fq", reads))
    assert inside.alignments[0].mapq == 0 and inside.alignments[0].sub == inside.alignments[0].placement.score == 150
    assert edge.alignments[0].placement.position == 1940 and edge.alignments[0].mapq == 60
    assert edge.alignments[0].sub < 150


def test_kernel_optimum_on_the_window(genome, rng, tmp_path):
    """For mapped reads, no alignment in the window around the reported one scores better
    (the full-matrix oracle, unbanded)."""
    ref_path, records, _ = genome
    reads = [r for r in simulate(rng, records, 20) if r[2] is not None][:8]
    result = map_reads(ref_path, write_fastq(tmp_path / "reads.fq", reads))
    for m, (name, seq, truth) in zip(result, reads):
        c = m.alignments[0]
        p = c.placement
        read = reverse_complement(seq) if p.strand else seq
        ref = records[truth[0]]
        lo, hi = max(0, p.position - 20), min(len(ref), p.end + 20)
        best = clip_alignment_score(read, ref[lo:hi], *SCORES, O.clip, O.clip)
        assert p.total == best, name


def test_two_equal_places_give_mapq_zero(genome, tmp_path):
    ref_path, records, (rep_lo, rep_hi) = genome
    read = records["one"][rep_lo + 50 : rep_lo + 200]
    (m,) = map_reads(ref_path, write_fastq(tmp_path / "r.fq", [("rep", read, None)]))
    c = m.alignments[0]
    assert c.mapq == 0 and c.sub == c.placement.score == 150


def test_secondary_records_with_all(genome, tmp_path):
    """With secondary=True (-a) the other copy of a repeat is a secondary record (0x100, MAPQ 0,
    no SA tag), after the primary; without it, only the primary."""
    ref_path, records, (rep_lo, rep_hi) = genome
    reads = write_fastq(tmp_path / "r.fq", [("rep", records["one"][rep_lo + 50 : rep_lo + 200], None),
                                            ("uniq", records["one"][100:250], None)])
    for secondary in (False, True):
        out = tmp_path / f"{secondary}.sam"
        map_reads(ref_path, reads, out, options=MapOptions(secondary=secondary))
        with pysam.AlignmentFile(str(out)) as sam:
            recs = list(sam)
        if not secondary:
            assert [r.query_name for r in recs] == ["rep", "uniq"]
            continue
        assert [(r.query_name, r.is_secondary) for r in recs] == [("rep", False), ("rep", True), ("uniq", False)]
        first, second = recs[0], recs[1]
        assert {first.reference_name, second.reference_name} == {"one", "two"}
        assert second.mapping_quality == 0 and not second.has_tag("SA")
        assert second.get_tag("AS") == first.get_tag("AS") == 150 and second.get_tag("NM") == 0


def test_xa_lists_the_other_copies_as_bwa_writes_them(genome, rng, tmp_path):
    """A read in the repeat, with a difference or two, names the other copy in XA as
    record,+-position,CIGAR,NM; (both strands), that alternative's NM agreeing with the
    sequences; a unique read has no XA, and with -a (secondary records) none has, as bwa mem."""
    ref_path, records, (rep_lo, rep_hi) = genome
    two_lo = records["two"].index(records["one"][rep_lo:rep_hi])
    piece = records["one"][rep_lo + 50 : rep_lo + 200]
    piece = piece[:70] + "ACGT"[("ACGT".index(piece[70]) + 1) % 4] + piece[71:]
    reads = [("fwd", piece, None), ("rev", reverse_complement(piece), None), ("uniq", records["one"][100:250], None)]
    path = write_fastq(tmp_path / "r.fq", reads)
    for secondary in (False, True):
        out = tmp_path / f"{secondary}.sam"
        map_reads(ref_path, path, out, options=MapOptions(secondary=secondary))
        with pysam.AlignmentFile(str(out)) as sam:
            primary = [r for r in sam if not r.is_secondary]
        assert [r.query_name for r in primary] == ["fwd", "rev", "uniq"]
        assert not primary[2].has_tag("XA")
        for r in primary[:2]:
            if secondary:
                assert not r.has_tag("XA")
                continue
            (entry,) = r.get_tag("XA").rstrip(";").split(";")
            name, signed, cigar, nm = entry.split(",")
            other = "two" if r.reference_name == "one" else "one"
            start = two_lo + 50 if other == "two" else rep_lo + 50
            assert (name, signed[0], int(signed[1:])) == (other, "-" if r.is_reverse else "+", start + 1)
            assert int(nm) == cigar_tags(r.query_sequence, records[other], start, cigar, *SCORES)[0] == 1


def test_chimeric_read_gets_a_supplementary_record(genome, tmp_path):
    ref_path, records, _ = genome
    read = records["one"][1000:1080] + records["two"][500:580]
    out = tmp_path / "c.sam"
    map_reads(ref_path, write_fastq(tmp_path / "r.fq", [("chimera", read, None)]), out)
    with pysam.AlignmentFile(str(out), "r") as sam:
        recs = list(sam)
    assert len(recs) == 2 and not recs[0].is_supplementary and recs[1].is_supplementary
    assert {(r.reference_name, r.reference_start) for r in recs} == {("one", 1000), ("two", 500)}
    assert all(r.has_tag("SA") for r in recs)


def test_output_order_is_input_order_at_any_thread_count(genome, rng, tmp_path, threads):
    from seqsift.map.api import map_batches
    from seqsift.map.mapper import Mapper, load_index

    ref_path, records, _ = genome
    reads = simulate(rng, records, 120)
    path = write_fastq(tmp_path / "reads.fq", reads)
    mapper = Mapper(load_index(ref_path))
    got = [m.name for batch in map_batches(mapper, path, threads, batch_reads=7) for m in batch]
    assert got == [name for name, _, _ in reads]


def test_bad_inputs_are_clear_errors(genome, tmp_path):
    ref_path, _, _ = genome
    reads = write_fastq(tmp_path / "r.fq", [("a", "ACGT" * 20, None)])
    with pytest.raises(UsageError, match="ID:"):
        map_reads(ref_path, reads, tmp_path / "o.sam", read_group="@RG\\tSM:x")
    with pytest.raises(InputError):
        map_reads(tmp_path / "missing.fa", reads)
    with pytest.raises(UsageError, match="seed_length"):
        MapOptions(seed_length=40)
    assert not (tmp_path / "o.sam").exists()


def test_chain_kernel_matches_the_oracle(rng):
    """seeding's compiled chaining against tests/naive.seed_chains on random hit lists: repeated
    pieces (tandem repeats), both strands, near and far diagonals, pieces over the occurrence cap."""
    from seqsift.map.seeding import _CHAIN_HITS
    from tests.naive import seed_chains

    for _ in range(200):
        reads = int(rng.integers(1, 8))
        per_read = rng.integers(0, 6, reads)
        piece_read = np.repeat(np.arange(reads), per_read).astype(np.int64)
        counts = rng.integers(0, 8, piece_read.size).astype(np.int64)
        listed = np.minimum(counts, rng.integers(0, 4, piece_read.size))
        piece = np.repeat(np.arange(piece_read.size), listed).astype(np.int64)
        strand = rng.integers(0, 2, piece.size).astype(np.int64)
        diag = (rng.integers(0, 3, piece.size) * 60 + rng.integers(0, 30, piece.size)).astype(np.int64)
        text_pos = rng.integers(0, 10_000, piece.size).astype(np.int64)
        band, gap, cap = int(rng.integers(1, 20)), int(rng.integers(10, 80)), int(rng.integers(2, 8))
        room = max(piece.size, 1)
        offsets = np.empty(reads + 1, np.int64)
        out = [np.empty(room, np.int64) for _ in range(5)]
        total = _CHAIN_HITS(piece_read, piece, strand, text_pos, diag, counts, cap, band, gap, reads, offsets, *out)
        got = [[tuple(int(a[c]) for a in out) for c in range(offsets[r], offsets[r + 1])] for r in range(reads)]
        assert got == seed_chains(piece_read, piece, strand, text_pos, diag, counts, cap, band, gap, reads)
        assert offsets[reads] == total



def test_piece_codes_are_the_reads_pieces(rng):
    """seeding.pieces and the compiled copy of their codes against slicing each read: pieces at
    0, step, 2 step, ... and the last k bases, a read shorter than k one piece; reads of every
    length from empty up, codes 0-3 and 255."""
    from seqsift.map.seeding import _PIECE_CODES, pieces

    for _ in range(100):
        k, step = int(rng.integers(1, 25)), int(rng.integers(1, 15))
        lengths = rng.integers(0, 80, int(rng.integers(1, 12)))
        bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        codes = rng.choice(np.array([0, 1, 2, 3, 255], np.uint8), int(bounds[-1]))
        read, offset, length = pieces(bounds, k, step)
        piece_bounds = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
        out = np.empty(int(piece_bounds[-1]), np.uint8)
        _PIECE_CODES(codes, bounds, read, offset, piece_bounds, out)
        got = [out[a:b].tolist() for a, b in zip(piece_bounds[:-1], piece_bounds[1:])]
        expected = []
        for r, m in enumerate(lengths.tolist()):
            seq = codes[bounds[r] : bounds[r + 1]].tolist()
            starts = sorted(set(list(range(0, m - k, step)) + [m - k])) if m > k else [0]
            expected += [seq[o : o + k] for o in starts]
        assert got == expected



@pytest.mark.parametrize("seed_length", [8, 19, 30])
def test_seed_hits_found_from_a_neighbour_are_those_the_lf_walks_find(genome, rng, tmp_path, seed_length):
    """seeding.NeighbourLocate (pieces that occur once found on an earlier piece's diagonal)
    against the LF walks alone: the same hits and chains for reads with substitutions, indels,
    N, both strands, inside the repeat, across the N run and record ends, random ones; seeds
    shorter than the index's k-mer and long enough for the search to stop early (those take no
    part). Fewer rows walk."""
    from seqsift.map.api import batches_of
    from seqsift.map.mapper import Mapper, load_index
    from seqsift.map.seeding import NeighbourLocate, find_chains, pieces
    from seqsift.fmindex.seeds import piece_hits

    ref_path, records, _ = genome
    reads = simulate(rng, records, 120)
    joined = records["one"] + records["two"]
    reads += [(f"edge{k}", joined[len(records["one"]) - k : len(records["one"]) - k + 100], None) for k in (30, 60)]
    mapper = Mapper(load_index(ref_path))
    options = MapOptions(seed_length=seed_length, seed_step=7)
    walked, totals = [], [0, 0]
    searcher = mapper.searcher
    plain_locate = searcher._locate

    def counting(rows):
        walked.append(rows.size)
        return plain_locate(rows)

    for batch in batches_of(write_fastq(tmp_path / "r.fq", reads), 40):
        read, offset, length = pieces(batch.bounds, options.seed_length, options.seed_step)
        piece_bounds = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
        flat = np.concatenate([batch.codes[batch.bounds[r] + o : batch.bounds[r] + o + n]
                               for r, o, n in zip(read, offset, length)]).astype(np.uint8)
        into_reverse = np.diff(batch.bounds)[read] - offset - length
        searcher._locate = counting
        try:
            walked.clear()
            plain = piece_hits(searcher, flat, piece_bounds, offset, into_reverse, options.max_occurrences)
            rows = sum(walked)
            walked.clear()
            locate = NeighbourLocate(searcher, mapper.ref_codes, flat, piece_bounds, read, offset, into_reverse)
            fast = piece_hits(searcher, flat, piece_bounds, offset, into_reverse, options.max_occurrences, locate)
        finally:
            del searcher._locate
        for field in ("piece", "strand", "text_pos", "diagonal", "counts"):
            assert getattr(fast, field).tolist() == getattr(plain, field).tolist(), field
        totals[0] += rows
        totals[1] += sum(walked)
        with_ref = find_chains(searcher, batch.codes, batch.bounds, options, mapper.ref_codes)
        without = find_chains(searcher, batch.codes, batch.bounds, options)
        for field in ("offsets", "strand", "diag_lo", "diag_hi", "anchor", "weight"):
            assert getattr(with_ref, field).tolist() == getattr(without, field).tolist(), field
    # 30-base seeds mostly stop early (verify shortcut): those rows are walked as before
    assert totals[1] <= {8: totals[0] - 1, 19: totals[0] / 2, 30: totals[0]}[seed_length]


def _near_gapless(rng, case: int) -> tuple[str, str, int]:
    """(read, window, diagonal): a read copied from the window at the diagonal with two or three
    substitutions placed where a clip or a gap might beat them (near an end, close together),
    or an indel near an end, or copied from a tandem repeat, or a random window."""
    m = int(rng.integers(20, 70))
    flank = int(rng.integers(0, 20))
    kind = case % 6
    if kind == 4:  # tandem repeat: another diagonal matches nearly as well
        unit = random_dna(rng, int(rng.integers(1, 6)))
        core = mutate(rng, (unit * (m // len(unit) + 2))[: m], 0.05, 0.0)
    else:
        core = random_dna(rng, m)
    window = random_dna(rng, flank) + core + random_dna(rng, int(rng.integers(0, 20)))
    read = list(core)
    spots = {0: [int(rng.integers(0, m)), int(rng.integers(0, m))],  # anywhere
             1: [int(rng.integers(0, 6)), int(rng.integers(0, 6))],  # near the start
             2: [m - 1 - int(rng.integers(0, 6)), m - 1 - int(rng.integers(0, 6))],  # near the end
             3: [int(rng.integers(0, m))] * 3,  # three (one position changed up to three times)
             4: [int(rng.integers(0, m)), int(rng.integers(0, m))]}.get(kind, [])
    for k in spots:
        read[k] = "ACGT"[("ACGT".index(read[k]) + 1 + int(rng.integers(0, 3))) % 4]
    read = "".join(read)
    if kind == 5:  # an indel a few bases from an end, shown as mismatches when laid without gaps
        at = m - int(rng.integers(2, 8))
        read = (read[:at] + read[at + 1 :] + random_dna(rng, 1)) if case % 12 < 6 else (read[:at] + random_dna(rng, 1) + read[at:-1])
        if case % 4 == 1:
            read = read[::-1]
            window = window[::-1]
            flank = len(window) - flank - m
    if case % 7 == 0:
        read = read[: m // 2] + "N" + read[m // 2 + 1 :]
    return read, window, flank


@pytest.mark.parametrize("clip", [5, 3, 0])
def test_gapless_is_best_only_when_no_other_alignment_scores_as_much(rng, clip):
    """gapless_is_best against two oracles, on reads built to lie near each case of its proof:
    where it says yes, the slow full-matrix runner-up (every alignment but the gapless one)
    scores less than the gapless alignment, and the banded kernel returns exactly that alignment
    (score, ends, one M run), so skipping the band changes nothing. With bwa's clip of 5 it must
    say yes often to reads with two differences; with a clip of 3 or less two clips cost less
    than two mismatches, outside the proof's reach, so it must never say yes to them."""
    from seqsift.map._extend import gapless_is_best, ungapped
    from tests.naive import clip_alignment_runner_up

    said_yes = 0
    for case in range(120):
        read, window, diag = _near_gapless(rng, case)
        m = len(read)
        if diag + m > len(window):
            continue
        q, t = codes(read), codes(window)
        score, differ = ungapped(q, t, diag, O.match, O.mismatch, O.ambiguous)
        dlo, dhi = diag - int(rng.integers(0, 12)), diag + int(rng.integers(0, 12))  # a chain's band or a rescue's
        if not gapless_is_best(q, t, diag, dlo, dhi, score, O.match, O.mismatch, O.gap_open, O.gap_extend, clip):
            continue
        said_yes += differ >= 2  # the cases the shortcut is for
        runner_up = clip_alignment_runner_up(read, window, diag, (dlo, dhi), *SCORES, clip)
        assert runner_up < score, (case, read, window, diag)
        total, aligned, qb, qe, tb, te, runs = run_kernel(read, window, dlo, dhi, clip, clip)
        assert (total, aligned, qb, qe, tb, te, runs) == (score, score, 0, m, diag, diag + m, [(0, m)])
    assert said_yes >= 20 if clip == O.clip else said_yes == 0


def _window_extender(rng, n: int):
    """(text, an Extender over it): one random record of n bases."""
    from seqsift.fmindex.reference import Reference
    from seqsift.map.extend import Extender

    text = random_dna(rng, n)
    reference = Reference(text=None, names=["x"], starts=np.array([0]), lengths=np.array([n]))
    return text, Extender(reference, codes(text), O)


def _band_window(diag_lo: int, diag_hi: int, m: int, n: int) -> tuple[int, int, int, int]:
    """(lo, hi, dlo, dhi): the reference window place() searches for diagonals diag_lo..diag_hi
    and a read of m bases, and the band's diagonals relative to it."""
    lo, hi = max(0, diag_lo - O.band), min(n, diag_hi + m + O.band)
    return lo, hi, diag_lo - lo - O.band, diag_hi - lo + O.band


def test_a_wide_window_placed_as_the_band_would(rng):
    """A chain over many diagonals (a mate rescue's window): place_chain may lay the read on one
    diagonal without filling the band (fewest_differences, then gapless_is_best); every
    placement must be the banded kernel's on the same window, and some must take that path."""
    from seqsift.map._extend import fewest_differences, gapless_is_best, ungapped

    text, ext = _window_extender(rng, 1500)
    gapless = 0
    for case in range(60):
        m = int(rng.integers(30, 120))
        at = int(rng.integers(0, 1500 - m))
        read = mutate(rng, text[at : at + m], 0.02 * (case % 3), 0.01 * (case % 2))
        diag_lo, diag_hi = at - int(rng.integers(0, 300)), at + int(rng.integers(1, 300))
        p = ext.place(codes(read), 0, diag_lo, diag_hi, min(max(at, 0), 1499))
        lo, hi, dlo, dhi = _band_window(diag_lo, diag_hi, len(read), 1500)
        total, score, qb, qe, tb, te, runs = run_kernel(read, text[lo:hi], dlo, dhi)
        if not runs:
            assert p is None
            continue
        assert (p.position, p.qb, p.qe, p.score, p.total, p.ref_span) == (lo + tb, qb, qe, score, total, te - tb)
        assert list(zip(p.ops, p.lens)) == runs
        q, t = codes(read), codes(text[lo:hi])
        d = fewest_differences(q, t, dlo, dhi, 2)
        if d >= 0:
            s, differ = ungapped(q, t, d, O.match, O.mismatch, O.ambiguous)
            gapless += differ == 2 and gapless_is_best(q, t, d, dlo, dhi, s, O.match, O.mismatch, O.gap_open,
                                                       O.gap_extend, O.clip)
    assert gapless >= 5  # windows placed without filling the band, two mismatches in the read


def test_a_wide_window_is_placed_as_the_full_matrix_places_it(rng):
    """place_chain over a wide window (a mate rescue's): the score with clip penalties is the
    full-matrix optimum over the same diagonals (tests/naive.py), and the CIGAR rescores to it.
    Reads with enough substitutions and indels that the band is filled (not laid on one
    diagonal), and random reads that lie nowhere."""
    text, ext = _window_extender(rng, 700)
    filled = 0
    for case in range(40):
        m = int(rng.integers(30, 70))
        at = int(rng.integers(100, 600 - m))
        read = mutate(rng, text[at : at + m], 0.03 + 0.02 * (case % 3), 0.02 * (case % 2))
        if case % 8 == 0:
            read = random_dna(rng, m)
        diag_lo, diag_hi = at - int(rng.integers(20, 100)), at + int(rng.integers(1, 100))
        p = ext.place(codes(read), 0, diag_lo, diag_hi, at)
        lo, hi, dlo, dhi = _band_window(diag_lo, diag_hi, len(read), 700)
        best = clip_alignment_score(read, text[lo:hi], *SCORES, O.clip, O.clip, band=(dlo, dhi))
        assert p is not None and p.total == best, case
        score, read_end, ref_end = rescore(read, text[lo:hi], p.qb, p.position - lo, list(zip(p.ops, p.lens)))
        assert (score, read_end, ref_end - (p.position - lo)) == (p.score, p.qe, p.ref_span)
        filled += len(p.ops) > 1 or p.qb > 0 or p.qe < len(read)
    assert filled >= 5


def test_settled_reads_are_placed_as_place_chain_places_them(genome, rng, tmp_path):
    """Extender.place_table lays the reads the quick search settled on their one diagonal
    without aligning them again (_extend.settled_chain): every row, CIGAR and count is what
    the same chains give when no read is marked settled (place_chain on each), and each settled
    read's score is its bases compared one by one with the reference there."""
    from dataclasses import replace

    from seqsift.map.api import batches_of
    from seqsift.map.extend import oriented
    from seqsift.map.layout import C_POSITION, C_READ, C_RECORD, C_SCORE, C_STRAND
    from seqsift.map.mapper import Mapper, load_index
    from seqsift.map.seeding import find_chains

    ref_path, records, _ = genome
    reads = simulate(rng, records, 200)
    path = write_fastq(tmp_path / "reads.fq", reads)
    mapper = Mapper(load_index(ref_path))
    ext, names = mapper.extender(), list(records)
    settled = 0
    for batch in batches_of(path, 64):
        chains = find_chains(mapper.searcher, batch.codes, batch.bounds, mapper.options, mapper.ref_codes, mapper.quick)
        forward, reverse = oriented(batch.codes)
        n, table, ops, lens = ext.place_table(forward, reverse, batch.bounds, chains)
        n0, table0, ops0, lens0 = ext.place_table(forward, reverse, batch.bounds, replace(chains, settled=None))
        assert n == n0 and (table[:n] == table0[:n]).all() and (ops == ops0).all() and (lens == lens0).all()
        for row in table[:n].tolist():
            r = row[C_READ]
            if not chains.settled[r]:
                continue
            settled += 1
            read = reads[batch.first + r][1]
            read = read if row[C_STRAND] == 0 else reverse_complement(read)
            t = records[names[row[C_RECORD]]][row[C_POSITION] :]
            assert row[C_SCORE] == sum(O.match if a == b else -O.mismatch for a, b in zip(read, t))
    assert settled >= 30  # reads with N or three differences or more are not settled


def test_gapless_is_best_under_other_scores(rng):
    """The proof holds for any scores, not only bwa's: random match, mismatch, gap and clip
    scores, the same two oracles as above."""
    from seqsift.map._extend import gapless_is_best, ungapped
    from tests.naive import clip_alignment_runner_up

    said_yes = 0
    for case in range(300):
        match, mismatch, gap_open, gap_extend, clip = (int(rng.integers(1, 3)), int(rng.integers(1, 6)),
                                                      int(rng.integers(0, 8)), int(rng.integers(1, 3)),
                                                      int(rng.integers(0, 12)))
        read, window, diag = _near_gapless(rng, case)
        m = len(read)
        if diag + m > len(window):
            continue
        q, t = codes(read), codes(window)
        score, differ = ungapped(q, t, diag, match, mismatch, O.ambiguous)
        dlo, dhi = diag - int(rng.integers(0, 12)), diag + int(rng.integers(0, 12))
        if not gapless_is_best(q, t, diag, dlo, dhi, score, match, mismatch, gap_open, gap_extend, clip):
            continue
        said_yes += differ >= 2
        scores = (match, mismatch, O.ambiguous, gap_open, gap_extend)
        assert clip_alignment_runner_up(read, window, diag, (dlo, dhi), *scores, clip) < score, (case, read, window)
        trace = np.empty((m + 1) * (dhi - dlo + 1), np.int8)
        ops = np.empty(m + len(window) + 1, np.int64)
        lens = np.empty_like(ops)
        got = clip_align(q, t, dlo, dhi, *scores, clip, clip, NEG, trace, ops, lens)
        assert tuple(got) == (score, score, 0, m, diag, diag + m, 1) and ops[0] == OP_M and lens[0] == m
    assert said_yes >= 20


def _settled_places(mapper, batch, options):
    """(read index, strand, record, position in the record) of every read the quick pieces
    settle (seeding.find_chains), and the chains."""
    from seqsift.map.seeding import find_chains

    chains = find_chains(mapper.searcher, batch.codes, batch.bounds, options, mapper.ref_codes, mapper.quick)
    ref = mapper.index.reference
    places = []
    for r in np.flatnonzero(chains.settled).tolist():
        c = chains.offsets[r]
        record = int(np.searchsorted(ref.starts, chains.anchor[c], "right") - 1)
        places.append((r, int(chains.strand[c]), record, int(chains.diag_lo[c] - ref.starts[record])))
    return places, chains


def test_quick_pieces_never_settle_a_read_whose_best_alignment_lies_elsewhere(rng, tmp_path):
    """seeding's quick search against the full-matrix oracle: for every read it settles, the
    read laid without gaps where it says scores the best of any alignment on either strand of
    either record, every alignment off the diagonals it examined (its band) scores less, and
    so little that MAPQ is 60 with it as the second-best. Reads from both copies of diverged
    repeats (2-6 differences apart), with 0-3 substitutions, indels, N, both strands, random."""
    from seqsift.map.api import batches_of
    from seqsift.map.mapper import Mapper, load_index
    from tests.naive import clip_alignment_score

    unit = random_dna(rng, 90)
    copies = [mutate(rng, unit, 0.03 * k, 0.0) for k in range(1, 4)]
    one = random_dna(rng, 120) + unit + random_dna(rng, 100) + copies[0] + random_dna(rng, 80)
    two = random_dna(rng, 90) + copies[1] + random_dna(rng, 60) + "N" + random_dna(rng, 40) + copies[2] + random_dna(rng, 70)
    records = {"one": one, "two": two}
    path = tmp_path / "ref.fa"
    path.write_text(f">one\n{one}\n>two\n{two}\n")
    options = MapOptions(seed_length=8, seed_step=4, quick_pieces=5, band=6)
    mapper = Mapper(load_index(path), options)
    reads = []
    for k in range(90):
        name = ("one", "two")[k % 2]
        seq = records[name]
        m = int(rng.integers(40, 56))
        start = int(rng.integers(0, len(seq) - m))
        read = mutate(rng, seq[start : start + m], [0.0, 0.02, 0.05][k % 3], 0.01 if k % 5 == 0 else 0.0)
        if k % 11 == 0:
            read = random_dna(rng, m)
        reads.append((f"r{k}", reverse_complement(read) if k % 4 >= 2 else read, None))
    (batch,) = list(batches_of(write_fastq(tmp_path / "reads.fq", reads)))
    places, _ = _settled_places(mapper, batch, options)
    assert len(places) >= 20
    o = options
    scores = (o.match, o.mismatch, o.ambiguous, o.gap_open, o.gap_extend, o.clip, o.clip)
    names = list(records)
    for r, strand, record, position in places:
        read = reads[r][1] if strand == 0 else reverse_complement(reads[r][1])
        t = records[names[record]]
        gapless = sum(o.match if a == b else -o.mismatch for a, b in zip(read, t[position:]))
        assert position + len(read) <= len(t)
        best_there = clip_alignment_score(read, t, *scores, band=(position - o.band, position + o.band))
        assert best_there == gapless, reads[r][0]
        elsewhere = []
        for s in (0, 1):
            q = read if s == strand else reverse_complement(read)
            for k, name in enumerate(names):
                if s == strand and k == record:
                    elsewhere += [clip_alignment_score(q, records[name], *scores, band=(-len(q), position - o.band - 1)),
                                  clip_alignment_score(q, records[name], *scores,
                                                       band=(position + o.band + 1, len(records[name])))]
                else:
                    elsewhere.append(clip_alignment_score(q, records[name], *scores))
        runner_up = max(elsewhere)
        assert runner_up < gapless, reads[r][0]
        assert mapq(o, gapless, max(int(runner_up), 0), 0, len(read), len(read)) == 60, reads[r][0]


def test_quick_pieces_map_every_read_as_every_piece_does(rng, tmp_path):
    """The mapper with the quick search and without (quick_pieces=0): the same primary
    alignment and MAPQ for every read (simulated with substitutions, indels, N, both strands,
    reads inside a repeat found in both records and random ones), and the quick search settles
    many of them. One N in the reference (pieces broken against it cost less: seeding.Quick)."""
    from seqsift.map.api import batches_of
    from seqsift.map.mapper import Mapper, load_index

    repeat = random_dna(rng, 300)
    records = {"one": random_dna(rng, 6000) + repeat + random_dna(rng, 6000),
               "two": random_dna(rng, 3000) + "N" + random_dna(rng, 2000) + repeat + random_dna(rng, 2500)}
    ref_path = tmp_path / "ref.fa"
    ref_path.write_text(f">one\n{records['one']}\n>two\n{records['two']}\n")
    reads = simulate(rng, records, 200)
    index = load_index(ref_path)
    quick, full = Mapper(index), Mapper(index, MapOptions(quick_pieces=0))
    settled = 0
    for batch in batches_of(write_fastq(tmp_path / "reads.fq", reads), 64):
        settled += len(_settled_places(quick, batch, quick.options)[0])
        for a, b in zip(quick(batch), full(batch)):
            assert a.mapped == b.mapped, a.name
            if a.mapped:
                x, y = a.alignments[0], b.alignments[0]
                assert (x.placement.record, x.placement.position, x.placement.strand, x.placement.cigar(), x.mapq) == \
                    (y.placement.record, y.placement.position, y.placement.strand, y.placement.cigar(), y.mapq), a.name
    assert settled > len(reads) / 5  # 1% substitutions: many reads differ in three bases or more
