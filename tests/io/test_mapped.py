"""io.mapped: a file is mapped only under a read lease, and a writer waiting on the lease is seen
before the map is read again, so a truncation never reaches a mapped page (no SIGBUS)."""

import mmap
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from seqsift.io.mapped import open_mapped

TRUNCATE = "import os, sys; os.truncate(sys.argv[1], int(sys.argv[2]))"


def mapped_or_skip(path, min_size=0):
    mapped = open_mapped(path, min_size)
    if mapped is None:
        pytest.skip(f"no read lease on {path}: this filesystem or user cannot take one (files are read instead)")
    return mapped


def wait_until_broken(mapped, child):
    """Until the child's truncate waits on the lease (bounded: a child that ends first fails)."""
    deadline = time.monotonic() + 120
    while mapped.intact:
        assert child.poll() is None, "the truncate went through while the file was mapped"
        assert time.monotonic() < deadline, "the lease was never broken"
        time.sleep(0.01)


def test_the_map_is_the_file(tmp_path, rng):
    data = rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()
    path = tmp_path / "f"
    path.write_bytes(data)
    with mapped_or_skip(path) as mapped:
        assert mapped.intact and mapped.size == len(data)
        assert mapped.data.tobytes() == data


def vm_flags(address: int) -> list[str] | None:
    """The VmFlags /proc/self/smaps gives the mapping holding address (None off Linux)."""
    try:
        lines = open("/proc/self/smaps").read().splitlines()
    except OSError:
        return None
    inside = False
    for line in lines:
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(x, 16) for x in head.split("-"))
            inside = low <= address < high
        elif inside and head == "VmFlags:":
            return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


def test_huge_pages_are_asked_for_and_the_map_is_the_file(tmp_path, rng):
    data = rng.integers(0, 256, 5 << 20, dtype=np.uint8).tobytes()
    path = tmp_path / "f"
    path.write_bytes(data)
    with mapped_or_skip(path) as mapped:
        taken = mapped.prefer_huge_pages()
        flags = vm_flags(mapped.data.ctypes.data)
        if flags is not None:  # Linux: the advice shows as the mapping's "hg" flag where it was taken
            assert ("hg" in flags) == taken
        assert mapped.data.tobytes() == data


def test_reading_ahead_leaves_the_map_the_file(tmp_path, rng):
    """MADV_WILLNEED on a file cached or dropped from the cache: taken on Linux, the same bytes."""
    data = rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()
    path = tmp_path / "f"
    path.write_bytes(data)
    with mapped_or_skip(path) as mapped:
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(mapped.fd, 0, 0, os.POSIX_FADV_DONTNEED)
        assert mapped.read_ahead() == hasattr(mmap, "MADV_WILLNEED")
        assert mapped.read_ahead() == hasattr(mmap, "MADV_WILLNEED")  # cached now: the same
        assert mapped.data.tobytes() == data


def test_small_empty_and_special_files_are_not_mapped(tmp_path):
    (tmp_path / "small").write_bytes(b"abc")
    (tmp_path / "empty").write_bytes(b"")
    os.mkfifo(tmp_path / "fifo")  # opened non-blocking and checked by fstat: never waited on
    assert open_mapped(tmp_path / "small", 4) is None
    assert open_mapped(tmp_path / "empty") is None
    assert open_mapped(tmp_path / "fifo") is None
    assert open_mapped(tmp_path / "missing") is None


def test_a_file_open_for_writing_is_not_mapped(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10_000)
    with open(path, "r+b"):
        assert open_mapped(path) is None


def test_a_truncate_waits_until_the_map_is_given_up(tmp_path, rng):
    """The other process's truncate blocks on the lease; the map still reads every byte (where a
    plain map would raise SIGBUS past the new end); after close() the truncate goes through."""
    data = rng.integers(0, 256, 4 << 20, dtype=np.uint8).tobytes()
    path = tmp_path / "f"
    path.write_bytes(data)
    mapped = mapped_or_skip(path)
    child = subprocess.Popen([sys.executable, "-c", TRUNCATE, str(path), "0"])
    try:
        wait_until_broken(mapped, child)
        assert os.stat(path).st_size == len(data)
        assert mapped.data[-4096:].tobytes() == data[-4096:]
    finally:
        mapped.close()
        assert child.wait(timeout=120) == 0
    assert os.stat(path).st_size == 0
