"""The reused buffers under read batches: memory is lent again only once nothing views it."""

import numpy as np

from seqsift.io.recycled import Buffers


def address(array):
    return array.__array_interface__["data"][0]


def test_memory_is_reused_once_every_view_is_gone():
    buffers = Buffers(1000)
    first = buffers.get(800)
    first[:] = 1
    view = first[10:20][2:5]  # views of views keep the lent array alive
    where = address(first)
    del first
    second = buffers.get(900)
    assert not np.shares_memory(second, view) and address(second) != where
    del view
    third = buffers.get(100)
    assert address(third) == where and third.size == 100


def test_oversized_requests_and_a_full_pool_get_fresh_memory():
    buffers = Buffers(64)
    big = buffers.get(65)
    assert big.size == 65
    held = [buffers.get(64) for _ in range(20)]  # more than the pool keeps, all in use
    for i, a in enumerate(held):
        a[:] = i
    assert all(int(a[0]) == i and int(a[-1]) == i for i, a in enumerate(held))
    assert len({address(a) for a in held}) == 20
