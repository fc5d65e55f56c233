"""Every GPU kernel compiled for the H200 (sm_90) by NVIDIA's own compilers, with no GPU: NVVM turns
each kernel, with the argument types its host code launches it with (tests/gpu_kernels.py), into
PTX (read here) and LTO-IR, which nvJitLink optimizes and assembles into a cubin as numba-cuda does
at launch (ptxas: registers, shared memory; for the alignment kernel's DPX build, dpx.cu compiled by
NVRTC is linked in and its functions must inline). The simulator tests run the same kernels as
Python; these catch what only the real compilers would reject."""

import importlib
import re
from types import SimpleNamespace

import numba.cuda.dispatcher
import pytest
from numba import cuda
from numba.cuda.dispatcher import CUDADispatcher

from seqsift.backend import _simulated
from tests.gpu_kernels import ALIGN, LAUNCHES, kernel_name

ARCH = "sm_90"
GPU_MODULES = ["seqsift.alignment._gpu", "seqsift.find._gpu", "seqsift.fmindex._gpu", "seqsift.scan._gpu"]

pytestmark = pytest.mark.skipif(_simulated(), reason="compiles with the real NVVM: run without NUMBA_ENABLE_CUDASIM")


def variants(name: str) -> dict[str, object]:
    """The Python functions compiled under one kernel name: the alignment kernel has two builds."""
    if name == ALIGN:
        from seqsift.alignment._gpu import build_kernel

        return {"emulated": build_kernel(dpx=False), "dpx": build_kernel(dpx=True)}
    module, attr = name.rsplit(".", 1)
    return {"": getattr(importlib.import_module(module), attr)}


@pytest.fixture(autouse=True)
def hopper(monkeypatch):
    """compile_ptx takes the kernel's target, but numba-cuda compiles the device functions a kernel
    calls for the current device, which needs a driver: here that device is an sm_90 one."""
    monkeypatch.setattr(numba.cuda.dispatcher, "get_current_device", lambda: SimpleNamespace(compute_capability=(9, 0)))


def ptx_of(kernel, sig) -> str:
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
    return ptx


def ltoir_of(kernel, sig) -> bytes:
    """The kernel as LTO-IR: what numba-cuda hands nvJitLink at launch when nvJitLink is installed."""
    code, _ = cuda.compile(kernel.py_func, sig, device=False, abi="numba", cc=(9, 0), output="ltoir")
    return bytes(code)


def nvrtc_compile(source: str, name: str, ltoir: bool) -> bytes:
    """CUDA C to PTX or LTO-IR, with the options numba-cuda uses for linked files (relocatable
    device code)."""
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    try:
        options = [f"--gpu-architecture={ARCH}".encode(), b"-rdc=true"] + ([b"-dlto"] if ltoir else [])
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        # the buffers are bytearrays: NVRTC writes into them, and a bytes of length 1 is Python's shared b" "
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, log.decode(errors="replace")
        get_size, get = (nvrtc.nvrtcGetLTOIRSize, nvrtc.nvrtcGetLTOIR) if ltoir else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
        _, size = get_size(prog)
        out = bytearray(size)
        get(prog, out)
        return bytes(out) if ltoir else bytes(out).rstrip(b"\0")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def link_cubin(*ltoir: bytes) -> tuple[bytes, str]:
    """LTO-IR to a cubin for sm_90 through nvJitLink (link-time optimization, then ptxas), as
    numba-cuda links at launch: (cubin, ptxas's report); raises with the error log."""
    from cuda.bindings import nvjitlink

    handle = nvjitlink.create(3, [f"-arch={ARCH}", "-lto", "-verbose"])
    try:
        for i, code in enumerate(ltoir):
            nvjitlink.add_data(handle, nvjitlink.InputType.LTOIR, code, len(code), f"part{i}.ltoir")
        try:
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            log = bytearray(nvjitlink.get_error_log_size(handle))
            nvjitlink.get_error_log(handle, log)
            raise AssertionError(log.decode(errors="replace")) from exc
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        info = bytearray(nvjitlink.get_info_log_size(handle))
        nvjitlink.get_info_log(handle, info)
        return bytes(cubin), info.decode(errors="replace")
    finally:
        nvjitlink.destroy(handle)


def test_every_kernel_in_the_package_is_listed():
    found = set()
    for module in map(importlib.import_module, GPU_MODULES):
        for obj in vars(module).values():
            if isinstance(obj, CUDADispatcher) and not obj.targetoptions.get("device"):
                found.add(kernel_name(obj.py_func))
    found.add(kernel_name(variants(ALIGN)["emulated"].py_func))  # built by a factory, not at import
    assert found == set(LAUNCHES)


CASES = [(name, i, build) for name, sigs in LAUNCHES.items() for i in range(len(sigs))
         for build in (["emulated", "dpx"] if name == ALIGN else [""])]


@pytest.mark.parametrize("name,i,build", CASES, ids=[f"{n.split('.')[-1 if n != ALIGN else 2]}-{i}{'-' + b if b else ''}"
                                                      for n, i, b in CASES])
def test_kernel_compiles_and_assembles_for_sm_90(name, i, build):
    kernel, sig = variants(name)[build], LAUNCHES[name][i]
    ptx = ptx_of(kernel, sig)
    assert f".target {ARCH}" in ptx and ".entry" in ptx
    parts = [ltoir_of(kernel, sig)]
    if build == "dpx":
        from seqsift.alignment._gpu import DPX_SOURCE

        assert ".extern .func" in ptx and "seqsift_vimax3_s16x2_relu" in ptx  # the calls left to the linker
        parts.append(nvrtc_compile(DPX_SOURCE.read_text(), "dpx.cu", ltoir=True))
    cubin, report = link_cubin(*parts)
    assert cubin[:4] == b"\x7fELF" and "registers" in report
    if build == "dpx":  # link-time optimization inlined the DPX functions: no call frames, no spills
        assert re.findall(r"(\d+) bytes stack frame", report) and not re.search(r"[1-9]\d* bytes (stack frame|spill)", report)


def test_dpx_source_uses_the_hopper_packed_instructions():
    from seqsift.alignment._gpu import DPX_SOURCE

    ptx = nvrtc_compile(DPX_SOURCE.read_text(), "dpx.cu", ltoir=False).decode()
    body = {name: ptx.split(f".func  (.param .b32 func_retval0) {name}(")[1].split(".func")[0]
            for name in ("seqsift_vimax3_s16x2_relu", "seqsift_viaddmax_s16x2", "seqsift_vadd_s16x2")}
    assert body["seqsift_vimax3_s16x2_relu"].count("max.s16x2.relu") == 2  # max(a, b, c, 0) per half-word
    assert "add.s16x2" in body["seqsift_viaddmax_s16x2"] and "max.s16x2 " in body["seqsift_viaddmax_s16x2"]
    assert "relu" not in body["seqsift_viaddmax_s16x2"]  # the gap states must go below zero
    assert "add.u16x2" in body["seqsift_vadd_s16x2"]  # wrapping half-word add
