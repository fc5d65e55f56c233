"""Kernels compiled once by Numba, then loaded by every later process without importing Numba.

Why: importing Numba and setting up its CPU target costs ~0.5 s at every start, about as much
as searching a million reads (docs/benchmarks.md). A kernel declared here is compiled the first
time a process calls it, through a C-callable wrapper (`numba.cfunc`), and its machine code is
stored in the cache directory. Later processes link that object file into an LLVM JIT of their
own (llvmlite and Numba's C helper modules: ~40 ms) and call it through ctypes, which
releases the GIL during the call as Numba's `nogil` does. Results are the same machine code's.

The cache key covers everything the machine code depends on: every seqsift source file,
Numba's and llvmlite's versions, Python's, the CPU (name and features, as Numba targets them)
and Numba's code-generation settings. A stale, damaged or foreign file is recompiled, never
trusted; nothing in it is unpickled. Directory: $SEQSIFT_CACHE_DIR, else
$XDG_CACHE_HOME/seqsift, else ~/.cache/seqsift; where none is writable, each process compiles
its own. SEQSIFT_PRECOMPILED=0 calls the Numba functions instead.

The cache holds machine code this process runs, so it is trusted as ssh trusts its keys: only a
directory owned by the user and writable by no one else, under no directory others may write
without the sticky bit, with subdirectories and files owned by the user and writable by no one
else (checked on the opened file). Anything else is not used: a warning says why, and each
process compiles its own (a matching hash proves only that whoever wrote the file hashed it).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import stat
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

_MAGIC = b"seqsift-precompiled 1\n"
_NUMBA_SETTINGS = ("NUMBA_OPT", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_BOUNDSCHECK", "NUMBA_FASTMATH",
                   "NUMBA_LOOP_VECTORIZE", "NUMBA_SLP_VECTORIZE", "NUMBA_DISABLE_JIT")
_SCALARS = ("int64", "bool")
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("SEQSIFT_PRECOMPILED", "1") not in ("0", "")


class Kernel:
    """A Numba kernel called with numpy arrays and Python scalars, as its dispatcher would be.

    Each signature is one word per argument: "int64", "bool" or a C-contiguous array
    "dtype[:]" / "dtype[:,:]"; a call takes the first signature its arguments fit, and each
    signature is compiled apart. results: 0 (returns nothing), 1 (an integer) or k > 1 (a
    tuple of k integers)."""

    def __init__(self, module: str, name: str, *signatures: str, results: int = 0):
        self.module, self.name, self.results = module, name, results
        self.variants = [_Variant(self, signature) for signature in signatures]

    def __repr__(self) -> str:
        return f"Kernel({self.module}.{self.name})"

    def dispatcher(self):
        """The Numba dispatcher itself (imports Numba)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args):
        if not enabled():
            return self.dispatcher()(*args)
        variant = next((v for v in self.variants if v.fits(args)), None)
        if variant is None:
            raise TypeError(f"{self!r} has no signature for ({', '.join(_describe(a) for a in args)}); "
                            f"it takes one of: {'; '.join(v.signature for v in self.variants)}")
        flat = []
        for value, (_, ndim) in zip(args, variant.args):
            if ndim:
                flat.append(value.ctypes.data)
                flat.extend(value.shape)
            else:
                flat.append(int(value))
        status = np.zeros(1 + self.results, np.int64)
        variant.function()(status.ctypes.data, *flat)
        if status[0]:  # the kernel raised: the dispatcher raises the same exception, with its message
            self.dispatcher()(*args)
            raise RuntimeError(f"{self!r} failed in its precompiled form only")
        if self.results == 0:
            return None
        if self.results == 1:
            return int(status[1])
        return tuple(int(x) for x in status[1:])


class _Variant:
    """One signature of a kernel, and its compiled function once loaded."""

    def __init__(self, kernel: Kernel, signature: str):
        self.kernel, self.signature = kernel, signature
        self.words = signature.split()
        self.args = [_parse_arg(word) for word in self.words]
        self._function = None

    def fits(self, args) -> bool:
        if len(args) != len(self.args):
            return False
        for value, (dtype, ndim) in zip(args, self.args):
            if ndim:
                if not (isinstance(value, np.ndarray) and value.dtype == dtype and value.ndim == ndim
                        and value.flags.c_contiguous):
                    return False
            elif not isinstance(value, (int, np.integer, np.bool_)):
                return False
        return True

    def function(self):
        if self._function is None:
            with _lock:
                if self._function is None:
                    symbol, code = _cached_object(self)
                    address = _loader().load(code, symbol)
                    types = [ctypes.c_void_p]
                    for _, ndim in self.args:
                        types += [ctypes.c_void_p] + [ctypes.c_int64] * ndim if ndim else [ctypes.c_int64]
                    self._function = ctypes.CFUNCTYPE(None, *types)(address)
        return self._function


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{','.join(':' * value.ndim)}]{'' if value.flags.c_contiguous else ' (strided)'}"
    return type(value).__name__


