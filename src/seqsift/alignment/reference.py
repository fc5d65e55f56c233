"""The reference kernel's modes and memory bounds, and its kernels (_reference.py: Gotoh's
affine-gap recurrences in 32-bit integers, local, global and semi-global, with a traceback in
bounded memory) as pairwise.py and database.py call them: precompiled (precompiled.py), so an
alignment imports no Numba once they are built."""

from __future__ import annotations

import math

from seqsift.precompiled import Kernel

LOCAL, GLOBAL, SEMIGLOBAL = 0, 1, 2
MODES = {"local": LOCAL, "global": GLOBAL, "semi-global": SEMIGLOBAL}
NEG = -(1 << 30)  # minus infinity that survives a few subtractions in int32

_CPU = "seqsift.alignment._reference"
# q, t, matrix, gap_open, gap_extend, mode, r0, r1, H, I, dirs, checkpoints, every, best
advance = Kernel(_CPU, "advance", "uint8[:] uint8[:] int32[:,:] int64 int64 int64 int64 int64 int32[:] int32[:] uint8[:,:] "
                 "int32[:,:,:] int64 int64[:]")
# q, t, matrix, gap_open, gap_extend, mode, H, I -> the score
score_only = Kernel(_CPU, "score_only", "uint8[:] uint8[:] int32[:,:] int64 int64 int64 int32[:] int32[:]", results=1)
# t, gap_open, gap_extend, mode, H, I
first_rows = Kernel(_CPU, "first_rows", "uint8[:] int64 int64 int64 int32[:] int32[:]")
# dirs, r0, i, j, state, mode, ops -> (i, j, state, count, finished)
trace_band = Kernel(_CPU, "trace_band", "uint8[:,:] int64 int64 int64 int64 int64 int8[:]", results=5)
# q, t, letters, matrix, ops, i, j, columns, cigar -> the CIGAR's length
columns = Kernel(_CPU, "columns", "uint8[:] uint8[:] uint8[:] int32[:,:] int8[:] int64 int64 uint8[:,:] uint8[:]", results=1)


def band_rows(m: int) -> int:
    """Rows per band: sqrt(8 m) balances the checkpoints (8 bytes a cell every `every` rows)
    against one band of direction bytes."""
    return max(1, math.ceil(math.sqrt(8 * m)))


def traceback_bytes(m: int, n: int) -> int:
    """Memory the traceback holds for an m x n alignment (checkpoints, one band, two rows)."""
    every = band_rows(m)
    return (m // every + 1) * 8 * (n + 1) + every * (n + 1) + 8 * (n + 1)
