"""Kernels for tests/test_precompiled.py: one that raises on demand, one taking every kind of argument."""

import numpy as np
from numba import njit


@njit(nogil=True)
def quotient(values, divisor, out):
    """out[i] = values[i] // divisor (ZeroDivisionError for divisor 0); returns (sum, count)."""
    total = 0
    for i in range(values.size):
        out[i] = values[i] // divisor
        total += out[i]
    return total, values.size


@njit(nogil=True)
def mixed(pair, cube, byte, small, scale, out):
    """Every argument kind precompiled.Kernel takes: a tuple (a scalar and an array), a 3-D array,
    typed scalars (uint8 and int16 wrap as numpy's do), a float; allocates (Numba's runtime).
    Returns (sum of out, whether byte + 1 wrapped to 0)."""
    shift, values = pair
    scratch = np.empty(values.size, np.int64)
    for i in range(values.size):
        scratch[i] = values[i] + shift + cube[i % cube.shape[0], i % cube.shape[1], i % cube.shape[2]]
    wrapped = np.uint8(byte + np.uint8(1)) == 0
    total = 0
    for i in range(values.size):
        out[i] = np.int64(scratch[i] * scale) + np.int16(small * np.int16(2))
        total += out[i]
    return total, wrapped
