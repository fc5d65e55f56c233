"""Paired-end mapping: pairs simulated with a known fragment, placed as pairs with the SAM pair
fields bwa writes; a mate without seeds rescued in the insert-size window; files out of step
are an error naming the read and line."""

from __future__ import annotations

import pysam
import pytest

from seqsift.cli import main
from seqsift.map.api import map_reads
from seqsift.map.pairs import estimate, pair_name
from tests.naive import reverse_complement
from tests.map.test_map import mutate, random_dna

FRAGMENT, SPREAD, LENGTH = 300, 25, 100


@pytest.fixture
def genome(rng, tmp_path):
    records = {"chr1": random_dna(rng, 30000), "chr2": random_dna(rng, 12000)}
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records.items()))
    return path, records


def simulate_pairs(rng, records, n=120):
    """(name, end 1, end 2, truth): end 1 the fragment's start, end 2 its end reverse
    complemented, the whole pair flipped half the time; every 10th pair has an end that no
    seed can find (a mismatch every 12 bases) and every 15th an end of random bases."""
    pairs = []
    for k in range(n):
        name = list(records)[k % 2]
        seq = records[name]
        size = int(rng.normal(FRAGMENT, SPREAD))
        start = int(rng.integers(0, len(seq) - size))
        fragment = seq[start : start + size]
        one, two = mutate(rng, fragment[:LENGTH], 0.005, 0.002), reverse_complement(mutate(rng, fragment[-LENGTH:], 0.005, 0.002))
        truth = {"record": name, "start": start, "end": start + size, "one": "ok", "two": "ok"}
        if k % 10 == 3:
            two = "".join(c if i % 12 != 6 else "ACGT"[("ACGT".index(c) + 1) % 4] for i, c in enumerate(two))
            truth["two"] = "rescue"
        if k % 15 == 7:
            one = random_dna(rng, LENGTH)
            truth["one"] = "random"
        flipped = bool(k % 2)
        if flipped:
            one, two = two, one
            truth["one"], truth["two"] = truth["two"], truth["one"]
        truth["flipped"] = flipped
        pairs.append((f"p{k}", one, two, truth))
    return pairs


def write_pairs(tmp_path, pairs, suffixes=("/1", "/2")):
    paths = tmp_path / "r1.fq", tmp_path / "r2.fq"
    for end, path in enumerate(paths):
        path.write_text("".join(f"@{p[0]}{suffixes[end]}\n{p[1 + end]}\n+\n{'I' * len(p[1 + end])}\n" for p in pairs))
    return paths


def test_pairs_are_placed_with_bwa_pair_fields(genome, rng, tmp_path, threads):
    ref, records = genome
    pairs = simulate_pairs(rng, records)
    r1, r2 = write_pairs(tmp_path, pairs)
    out = tmp_path / "p.sam"
    assert main(["map", str(ref), str(r1), str(r2), "-o", str(out), "-t", str(threads), "--batch-reads", "60",
                 "-q"]) == 0
    with pysam.AlignmentFile(str(out)) as sam:
        primary = [r for r in sam if not r.is_supplementary]
    assert len(primary) == 2 * len(pairs)
    for (name, _, _, truth), a, b in zip(pairs, primary[0::2], primary[1::2]):
        assert a.query_name == b.query_name == name
        assert a.is_paired and a.is_read1 and b.is_read2
        for r, mate, state in ((a, b, truth["one"]), (b, a, truth["two"])):
            assert r.mate_is_unmapped == mate.is_unmapped
            if state == "random":
                assert r.is_unmapped and not r.is_proper_pair
                assert (r.reference_name, r.reference_start) == (mate.reference_name, mate.reference_start)
                continue
            assert not r.is_unmapped, (name, state)
            assert r.reference_name == truth["record"]
            if not mate.is_unmapped:
                assert r.next_reference_start == mate.reference_start and r.mate_is_reverse == mate.is_reverse
                assert r.has_tag("MC") and r.get_tag("MC") == mate.cigarstring
        if truth["one"] != "random" and truth["two"] != "random":
            assert a.is_proper_pair and b.is_proper_pair, name
            left, right = (a, b) if a.reference_start < b.reference_start else (b, a)
            assert abs(left.reference_start - truth["start"]) <= 5 and abs(right.reference_end - truth["end"]) <= 5
            assert left.template_length == -right.template_length
            assert abs(left.template_length - (truth["end"] - truth["start"])) <= 5
            assert left.is_reverse != right.is_reverse and not left.is_reverse
    # the ends placed by rescue have no seed: alone, they stay unmapped
    lonely = tmp_path / "lonely.fq"
    lonely.write_text("".join(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n" for name, one, two, truth in pairs
                              for seq, state in ((one, truth["one"]), (two, truth["two"])) if state == "rescue"))
    alone = map_reads(ref, lonely)
    assert len(alone) >= 10 and not any(m.mapped for m in alone)


