import zlib
from pathlib import Path

import numpy as np
import pytest

import seqsift

DATA = Path(__file__).resolve().parent / "data"
"""Small files cut from the real data (tests/data/README.md says what, where from and how)."""
LAMBDA = Path(seqsift.__file__).resolve().parent / "data" / "lambda_virus.fa.gz"
"""The lambda phage genome embedded in the package, 48,502 bp in one record."""


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    return request.param


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def backend(request):
    """A check that holds on every backend: "cuda" runs under NUMBA_ENABLE_CUDASIM=1 in `make test`
    (`-m cuda`), "cpu" with the rest of the suite."""
    return request.param


@pytest.fixture
def rng(request):
    """Seeded from the test's name, so every failure reproduces."""
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def data_file(name: str) -> Path:
    """A file of tests/data; one missing is an error in the checkout, not a reason to skip."""
    path = DATA / name
    assert path.is_file(), f"{path} is missing from the checkout"
    return path


@pytest.fixture(autouse=True)
def _gpu_launch_types(request, monkeypatch):
    """Under the CUDA simulator, every kernel launch's argument types must be in tests/gpu_kernels.py,
    the list test_gpu_ptx.py compiles to real PTX for sm_90: the simulator alone runs Python and
    would miss a kernel NVVM cannot compile for the types the host code actually passes."""
    from seqsift.backend import _simulated

    if request.node.get_closest_marker("cuda") is None or not _simulated():
        yield
        return
    import numba
    from numba.cuda.simulator import kernel as sim

    from tests.gpu_kernels import LAUNCHES, kernel_name

    launched = set()
    call = sim.FakeCUDAKernel.__call__

    def recording(self, *args):
        if not self._device and not sim._kernel_context:
            launched.add((kernel_name(self.fn), tuple(numba.typeof(a) for a in args)))
        return call(self, *args)

    monkeypatch.setattr(sim.FakeCUDAKernel, "__call__", recording)
    yield
    unknown = [(name, types) for name, types in launched if types not in LAUNCHES.get(name, ())]
    assert not unknown, f"kernel launches missing from tests/gpu_kernels.py: {unknown}"
