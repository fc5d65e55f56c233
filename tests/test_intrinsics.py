"""The shared CPU intrinsics (seqsift/intrinsics.py) against plain numpy, on every code path
they have."""

import numpy as np
import pytest
from numba import njit

from seqsift import intrinsics


def _lookup_kernel():
    """A fresh (uncached) function around byte_lookup16, so it is compiled for the path chosen now."""

    @njit
    def lookup(table, codes, out):
        for k in range(0, codes.size, 16):
            intrinsics.byte_lookup16(table.ctypes.data, codes[k:].ctypes.data, out[k:].ctypes.data)

    return lookup


@pytest.mark.parametrize("shuffle", [True, False], ids=["ssse3", "loads"])
def test_byte_lookup16_is_a_table_lookup(rng, monkeypatch, shuffle):
    if shuffle and not intrinsics._has_ssse3():
        pytest.fail("this test's machine has no SSSE3: the shuffle path cannot be checked here")
    monkeypatch.setattr(intrinsics, "_has_ssse3", lambda: shuffle)
    lookup = _lookup_kernel()
    for size in (32, 25, 17, 16, 1):  # every code below `size` (the lookup takes tables of up to 32)
        table = rng.integers(-128, 128, 32).astype(np.int8)
        codes = rng.integers(0, size, 16 * 40).astype(np.uint8)
        codes[:32] = np.arange(32) % size  # each code, and the 15/16 boundary of the two shuffles
        out = np.full(codes.size, 99, np.int8)
        lookup(table, codes, out)
        assert out.tolist() == table[codes].tolist()
