"""A kernel for tests/test_precompiled.py: one that raises on demand."""

from numba import njit


@njit(nogil=True)
def quotient(values, divisor, out):
    """out[i] = values[i] // divisor (ZeroDivisionError for divisor 0); returns (sum, count)."""
    total = 0
    for i in range(values.size):
        out[i] = values[i] // divisor
        total += out[i]
    return total, values.size
