"""Every GPU kernel and the argument types its host code launches it with.

Two tests share this list: under the CUDA simulator, conftest.py checks that every launch's types
are listed here; with the JIT on, test_gpu_ptx.py compiles every entry to PTX for sm_90 with the
real NVVM. Together they check what the simulator cannot: that each kernel, as launched, compiles
for the GPU. A new kernel or a new argument type is added here.
"""

from numba import types

i64, boolean = types.int64, types.boolean


def arr(dtype, ndim: int = 1) -> types.Array:
    """A C-contiguous device array, as numba-cuda types a contiguous DeviceNDArray."""
    return types.Array(dtype, ndim, "C")


def kernel_name(fn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


FM_SEARCH = "seqsift.fmindex._gpu._search_kernel"
FM_LOCATE = "seqsift.fmindex._gpu._locate_kernel"
KMP = "seqsift.find._gpu._kmp_kernel"
SCAN_TABLE = "seqsift.scan._gpu._table_kernel"
ALIGN = "seqsift.alignment._gpu._kernel.<locals>.kernel"


def _fm_search(table_dtype):
    return (arr(types.uint64, 2), arr(i64), i64, arr(table_dtype, 2), i64, arr(types.uint8), arr(i64), i64, arr(i64),
            arr(i64))


def _fm_locate(sample_dtype):
    return arr(types.uint64, 2), arr(i64), arr(sample_dtype), i64, arr(i64), arr(i64), arr(types.int32)


LAUNCHES = {
    # 32-bit k-mer table and samples, and the wide (64-bit) layout past 2^32 bases
    FM_SEARCH: [_fm_search(types.uint32), _fm_search(types.uint64)],
    FM_LOCATE: [_fm_locate(types.uint32), _fm_locate(types.uint64)],
    KMP: [(arr(types.uint8), i64, arr(types.uint8), arr(types.int32), i64, i64, arr(i64), arr(i64), boolean)],
    SCAN_TABLE: [(arr(types.uint8), i64, arr(i64), arr(types.uint32), arr(types.uint32), arr(i64), arr(i64),
                  arr(i64))],
    ALIGN: [(arr(types.int16), i64, i64, arr(types.uint8), arr(i64), arr(i64), arr(i64, 2), i64, i64, i64,
             arr(types.uint32, 2), arr(types.uint32, 2), arr(types.uint32), boolean)],
}
