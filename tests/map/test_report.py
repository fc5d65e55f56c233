"""The compiled single-end report (batch_sam.py, _report.py) against the Python path it replaces
on the hot path (choose.py, scoring.mapq, Extender.nm_md, sam.records): the same bytes for every
read, whatever its kind."""

from __future__ import annotations

import numpy as np
import pytest

from seqsift.map.scoring import MapOptions, mapq
from tests.map import test_map
from tests.map.test_map import random_dna, simulate, write_fastq

genome = test_map.genome  # the fixture


def _python_path(mapper, batch, rg_id):
    from seqsift.map.sam import records

    mapped = mapper(batch)
    return "".join(records(m, mapper.index.names, rg_id) for m in mapped).encode(), sum(m.mapped for m in mapped)


def _reads(rng, records, repeat):
    reads = [(n, s) for n, s, _ in simulate(rng, records, 200)]
    one, two = records["one"], records["two"]
    reads += [("chimera", one[1000:1080] + two[500:580]), ("in_repeat", one[repeat[0] + 50 : repeat[0] + 200]),
              ("empty", ""), ("short", one[4000:4012]), ("with_n", one[2000:2070] + "N" * 5 + one[2075:2150]),
              ("tail_clip", one[-90:] + random_dna(rng, 60)), ("nonascii\u00e9", one[3000:3150])]
    return reads


@pytest.mark.parametrize("secondary", [False, True])
@pytest.mark.parametrize("fasta", [False, True])
@pytest.mark.parametrize("rg_id", [None, "g1"])
def test_batch_records_equal_the_python_path(genome, rng, tmp_path, secondary, fasta, rg_id):
    from seqsift.map.api import batches_of
    from seqsift.map.mapper import Mapper, SamBatches, load_index

    ref_path, records, repeat = genome
    reads = _reads(rng, records, repeat)
    if fasta:
        path = tmp_path / "reads.fa"
        path.write_text("".join(f">{name}\n{seq}\n" for name, seq in reads))
    else:
        path = write_fastq(tmp_path / "reads.fq", [(n, s, None) for n, s in reads])
    mapper = Mapper(load_index(ref_path), MapOptions(secondary=secondary))
    compiled = SamBatches(mapper, rg_id)
    lines = 0
    for batch in batches_of(path, batch_reads=64):
        text, n, mapped = compiled(batch)
        assert (text, mapped) == _python_path(mapper, batch, rg_id)
        assert n == len(batch)
        lines += text.count(b"\n")
    assert lines > len(reads)  # the chimera's supplementary record, and secondaries with -a


def test_mapq_kernel_is_scoring_mapq(rng):
    from seqsift.map._report import mapq as compiled_mapq

    o = MapOptions()
    for _ in range(3000):
        score = int(rng.integers(-5, 200))
        sub = int(rng.integers(-5, 200))
        count, read_span, ref_span = int(rng.integers(0, 30)), int(rng.integers(1, 300)), int(rng.integers(1, 300))
        assert compiled_mapq(o.match, o.mismatch, o.seed_length, score, sub, count, read_span, ref_span) == \
            mapq(o, score, sub, count, read_span, ref_span)


def test_choose_kernel_is_choose_on_random_placements(rng):
    """choose_one on random tables of placements (overlapping, same places, equal scores) agrees
    with choose.choose on their Placement objects: primary, sub, MAPQ, XA alternatives and
    whether more records follow."""
    from seqsift.map._report import choose_one, mapq as compiled_mapq
    from seqsift.map.batch_sam import report_options
    from seqsift.map.choose import choose
    from seqsift.map.extend import placements_of

    o = MapOptions()
    opts = report_options(o)
    length = 150
    checked = alternatives = 0
    for _ in range(400):
        k = int(rng.integers(1, 7))
        qb = rng.integers(0, 60, k)
        qe = np.minimum(length, qb + rng.integers(20, 151, k))
        rows = np.zeros((k, 11), np.int64)
        rows[:, 1] = rng.integers(0, 2, k)
        rows[:, 2] = rng.integers(0, 4, k) * 40
        rows[:, 3] = rng.integers(0, 2, k)
        rows[:, 4], rows[:, 5] = qb, qe
        rows[:, 6] = rng.integers(10, 60, k) * 2
        rows[:, 7] = rows[:, 6] - rng.integers(0, 2, k) * 5
        rows[:, 8] = qe - qb
        rows[:, 9] = np.arange(k)
        rows[:, 10] = 1
        ops, lens = np.zeros(k, np.int64), (qe - qb).astype(np.int64)
        (placements,) = placements_of(rows, ops, lens, np.array([0, length]))
        chosen = choose(placements, o)
        alts = np.empty(k, np.int64)
        p, sub, near, more, listed = choose_one(rows, 0, k, length, opts, np.empty(k, np.int64), alts)
        assert more == (len(chosen) > 1)
        if p < 0:
            assert not chosen
            continue
        assert placements[p] is chosen[0].placement and sub == chosen[0].sub
        assert [placements[a] for a in alts[:listed]] == list(chosen[0].alternatives)
        alternatives += listed > 0
        q = compiled_mapq(o.match, o.mismatch, o.seed_length, int(rows[p, 6]), sub, near, int(qe[p] - qb[p]),
                          int(rows[p, 8]))
        assert q == chosen[0].mapq
        checked += 1
    assert checked > 200 and alternatives > 20
