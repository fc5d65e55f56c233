"""The FM-index GPU kernels under NUMBA_ENABLE_CUDASIM=1 (in `make test`): counts and hits equal
to the CPU's and the naive oracle's. Launches are tiny: the simulator runs each thread in Python."""

import pytest

from seqsift.errors import InputError
from seqsift.fmindex._gpu import GpuSearcher
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.query import SearchOptions
from seqsift.fmindex.reference import encode_reads
from tests import naive

from .test_fmindex import unmarked

pytestmark = pytest.mark.cuda


@pytest.fixture
def small_reference(tmp_path, rng):
    records = [(f"r{i}", "".join(rng.choice(list("ACGT"), 300))) for i in range(2)]
    records[1] = ("r1", records[1][1][:100] + "NNN" + records[0][1][:50] + records[1][1][153:])
    path = tmp_path / "ref.fa"
    path.write_text("".join(f">{n}\n{s}\n" for n, s in records))
    return path, records


@pytest.mark.parametrize("kmer_table,wide", [(True, False), (False, False), (True, True)])
def test_gpu_hits_equal_cpu_and_oracle(small_reference, rng, kmer_table, wide):
    path, records = small_reference
    index = FMIndex.build(path, sa_sample=8, repeat_sample=2, kmer=3, wide=wide)
    seq = records[0][1]
    reads = [seq[10:40], naive.reverse_complement(seq[200:230]), seq[5:9], "ACGTN", "", "A", seq[:50],
             "".join(rng.choice(list("ACGT"), 20)), seq[95:105]]
    codes, bounds = encode_reads(reads)
    gpu = GpuSearcher(index.arrays, "ref", SearchOptions(kmer_table=kmer_table), threads_per_block=8)
    got = gpu.hits(codes, bounds, max_hits=1000)
    cpu = index.searcher().hits(codes, bounds, max_hits=1000)
    assert got.counts.tolist() == cpu.counts.tolist() == [len(naive.dna_hits(records, r)) for r in reads]
    assert got.text_pos.tolist() == cpu.text_pos.tolist()
    assert got.strand.tolist() == cpu.strand.tolist()
    assert gpu.count(codes, bounds).tolist() == got.counts.tolist()


def test_search_command_on_the_cuda_backend(tmp_path, small_reference):
    from seqsift.cli import main

    path, records = small_reference
    seq = records[0][1]
    reads = tmp_path / "reads.fa"
    reads.write_text(f">a\n{seq[20:45]}\n>b\n{naive.reverse_complement(seq[0:30])}\n>c\nACGTNACGT\n")
    ssx = tmp_path / "ref.ssx"
    assert main(["index", "-q", str(path), "-o", str(ssx)]) == 0
    outs = {}
    for backend in ("cpu", "cuda"):
        outs[backend] = tmp_path / f"{backend}.tsv"
        assert main(["search", str(ssx), str(reads), "--backend", backend, "-o", str(outs[backend])]) == 0
    assert outs["cuda"].read_text() == outs["cpu"].read_text()
    assert outs["cpu"].read_text().splitlines()[2] == "c\t0\t-"


def test_gpu_walk_past_the_sample_bound_is_an_error(small_reference):
    path, records = small_reference
    index = FMIndex.build(path, sa_sample=8, kmer=3)
    codes, bounds = encode_reads([records[0][1][10:40]])
    gpu = GpuSearcher(unmarked(index.arrays), "ref.ssx", threads_per_block=8)
    with pytest.raises(InputError, match="ref.ssx: the index is inconsistent: an LF walk never reached a sampled row"):
        gpu.hits(codes, bounds, max_hits=10)
