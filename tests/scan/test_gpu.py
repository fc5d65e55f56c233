"""The GPU key + tag filter under NUMBA_ENABLE_CUDASIM=1: the same candidates as the CPU's key + tag
filter, its output rerun larger when it overflows (the whole pipeline on every backend is in
test_scan.py). Launches are tiny."""

import numpy as np
import pytest

from seqsift.scan.kernels import PAD
from seqsift.scan._gpu import GpuFilter
from seqsift.scan.engine import Engine
from seqsift.scan.signatures import from_strings

from .test_scan import TINY_GPU as TINY

pytestmark = pytest.mark.cuda


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
