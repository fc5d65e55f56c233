"""The GPU kernel and streamed pipeline, run under NUMBA_ENABLE_CUDASIM=1 in `make test`, against
the CPU result and the naive oracle. Launches are tiny: the simulator runs each thread in Python."""

import numpy as np
import pytest

from seqsift.find.api import FindJob
from seqsift.find._gpu import GpuConfig
from tests import naive
from tests.conftest import LAMBDA

pytestmark = pytest.mark.cuda

TINY = GpuConfig(threads_per_block=8, blocks_per_sm=2, streams=2, out_capacity=4)


def gpu_job(pattern, chunk_size, config=TINY):
    return FindJob(pattern, backend="cuda", chunk_size=chunk_size, gpu_config=config)


def both_ways(pattern, text, chunk_size, config=TINY):
    with gpu_job(pattern, chunk_size, config) as job:
        parts = list(job.offsets(text, count_only=False))
        count = sum(job.offsets(text, count_only=True))
    return (np.concatenate(parts) if parts else np.empty(0, np.int64)).tolist(), count


def test_random_binary_text_many_chunks(rng):
    """Chunks far smaller than the text: the stream slots are reused many times (text > 'GPU memory')."""
    for _ in range(3):
        text = bytes(rng.integers(0, 2, 900).astype(np.uint8) + 65)
        pattern = text[400 : 400 + int(rng.integers(1, 6))]
        want = naive.find_all(text, pattern)
        assert both_ways(pattern, text, chunk_size=int(rng.integers(20, 200))) == (want, len(want))


@pytest.mark.parametrize("streams", [2, 3])
def test_output_overflow_and_stream_counts(streams):
    """More hits than out_capacity forces the grow-and-rerun path; results stay ordered by chunk."""
    text = b"ab" * 150
    want = naive.find_all(text, b"aba")
    config = GpuConfig(threads_per_block=8, blocks_per_sm=1, streams=streams, out_capacity=2)
    assert both_ways(b"aba", text, chunk_size=90, config=config) == (want, len(want))


def test_adversarial_and_edge_cases():
    cases = [(b"a" * 40, b"a" * 400), (b"abc", b"ab"), (b"x", b""), (b"aab", b"aaab" * 50), (b"\x00\xff", bytes(range(256)) * 2)]
    for pattern, text in cases:
        want = naive.find_all(text, pattern)
        assert both_ways(pattern, text, chunk_size=256) == (want, len(want))


def test_identical_to_cpu_on_real_genome():
    from seqsift.io.fastx import read_batches

    genome = next(iter(read_batches(LAMBDA))).seq[:3000].tobytes()
    for pattern in (b"GATC", genome[1234:1250]):
        with FindJob(pattern, backend="cpu") as cpu:
            want = np.concatenate(list(cpu.offsets(genome, count_only=False))).tolist()
        assert both_ways(pattern, genome, chunk_size=1500, config=GpuConfig(threads_per_block=32, blocks_per_sm=2)) == (want, len(want))


def test_records_on_gpu_match_cpu(tmp_path):
    path = tmp_path / "r.fa"
    path.write_text(">a\nACGTACGTAC\nGTAC\n>b\nGTACGT\n>c\nAC\n")
    for pattern in ("GTAC", "ACG", "CGTA"):
        with FindJob(pattern.encode(), backend="cpu") as cpu:
            want = [list(h) for h in cpu.record_hits(path, revcomp=True, count_only=False)]
        with gpu_job(pattern.encode(), chunk_size=1 << 20) as gpu:
            assert [list(h) for h in gpu.record_hits(path, revcomp=True, count_only=False)] == want
            assert sum(gpu.record_hits(path, revcomp=True, count_only=True)) == sum(len(w) for w in want)


def test_one_job_many_sources_and_an_abandoned_run(rng):
    """Device buffers are reused across sources; a run left halfway leaves nothing behind."""
    texts = [bytes(rng.integers(0, 2, int(rng.integers(50, 400))).astype(np.uint8) + 65) for _ in range(3)]
    with gpu_job(b"ABA", chunk_size=40) as job:
        abandoned = job.offsets(texts[0], count_only=False)
        next(abandoned)
        abandoned.close()
        for text in texts:
            want = naive.find_all(text, b"ABA")
            assert np.concatenate(list(job.offsets(text, count_only=False))).tolist() == want
            assert sum(job.offsets(text, count_only=True)) == len(want)