def _parse_arg(word: str) -> tuple[np.dtype | None, int]:
    if "[" in word:
        dtype, dims = word.split("[", 1)
        if dims not in (":]", ":,:]"):
            raise ValueError(f"unsupported array argument {word!r}")
        return np.dtype(dtype), dims.count(":")
    if word not in _SCALARS:
        raise ValueError(f"unsupported scalar argument {word!r}")
    return None, 0


def _wrapper_source(variant: _Variant) -> str:
    """A cfunc taking (status, then per array: pointer and shape; per scalar: an int64) that
    calls the kernel and writes status[0] = 1 if it raised, else its results to status[1:]."""
    params, inner = ["status"], []
    kernel = variant.kernel
    for i, (dtype, ndim) in enumerate(variant.args):
        if ndim:
            dims = [f"n{i}_{d}" for d in range(ndim)]
            params += [f"p{i}"] + dims
            inner.append(f"carray(p{i}, ({', '.join(dims)},))")
        else:
            params.append(f"a{i}")
            inner.append(f"a{i} != 0" if variant.words[i] == "bool" else f"a{i}")
    call = f"kernel({', '.join(inner)})"
    if kernel.results == 0:
        body = f"        {call}\n"
    elif kernel.results == 1:
        body = f"        status[1] = {call}\n"
    else:
        body = f"        r = {call}\n" + "".join(f"        status[{j + 1}] = r[{j}]\n" for j in range(kernel.results))
    name = f"precompiled_{kernel.module.replace('.', '_')}_{kernel.name}"
    return (f"def {name}({', '.join(params)}):\n    try:\n{body}    except Exception:\n"
            f"        status[0] = 1\n")


def _compile(variant: _Variant) -> tuple[str, bytes]:
    """(symbol, object code) of the kernel's C-callable wrapper, compiled by Numba."""
    from numba import carray, cfunc, from_dtype, types

    kernel = variant.kernel
    c_args = [types.CPointer(types.int64)]
    for dtype, ndim in variant.args:
        c_args += [types.CPointer(from_dtype(dtype))] + [types.int64] * ndim if ndim else [types.int64]
    namespace = {"carray": carray, "kernel": kernel.dispatcher()}
    source = _wrapper_source(variant)
    exec(compile(source, f"<precompiled {kernel.module}.{kernel.name}>", "exec"), namespace)
    function = next(v for k, v in namespace.items() if k.startswith("precompiled_"))
    compiled = cfunc(types.void(*c_args), nopython=True)(function)
    # The code library behind a cfunc (a private attribute) and its object-code form, which is what
    # Numba's own cache stores; a Numba release that changes either fails tests/test_precompiled.py.
    _, kind, data = compiled._library.serialize_using_object_code()
    assert kind == "object"
    return compiled.native_name, data[0]


_key = None
_sources = None


def sources_digest() -> bytes:
    """SHA-256 over every seqsift source file, names included (~12 ms, once a process)."""
    global _sources
    if _sources is None:
        h = hashlib.sha256()
        package = Path(__file__).parent
        for path in sorted(package.rglob("*.py")):
            h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
        _sources = h.digest()
    return _sources


def _cache_key() -> str:
    """What the machine code depends on (module docstring)."""
    global _key
    if _key is None:
        import llvmlite
        import llvmlite.binding as ll

        h = hashlib.sha256(sources_digest())
        numba_spec = importlib.util.find_spec("numba")
        version_file = Path(numba_spec.origin).with_name("_version.py") if numba_spec and numba_spec.origin else None
        h.update(version_file.read_bytes() if version_file and version_file.exists() else b"no numba")
        _loader()  # initialises LLVM's native target, which the host queries need
        parts = [llvmlite.__version__, sys.version, ll.get_process_triple(), ll.get_host_cpu_name(),
                 ll.get_host_cpu_features().flatten()] + [os.environ.get(v, "") for v in _NUMBA_SETTINGS]
        h.update("\0".join(parts).encode())
        _key = h.hexdigest()[:32]
    return _key


