"""`seqsift scan` against crafted inputs: every run in a child bounded in memory and CPU
(tests/bounded.py); one file that cannot be scanned never loses another file's findings."""

import os

import pytest

from tests.bounded import run_bounded, text

SIG = b"HOSTILE-SIGNATURE"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.ndb"
    path.write_text(f"Hit.Sig:0:*:{SIG.hex()}\n")
    hit = tmp_path / "hit.bin"
    hit.write_bytes(b"\0" * 100 + SIG + b"\0" * 100)
    return path, hit


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="Linux procfs only")
def test_a_special_file_that_fails_to_read_is_skipped(db):
    """Issue item 3: /proc/self/pagemap refuses a 1-byte read (EINVAL); it is reported alone."""
    path, hit = db
    run = run_bounded(["scan", "--db", str(path), "--no-summary", "/proc/self/pagemap", str(hit)])
    out, err = text(run)
    assert run.returncode == 1, err  # found wins over the error beside it
    assert out == f"{hit}: Hit.Sig FOUND\n"
    assert "/proc/self/pagemap: read failed" in err and "internal error" not in err


def test_a_fifo_swapped_in_after_the_walk_is_skipped(db, tmp_path):
    """Issue item 4: the walk saw a regular file; a fifo stands there when it is opened. Opening
    it must not block: the descriptor is opened non-blocking and checked by fstat."""
    path, hit = db
    fifo = tmp_path / "swapped"
    fifo.write_bytes(b"x")
    code = ("import os, sys\n"
            "from seqsift.io import tree\n"
            "walk = tree.walk\n"
            "def swapping(paths, recursive, report):\n"
            "    for shown, p in walk(paths, recursive, report):\n"
            "        if p.endswith('swapped'):\n"
            "            os.unlink(p); os.mkfifo(p)\n"
            "        yield shown, p\n"
            "import importlib\n"
            "api = importlib.import_module('seqsift.scan.api')\n"
            "api.walk = swapping\n"
            "from seqsift.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    run = run_bounded(["scan", "--db", str(path), "--no-summary", str(fifo), str(hit)], code=code)
    out, err = text(run)
    assert run.returncode == 1, err
    assert out == f"{hit}: Hit.Sig FOUND\n"
    assert f"{fifo}: is a fifo, not a regular file, skipped" in err


@pytest.mark.parametrize("line,message", [
    ("Big:0:9223372036854775807:41424344", "reaches past 2^60"),
    ("Big:0:EOF-99999999999999999999999,5:41424344", "reaches past 2^60"),
    ("Big:0:4,9223372036854775807:41424344", "reaches past 2^60"),
    ("Big:0:*:4142*{99999999999999999999-}4344", "beyond 2^60"),
])
def test_database_integers_past_the_int64_range_are_named(tmp_path, db, line, message):
    """Issue item 9: .ndb offsets and gaps near or past 2^63 are errors naming the line, not an
    internal error or a silent miss."""
    _, hit = db
    path = tmp_path / "big.ndb"
    path.write_text(f"# header\n{line}\n")
    run = run_bounded(["scan", "--db", str(path), "--no-summary", str(hit)])
    out, err = text(run)
    assert run.returncode == 2 and out == "", err
    assert f"{path}:2: " in err and message in err and "internal error" not in err


def test_offsets_at_the_limit_scan_without_error(tmp_path, db):
    """The largest offsets allowed: no match in a small file, and no overflow on the way."""
    _, hit = db
    path = tmp_path / "edge.ndb"
    path.write_text(f"Far:0:1152921504606846970,6:{SIG.hex()}\nFarEnd:0:EOF-1152921504606846976:{SIG.hex()}\n"
                    f"Gap:0:*:{SIG[:4].hex()}{{1152921504606846976-}}{SIG[4:].hex()}\nNear:0:100:{SIG.hex()}\n")
    run = run_bounded(["scan", "--db", str(path), "--no-summary", str(hit)])
    out, err = text(run)
    assert run.returncode == 1, err
    assert out == f"{hit}: Near FOUND\n"
