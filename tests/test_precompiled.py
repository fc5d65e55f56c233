"""precompiled.py: kernels compiled once, then loaded without Numba. Same results as the Numba
dispatchers; damaged or unwritable caches fall back to compiling; a kernel's exception is the
dispatcher's; a second command never imports Numba; where the contract with Numba does not hold
(another release, a helper or symbol missing) the JIT runs instead, with the same results."""

import ctypes
import hashlib
import importlib
import mmap
import os
import struct
import subprocess
import sys
from array import array
from pathlib import Path

import numpy as np
import pytest

from seqsift import filestatus, objload, precompiled
from seqsift.precompiled import Kernel

QUOTIENT = Kernel("tests.precompiled_sample", "quotient", "int64[:] int64 int64[:]", "int32[:] int64 int64[:]", results=2)
MIXED = Kernel("tests.precompiled_sample", "mixed", "(int64,int32[:]) int16[:,:,:] uint8 int16 float64 int64[:]", results=2)
precompiled.KERNELS.remove(QUOTIENT)  # the tests' own, not the engines'
precompiled.KERNELS.remove(MIXED)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of the test's own, and kernels that forget what they loaded."""
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SEQSIFT_PRECOMPILED", "1")
    for kernel in (QUOTIENT, MIXED):
        monkeypatch.setattr(kernel, "jit", False)
        for variant in kernel.variants:
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


def test_tuples_typed_scalars_floats_and_3d_arrays_are_the_dispatchers(cache, rng):
    values = rng.integers(-1000, 1000, 300).astype(np.int32)
    cube = rng.integers(-50, 50, (3, 4, 5)).astype(np.int16)
    for byte, small, scale in ((np.uint8(255), np.int16(30000), 0.5), (np.uint8(7), np.int16(-3), 2.25)):
        out, expected_out = np.zeros(300, np.int64), np.zeros(300, np.int64)
        got = MIXED((np.int64(9), values), cube, byte, small, scale, out)
        expected = MIXED.dispatcher()((9, values), cube, byte, small, scale, expected_out)
        assert got == tuple(int(x) for x in expected) and np.array_equal(out, expected_out)
    assert got[1] == 0 and MIXED((1, values), cube, np.uint8(255), np.int16(1), 1.0, out)[1] == 1
    for bad in ((1, values.astype(np.int64)), (1,), values):  # wrong dtype inside, wrong length, not a tuple
        with pytest.raises(TypeError, match="mixed"):
            MIXED(bad, cube, np.uint8(1), np.int16(1), 1.0, out)
    with pytest.raises(TypeError, match="mixed"):  # a Python int is not a typed uint8
        MIXED((1, values), cube, 1, np.int16(1), 1.0, out)


def test_buffers_other_than_numpy_arrays_are_the_dispatchers(cache, rng):
    """Array arguments given as array.array, read-only memoryviews and maps (what `seqsift find`
    passes over files, without numpy): the numpy arrays' results, written in place."""
    values = rng.integers(-1000, 1000, 400)
    expected_out = np.zeros(400, np.int64)
    expected = QUOTIENT.dispatcher()(values, 7, expected_out)
    read_only = memoryview(values.tobytes()).cast("q")
    with mmap.mmap(-1, 8 * 400) as mapped:
        for given, out in ((array("q", values.tolist()), array("q", bytes(8 * 400))),
                           (read_only, memoryview(mapped).cast("q")),
                           (array("i", values.tolist()), memoryview(bytearray(8 * 400)).cast("q"))):
            got = QUOTIENT(given, 7, out)
            written = np.frombuffer(out, np.int64).copy()
            if isinstance(out, memoryview):
                out.release()
            assert got == expected and np.array_equal(written, expected_out)
    for bad in (array("d", [1.0]), memoryview(values.tobytes()).cast("q")[::2], b"12345678", values.tolist()):
        with pytest.raises(TypeError, match="quotient"):  # not int64 or int32, strided, bytes, a list
            QUOTIENT(bad, 7, array("q", bytes(8)))


