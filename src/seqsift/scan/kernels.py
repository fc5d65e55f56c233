"""The scanner's CPU kernels (_cpu.py) as the engine and the table builders call them:
precompiled (precompiled.py), so a scan imports no Numba once they are built. Each signature is
the one the engine passes (its arrays' types, tuples as the kernels unpack them)."""

from __future__ import annotations

import numpy as np

from seqsift.precompiled import Kernel

PAD = 8  # bytes before and after the data in a padded buffer (_cpu.py)
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # a free slot of the stride filter's hash table
GROUP_STARTS = 1 << 16  # starts one verify_groups group covers at most (its scratch is this plus a span)

_CPU = "seqsift.scan._cpu"
_ROWS = "(int64[:],int64[:],int64[:])"  # anchor, segment, piece
_OUT = "(int64[:],int32[:],int64[:],int64[:])"  # segment, piece, start, end
_PROGRAM = "(uint8[:],int32[:],int32[:],int32[:],int32[:],uint8[:],uint8[:],int32[:,:],uint8[:])"  # Program.arrays
_STRIDE_FILTER = "(int64,uint64[:],int64,int64,uint64[:,:],int64[:],uint64[:])"  # StrideFilter.arrays

table_filter = Kernel(_CPU, "table_filter", "uint8[:] int64 int64 int64[:] uint32[:] uint32[:] uint64[:] int64 int64[:] int64[:]",
                      results=2)
stride_rows = Kernel(_CPU, "stride_rows", f"uint8[:] int64 int64 {_STRIDE_FILTER} int64[:] int64[:] int64 {_ROWS} int64[:]",
                     results=2)
table_rows = Kernel(_CPU, "table_rows", f"int64[:] int64[:] int32[:] int32[:] int64[:] int64[:] {_ROWS}", results=1)
verify_rows = Kernel(_CPU, "verify_rows", f"uint8[:] {_ROWS} int64 int64[:] int64[:] {_PROGRAM} {_OUT}", results=1)
verify_groups = Kernel(_CPU, "verify_groups", f"uint8[:] {_ROWS} int64 int64[:] int64[:] {_PROGRAM} "
                       f"(int32[:],int64[:],int32[:]) int64 int64[:] int64[:] int64[:] {_OUT}", results=2)
# The tables' builders (table.py)
hash_windows = Kernel(_CPU, "hash_windows", "uint64[:] uint64[:]")
fill_slots = Kernel(_CPU, "fill_slots", "uint64[:] uint64[:] int64 uint64[:,:]")
count_pairs = Kernel(_CPU, "count_pairs", "uint8[:] int64[:]")
place_keys = Kernel(_CPU, "place_keys", "uint8[:] int64[:] float64[:] int64[:] uint32[:] uint32[:] int32[:]")
stride_offsets = Kernel(_CPU, "stride_offsets", "uint8[:] int64[:] int64 float64[:] int64[:]")
