"""The GPU kernel's launch shapes and streams, run under NUMBA_ENABLE_CUDASIM=1 in `make test`, against
the CPU result and the naive oracle (the checks that hold on every backend are in test_find.py).
Launches are tiny: the simulator runs each thread in Python."""

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


@pytest.mark.parametrize("streams", [2, 3])
def test_output_overflow_and_stream_counts(streams):
    """More hits than out_capacity forces the grow-and-rerun path; results stay ordered by chunk."""
    text = b"ab" * 150
    want = naive.find_all(text, b"aba")
    config = GpuConfig(threads_per_block=8, blocks_per_sm=1, streams=streams, out_capacity=2)
    assert both_ways(b"aba", text, chunk_size=90, config=config) == (want, len(want))


def test_identical_to_cpu_on_real_genome():
    from seqsift.io.fastx import read_batches

    genome = next(iter(read_batches(LAMBDA))).seq[:3000].tobytes()
    for pattern in (b"GATC", genome[1234:1250]):
        with FindJob(pattern, backend="cpu") as cpu:
            want = np.concatenate(list(cpu.offsets(genome, count_only=False))).tolist()
        assert both_ways(pattern, genome, chunk_size=1500, config=GpuConfig(threads_per_block=32, blocks_per_sm=2)) == (want, len(want))
