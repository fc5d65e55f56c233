"""precompiled.py: kernels compiled once, then loaded without Numba. Same results as the Numba
dispatchers; damaged or unwritable caches fall back to compiling; a kernel's exception is the
dispatcher's; a second command never imports Numba."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from seqsift import precompiled
from seqsift.precompiled import Kernel

QUOTIENT = Kernel("tests.precompiled_sample", "quotient", "int64[:] int64 int64[:]", "int32[:] int64 int64[:]", results=2)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of the test's own, and kernels that forget what they loaded."""
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SEQSIFT_PRECOMPILED", "1")
    for variant in QUOTIENT.variants:
        monkeypatch.setattr(variant, "_function", None)
    return tmp_path / "cache"


def test_results_are_the_dispatchers(cache, rng):
    values = rng.integers(-1000, 1000, 500)
    for dtype in (np.int64, np.int32):
        out, expected_out = np.zeros(500, np.int64), np.zeros(500, np.int64)
        got = QUOTIENT(values.astype(dtype), 7, out)
        expected = QUOTIENT.dispatcher()(values.astype(dtype), 7, expected_out)
        assert got == expected and np.array_equal(out, expected_out) and out.any()
    assert len(list(cache.rglob("tests.precompiled_sample.quotient-*.o"))) == 2  # one file per signature


def test_a_kernels_exception_is_the_dispatchers(cache):
    with pytest.raises(ZeroDivisionError):
        QUOTIENT(np.arange(5), 0, np.zeros(5, np.int64))


def test_arguments_that_fit_no_signature_are_refused(cache):
    out = np.zeros(10, np.int64)
    for bad in ((np.arange(10.0), 3, out), (np.arange(20)[::2], 3, out), (np.arange(10), 3), (np.arange(10), out, out)):
        with pytest.raises(TypeError, match="quotient"):
            QUOTIENT(*bad)


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty"])
def test_a_damaged_cache_file_is_compiled_again(cache, damage):
    values, out = np.arange(100), np.zeros(100, np.int64)
    assert QUOTIENT(values, 3, out) == (1617, 100)
    path = next(cache.rglob("*.o"))
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-100] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "magic":
        data[:4] = b"junk"
    else:
        data = b""
    path.write_bytes(bytes(data))
    assert precompiled._read(path) is None
    QUOTIENT.variants[0]._function = None
    assert QUOTIENT(values, 3, out) == (1617, 100)
    assert precompiled._read(path) is not None  # written again, whole


def test_an_unwritable_cache_still_runs(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(blocker / "cache"))  # a directory cannot be made under a file
    monkeypatch.setattr(QUOTIENT.variants[0], "_function", None)
    assert QUOTIENT(np.arange(100), 3, np.zeros(100, np.int64)) == (1617, 100)


def _search(tmp_path, index, reads, *extra, precompiled_on="1"):
    """(whether the process imported Numba, the output)."""
    env = dict(os.environ, SEQSIFT_CACHE_DIR=str(tmp_path / "cache"), SEQSIFT_PRECOMPILED=precompiled_on)
    script = ("import sys; from seqsift import cli; code = cli.main(sys.argv[1:]); "
              "print('numba imported' if 'numba' in sys.modules else 'numba not imported', code)")
    out = tmp_path / f"out{''.join(extra)}"  # SAM's @PG line holds the command line
    run = subprocess.run([sys.executable, "-c", script, "search", str(index), str(reads), "-o", str(out), "-q",
                          *extra], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()[-3:-1] != ["not", "imported"], out.read_bytes()


def test_a_second_search_runs_without_numba_and_matches_it(tmp_path):
    """The whole command: TSV and SAM, one and two threads, against SEQSIFT_PRECOMPILED=0 (the
    Numba dispatchers); the first run compiles, every later one loads the cache."""
    from seqsift.cli import main

    index = tmp_path / "lambda.ssx"
    reads = tmp_path / "reads.fq"
    genome = Path(precompiled.__file__).parent / "data" / "lambda_virus.fa.gz"
    assert main(["index", str(genome), "-o", str(index), "-q"]) == 0
    assert main(["simulate", str(genome), "-n", "3000", "--length", "60", "--found-fraction", "0.8",
                 "--error-rate", "0.01", "--seed", "3", "-o", str(reads), "-q"]) == 0
    for extra in ((), ("--format", "sam"), ("-t", "2")):
        compiled, _ = _search(tmp_path, index, reads, *extra)  # compiles what is missing: it imports Numba
        loaded, output = _search(tmp_path, index, reads, *extra)
        dispatched, expected = _search(tmp_path, index, reads, *extra, precompiled_on="0")
        assert compiled == (extra != ("-t", "2")) and not loaded and dispatched
        assert output == expected and len(output) > 3000 * 20


def _planted(cache, monkeypatch, dir_mode=0o700, file_mode=0o600):
    """A well-formed object file (the expected symbol, a matching hash) planted where the kernel's
    would be; (what _cached_object returned, the planted bytes). Compiling is replaced by a marker
    value, so whichever of the two is returned says whether the planted file was used."""
    variant = QUOTIENT.variants[0]
    monkeypatch.setattr(precompiled, "_compile", lambda v: ("compiled", b"compiled here"))
    precompiled._warned.clear()
    cache.mkdir(mode=0o700)
    cache.chmod(dir_mode)
    tag = precompiled.hashlib.sha256(f"{variant.signature}/{QUOTIENT.results}".encode()).hexdigest()[:12]
    sub = cache / f"precompiled-{precompiled._cache_key()}"
    sub.mkdir(mode=0o700)
    path = sub / f"{QUOTIENT.module}.{QUOTIENT.name}-{tag}.o"
    code = b"planted machine code"
    header = precompiled.json.dumps({"symbol": "planted", "sha256": precompiled.hashlib.sha256(code).hexdigest()})
    path.write_bytes(precompiled._MAGIC + header.encode() + b"\n" + code)
    path.chmod(file_mode)
    return precompiled._cached_object(variant)


def test_a_planted_object_in_a_cache_others_may_write_is_not_loaded(cache, monkeypatch, capsys):
    """Issue item 6: a world-writable SEQSIFT_CACHE_DIR is not used (a warning says why); a file
    others may write is not used in a private one either; the user's own file is (the control)."""
    assert _planted(cache, monkeypatch, dir_mode=0o777) == ("compiled", b"compiled here")
    assert "is not used: it is writable by others (mode 777)" in capsys.readouterr().err


def test_a_planted_object_writable_by_others_is_not_loaded(cache, monkeypatch):
    assert _planted(cache, monkeypatch, file_mode=0o666) == ("compiled", b"compiled here")


def test_the_users_own_object_is_loaded(cache, monkeypatch):
    assert _planted(cache, monkeypatch) == ("planted", b"planted machine code")


def test_a_cache_under_a_directory_anyone_may_write_is_not_used(tmp_path, monkeypatch, capsys):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)  # no sticky bit: anyone may rename the cache away and put another there
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(open_dir / "cache"))
    precompiled._warned.clear()
    assert precompiled.private_dir("sub") is None
    assert "which anyone may write" in capsys.readouterr().err
    open_dir.chmod(0o1777)  # /tmp's form: the sticky bit keeps others' hands off the user's entries
    assert precompiled.private_dir("sub") == open_dir / "cache" / "sub"