def test_insert_size_is_estimated_from_confident_pairs(genome, rng, tmp_path):
    from seqsift.map.mapper import Mapper, load_index
    from seqsift.map.choose import choose
    from seqsift.map.pairs import paired_batches
    from seqsift.fmindex.reference import READ_CODE

    ref, records = genome
    pairs = [p for p in simulate_pairs(rng, records, 200) if p[3]["one"] == p[3]["two"] == "ok"]
    r1, r2 = write_pairs(tmp_path, pairs)
    mapper = Mapper(load_index(ref))
    ((b1, b2),) = list(paired_batches(r1, r2, 1000, READ_CODE))
    ends = [[choose(p, mapper.options) for _, p in mapper.candidates(b)] for b in (b1, b2)]
    insert = estimate(list(zip(*ends)))
    assert abs(insert.mean - FRAGMENT) < 10 and abs(insert.std - SPREAD) < 8
    assert insert.low < FRAGMENT - 3 * SPREAD and insert.high > FRAGMENT + 3 * SPREAD


def test_pair_names_drop_the_end_suffix():
    assert [pair_name(n) for n in ("a/1", "a/2", "a/3", "a", "/1")] == ["a", "a", "a/3", "a", "/1"]


@pytest.mark.parametrize("trouble, message", [
    ("names", "r2.fq:9: read 'zzz/2' (read 3) does not match its mate 'p2/1'"),
    ("count", "r1.fq:17: read 'p4/1' (read 5) has no mate"),
])
def test_pairs_out_of_step_exit_2_without_output(genome, rng, tmp_path, capsys, trouble, message):
    ref, records = genome
    pairs = simulate_pairs(rng, records, 6)
    r1, r2 = write_pairs(tmp_path, pairs)
    lines = r2.read_text().splitlines(True)
    if trouble == "names":
        lines[8] = "@zzz/2\n"
    else:
        lines = lines[:16]
    r2.write_text("".join(lines))
    out = tmp_path / "p.sam"
    assert main(["map", str(ref), str(r1), str(r2), "-o", str(out), "-q"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_compressed_and_fasta_pairs_map_as_plain_fastq(genome, rng, tmp_path):
    """gzip-compressed FASTQ and plain FASTA mates give the records of plain FASTQ (FASTA: no QUAL)."""
    import gzip

    ref, records = genome
    pairs = simulate_pairs(rng, records, 40)
    r1, r2 = write_pairs(tmp_path, pairs)
    runs = {}
    for form in ("plain", "gz", "fasta"):
        if form == "gz":
            files = []
            for path in (r1, r2):
                target = path.with_suffix(".fq.gz")
                target.write_bytes(gzip.compress(path.read_bytes()))
                files.append(target)
        elif form == "fasta":
            files = [tmp_path / "r1.fa", tmp_path / "r2.fa"]
            for end, target in enumerate(files):
                target.write_text("".join(f">{p[0]}/{end + 1}\n{p[1 + end]}\n" for p in pairs))
        else:
            files = [r1, r2]
        out = tmp_path / f"{form}.sam"
        assert main(["map", str(ref), *map(str, files), "-o", str(out), "-q"]) == 0
        runs[form] = [line.split("\t") for line in out.read_text().splitlines() if not line.startswith("@")]
    assert runs["gz"] == runs["plain"]
    assert [f[:10] for f in runs["fasta"]] == [f[:10] for f in runs["plain"]]
    assert {f[10] for f in runs["fasta"]} == {"*"}


@pytest.mark.parametrize("batch_reads", [8, 60])  # 8: too few pairs for an insert size, so no pairing
@pytest.mark.parametrize("secondary", [False, True])
@pytest.mark.parametrize("rg_id", [None, "g1"])
def test_compiled_pairs_equal_the_python_path(genome, rng, tmp_path, batch_reads, secondary, rg_id):
    """PairBatches (the compiled choice and records, the Python path for the pairs it leaves)
    writes the bytes PairBatches.in_python writes with every pair in Python: rescued mates,
    random and chimeric ends, an end in a repeat, pairs on one strand, too far apart, and
    unmapped ones."""
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.map.mapper import Mapper, load_index
    from seqsift.map.pairs import PairBatches, paired_batches
    from seqsift.map.scoring import MapOptions

    ref, records = genome
    one, two = records["chr1"], records["chr2"]
    pairs = simulate_pairs(rng, records, 150)
    pairs += [("chimeric", one[100:180] + two[900:980], reverse_complement(one[500:650]), None),
              ("same_strand", one[2000:2150], one[2400:2550], None),
              ("far", one[3000:3150], reverse_complement(one[9000:9150]), None),
              ("repeat", one[:150], reverse_complement(one[300:450]), None),
              ("empty", "", one[5000:5150], None)]
    hidden = "".join("N" if i % 40 == 5 else c if i % 12 != 6 else "ACGT"[("ACGT".index(c) + 1) % 4]
                     for i, c in enumerate(reverse_complement(one[7300:7450])))
    pairs += [("rescue_with_n", one[7000:7150], hidden, None)]  # a window the rescue bound leaves unbounded
    path = tmp_path / "rep.fa"
    path.write_text(f">chr1\n{one}\n>chr2\n{two}\n>copy\n{one[:200]}\n")
    r1, r2 = write_pairs(tmp_path, pairs)
    mapper = Mapper(load_index(path), MapOptions(secondary=secondary))
    job = PairBatches(mapper, rg_id)
    proper = 0
    for batches in paired_batches(r1, r2, batch_reads, READ_CODE):
        got = job(batches)
        assert got == job.in_python(batches)
        proper += sum(int(line.split(b"\t")[1]) & 2 > 0 for line in got[0].splitlines())
    assert proper == 0 if batch_reads == 8 else proper > 200


def test_pair_names_are_compared_as_pair_name_compares_them(rng, tmp_path):
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.io.reads import read_reads
    from seqsift.map.pairs import _misnamed

    stems = ["a", "ab", "r1", "x/3", "é", "/1", "long_name_" + "q" * 30]
    names = [[], []]
    for _ in range(300):
        stem = stems[int(rng.integers(0, len(stems)))]
        other = stem if rng.random() < 0.7 else stems[int(rng.integers(0, len(stems)))]
        names[0].append(stem + ["", "/1", "/2"][int(rng.integers(0, 3))])
        names[1].append(other + ["", "/1", "/2"][int(rng.integers(0, 3))])
    batches = []
    for k in (0, 1):
        path = tmp_path / f"{k}.fq"
        path.write_text("".join(f"@{n}\nACGT\n+\nIIII\n" for n in names[k]), encoding="utf-8")
        (batch,) = list(read_reads(path, 1000, READ_CODE))
        batches.append(batch)
    a, b = batches
    flagged = _misnamed(a, b)
    truly = [r for r in range(300) if pair_name(a.name(r)) != pair_name(b.name(r))]
    assert [r for r in flagged if r in truly] == truly and len(truly) > 20


def test_rescue_bounds_are_local_scores_never_below_the_extension(rng):
    """_pairs._bounds, the best local score of a read in a rescue window (the alignment engine's
    lanes), equals the full-matrix local score of tests/naive.py and is never below the score of
    what place_chain aligns in that window: pair_rescues skips a window on it. Windows or reads
    holding N stay unbounded. More windows than one call's lanes."""
    import numpy as np

    from seqsift.map._extend import place_chain
    from seqsift.map._pairs import NO_BOUND, _bounds
    from seqsift.map.extend import kernel_params, oriented
    from seqsift.map.scoring import MapOptions
    from tests.naive import alignment_score

    o = MapOptions()
    params = kernel_params(o)
    text = random_dna(rng, 4000)
    text = text[:1000] + "N" * 30 + text[1030:]
    ref = np.frombuffer(text.encode(), np.uint8)
    ref = np.select([ref == ord(c) for c in "ACGT"], [0, 1, 2, 3], 4).astype(np.int8)
    reads, jobs = [], []
    for x in range(70):
        w0 = int(rng.integers(0, 3700))
        w1 = w0 + int(rng.integers(70, 200))
        m = int(rng.integers(20, 60))
        kind = x % 4
        if kind == 0:
            read = random_dna(rng, m)
        else:  # a stretch of the window, mutated, sometimes hanging out of it
            at = int(rng.integers(w0 - 10, w1 - m + 10))
            read = mutate(rng, text[max(at, 0) : max(at, 0) + m], 0.05 * kind, 0.02)
            read = read.replace("N", "A") if x % 8 != 3 else read[:5] + "N" + read[6:]
        strand = x % 2
        reads.append(read if strand == 0 else reverse_complement(read))
        jobs.append((x, x, strand, w0, w1))
    codes = np.frombuffer("".join(reads).encode(), np.uint8)
    codes = np.select([codes == ord(c) for c in "ACGT"], [0, 1, 2, 3], 255).astype(np.uint8)
    bounds = np.concatenate(([0], np.cumsum([len(r) for r in reads]))).astype(np.int64)
    forward, reverse = oriented(codes)
    bound = np.full(len(jobs), NO_BOUND, np.int64)
    _bounds(np.array(jobs, np.int64), len(jobs), forward, reverse, bounds, ref, params, bound)
    starts, lengths = np.array([0], np.int64), np.array([ref.size], np.int64)
    size, unbounded = forward.size, 0
    for slot, k, strand, w0, w1 in jobs:
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        read = forward[lo:hi] if strand == 0 else reverse[size - hi : size - lo]
        letters = "".join("ACGTN"[c] for c in read)
        window = text[w0:w1]
        if "N" in letters or "N" in window:
            assert bound[slot] == NO_BOUND
            unbounded += 1
            continue
        assert bound[slot] == alignment_score(letters, window, lambda a, b: o.match if a == b else -o.mismatch,
                                              o.gap_open, o.gap_extend)
        band = o.band
        trace, ops, lens = np.empty(1 << 20, np.int8), np.empty(4096, np.int64), np.empty(4096, np.int64)
        diag_hi = max(w0 + band, w1 - (hi - lo) - band)
        found, _, _, _, _, score, _, _, _ = place_chain(read, w0 + band, diag_hi, w0, ref, starts, lengths, params,
                                                        trace, ops, lens)
        assert found >= 0
        assert not found or score <= bound[slot]
    assert 5 <= unbounded <= 40


def test_rescue_bounds_split_calls_that_would_pass_their_cells(rng):
    """_bounds starts a new call where a job would take the call's direction bytes past CELLS x
    lanes: every job's bound is the one it gets alone."""
    import numpy as np

    from seqsift.map._pairs import CELLS, NO_BOUND, _bounds
    from seqsift.map.extend import kernel_params, oriented
    from seqsift.map.scoring import MapOptions

    params = kernel_params(MapOptions())
    ref = rng.integers(0, 4, 30_000).astype(np.int8)
    lengths = [1000, 100, 60, 1000, 100]
    windows = [(0, 1500), (5000, 25_000), (100, 400), (26_000, 27_400), (3000, 3300)]
    assert lengths[0] * (windows[1][1] - windows[1][0] + 1) > CELLS >= lengths[1] * (windows[1][1] - windows[1][0] + 1)
    reads = []
    for m, (w0, w1) in zip(lengths, windows):  # a stretch of its window with a few changes
        at = int(rng.integers(w0, w1 - m))
        read = ref[at : at + m].copy()
        read[rng.random(m) < 0.05] = rng.integers(0, 4)
        reads.append(read.astype(np.uint8))
    codes = np.concatenate(reads)
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    forward, reverse = oriented(codes)
    jobs = np.array([(x, x, 0, w0, w1) for x, (w0, w1) in enumerate(windows)], np.int64)
    together = np.full(len(jobs), NO_BOUND, np.int64)
    _bounds(jobs, len(jobs), forward, reverse, bounds, ref, params, together)
    alone = np.full(len(jobs), NO_BOUND, np.int64)
    for x in range(len(jobs)):
        _bounds(jobs[x : x + 1], 1, forward, reverse, bounds, ref, params, alone)
    assert (together == alone).all() and (together < NO_BOUND).all() and together[0] > 500
