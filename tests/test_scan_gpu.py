"""The GPU key + tag filter under NUMBA_ENABLE_CUDASIM=1: the same candidates as the CPU's key + tag
filter, and the whole pipeline with the GPU filter gives the CPU's verified hits. Launches are tiny."""


import numpy as np
import pytest

from seqsift.scan._cpu import PAD
from seqsift.scan._gpu import GpuConfig, GpuFilter
from seqsift.scan.api import objects_of
from seqsift.scan.engine import Engine
from seqsift.scan.pipeline import Scanner
from seqsift.scan.signatures import from_strings
from tests.test_scan import engine_view, make_case, oracle, assert_same

pytestmark = pytest.mark.cuda

TINY = GpuConfig(threads_per_block=16, blocks=4, capacity=8)


def test_gpu_candidates_equal_cpu_seed_filter():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 3, 700, dtype=np.uint8)
    picks = rng.integers(0, 680, 30)
    sigs = from_strings([data[i : i + 8].tobytes().hex() for i in picks] + ["4142434445464748"])
    eng = Engine(sigs, filter="table")
    buf = GpuFilter.host_buffer(PAD + data.size + PAD)
    buf[:] = 0
    buf[PAD : PAD + data.size] = data
    want = eng.table_candidates(eng.seed_table, buf, PAD, PAD + data.size)
    gpu = GpuFilter(eng.seed_table, TINY)
    count = gpu.count(buf, data.size)  # more than TINY.capacity: the launch is rerun larger
    got = gpu.candidates()
    assert count == want[0].size > TINY.capacity
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


@pytest.mark.parametrize("block_threshold", [10**9, 0])
def test_gpu_pipeline_matches_cpu(block_threshold):
    objects, sigs = make_case(4, alphabet=4, n_sigs=12)
    objects = [o[:300] for o in objects]
    want = oracle(objects, sigs)
    with Scanner(from_strings(sigs), backend="cuda", buffer_size=512, gpu_config=TINY,
                 block_threshold=block_threshold) as scanner:
        got = list(scanner.scan(objects_of(objects), lambda p, w: None))
    assert_same(engine_view(got), want)
    assert (scanner.stats.block_fallbacks > 0) == (block_threshold == 0)
