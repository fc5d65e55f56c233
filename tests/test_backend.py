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