def test_buffers_reach_the_jit_as_numpy_views(cache, monkeypatch, rng):
    """SEQSIFT_PRECOMPILED=0 and a kernel's exception run the dispatcher: given buffers, it gets
    numpy views of the same memory (the results land in the caller's buffer)."""
    values = array("q", rng.integers(-1000, 1000, 50).tolist())
    out = array("q", bytes(8 * 50))
    with pytest.raises(ZeroDivisionError):
        QUOTIENT(values, 0, out)
    monkeypatch.setenv("SEQSIFT_PRECOMPILED", "0")
    assert QUOTIENT(values, 3, out) == (sum(v // 3 for v in values), 50)
    assert list(out) == [v // 3 for v in values]


def test_numbas_helpers_are_loaded_only_once_a_kernel_calls_one(cache, fresh_loader):
    """A kernel whose code only names NRT_MemInfo_call_dtor (QUOTIENT, as most engines' kernels)
    links without Numba's helper modules, which import numpy (test_find_over_files_imports_no_numpy
    checks a command); the forwarder bound in that helper's place loads them on its first call and
    calls the real one; a kernel that allocates (MIXED) loads them before it is linked."""
    QUOTIENT(np.arange(5), 2, np.zeros(5, np.int64))
    _, _, needs = precompiled._cached_object(QUOTIENT.variants[0])
    loader = precompiled._the_loader
    assert needs == ["NRT_MemInfo_call_dtor"] and loader.helpers is None
    forwarder = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(loader._forwarder("NRT_MemInfo_call_dtor"))
    called = []
    dtor_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    dtor = dtor_type(lambda data, size, info: called.append(size))
    helpers = precompiled._extension("numba.core.runtime._nrt_python", os.path.join(loader.root, "core/runtime/_nrt_python"))
    meminfo = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, dtor_type)(helpers.c_helpers["MemInfo_alloc_dtor"])(64, dtor)
    assert loader.helpers is None
    forwarder(meminfo)  # the real NRT_MemInfo_call_dtor: our destructor, then the meminfo freed
    assert called == [64] and loader.helpers is not None
    MIXED((0, np.zeros(4, np.int32)), np.zeros((1, 1, 1), np.int16), np.uint8(0), np.int16(0), 1.0,
          np.zeros(4, np.int64))
    assert not MIXED.jit and not QUOTIENT.jit


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
    identity = precompiled._identity(QUOTIENT.variants[0])
    assert precompiled._read(path, identity) is None
    QUOTIENT.variants[0]._function = None
    assert QUOTIENT(values, 3, out) == (1617, 100)
    assert precompiled._read(path, identity) is not None  # written again, whole


def test_a_foreign_cache_file_is_compiled_again(cache):
    """Another kernel's file, well formed, under this kernel's name (copied, or a name clash) is
    not linked in its place: its header names what it holds."""
    values, out = np.arange(100), np.zeros(100, np.int64)
    assert QUOTIENT(values, 3, out) == (1617, 100)
    mine = next(cache.rglob("*.o"))
    for kernel, args in ((MIXED, ((1, np.arange(5, dtype=np.int32)), np.ones((1, 1, 1), np.int16), np.uint8(1),
                                  np.int16(1), 1.0, np.zeros(5, np.int64))), (QUOTIENT, (values.astype(np.int32), 3, out))):
        variant = next(v for v in kernel.variants if v.fits(args))
        other = precompiled._identity(variant)
        kernel(*args)  # its own file, written
        theirs = next(p for p in cache.rglob("*.o") if p != mine and precompiled._read(p, other))
        data = theirs.read_bytes()
        mine.write_bytes(data)
        assert precompiled._read(mine, precompiled._identity(QUOTIENT.variants[0])) is None
        QUOTIENT.variants[0]._function = None
        assert QUOTIENT(values, 3, out) == (1617, 100) and out[5] == 1  # compiled again, its own results
        assert precompiled._read(mine, precompiled._identity(QUOTIENT.variants[0])) is not None
        theirs.unlink()


def test_a_file_of_an_older_format_or_other_sources_is_not_read(cache, monkeypatch):
    """Stale files: the format's first line changed with what a header holds; a source edited
    changes the cache key, so the directory the kernels are looked up in."""
    QUOTIENT(np.arange(10), 3, np.zeros(10, np.int64))
    path = next(cache.rglob("*.o"))
    data = path.read_bytes()
    path.write_bytes(data.replace(precompiled._MAGIC, b"seqsift-precompiled 1\n", 1))
    assert precompiled._read(path, precompiled._identity(QUOTIENT.variants[0])) is None
    key = precompiled._cache_key()
    monkeypatch.setattr(precompiled, "_key", None)
    monkeypatch.setattr(precompiled, "_sources", hashlib.sha256(b"an edited source").digest())
    assert precompiled._cache_key() != key


def test_a_damaged_header_is_not_read(cache):
    """The header line is tab-separated text: a field missing or added, bytes that are not UTF-8,
    an empty symbol, another hash, or a name holding a separator (never written: such a kernel
    goes uncached)."""
    identity = precompiled._identity(QUOTIENT.variants[0])
    path = cache / "k.o"
    cache.mkdir()
    good = precompiled.cache_file(identity, "sym", b"code", ["NRT_a", "b"])
    path.write_bytes(good)
    assert precompiled._read(str(path), identity) == ("sym", b"code", ["NRT_a", "b"])
    head, code = good[len(precompiled._MAGIC):].split(b"\n", 1)
    for bad in (head.rsplit(b"\t", 1)[0], head + b"\tmore", head.replace(b"sym", b"\xff"),
                head.replace(b"\tsym\t", b"\t\t"), head.replace(b"5", b"6", 1)):
        path.write_bytes(precompiled._MAGIC + bad + b"\n" + code)
        assert precompiled._read(str(path), identity) is None, bad
    path.write_bytes(good + b"more code")  # the code's hash
    assert precompiled._read(str(path), identity) is None
    assert precompiled.cache_file(identity, "a\tb", b"code", []) is None
    assert precompiled.cache_file(identity, "sym", b"code", ["two names"]) is None


def _package(top: Path) -> Path:
    """A package tree of three sources (one in a subpackage, one under __pycache__, not counted)."""
    (top / "sub").mkdir(parents=True)
    (top / "__pycache__").mkdir()
    (top / "a.py").write_bytes(b"A = 1\n")
    (top / "sub" / "b.py").write_bytes(b"B = 2\n")
    (top / "__pycache__" / "c.py").write_bytes(b"not a source\n")
    (top / "notes.txt").write_bytes(b"not a source\n")
    return top


def _slow_digest(package: Path) -> bytes:
    """The obvious digest: every .py outside __pycache__, by relative name, name and bytes."""
    names = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    return hashlib.sha256(b"".join(n.encode() + b"\0" + (package / n).read_bytes() + b"\0" for n in names)).digest()


def test_the_sources_digest_is_remembered_under_the_files_status(cache, tmp_path, monkeypatch):
    """The digest is the files' (the obvious hashing); once remembered, a later process takes it
    without reading them; a file rewritten, even to the same size with its modification time put
    back, changes its status (the change time), so the digest is taken again."""
    monkeypatch.setattr(filestatus, "SETTLED_NS", 0)
    package = _package(tmp_path / "pkg")
    first = precompiled.digest_of(str(package))
    assert first == _slow_digest(package)
    (memo,) = (cache / "sources").iterdir()
    reads = []
    real = precompiled._bytes_of
    monkeypatch.setattr(precompiled, "_bytes_of", lambda path: reads.append(path) or real(path))
    assert precompiled.digest_of(str(package)) == first and reads == []  # from the memo
    b = package / "sub" / "b.py"
    before = b.stat()
    b.write_bytes(b"B = 3\n")
    os.utime(b, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = precompiled.digest_of(str(package))
    assert second == _slow_digest(package) != first and reads
    (package / "sub" / "new.py").write_bytes(b"")
    assert precompiled.digest_of(str(package)) == _slow_digest(package) != second


def test_a_digest_is_not_remembered_while_a_source_may_still_change(cache, tmp_path, monkeypatch):
    """git's racy rule: a file written within SETTLED_NS might change again within the same tick
    of the filesystem's clock, leaving its status as it was."""
    monkeypatch.setattr(filestatus, "SETTLED_NS", 10**15)
    package = _package(tmp_path / "pkg")
    assert precompiled.digest_of(str(package)) == _slow_digest(package)
    assert not (cache / "sources").exists() or not any((cache / "sources").iterdir())


@pytest.mark.parametrize("damage", ["writable by others", "another digest", "garbage"])
def test_a_memo_not_trusted_or_not_matching_is_not_used(cache, tmp_path, monkeypatch, damage):
    monkeypatch.setattr(filestatus, "SETTLED_NS", 0)
    package = _package(tmp_path / "pkg")
    right = precompiled.digest_of(str(package))
    (memo,) = (cache / "sources").iterdir()
    status, digest = memo.read_text().split()
    if damage == "writable by others":
        memo.write_text(f"{status} {'0' * 64}\n")
        memo.chmod(0o666)
    elif damage == "another digest":
        memo.write_text(f"{'1' * 64} {'0' * 64}\n")  # another status's
    else:
        memo.write_bytes(b"\xff" * 300)
    assert precompiled.digest_of(str(package)) == right


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
    monkeypatch.setattr(precompiled, "_compile", lambda v: ("compiled", b"compiled here", []))
    precompiled._warned.clear()
    cache.mkdir(mode=0o700)
    cache.chmod(dir_mode)
    tag = hashlib.sha256(f"{variant.signature}/{QUOTIENT.results}".encode()).hexdigest()[:12]
    sub = cache / f"precompiled-{precompiled._cache_key()}"
    sub.mkdir(mode=0o700)
    path = sub / f"{QUOTIENT.module}.{QUOTIENT.name}-{tag}.o"
    path.write_bytes(precompiled.cache_file(precompiled._identity(variant), "planted", b"planted machine code", []))
    path.chmod(file_mode)
    return precompiled._cached_object(variant)


def test_a_planted_object_in_a_cache_others_may_write_is_not_loaded(cache, monkeypatch, capsys):
    """Issue item 6: a world-writable SEQSIFT_CACHE_DIR is not used (a warning says why); a file
    others may write is not used in a private one either; the user's own file is (the control)."""
    assert _planted(cache, monkeypatch, dir_mode=0o777) == ("compiled", b"compiled here", [])
    assert "is not used: it is writable by others (mode 777)" in capsys.readouterr().err


def test_a_planted_object_writable_by_others_is_not_loaded(cache, monkeypatch):
    assert _planted(cache, monkeypatch, file_mode=0o666) == ("compiled", b"compiled here", [])


def test_the_users_own_object_is_loaded(cache, monkeypatch):
    assert _planted(cache, monkeypatch) == ("planted", b"planted machine code", [])


def test_a_cache_under_a_directory_anyone_may_write_is_not_used(tmp_path, monkeypatch, capsys):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)  # no sticky bit: anyone may rename the cache away and put another there
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(open_dir / "cache"))
    precompiled._warned.clear()
    assert precompiled.private_dir("sub") is None
    assert "which anyone may write" in capsys.readouterr().err
    open_dir.chmod(0o1777)  # /tmp's form: the sticky bit keeps others' hands off the user's entries
    assert precompiled.private_dir("sub") == str(open_dir / "cache" / "sub")


def _key_dir(cache, key, age_days, files=("k.o",), links=()):
    """A directory as a key's, holding files and links (name, target), last used age_days before
    the time 1e9."""
    path = cache / f"precompiled-{key * 32}"
    path.mkdir(parents=True)
    for name in files:
        (path / name).write_bytes(b"object") if name != "sub" else (path / name).mkdir()
    for name, target in links:
        (path / name).symlink_to(target)
    then = 1_000_000_000 - age_days * 86400
    os.utime(path, (then, then), follow_symlinks=False)
    return path


def test_stale_directories_of_other_keys_are_pruned_and_nothing_else(cache):
    """Other keys' directories unused for a day go, the KEEP_OTHERS used last and the current key's
    stay; a link, another name, a file, or a directory holding anything seqsift does not write is
    left as it is, and nothing is removed through a link."""
    now = 1_000_000_000
    current = _key_dir(cache, "c", 30)
    recent = _key_dir(cache, "4", 0.5)  # used within the day: another process may be loading from it
    kept = [_key_dir(cache, key, days) for key, days in (("1", 2), ("2", 3))]  # with it, the 3 used last
    stale = [_key_dir(cache, key, days, ("a.o", ".tmp-x")) for key, days in (("3", 4), ("6", 9), ("7", 40))]
    foreign = _key_dir(cache, "8", 20, ("k.o", "notes.txt"))
    nested = _key_dir(cache, "9", 21, ("sub",))
    outside = _key_dir(cache.parent / "elsewhere", "a", 50)
    link = cache / f"precompiled-{'b' * 32}"
    link.symlink_to(outside)
    other_name = _key_dir(cache, "z", 60)  # not hexadecimal: not a key
    (cache / f"precompiled-{'d' * 32}").write_bytes(b"a file")
    linked_file = _key_dir(cache, "e", 70, (), links=[("k.o", outside / "k.o")])
    removed = precompiled.prune_stale(current.name, now=now)
    assert sorted(removed) == sorted(p.name for p in stale) and not any(p.exists() for p in stale)
    for path in [current, *kept, recent, foreign, nested, outside, other_name, linked_file]:
        assert path.is_dir() and path.exists()
    assert (outside / "k.o").read_bytes() == b"object" and link.is_symlink() and (linked_file / "k.o").is_symlink()
    assert (cache / f"precompiled-{'d' * 32}").is_file()
    assert precompiled.prune_stale(current.name, now=now) == []  # nothing more to remove


def test_a_new_keys_first_compile_prunes_and_loading_marks_the_directory_used(cache, monkeypatch):
    monkeypatch.setattr(precompiled, "_used", False)
    monkeypatch.setattr(precompiled, "_pruned", False)
    monkeypatch.setattr(precompiled, "KEEP_OTHERS", 0)
    stale = _key_dir(cache, "5", 3)
    assert QUOTIENT(np.arange(10), 3, np.zeros(10, np.int64)) == (12, 10)  # compiled: a miss
    assert not stale.exists()
    mine = cache / f"precompiled-{precompiled._cache_key()}"
    os.utime(mine, (0, 0))
    monkeypatch.setattr(precompiled, "_used", False)  # as a new process
    QUOTIENT.variants[0]._function = None
    QUOTIENT(np.arange(10), 3, np.zeros(10, np.int64))  # loaded from the cache
    assert mine.stat().st_mtime > 1e9


# -- the contract with Numba ------------------------------------------------------------------------
def test_the_contract_holds_with_the_installed_numba():
    """CHECKED_WITH names the installed releases; after an upgrade this fails until the loader is
    checked with the new one (this file passing) and CHECKED_WITH says so."""
    root = precompiled.check_contract()
    assert os.path.isfile(os.path.join(root, "__init__.py"))
    for name, stem, _ in precompiled.HELPER_MODULES:
        assert precompiled._extension(name, os.path.join(root, stem)).c_helpers


def test_outside_symbols_are_read_from_the_declarations():
    ir = ('declare i8* @NRT_MemInfo_alloc_safe_aligned(i64, i32)\n'
          'declare void @llvm.memset.p0i8.i64(i8*, i8, i64, i1)\n'
          'declare double @"exp"(double) local_unnamed_addr\n'
          '@_ZN08NumbaEnv5tests = external global i8*\n'
          'define void @kernel(i64* %status) {\n  ret void\n}\n')
    assert precompiled.outside_symbols(ir) == ["NRT_MemInfo_alloc_safe_aligned", "_ZN08NumbaEnv5tests", "exp"]


@pytest.fixture
def fresh_loader(monkeypatch):
    """No loader or cache key yet, and no fallback warned about, as in a new process."""
    monkeypatch.setattr(precompiled, "_the_loader", None)
    monkeypatch.setattr(precompiled, "_key", None)
    monkeypatch.setattr(precompiled, "_warned", set())


def _through_the_jit(capsys, rng):
    """QUOTIENT and MIXED give the dispatchers' results, from the JIT, and one warning says why."""
    values = rng.integers(-1000, 1000, 200)
    out, expected_out = np.zeros(200, np.int64), np.zeros(200, np.int64)
    assert QUOTIENT(values, 7, out) == QUOTIENT.dispatcher()(values, 7, expected_out)
    assert np.array_equal(out, expected_out) and QUOTIENT.jit
    cube = np.ones((2, 2, 2), np.int16)
    got = MIXED((3, values.astype(np.int32)), cube, np.uint8(4), np.int16(5), 1.5, out)
    assert got == MIXED.dispatcher()((3, values.astype(np.int32)), cube, np.uint8(4), np.int16(5), 1.5, expected_out)
    assert np.array_equal(out, expected_out) and MIXED.jit
    err = capsys.readouterr().err
    assert err.count("precompiled kernels are not used") == 1 and "JIT" in err
    return err


def test_another_numba_release_runs_the_jit(cache, fresh_loader, monkeypatch, capsys, rng):
    monkeypatch.setitem(precompiled.CHECKED_WITH, "numba", "0.1")
    assert "numba" in _through_the_jit(capsys, rng) and not list(cache.rglob("*.o"))


def test_a_missing_helper_module_runs_the_jit(cache, fresh_loader, monkeypatch, capsys, rng):
    monkeypatch.setattr(precompiled, "HELPER_MODULES", (("seqsift_gone._helper", "gone/_helper", "numba_"),))
    assert "seqsift_gone._helper" in _through_the_jit(capsys, rng)


def test_a_symbol_the_code_calls_missing_here_runs_the_jit(cache, fresh_loader, monkeypatch, capsys, rng):
    """An object file whose code calls a symbol this process lacks is never linked (LLVM would
    abort the process on it)."""
    real = precompiled._compile
    monkeypatch.setattr(precompiled, "_compile", lambda v: (*real(v)[:2], ["seqsift_no_such_helper"]))
    assert "seqsift_no_such_helper" in _through_the_jit(capsys, rng)


def test_the_kernels_need_only_what_the_loader_provides(cache):
    """The control for the test above: the sample kernels' real needs (Numba's runtime, for
    MIXED's allocation) are all found, and both load."""
    MIXED((0, np.zeros(4, np.int32)), np.zeros((1, 1, 1), np.int16), np.uint8(0), np.int16(0), 1.0,
          np.zeros(4, np.int64))
    _, _, needs = precompiled._cached_object(MIXED.variants[0])
    assert any(name.startswith("NRT_") for name in needs) and not MIXED.jit


def test_every_module_making_kernels_is_built_by_the_cache_build():
    """`python -m seqsift.precompiled` (the Makefile's kernels step) imports KERNEL_MODULES: a
    module making a Kernel that is missing there would compile on a user's first command."""
    package = Path(precompiled.__file__).parent
    making = {".".join(("seqsift",) + path.relative_to(package).with_suffix("").parts)
              for path in package.rglob("*.py") if "Kernel(" in path.read_text() and path.name != "precompiled.py"}
    assert making == set(precompiled.KERNEL_MODULES)


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache built as `make` builds it (`python -m seqsift.precompiled`): (its directory, the
    build's output)."""
    cache = tmp_path_factory.mktemp("built") / "cache"
    env = dict(os.environ, SEQSIFT_CACHE_DIR=str(cache))
    run = subprocess.run([sys.executable, "-m", "seqsift.precompiled"], env=env, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stderr
    return cache, run.stdout


def test_the_cache_build_compiles_every_kernel(built_cache):
    for module in precompiled.KERNEL_MODULES:
        importlib.import_module(module)
    cache, output = built_cache
    built = int(output.split()[0])
    files = list(cache.rglob("*.o"))
    assert built == len(files) == sum(len(k.variants) for k in precompiled.KERNELS if k not in (QUOTIENT, MIXED))


TINY = {  # a command on tiny inputs, made by tiny_inputs; {out}: a file it writes, compared too
    "find": ["find", "ACG", "{tmp}/tiny.txt"],
    "find -c several": ["find", "-c", "-e", "ACG", "-e", "GTT", "-e", "TTG", "{tmp}/tiny.txt"],
    "find --fasta": ["find", "--fasta", "ACG", "{tmp}/pair.fa"],
    "scan": ["scan", "--no-summary", "--db", "{tmp}/sigs.ndb", "{tmp}/tiny.txt"],
    "align": ["align", "--dna", "{tmp}/pair.fa", "{tmp}/pair.fa"],
    "align pairs": ["align", "--outfmt", "pair", "--mode", "global", "{tmp}/pair.fa", "{tmp}/pair.fa"],
    "align protein": ["align", "{tmp}/protein.fa", "{tmp}/protein.fa"],
    "search": ["search", "{tmp}/ref.ssx", "{tmp}/reads.fq"],
    "search -e 1": ["search", "-e", "1", "{tmp}/ref.ssx", "{tmp}/reads.fq"],
    "check": ["check", "{tmp}/ref.fa", "{tmp}/hits.tsv", "{tmp}/reads.fq"],
    "map": ["map", "{tmp}/ref.ssx", "{tmp}/reads.fq"],
    "index": ["index", "{tmp}/ref.fa", "-o", "{out}"],
    "stats": ["stats", "{tmp}/ref.ssx", "{tmp}/reads.fq"],
}


@pytest.fixture(scope="module")
def tiny_inputs(tmp_path_factory, built_cache):
    tmp = tmp_path_factory.mktemp("tiny")
    (tmp / "tiny.txt").write_bytes(b"xxACGTTGxxABCDxx\n")
    (tmp / "sigs.ndb").write_text("Test.Sig:0:*:41424344\n")
    (tmp / "pair.fa").write_text(">q\nACGTACGTTTGACCAGT\n>t\nGGGACGTACGTTGACC\n")
    (tmp / "protein.fa").write_text(">p\nMKTAYIAKQRQISFVKSHFSRQ\n>r\nMKTAHIAKQRQISFVK\n")
    genome = "".join("ACGT"[(k * 7 + k // 5) % 4] for k in range(400))
    (tmp / "ref.fa").write_text(f">r\n{genome}\n")
    (tmp / "reads.fq").write_text("".join(f"@r{k}\n{genome[40 * k:40 * k + 30]}\n+\n{'I' * 30}\n" for k in range(3)))
    env = dict(os.environ, SEQSIFT_CACHE_DIR=str(built_cache[0]))
    for argv in (["index", str(tmp / "ref.fa"), "-o", str(tmp / "ref.ssx")],
                 ["search", str(tmp / "ref.ssx"), str(tmp / "reads.fq"), "-o", str(tmp / "hits.tsv")]):
        subprocess.run([sys.executable, "-m", "seqsift", *argv, "-q"], env=env, check=True, timeout=600)
    return tmp


@pytest.mark.parametrize("command", sorted(TINY))
def test_a_command_imports_no_numba_once_the_kernels_are_built(command, tiny_inputs, built_cache):
    """Issue 26: no command on the CPU imports Numba or compiles once `make` built the kernels;
    the output is the JIT's (SEQSIFT_PRECOMPILED=0). Nor does a run on this machine's threads
    import seqsift.distributed (logging, tempfile, dataclasses, hashlib: ~25 ms of align's and
    search's start), which only a client needs."""
    out = tiny_inputs / f"{command.replace(' ', '-')}.out"
    argv = [word.format(tmp=tiny_inputs, out=out) for word in TINY[command]]
    script = ("import sys; from seqsift import cli; code = cli.main(sys.argv[1:]); sys.stdout.flush(); "
              "sys.stderr.write(('numba imported' if 'numba' in sys.modules else 'numba not imported') "
              "+ (' with seqsift.distributed' if 'seqsift.distributed' in sys.modules else '') + '\\n')")
    outputs = []
    for switch in ("1", "0"):
        env = dict(os.environ, SEQSIFT_CACHE_DIR=str(built_cache[0]), SEQSIFT_PRECOMPILED=switch)
        run = subprocess.run([sys.executable, "-c", script, *argv, "-q"], env=env, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode in (0, 1), run.stderr
        assert run.stderr.endswith("numba not imported\n" if switch == "1" else "numba imported\n"), run.stderr
        outputs.append(run.stdout.encode() + (out.read_bytes() if "{out}" in TINY[command] else b""))
    assert outputs[0] == outputs[1] and outputs[0]


def test_find_over_files_imports_no_numpy(tiny_inputs, built_cache):
    """`seqsift find` over plain files on the CPU (packed small files, a mapped large one, a
    walked tree; offsets and counts) imports neither numpy nor Numba once the kernels are built:
    numpy's import is most of a command's start (docs/benchmarks.md, "Start-up"). Its output is
    the JIT's (SEQSIFT_PRECOMPILED=0)."""
    large = tiny_inputs / "large.txt"
    if not large.exists():
        large.write_bytes(b"xACGx" * 500_000)  # 2.5 MB: past PACK_FILE_MAX, mapped
    script = ("import sys; from seqsift import cli; code = cli.main(sys.argv[1:]); sys.stdout.flush(); "
              "sys.stderr.write(' '.join(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'numba'})) "
              "+ ' imported\\n')")  # by package: Numba's C helpers load as numba._helperlib alone
    for argv in (["ACG", "tiny.txt", "large.txt"], ["-c", "ACG", "tiny.txt", "large.txt"], ["-r", "-c", "ACG", "."],
                 ["-l", "ACGTT", "tiny.txt", "large.txt"]):
        outputs = []
        for switch in ("1", "0"):
            env = dict(os.environ, SEQSIFT_CACHE_DIR=str(built_cache[0]), SEQSIFT_PRECOMPILED=switch)
            run = subprocess.run([sys.executable, "-c", script, "find", "-q", *argv], env=env, capture_output=True,
                                 text=True, timeout=600, cwd=tiny_inputs)
            assert run.returncode in (0, 1), run.stderr
            if switch == "1":  # neither named before " imported"
                assert run.stderr == " imported\n", (argv, run.stderr)
            outputs.append(run.stdout)
        assert outputs[0] == outputs[1] and outputs[0], argv


def test_find_imports_no_pathlib_json_shutil_or_typing(tiny_inputs, built_cache):
    """Nor the standard library's slower modules (pathlib with urllib.parse, json, shutil with
    bz2 and lzma: ~8 ms of a start that is ~60; typing, ~6 ms more; threading, weakref and shlex,
    ~3 ms together): the cache's paths are strings, its files' header plain text, argparse's
    formatter given the width (options.sized), type names imported for type checkers only, no
    NamedTuple on the way, no thread started on one thread's work. Run without `site`, whose .pth
    hooks (numba-cuda's) import pathlib in this environment but not in a plain install."""
    import site

    path = os.pathsep.join([str(Path(precompiled.__file__).parents[1]), *site.getsitepackages()])
    env = dict(os.environ, SEQSIFT_CACHE_DIR=str(built_cache[0]), SEQSIFT_PRECOMPILED="1", PYTHONPATH=path)
    script = ("import sys; from seqsift import cli; code = cli.main(sys.argv[1:]); sys.stdout.flush(); "
              "sys.stderr.write(' '.join(m for m in ('pathlib', 'json', 'shutil', 'typing', 'threading', 'weakref', "
              "'shlex', 'numpy', 'numba') "
              "if m in sys.modules) + ' imported\\n')")
    for argv in (["-c", "ACG", "tiny.txt"], ["-r", "-l", "ACG", "."]):  # one thread: no pool, so no threading
        run = subprocess.run([sys.executable, "-S", "-c", script, "find", "-q", "-t", "1", *argv], env=env, capture_output=True,
                             text=True, timeout=600, cwd=tiny_inputs)
        assert run.returncode == 0 and run.stdout, run.stderr
        assert run.stderr == " imported\n", (argv, run.stderr)


def test_the_construction_in_pieces_imports_no_numba(tiny_inputs, built_cache):
    """The index built in pieces (fmindex/pieces.py), which the command does only past its memory
    limit: the same arrays as in one piece, without Numba."""
    script = ("import sys; import numpy as np; from seqsift.fmindex.build import build_arrays; "
              "from seqsift.fmindex.reference import load_reference; ref = load_reference(sys.argv[1]); "
              "one, pieces = build_arrays(ref), build_arrays(ref, piece=50); "
              "same = all(np.array_equal(getattr(one, a), getattr(pieces, a)) for a in "
              "('blocks', 'C', 'samples', 'kmer_table', 'packed', 'gaps')); "
              "print(same, 'numba' in sys.modules)")
    env = dict(os.environ, SEQSIFT_CACHE_DIR=str(built_cache[0]), SEQSIFT_PRECOMPILED="1")
    run = subprocess.run([sys.executable, "-c", script, str(tiny_inputs / "ref.fa")], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.split() == ["True", "False"], run.stderr

# -- objload.py: the cached objects loaded without LLVM ------------------------------------------------
# Loaded directly they give the results LLVM's JIT linking them gives, and the dispatchers'; an object
# objload cannot load (damaged, another machine, another relocation, a symbol nowhere) is Unsupported,
# and the kernel is then linked through LLVM, with the same results. The host's description (part of
# the cache key) is remembered without LLVM.
DIRECT = pytest.mark.skipif(not objload.supported(), reason="objload loads x86-64 Linux objects only; "
                            "elsewhere every kernel is linked through LLVM (the tests above)")


def _object(kernel=QUOTIENT) -> tuple[str, bytes, list[str]]:
    """(symbol, object code, outside symbols) of the kernel's first signature, from the cache."""
    return precompiled._cached_object(kernel.variants[0])


def _call(address: int, values: np.ndarray, divisor: int) -> tuple[np.ndarray, list]:
    """QUOTIENT's int64 signature called at `address` as precompiled.Kernel calls it."""
    import ctypes

    out = np.zeros(values.size, np.int64)
    results = (ctypes.c_int64 * 3)()  # the status (0: no exception), then the two results
    array = [ctypes.c_void_p, ctypes.c_int64]
    function = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *array, ctypes.c_int64, *array)(address)
    function(ctypes.addressof(results), values.ctypes.data, values.size, divisor, out.ctypes.data, out.size)
    assert results[0] == 0
    return out, list(results[1:])


@DIRECT
def test_loaded_directly_as_through_llvm_and_the_dispatcher(cache, fresh_loader, rng):
    values = rng.integers(-10**6, 10**6, 1000)
    QUOTIENT(values, 7, np.zeros(1000, np.int64))  # compiled into the cache
    symbol, code, needs = _object()
    loader = precompiled._loader()
    direct = loader.load(code, symbol, needs)
    assert loader._jit is None  # LLVM not even loaded
    through_llvm = loader.jit().load(code, symbol)
    expected_out = np.zeros(1000, np.int64)
    expected = QUOTIENT.dispatcher()(values, 7, expected_out)
    for address in (direct, through_llvm):
        out, results = _call(address, values, 7)
        assert np.array_equal(out, expected_out) and tuple(results) == tuple(expected)


@DIRECT
def test_a_kernel_needing_numbas_helpers_loads_directly(cache, fresh_loader, rng):
    """MIXED allocates (NRT_MemInfo_alloc_aligned and others from Numba's helper modules)."""
    values = rng.integers(-1000, 1000, 64).astype(np.int32)
    cube = rng.integers(-50, 50, (2, 3, 4)).astype(np.int16)
    args = ((np.int64(3), values), cube, np.uint8(9), np.int16(-4), 1.5)
    out, expected_out = np.zeros(64, np.int64), np.zeros(64, np.int64)
    assert MIXED(*args, out) == tuple(int(x) for x in MIXED.dispatcher()(*args, expected_out))
    assert np.array_equal(out, expected_out) and precompiled._the_loader._jit is None


def _section(code: bytes, wanted: str) -> tuple:
    """The section header named `wanted` (objload's layout of a header)."""
    ehdr = objload._EHDR.unpack_from(code)
    shoff, shnum, shstrndx = ehdr[6], ehdr[12], ehdr[13]
    headers = [objload._SHDR.unpack_from(code, shoff + k * objload._SHDR.size) for k in range(shnum)]
    names = headers[shstrndx]
    for h in headers:
        start = names[4] + h[0]
        if code[start:code.index(b"\0", start)].decode() == wanted:
            return h
    raise AssertionError(wanted)


def _damaged(code: bytes) -> dict[str, bytes]:
    rela = _section(code, ".rela.ltext")
    first = rela[4]  # the first relocation of the code: its type made R_X86_64_PC32 (2)
    where, info, addend = objload._RELA.unpack_from(code, first)
    pc32 = code[:first] + objload._RELA.pack(where, (info >> 32 << 32) | 2, addend) + code[first + objload._RELA.size:]
    past = code[:first] + objload._RELA.pack(10**9, info, addend) + code[first + objload._RELA.size:]
    symtab = _section(code, ".symtab")
    common = next(symtab[4] + j * objload._SYM.size for j in range(symtab[5] // objload._SYM.size)
                  if objload._SYM.unpack_from(code, symtab[4] + j * objload._SYM.size)[3] == objload._SHN_COMMON)
    name, info, other, shndx, value, _ = objload._SYM.unpack_from(code, common)
    huge = code[:common] + objload._SYM.pack(name, info, other, shndx, value, 1 << 40) + code[common + objload._SYM.size:]
    return {
        "truncated": code[: len(code) // 2],
        "a COMMON symbol of a TiB": huge,
        "another machine": code[:18] + struct.pack("<H", 183) + code[20:],  # AArch64
        "a 32-bit relocation": pc32,
        "a relocation past its section": past,
        "not ELF": b"MZ" + code[2:],
    }


@DIRECT
@pytest.mark.parametrize(("damage", "reason"), [
    ("truncated", "a malformed object"), ("another machine", "not a relocatable x86-64"),
    ("a 32-bit relocation", "relocation type 2"), ("a relocation past its section", "past its section"),
    ("not ELF", "not a relocatable x86-64"), ("a COMMON symbol of a TiB", "sections of 10995")])
def test_an_object_it_cannot_load_is_unsupported(cache, fresh_loader, damage, reason):
    QUOTIENT(np.arange(10), 3, np.zeros(10, np.int64))
    symbol, code, _ = _object()
    loader = precompiled._loader()
    with pytest.raises(objload.Unsupported, match=reason):
        objload.load(_damaged(code)[damage], symbol, loader.address_of)


@DIRECT
def test_a_symbol_found_nowhere_is_unsupported(cache, fresh_loader):
    QUOTIENT(np.arange(10), 3, np.zeros(10, np.int64))
    symbol, code, _ = _object()
    with pytest.raises(objload.Unsupported, match="NRT_MemInfo_call_dtor is not found"):
        objload.load(code, symbol, lambda name: None)
    with pytest.raises(objload.Unsupported, match="lacks"):
        objload.load(code, "no_such_symbol", precompiled._loader().address_of)


@DIRECT
def test_an_object_it_refuses_is_linked_through_llvm_with_the_same_results(cache, fresh_loader, monkeypatch, capsys,
                                                                            rng):
    """(A refusal stood in for: an object damaged to show one would be damaged for LLVM too.)"""
    def refuse(code, symbol, resolve):
        raise objload.Unsupported("relocation type 2")

    values = rng.integers(-1000, 1000, 300)
    QUOTIENT(values, 5, np.zeros(300, np.int64))
    monkeypatch.setattr(QUOTIENT.variants[0], "_function", None)
    monkeypatch.setattr(precompiled, "_compile", lambda variant: pytest.fail("compiled again"))
    monkeypatch.setattr(objload, "load", refuse)
    out, expected_out = np.zeros(300, np.int64), np.zeros(300, np.int64)
    assert QUOTIENT(values, 5, out) == QUOTIENT.dispatcher()(values, 5, expected_out)
    assert np.array_equal(out, expected_out) and not QUOTIENT.jit and precompiled._the_loader._jit is not None
    assert "linked through LLVM instead: relocation type 2" in capsys.readouterr().err


@DIRECT
def test_where_objects_cannot_be_loaded_directly_llvm_links_them(cache, fresh_loader, monkeypatch, rng):
    monkeypatch.setattr(objload, "supported", lambda: False)
    values = rng.integers(-1000, 1000, 300)
    out, expected_out = np.zeros(300, np.int64), np.zeros(300, np.int64)
    assert QUOTIENT(values, 9, out) == QUOTIENT.dispatcher()(values, 9, expected_out)
    assert np.array_equal(out, expected_out) and precompiled._the_loader._jit is not None


@DIRECT
def test_the_host_is_remembered_and_is_llvms(cache, monkeypatch):
    """The key's host part without LLVM once remembered; a memo others may write, or damaged, is
    not used (LLVM is asked again)."""
    first = precompiled.host_target()
    ll = precompiled._llvm()
    assert first == (ll.process_triple(), ll.host_cpu_name(), ll.host_cpu_features())
    (memo,) = (cache / "hosts").iterdir()
    asked = []
    monkeypatch.setattr(precompiled, "_llvm", lambda: asked.append(1) or ll)
    assert precompiled.host_target() == first and asked == []
    memo.write_text("x86_64\tznver9\t+everything")
    memo.chmod(0o666)
    assert precompiled.host_target() == first and asked == [1]
    memo.unlink()
    precompiled.host_target()
    memo.write_text("only two\tfields")
    assert precompiled.host_target() == first and asked == [1, 1, 1]


@DIRECT
def test_a_command_maps_no_llvm(tmp_path):
    """`seqsift find` with its kernel cached: llvmlite's library is never mapped (it is ~8 ms of
    the start when in the page cache, ~2 s when not)."""
    target = tmp_path / "t.txt"
    target.write_bytes(b"xxACGTTGxxACGxx\n")
    env = dict(os.environ, SEQSIFT_CACHE_DIR=str(tmp_path / "cache"))
    script = ("import sys; from seqsift import cli; code = cli.main(sys.argv[1:]); sys.stdout.flush(); "
              "sys.stderr.write(str(open('/proc/self/maps').read().count('libllvmlite')))")
    runs = [subprocess.run([sys.executable, "-c", script, "find", "-c", "ACG", str(target)], env=env,
                           capture_output=True, text=True, timeout=600) for _ in range(2)]
    assert [r.stdout for r in runs] == [f"{target}\t2\n"] * 2, runs[0].stderr
    assert runs[1].stderr == "0"  # the first compiled it (Numba maps LLVM); the second only loads it


@DIRECT
def test_every_engine_kernel_loads_without_llvm(built_cache, fresh_loader):
    """Every object `make` builds (all engines' kernels, every signature) is one objload takes: a
    refused one would run, linked through LLVM, and only a warning would tell."""
    (directory,) = built_cache[0].glob("precompiled-*")
    objects = sorted(directory.glob("*.o"))
    loader = precompiled._loader()
    for path in objects:
        head, _, code = path.read_bytes()[len(precompiled._MAGIC):].partition(b"\n")
        identity, symbol, _, needs = head.decode().split("\t")
        assert precompiled._read(str(path), identity) is not None, path.name
        assert loader.load(code, symbol, needs.split()), path.name
    assert len(objects) >= len(precompiled.KERNELS) and loader._jit is None