def cache_dir() -> Path:
    """Where the cache would be (not checked: private_dir and trusted_file check it)."""
    if os.environ.get("SEQSIFT_CACHE_DIR"):
        return Path(os.environ["SEQSIFT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "seqsift"


_warned: set = set()


def _mine(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _untrusted(path: Path) -> str | None:
    """Why a directory cannot hold code this process will run (None: it can)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != os.getuid():
        return f"is owned by uid {st.st_uid}, not by this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    for parent in Path(os.path.abspath(path)).parents:
        try:
            up = os.stat(parent)
        except OSError:
            continue
        if up.st_mode & stat.S_IWOTH and not up.st_mode & stat.S_ISVTX:
            return f"lies in {parent}, which anyone may write (no sticky bit)"
    return None


def private_dir(name: str) -> Path | None:
    """The cache's subdirectory `name`, made if missing (mode 700), or None where the cache is
    missing and cannot be made (silently) or is not trusted (with a warning, once a process)."""
    top = cache_dir()
    path = top / name
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    why = _untrusted(top) or (_untrusted(path) and f"has {name}, which {_untrusted(path)}")
    if why:
        if str(top) not in _warned:
            _warned.add(str(top))
            sys.stderr.write(f"seqsift: warning: the cache directory {top} is not used: it {why}\n")
        return None
    return path


def trusted_file(f) -> bool:
    """Whether an opened cache file is the user's own and writable by no one else."""
    st = os.fstat(f.fileno())
    return stat.S_ISREG(st.st_mode) and _mine(st)


def _cached_object(variant: _Variant) -> tuple[str, bytes]:
    """The variant's (symbol, object code) from the cache, compiled and stored when missing."""
    kernel = variant.kernel
    tag = hashlib.sha256(f"{variant.signature}/{kernel.results}".encode()).hexdigest()[:12]
    directory = private_dir(f"precompiled-{_cache_key()}")
    path = directory / f"{kernel.module}.{kernel.name}-{tag}.o" if directory else None
    found = _read(path) if path else None
    if found is not None:
        return found
    symbol, code = _compile(variant)
    if path:
        _write(path, symbol, code)
    return symbol, code


def _read(path: Path) -> tuple[str, bytes] | None:
    try:
        with open(path, "rb") as f:
            if not trusted_file(f):
                return None
            data = f.read()
    except OSError:
        return None
    if not data.startswith(_MAGIC):
        return None
    head, sep, code = data[len(_MAGIC):].partition(b"\n")
    try:
        header = json.loads(head)
        symbol, digest = str(header["symbol"]), str(header["sha256"])
    except (ValueError, KeyError, TypeError):
        return None
    if not sep or hashlib.sha256(code).hexdigest() != digest:
        return None
    return symbol, code


def _write(path: Path, symbol: str, code: bytes) -> None:
    """Atomically (a temporary file renamed), so concurrent processes never read half a file;
    an unwritable cache is skipped."""
    header = json.dumps({"symbol": symbol, "sha256": hashlib.sha256(code).hexdigest()}).encode()
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + header + b"\n" + code)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


class _Loader:
    """LLVM's JIT with the C helpers Numba's code calls: its runtime (allocation) and helper
    library, loaded from Numba's extension files without importing the numba package."""

    def __init__(self):
        import llvmlite.binding as ll

        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        spec = importlib.util.find_spec("numba")
        root = Path(spec.origin).parent
        for name, pattern, prefix in (("numba.core.runtime._nrt_python", "core/runtime/_nrt_python*", "NRT_"),
                                      ("numba._helperlib", "_helperlib*", "numba_"),
                                      ("numba._dynfunc", "_dynfunc*", "numba_")):
            helpers = _extension(name, root, pattern).c_helpers
            for py_name, address in helpers.items():
                ll.add_symbol(py_name if prefix == "NRT_" and py_name.startswith("_") else prefix + py_name, address)
        target = ll.Target.from_triple(ll.get_process_triple())
        arch = target.name  # the relocation model Numba's JIT uses on each architecture
        reloc = "static" if arch.startswith("x86") else "pic" if arch.startswith("ppc") else "default"
        self.ll = ll
        self.machine = target.create_target_machine(
            cpu=os.environ.get("NUMBA_CPU_NAME") or ll.get_host_cpu_name(),
            features=os.environ.get("NUMBA_CPU_FEATURES") or ll.get_host_cpu_features().flatten(),
            opt=3, reloc=reloc, codemodel="jitdefault", jit=True)
        self.engines = []  # one per object: objects compiled in different processes may repeat internal names

    def load(self, code: bytes, symbol: str) -> int:
        ll = self.ll
        engine = ll.create_mcjit_compiler(ll.parse_assembly(""), self.machine)
        engine.add_object_file(ll.ObjectFileRef.from_data(code))
        engine.finalize_object()
        address = engine.get_function_address(symbol)
        if not address:
            raise RuntimeError(f"precompiled object lacks {symbol}")
        self.engines.append(engine)
        return address


def _extension(name: str, root: Path, pattern: str):
    """A Numba C extension module by file (it imports nothing of Numba's Python code); the one
    already imported when Numba is."""
    if name in sys.modules:
        return sys.modules[name]
    paths = [p for suffix in importlib.machinery.EXTENSION_SUFFIXES for p in glob.glob(str(root / pattern) + suffix)]
    spec = importlib.util.spec_from_file_location(name, paths[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


_the_loader = None


def _loader() -> _Loader:
    global _the_loader
    if _the_loader is None:
        _the_loader = _Loader()
    return _the_loader
