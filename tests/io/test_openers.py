"""io.openers: standard input under its one name, spooled once for consumers that reread it, and
small files read whole with errors that name them."""

import io
import os
import sys

import pytest

from seqsift.errors import InputError
from seqsift.io.openers import STDIN, read_small, spooled_stdin


def test_spooled_stdin_is_a_file_removed_afterwards(monkeypatch, rng):
    data = rng.integers(0, 256, 3 << 20).astype("uint8").tobytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with spooled_stdin(STDIN) as path:
        assert open(path, "rb").read() == data
        assert open(path, "rb").read() == data  # read again: the reason to spool
    assert not os.path.exists(path)
    with spooled_stdin("named.fa") as same:
        assert same == "named.fa"


def test_read_small_names_the_file(tmp_path):
    path = tmp_path / "m.txt"
    path.write_bytes(b"x" * 100)
    assert read_small(path, 10) == b"x" * 10 and read_small(path, 1000) == b"x" * 100
    with pytest.raises(InputError, match="missing.txt"):
        read_small(tmp_path / "missing.txt", 10)
    with pytest.raises(InputError, match="is a directory"):
        read_small(tmp_path, 10)
