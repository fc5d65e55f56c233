"""Choose where kernels run: "auto" | "cpu" | "cuda", probing the GPU once per process."""

from __future__ import annotations

import ctypes
import functools
import os
import sys

from seqsift.errors import BackendUnavailable, UsageError
from seqsift.lazy import lend

BACKENDS = ("auto", "cpu", "cuda")
# GpuConfig (the GPU engines' launch sizes) lives in gpu_config.py, imported by the GPU engines
# only: as a NamedTuple it imports typing, ~6 ms of every command's start.
__getattr__, __dir__ = lend(__name__, {"GpuConfig": "seqsift.gpu_config"})


@functools.cache
def cuda_status() -> tuple[bool, str]:
    """(usable, description): a real GPU, or the CUDA simulator when NUMBA_ENABLE_CUDASIM=1."""
    if not _simulated() and not driver_found():
        # Importing numba.cuda and probing costs ~0.5 s: skip both when no driver library exists.
        return False, "no CUDA driver (libcuda) was found"
    try:
        from numba import cuda
    except ImportError as exc:  # numba-cuda not installed
        return False, f"numba-cuda is not installed ({exc}); pip install 'seqsift[cuda]'"
    try:
        if not cuda.is_available():
            return False, "no usable NVIDIA GPU or CUDA driver was found"
        if _simulated():
            return True, "CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return True, f"{name} (compute capability {dev.compute_capability[0]}.{dev.compute_capability[1]})"
    except Exception as exc:  # a broken driver install raises many kinds of errors
        return False, f"CUDA could not be initialised: {exc}"


# The CUDA driver's library as the dynamic loader knows it, per system (elsewhere: find_library).
DRIVER_NAMES = {"linux": ("libcuda.so.1", "libcuda.so")}


def driver_found() -> bool:
    """Whether the CUDA driver library is there, asked of the dynamic loader itself (dlopen), which
    answers in microseconds: ctypes.util.find_library runs ldconfig, then gcc and ld, as
    subprocesses when the library is missing (2026-12-01, a machine without a GPU: 0.01 s of CPU
    and ~0.2 s of wall time a command). A library that is there but fails to load counts as
    found, so numba-cuda's probe names the failure."""
    names = DRIVER_NAMES.get(sys.platform)
    if names is None:
        from ctypes.util import find_library

        return find_library("cuda") is not None
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError as exc:
            if "No such file" not in str(exc):
                return True
    return False


def _simulated() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def check_backend(name: str) -> str:
    """The name, when it is one of BACKENDS (where it runs is decided later, e.g. on a worker)."""
    if name not in BACKENDS:
        raise UsageError(f"backend {name!r} is not one of {', '.join(BACKENDS)}")
    return name


def resolve(name: str) -> str:
    """Turn a backend name into "cpu" or "cuda"; "auto" takes a real GPU when there is one."""
    check_backend(name)
    if name == "cpu":
        return "cpu"
    usable, why = cuda_status()
    if name == "cuda":
        if not usable:
            raise BackendUnavailable(f"--backend cuda: {why}; use --backend cpu or auto")
        return "cuda"
    return "cuda" if usable and not _simulated() else "cpu"


def resolve_unmeasured(name: str) -> str:
    """resolve() for engines whose GPU path has not yet run on a real GPU (docs/gpu.md): "auto"
    stays on the CPU, "cuda" must be asked for."""
    return "cpu" if name == "auto" else resolve(name)


def describe(resolved: str) -> str:
    """A short device description for provenance lines."""
    if resolved == "cuda":
        return cuda_status()[1]
    return f"cpu ({os.cpu_count()} cores)"


def default_threads() -> int:
    """All cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def check_threads(threads: int | None) -> int:
    if threads is None:
        return default_threads()
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise UsageError(f"threads={threads!r}: give a whole number of at least 1")
    return threads
