import os

import pytest

from seqsift import backend
from seqsift.errors import BackendUnavailable, UsageError


def test_cpu_and_auto_without_gpu():
    assert backend.resolve("cpu") == "cpu"
    if not backend.cuda_status()[0] or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        assert backend.resolve("auto") == "cpu"


def test_cuda_without_gpu_is_a_clear_error():
    usable, why = backend.cuda_status()
    if usable:
        assert backend.resolve("cuda") == "cuda"
    else:
        with pytest.raises(BackendUnavailable, match="--backend cuda"):
            backend.resolve("cuda")
        assert why


def test_unknown_backend_and_threads():
    with pytest.raises(UsageError, match="backend 'tpu'"):
        backend.resolve("tpu")
    with pytest.raises(UsageError, match="threads"):
        backend.check_threads(-1)


def test_engines_not_yet_measured_on_a_gpu_stay_on_the_cpu_under_auto():
    from seqsift.backend import resolve_unmeasured

    assert resolve_unmeasured("auto") == "cpu" and resolve_unmeasured("cpu") == "cpu"


def test_driver_probe_asks_the_loader_without_subprocesses(monkeypatch):
    """On Linux the driver library is looked for by dlopen, never by ctypes.util.find_library
    (which runs ldconfig, gcc and ld): a library the loader has is found, a missing one is not,
    and a missing driver makes the backend unusable with that reason, without importing numba.cuda."""
    import ctypes.util
    import sys

    if sys.platform != "linux":
        pytest.skip("the loader is asked on Linux only")

    def no_find_library(name):
        raise AssertionError("find_library called")

    monkeypatch.setattr(ctypes.util, "find_library", no_find_library)
    monkeypatch.setitem(backend.DRIVER_NAMES, "linux", ("libc.so.6",))
    assert backend.driver_found()
    monkeypatch.setitem(backend.DRIVER_NAMES, "linux", ("libseqsift-no-such-driver.so.1",))
    assert not backend.driver_found()
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    backend.cuda_status.cache_clear()
    try:
        assert backend.cuda_status() == (False, "no CUDA driver (libcuda) was found")
        assert backend.resolve("auto") == "cpu"
    finally:
        backend.cuda_status.cache_clear()
