"""Kernels compiled once by Numba, then loaded by every later process without importing Numba.

Why: importing Numba and setting up its CPU target costs ~0.5 s at every start, about as much
as searching a million reads (docs/benchmarks.md). A kernel declared here is compiled the first
time a process calls it, through a C-callable wrapper (`numba.cfunc`), and its machine code is
stored in the cache directory. Later processes load that object file into executable memory
(objload.py, on x86-64 Linux: ~0.3 ms a kernel, no LLVM; elsewhere, or for an object it refuses,
LLVM's JIT links it: llvmlite's library loaded, ~10 ms) with Numba's C helper modules, and call
it through ctypes, which releases the GIL during the call as Numba's `nogil` does. Results are
the same machine code's.

The cache key covers everything the machine code depends on: every seqsift source file,
Numba's and llvmlite's versions, Python's, the CPU (name and features, as Numba targets them:
LLVM's answer, remembered under /proc/cpuinfo's: host_target) and Numba's code-generation
settings. A stale, damaged or foreign file is recompiled, never
trusted; nothing in it is unpickled. Directory: $SEQSIFT_CACHE_DIR, else
$XDG_CACHE_HOME/seqsift, else ~/.cache/seqsift; where none is writable, each process compiles
its own. SEQSIFT_PRECOMPILED=0 calls the Numba functions instead. `python -m seqsift.precompiled`
compiles every kernel of every engine into the cache (the Makefile's kernels step). Each key has
a directory of its own; those of other keys (older sources, releases) are removed once no process
has used them for a day, the three used last excepted (prune_stale).

The contract with Numba: loading the machine code without Numba needs three of its C extension
modules (the runtime's allocator, the helper library, the dynamic-function helpers), found by
name in Numba's installed tree, whose `c_helpers` tables give the helper functions' addresses,
and compiling it uses a private method of Numba's code library. Both are Numba's internals, so
they are pinned: CHECKED_WITH names the Numba and llvmlite releases this was checked with
(tests/test_precompiled.py checks it again), each object file lists every outside symbol its
code calls, and each is looked up before the file is linked. Where any of this does not hold (a
newer Numba, a helper gone or renamed), nothing is linked: a warning says why, once a process,
and the kernels run through Numba's JIT instead, with the same results.

The cache holds machine code this process runs, so it is trusted as ssh trusts its keys: only a
directory owned by the user and writable by no one else, under no directory others may write
without the sticky bit, with subdirectories and files owned by the user and writable by no one
else (checked on the opened file). Anything else is not used: a warning says why, and each
process compiles its own (a matching hash proves only that whoever wrote the file hashed it).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import importlib
import importlib.machinery
import importlib.util
import os
import re
import stat
import sys
import _thread  # the primitives threading builds on, without its import (~1.4 ms of a start)
import time

from seqsift import objload
from seqsift.filestatus import identity, settled

try:  # CPython's own SHA-256: the same digests as hashlib's without loading OpenSSL (~3 ms of each start, 2026-12-02)
    from _sha2 import sha256
except ImportError:
    try:
        from _sha256 import sha256
    except ImportError:
        from hashlib import sha256

_MAGIC = b"seqsift-precompiled 4\n"
# The Numba and llvmlite releases (major.minor) whose internals the loader was checked against.
CHECKED_WITH = {"numba": "0.68", "llvmlite": "0.50"}
# Numba's C extension modules the loader takes helpers from: (module, file under numba/ without
# its extension suffix, prefix of the symbols its c_helpers table stands for).
HELPER_MODULES = (("numba.core.runtime._nrt_python", "core/runtime/_nrt_python", "NRT_"),
                  ("numba._helperlib", "_helperlib", "numba_"),
                  ("numba._dynfunc", "_dynfunc", "numba_"))
_NUMBA_SETTINGS = ("NUMBA_OPT", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_BOUNDSCHECK", "NUMBA_FASTMATH",
                   "NUMBA_LOOP_VECTORIZE", "NUMBA_SLP_VECTORIZE", "NUMBA_DISABLE_JIT")
# Scalar arguments: passed as a C int64 (a double for float64) and converted to the type the
# kernel's dispatcher would have seen (numpy scalars of that type).
_SCALARS = ("int64", "bool", "uint8", "int8", "int16", "float64")
_lock = _thread.allocate_lock()
_helpers_rlock = None  # threading.RLock(), made by _helpers_lock() on first need
_make_lock = _thread.allocate_lock()
_llvm_lock = _thread.allocate_lock()


def enabled() -> bool:
    return os.environ.get("SEQSIFT_PRECOMPILED", "1") not in ("0", "")


class Unavailable(Exception):
    """The contract with Numba does not hold here (module docstring): run the JIT instead."""


_warned: set = set()  # what this process has warned about (_warn_once's keys)


def _warn_once(message: str, key: str | None = None) -> None:
    """A warning on stderr, once a process for each key (the message itself by default)."""
    key = message if key is None else key
    if key not in _warned:
        _warned.add(key)
        sys.stderr.write(f"seqsift: warning: {message}\n")


def _fall_back(kernel: "Kernel", why: str) -> None:
    _warn_once(f"precompiled kernels are not used ({why}); they run through Numba's JIT instead (same results, "
               "a slower start)", key="fall back")



def _helpers_lock():
    """The lock over Numba's helpers and LLVM's JIT (reentrant: loading the helpers may add them to
    the JIT), made on first need: a command whose kernels need neither does not import threading."""
    global _helpers_rlock
    with _make_lock:
        if _helpers_rlock is None:
            import threading

            _helpers_rlock = threading.RLock()
    return _helpers_rlock

class Kernel:
    """A Numba kernel called with numpy arrays and Python scalars, as its dispatcher would be.

    An array argument may also be any other C-contiguous buffer of the same element type
    (array.array, bytes, bytearray, mmap, memoryview): a caller holding no numpy array (`seqsift
    find` over files) then runs without importing numpy, whose import is most of a command's
    start-up (docs/benchmarks.md, "Start-up"). Only the JIT (the fallback, or a kernel's error
    raised again by its dispatcher) imports numpy, and is given numpy views of such buffers.

    Each signature is one word per argument: a scalar (int64, bool, uint8, int8, int16, float64), a
    C-contiguous array "dtype[:]", "dtype[:,:]" or "dtype[:,:,:]", or a tuple of those,
    "(int64,uint8[:])" (no spaces); a call takes the first signature its arguments fit, and
    each signature is compiled apart. results: 0 (returns nothing), 1 (an integer) or k > 1 (a
    tuple of k integers; a bool among them comes back as 0 or 1)."""

    def __init__(self, module: str, name: str, *signatures: str, results: int = 0):
        self.module, self.name, self.results = module, name, results
        self.variants = [_Variant(self, signature) for signature in signatures]
        self.jit = False  # set where the contract with Numba failed: the dispatcher runs
        KERNELS.append(self)

    def __repr__(self) -> str:
        return f"Kernel({self.module}.{self.name})"

    def dispatcher(self):
        """The Numba dispatcher itself (imports Numba)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args):
        if self.jit or not enabled():
            return self.dispatcher()(*_as_numpy(args))
        with _Buffers() as buffers:
            variant = next((v for v in self.variants if v.fits(args, buffers)), None)
            if variant is None:
                raise TypeError(f"{self!r} has no signature for ({', '.join(_describe(a) for a in args)}); "
                                f"it takes one of: {'; '.join(v.signature for v in self.variants)}")
            try:
                function = variant.function()
            except Unavailable as exc:
                _fall_back(self, str(exc))
                self.jit = True
                return self.dispatcher()(*_as_numpy(args))
            flat = []
            for value, (_, ndim, word) in zip(_leaves(args, variant.args), variant.leaves):
                if ndim:
                    address, shape = buffers.get(value)
                    flat.append(address)
                    flat.extend(shape)
                else:
                    flat.append(float(value) if word == "float64" else int(value))
            status = (ctypes.c_int64 * (1 + self.results))()
            function(ctypes.addressof(status), *flat)
        if status[0]:  # the kernel raised: the dispatcher raises the same exception, with its message
            self.dispatcher()(*_as_numpy(args))
            raise RuntimeError(f"{self!r} failed in its precompiled form only")
        if self.results == 0:
            return None
        if self.results == 1:
            return int(status[1])
        return tuple(int(x) for x in status[1:])


# The buffer formats (struct module codes, as memoryview and numpy give them) of each element type
# an array argument may have; 'l' and 'L' are 8 bytes where C's long is.
_FORMATS = {"uint8": "B", "int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
            "int64": "q" + ("l" if ctypes.sizeof(ctypes.c_long) == 8 else ""),
            "uint64": "Q" + ("L" if ctypes.sizeof(ctypes.c_long) == 8 else ""), "float32": "f", "float64": "d"}


class _PyBuffer(ctypes.Structure):
    """Python's Py_buffer (the buffer protocol's public C struct)."""

    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
                ("internal", ctypes.c_void_p)]


_PyBUF_C_CONTIGUOUS_FORMAT = 0x0038 | 0x0004  # PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_get_buffer.restype = ctypes.c_int
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]
_release_buffer.restype = None


class _Buffers:
    """The array arguments of one kernel call, each held through the buffer protocol (as numpy
    itself holds a buffer it views) from when its type is checked until the call has returned, so
    none can be freed, resized or unmapped under the kernel; released on exit."""

    def __init__(self):
        self._held: dict[int, tuple] = {}

    def __enter__(self) -> "_Buffers":
        return self

    def __exit__(self, *exc) -> None:
        for view, _, _ in self._held.values():
            _release_buffer(view)
        self._held.clear()

    def describe(self, value) -> tuple[str, tuple[int, ...]] | None:
        """(format, shape) of a C-contiguous buffer; None for a value that is not one."""
        held = self._held.get(id(value))
        if held is None:
            if isinstance(value, (int, float, tuple, str)):
                return None
            view = _PyBuffer()
            try:
                _get_buffer(value, view, _PyBUF_C_CONTIGUOUS_FORMAT)
            except (BufferError, TypeError, ValueError):
                return None
            # a 1-D buffer's shape from its length: reading view.shape through ctypes cost more
            # than the rest (an argument checked in ~6.5 us instead of ~9.5, 2026-12-02)
            ndim = view.ndim
            shape = (view.len // view.itemsize,) if ndim == 1 else tuple(view.shape[d] for d in range(ndim))
            fmt = (view.format or b"B").decode().lstrip("@=<")
            held = self._held[id(value)] = (view, fmt, shape)
        _, fmt, shape = held
        return fmt, shape

    def get(self, value) -> tuple[int, tuple[int, ...]]:
        """(address, shape) of a buffer describe() accepted."""
        view, _, shape = self._held[id(value)]
        return view.buf or 0, shape


def _as_numpy(args) -> tuple:
    """The arguments as the dispatcher takes them: buffers that are not numpy arrays become numpy
    views of the same memory (read-only ones stay read-only), tuples element by element."""
    import numpy as np

    def convert(value):
        if isinstance(value, tuple):
            return tuple(convert(v) for v in value)
        if isinstance(value, (int, float, str, np.ndarray, np.generic)):
            return value
        try:
            view = memoryview(value)
        except TypeError:  # no buffer: the dispatcher says what it makes of it
            return value
        return np.frombuffer(view, view.format).reshape(view.shape) if view.nbytes else np.empty(view.shape, view.format)

    return tuple(convert(a) for a in args)


class _Variant:
    """One signature of a kernel, and its compiled function once loaded."""

    def __init__(self, kernel: Kernel, signature: str):
        self.kernel, self.signature = kernel, signature
        self.args = [_parse_arg(word) for word in signature.split()]
        self.leaves = list(_leaves(self.args, self.args))
        self._function = None

    def fits(self, args, buffers: "_Buffers | None" = None) -> bool:
        """Whether the arguments fit this signature; buffers: the call's, holding what is checked."""
        if buffers is None:
            with _Buffers() as held:
                return _fits(args, self.args, held)
        return _fits(args, self.args, buffers)

    def function(self):
        if self._function is None:
            with _lock:
                if self._function is None:
                    symbol, code, needs = _cached_object(self)
                    address = _loader().load(code, symbol, needs)
                    types = [ctypes.c_void_p]
                    for _, ndim, word in self.leaves:
                        scalar = ctypes.c_double if word == "float64" else ctypes.c_int64
                        types += [ctypes.c_void_p] + [ctypes.c_int64] * ndim if ndim else [scalar]
                    self._function = ctypes.CFUNCTYPE(None, *types)(address)
        return self._function


def _fits(args, kinds, buffers: _Buffers) -> bool:
    if len(args) != len(kinds):
        return False
    np = sys.modules.get("numpy")  # a numpy scalar exists only where numpy was imported
    for value, kind in zip(args, kinds):
        if isinstance(kind, list):
            if not (isinstance(value, tuple) and _fits(value, kind, buffers)):
                return False
            continue
        dtype, ndim, word = kind
        if ndim:
            described = buffers.describe(value)
            if described is None or described[0] not in _FORMATS.get(dtype, "") or len(described[1]) != ndim:
                return False
        elif word == "float64":
            if not isinstance(value, float) and not (np and isinstance(value, np.floating)):
                return False
        elif word in ("int64", "bool"):
            if not isinstance(value, int) and not (np and isinstance(value, (np.integer, np.bool_))):
                return False
        elif not (np and isinstance(value, np.generic) and value.dtype == np.dtype(word)):  # a typed scalar: its type
            return False
    return True


def _leaves(values, kinds):
    """The arguments (or their kinds) with tuples flattened, in order."""
    for value, kind in zip(values, kinds):
        if isinstance(kind, list):
            yield from _leaves(value, kind)
        else:
            yield value


def _describe(value) -> str:
    np = sys.modules.get("numpy")
    if np and isinstance(value, np.ndarray):
        return f"{value.dtype}[{','.join(':' * value.ndim)}]{'' if value.flags.c_contiguous else ' (strided)'}"
    if isinstance(value, tuple):
        return f"({','.join(_describe(v) for v in value)})"
    if np and isinstance(value, np.generic):
        return str(value.dtype)
    if isinstance(value, (bytes, bytearray, memoryview)) or type(value).__name__ in ("array", "mmap"):
        view = memoryview(value)
        return f"{type(value).__name__} of {view.format!r}[{','.join(':' * view.ndim)}]"
    return type(value).__name__


def _parse_arg(word: str):
    """(dtype, dimensions, word) of one argument; a list of those for a tuple."""
    if word.startswith("(") and word.endswith(")"):
        inner = word[1:-1].rstrip(",")
        parts = re.findall(r"[^,\[]+(?:\[[^\]]*\])?", inner)
        if not parts or ",".join(parts) != inner:
            raise ValueError(f"unsupported tuple argument {word!r}")
        return [_parse_arg(part) for part in parts]
    if "[" in word:
        dtype, dims = word.split("[", 1)
        if dims not in (":]", ":,:]", ":,:,:]"):
            raise ValueError(f"unsupported array argument {word!r}")
        if dtype not in _FORMATS:
            raise ValueError(f"unsupported array element type {dtype!r}")
        return dtype, dims.count(":"), word
    if word not in _SCALARS:
        raise ValueError(f"unsupported scalar argument {word!r}")
    return None, 0, word


def _wrapper_source(variant: _Variant) -> str:
    """A cfunc taking (status, then per array: pointer and shape; per scalar: an int64) that
    calls the kernel and writes status[0] = 1 if it raised, else its results to status[1:]."""
    params = ["status"]
    kernel = variant.kernel

    def expression(kind) -> str:
        if isinstance(kind, list):
            return f"({''.join(expression(k) + ', ' for k in kind)})"
        i = len(params)
        _, ndim, word = kind
        if ndim:
            dims = [f"n{i}_{d}" for d in range(ndim)]
            params.extend([f"p{i}"] + dims)
            return f"carray(p{i}, ({', '.join(dims)},))"
        params.append(f"a{i}")
        return {"bool": f"a{i} != 0", "int64": f"a{i}", "float64": f"a{i}"}.get(word, f"np.{word}(a{i})")

    call = f"kernel({', '.join(expression(kind) for kind in variant.args)})"
    if kernel.results == 0:
        body = f"        {call}\n"
    elif kernel.results == 1:
        body = f"        status[1] = {call}\n"
    else:
        body = f"        r = {call}\n" + "".join(f"        status[{j + 1}] = r[{j}]\n" for j in range(kernel.results))
    name = f"precompiled_{kernel.module.replace('.', '_')}_{kernel.name}"
    return (f"def {name}({', '.join(params)}):\n    try:\n{body}    except Exception:\n"
            f"        status[0] = 1\n")


def _compile(variant: _Variant) -> tuple[str, bytes, list[str]]:
    """(symbol, object code, outside symbols it calls) of the kernel's C-callable wrapper,
    compiled by Numba."""
    import numpy as np
    from numba import carray, cfunc, from_dtype, types

    kernel = variant.kernel
    c_args = [types.CPointer(types.int64)]
    for dtype, ndim, word in variant.leaves:
        scalar = types.float64 if word == "float64" else types.int64
        c_args += [types.CPointer(from_dtype(np.dtype(dtype)))] + [types.int64] * ndim if ndim else [scalar]
    namespace = {"carray": carray, "kernel": kernel.dispatcher(), "np": np}
    source = _wrapper_source(variant)
    exec(compile(source, f"<precompiled {kernel.module}.{kernel.name}>", "exec"), namespace)
    function = next(v for k, v in namespace.items() if k.startswith("precompiled_"))
    compiled = cfunc(types.void(*c_args), nopython=True)(function)
    # The code library behind a cfunc (a private attribute), its object-code form (what Numba's
    # own cache stores) and its final LLVM module, whose declarations are what the code calls
    # outside itself. Both are Numba's internals: where a release changes them, the JIT runs.
    library = getattr(compiled, "_library", None)
    try:
        _, kind, data = library.serialize_using_object_code()
        needs = outside_symbols(library.get_llvm_str())
    except (AttributeError, TypeError, ValueError) as exc:
        raise Unavailable(f"Numba's code library changed: {exc}") from exc
    if kind != "object":
        raise Unavailable(f"Numba's code library gave {kind!r} code, not object code")
    return compiled.native_name, data[0], needs


_DECLARED = r'^declare\b[^@]*@("[^"]+"|[\w.$]+)\(|^@("[^"]+"|[\w.$]+) = external\b'  # re.M


def outside_symbols(llvm_ir: str) -> list[str]:
    """The functions and globals an LLVM module declares without defining (LLVM's own
    intrinsics, llvm.*, are not symbols)."""
    names = {(a or b).strip('"') for a, b in re.findall(_DECLARED, llvm_ir, re.M)}
    return sorted(name for name in names if not name.startswith("llvm."))


_key = None
_sources = None


def sources_digest() -> bytes:
    """SHA-256 over every seqsift source file, names (relative, '/'-separated) included, in the
    order of their names, once a process (the package's own directory: digest_of)."""
    global _sources
    if _sources is None:
        _sources = digest_of(os.path.dirname(os.path.abspath(__file__)))
    return _sources


def digest_of(package: str) -> bytes:
    """sources_digest of the package at `package`. Reading and hashing every file took ~5 ms of
    every command's start, so the digest is remembered in the cache under the files' status
    (device, inode, size, modification and change times in ns, with their names): a later
    process only stats them; a digest is remembered only once every file has settled
    (filestatus.py)."""
    files = sorted(_source_files(package, ""))
    status = sha256("\0".join(f"{name}:{identity(st)}" for name, st in files).encode()).hexdigest()
    directory = private_dir("sources")
    memo = os.path.join(directory, sha256(package.encode()).hexdigest()[:32]) if directory else None
    if memo:
        remembered = _remembered(memo, status)
        if remembered is not None:
            return remembered
    h = sha256()
    for name, _ in files:
        h.update(name.encode() + b"\0" + _bytes_of(os.path.join(package, name)) + b"\0")
    digest = h.digest()
    now = time.time_ns()
    if memo and all(settled(st, now) for _, st in files):
        _replace(memo, f"{status} {digest.hex()}\n".encode())
    return digest


def _remembered(memo: str, status: str) -> bytes | None:
    """The digest a memo file holds for `status`, if the file is trusted and holds it."""
    data = _trusted_bytes(memo, 200)
    try:
        held, _, digest = data.decode("ascii").strip().partition(" ") if data else ("", "", "")
        return bytes.fromhex(digest) if held == status and len(digest) == 64 else None
    except (UnicodeDecodeError, ValueError):
        return None


def _trusted_bytes(path: str, limit: int = -1) -> bytes | None:
    """A cache file's bytes (at most limit), or None where it cannot be read or is not the
    user's own, writable by no one else (trusted_file, on the opened file)."""
    try:
        with open(path, "rb") as f:
            return f.read(limit) if trusted_file(f) else None
    except OSError:
        return None


def _source_files(top: str, prefix: str) -> list[tuple[str, os.stat_result]]:
    """The .py files under top, as (path relative to it, '/'-separated after prefix; status)."""
    files = []
    with os.scandir(top) as entries:
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file():
                files.append((prefix + entry.name, entry.stat()))
            elif entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                files += _source_files(entry.path, f"{prefix}{entry.name}/")
    return files


def _cache_key() -> str:
    """What the machine code depends on (module docstring)."""
    global _key
    if _key is None:
        import llvmlite

        h = sha256(sources_digest())
        numba_spec = importlib.util.find_spec("numba")
        version_file = os.path.join(os.path.dirname(numba_spec.origin), "_version.py") \
            if numba_spec and numba_spec.origin else None
        h.update(_bytes_of(version_file) if version_file and os.path.isfile(version_file) else b"no numba")
        _loader()  # the contract with Numba holds, else Unavailable
        parts = [llvmlite.__version__, sys.version, *host_target()] + [os.environ.get(v, "") for v in _NUMBA_SETTINGS]
        h.update("\0".join(parts).encode())
        _key = h.hexdigest()[:32]
    return _key


def _bytes_of(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def cache_dir() -> str:
    """Where the cache would be (not checked: private_dir and trusted_file check it). Paths here
    are strings: pathlib (with the urllib.parse it imports) cost ~3 ms of every command's start."""
    if os.environ.get("SEQSIFT_CACHE_DIR"):
        return os.environ["SEQSIFT_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "seqsift")


def _mine(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _untrusted(path: str) -> str | None:
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
    for parent in _parents(os.path.abspath(path)):
        try:
            up = os.stat(parent)
        except OSError:
            continue
        if up.st_mode & stat.S_IWOTH and not up.st_mode & stat.S_ISVTX:
            return f"lies in {parent}, which anyone may write (no sticky bit)"
    return None


def _parents(path: str) -> list[str]:
    """The directories above an absolute path, nearest first, '/' last."""
    parents = []
    while (up := os.path.dirname(path)) != path:
        parents.append(up)
        path = up
    return parents


def private_dir(name: str) -> str | None:
    """The cache's subdirectory `name`, made if missing (mode 700), or None where the cache is
    missing and cannot be made (silently) or is not trusted (with a warning, once a process)."""
    top = cache_dir()
    path = os.path.join(top, name)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    why = _untrusted(top) or (_untrusted(path) and f"has {name}, which {_untrusted(path)}")
    if why:
        _warn_once(f"the cache directory {top} is not used: it {why}", key=top)
        return None
    return path


def trusted_file(f) -> bool:
    """Whether an opened cache file is the user's own and writable by no one else."""
    st = os.fstat(f.fileno())
    return stat.S_ISREG(st.st_mode) and _mine(st)


def _cached_object(variant: _Variant) -> tuple[str, bytes, list[str]]:
    """The variant's (symbol, object code, outside symbols) from the cache, compiled and stored
    when missing."""
    global _used, _pruned
    kernel = variant.kernel
    tag = sha256(f"{variant.signature}/{kernel.results}".encode()).hexdigest()[:12]
    directory = private_dir(f"precompiled-{_cache_key()}")
    if directory and not _used:  # its time says when a process last used it (prune_stale)
        _used = True
        with contextlib.suppress(OSError):
            os.utime(directory)
    path = os.path.join(directory, f"{kernel.module}.{kernel.name}-{tag}.o") if directory else None
    found = _read(path, _identity(variant)) if path else None
    if found is not None:
        return found
    symbol, code, needs = _compile(variant)
    if path:
        _write(path, _identity(variant), symbol, code, needs)
        if not _pruned:  # a new key's first kernels: the moment old keys' directories are left behind
            _pruned = True
            prune_stale(os.path.basename(directory))
    return symbol, code, needs


# Every source edit, upgrade or change of CPU makes a new key, so a new directory; the others'
# are removed once unused for PRUNE_AFTER seconds, except the KEEP_OTHERS used last (two installs
# used in turn keep theirs). A directory's time is set when a process first loads from it.
PRUNE_AFTER = 24 * 3600
KEEP_OTHERS = 3
_KEY_DIR = r"precompiled-[0-9a-f]{32}"
_used = False  # this process has marked its key's directory used
_pruned = False  # this process has pruned


def prune_stale(keep: str, now: float | None = None) -> list[str]:
    """Remove other keys' directories left in the cache (beside `keep`, the current one) that no
    process has used for PRUNE_AFTER seconds, the KEEP_OTHERS used last excepted; returns their
    names. Only what seqsift makes is removed: directories named precompiled-KEY, owned by the
    user, holding only its object files and temporaries; nothing is followed through a link. A
    process still loading from one that goes meanwhile compiles what it misses (the same code)."""
    top = cache_dir()
    if os.name != "posix" or os.scandir not in os.supports_fd or _untrusted(top):
        return []
    try:
        top_fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return []
    try:
        others = []
        with os.scandir(top_fd) as entries:
            for entry in entries:
                if entry.name == keep or not re.fullmatch(_KEY_DIR, entry.name):
                    continue
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                        others.append((st.st_mtime, entry.name, st))
        now = time.time() if now is None else now
        others.sort(reverse=True)
        return [name for used, name, st in others[KEEP_OTHERS:]
                if now - used > PRUNE_AFTER and _remove_made(top_fd, name, st)]
    finally:
        os.close(top_fd)


def _remove_made(top_fd: int, name: str, st: os.stat_result) -> bool:
    """Remove the directory `name` of top_fd and the files seqsift writes there (*.o, .tmp-*),
    never following a link; False, leaving it, where it holds anything else or is no longer the
    directory `st` describes."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top_fd)
    except OSError:
        return False
    try:
        held = os.fstat(fd)
        if (held.st_dev, held.st_ino) != (st.st_dev, st.st_ino):
            return False
        with os.scandir(fd) as entries:
            names = [(e.name, e.is_file(follow_symlinks=False)) for e in entries]
        if not all(regular and (n.endswith(".o") or n.startswith(".tmp-")) for n, regular in names):
            return False
        for n, _ in names:
            os.unlink(n, dir_fd=fd)
        os.rmdir(name, dir_fd=top_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _identity(variant: _Variant) -> str:
    """What a cache file must say it holds: a file renamed or copied from another kernel's (a
    foreign file, well formed) is then compiled again, never linked in its place."""
    return f"{variant.kernel.module}.{variant.kernel.name}({variant.signature})->{variant.kernel.results}"


def cache_file(identity: str, symbol: str, code: bytes, needs: list[str]) -> bytes | None:
    """A cache file's bytes: _MAGIC, one header line of tab-separated fields (what it holds, the
    symbol, the code's SHA-256, the outside symbols space-separated), the object code. None where
    a name holds a separator (never so for LLVM's and Numba's names): such a kernel goes uncached.
    Plain text rather than JSON, whose module cost ~1.5 ms of every command's start."""
    fields = [identity, symbol, sha256(code).hexdigest(), " ".join(needs)]
    if any(c in field for field in fields for c in "\t\n") or any(" " in n or not n for n in needs):
        return None
    return _MAGIC + "\t".join(fields).encode() + b"\n" + code


def _read(path: str, identity: str) -> tuple[str, bytes, list[str]] | None:
    data = _trusted_bytes(path)
    if data is None or not data.startswith(_MAGIC):
        return None
    head, sep, code = data[len(_MAGIC):].partition(b"\n")
    try:
        holds, symbol, digest, needs = head.decode().split("\t")
    except (UnicodeDecodeError, ValueError):
        return None
    if not sep or holds != identity or not symbol or sha256(code).hexdigest() != digest:
        return None
    return symbol, code, needs.split()


def _write(path: str, identity: str, symbol: str, code: bytes, needs: list[str]) -> None:
    data = cache_file(identity, symbol, code, needs)
    if data is not None:
        _replace(path, data)


def _replace(path: str, data: bytes) -> None:
    """Write a cache file atomically (a temporary file renamed, mode 600), so concurrent
    processes never read half a file; an unwritable cache is skipped."""
    try:
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _release(version: str) -> str:
    """'0.68.1' -> '0.68'."""
    return ".".join(version.split(".")[:2])


def numba_version() -> str:
    """The installed Numba's version, read from its _version.py without importing it ('' if none)."""
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.origin:
        return ""
    path = os.path.join(os.path.dirname(spec.origin), "_version.py")
    found = re.search(rb'"version":\s*"([^"]+)"', _bytes_of(path)) if os.path.isfile(path) else None
    return found.group(1).decode() if found else ""


def check_contract() -> str:
    """Numba's package directory, where the installed releases are those CHECKED_WITH names
    and its helper modules are where they were; else Unavailable, saying what differs."""
    import llvmlite

    found = {"numba": numba_version(), "llvmlite": llvmlite.__version__}
    for package, version in found.items():
        if _release(version) != CHECKED_WITH[package]:
            raise Unavailable(f"{package} {version or '(not found)'} is not the {CHECKED_WITH[package]} release "
                              "the loader was checked with")
    return os.path.dirname(importlib.util.find_spec("numba").origin)


class _LLVM:
    """The functions of llvmlite's C library the loader calls (LLVMPY_*, llvmlite's own C API),
    bound here with ctypes: importing llvmlite.binding, which declares the prototypes of its whole
    API, costs ~15 ms of every command's start, loading the library itself ~6 ms (docs/benchmarks.md,
    "Start-up"). Part of the pinned contract: the prototypes are llvmlite 0.50's (CHECKED_WITH);
    a function missing is Unavailable. Nothing made here is ever freed: every engine lives as long
    as the process."""

    def __init__(self):
        spec = importlib.util.find_spec("llvmlite")
        name = "libllvmlite.dylib" if sys.platform == "darwin" else "libllvmlite.so"
        path = os.path.join(os.path.dirname(spec.origin), "binding", name) if spec and spec.origin else None
        if os.name != "posix" or path is None or not os.path.isfile(path):
            raise Unavailable(f"llvmlite's library is not at {path}")
        lib = ctypes.CDLL(path)
        P, S, I, OUT = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)

        def bind(function: str, restype, *argtypes):
            try:
                f = getattr(lib, function)
            except AttributeError:
                raise Unavailable(f"llvmlite's library lacks {function}") from None
            f.restype, f.argtypes = restype, list(argtypes)
            return f

        self.initialize_native_target = bind("LLVMPY_InitializeNativeTarget", None)
        self.initialize_native_asmprinter = bind("LLVMPY_InitializeNativeAsmPrinter", None)
        self._add_symbol = bind("LLVMPY_AddSymbol", None, S, P)
        self._search = bind("LLVMPY_SearchAddressOfSymbol", P, S)
        self._dispose_string = bind("LLVMPY_DisposeString", None, S)
        self._process_triple = bind("LLVMPY_GetProcessTriple", None, OUT)
        self._host_cpu_name = bind("LLVMPY_GetHostCPUName", None, OUT)
        self._host_cpu_features = bind("LLVMPY_GetHostCPUFeatures", I, OUT)
        self._target_from_triple = bind("LLVMPY_GetTargetFromTriple", P, S, OUT)
        self._target_name = bind("LLVMPY_GetTargetName", S, P)
        self._create_target_machine = bind("LLVMPY_CreateTargetMachine", P, P, S, S, S, I, S, S, I, I, S)
        self._global_context = bind("LLVMPY_GetGlobalContext", P)
        self._parse_assembly = bind("LLVMPY_ParseAssembly", P, P, S, OUT)
        self._create_mcjit = bind("LLVMPY_CreateMCJITCompiler", P, P, P, ctypes.c_bool, OUT)
        self._object_file = bind("LLVMPY_CreateObjectFile", P, S, ctypes.c_size_t)
        self._add_object_file = bind("LLVMPY_MCJITAddObjectFile", None, P, P)
        self._finalize_object = bind("LLVMPY_FinalizeObject", None, P)
        self._function_address = bind("LLVMPY_GetFunctionAddress", ctypes.c_uint64, P, S)

    def _text(self, call, *args) -> str:
        """A string an LLVMPY function writes (then freed by llvmlite's own deallocator)."""
        out = ctypes.c_char_p(None)
        call(*args, ctypes.byref(out))
        try:
            return (out.value or b"").decode()
        finally:
            if out.value is not None:
                self._dispose_string(out)

    def add_symbol(self, name: str, address: int) -> None:
        self._add_symbol(name.encode(), address)

    def address_of_symbol(self, name: str) -> int | None:
        return self._search(name.encode())

    def process_triple(self) -> str:
        return self._text(self._process_triple)

    def host_cpu_name(self) -> str:
        return self._text(self._host_cpu_name)

    def host_cpu_features(self) -> str:
        """As llvmlite's get_host_cpu_features().flatten(): '+name' or '-name', sorted by name."""
        out = ctypes.c_char_p(None)
        found = self._host_cpu_features(ctypes.byref(out))
        text = (out.value or b"").decode()
        if out.value is not None:
            self._dispose_string(out)
        features = {word[1:]: word[0] == "+" for word in text.split(",") if word} if found else {}
        return ",".join(f"{'+' if on else '-'}{name}" for name, on in sorted(features.items()))

    def _checked(self, result, error: ctypes.c_char_p, what: str):
        if not result:
            message = (error.value or b"").decode()
            if error.value is not None:
                self._dispose_string(error)
            raise Unavailable(f"LLVM could not {what}: {message}")
        return result

    def target(self) -> tuple[str, int]:
        """(name, target) of this process's triple."""
        error = ctypes.c_char_p(None)
        target = self._target_from_triple(self.process_triple().encode(), ctypes.byref(error))
        return self._target_name(self._checked(target, error, "find the target")).decode(), target

    def target_machine(self, target: int, cpu: str, features: str, reloc: str) -> int:
        """A JIT target machine for this process's triple at -O3."""
        machine = self._create_target_machine(target, self.process_triple().encode(), cpu.encode(), features.encode(),
                                              3, reloc.encode(), b"jitdefault", 0, 1, b"")
        return self._checked(machine, ctypes.c_char_p(None), "make a target machine")

    def engine(self, machine: int) -> int:
        """A new MCJIT engine over an empty module."""
        error = ctypes.c_char_p(None)
        module = self._checked(self._parse_assembly(self._global_context(), b"", ctypes.byref(error)), error,
                               "parse an empty module")
        lmm = os.uname().machine.lower() in ("arm64", "aarch64")  # llvmlite's own choice of memory manager
        return self._checked(self._create_mcjit(module, machine, lmm, ctypes.byref(error)), error, "make a JIT")

    def link(self, engine: int, code: bytes, symbol: str) -> int:
        """The address of `symbol` once the object code is added to the engine and finalized."""
        self._add_object_file(engine, self._object_file(code, len(code)))
        self._finalize_object(engine)
        return self._function_address(engine, symbol.encode())


# Helpers that most kernels' code names without calling them on the arguments seqsift passes
# (NRT_MemInfo_call_dtor: a reference count reaching zero, where every array argument is a view
# with no owner to count), and their C prototypes. Until a kernel needs any other helper, each is
# bound to a forwarder that loads Numba's helper modules on its first call and calls the real one:
# those modules import numpy as they load (~0.06-0.1 s), which a search over files never pays.
_FORWARDED = {"NRT_MemInfo_call_dtor": ctypes.CFUNCTYPE(None, ctypes.c_void_p)}


class _Loader:
    """The C helpers Numba's code calls (its runtime's allocation and helper library, loaded from
    Numba's extension files without importing the numba package the first time a kernel calls
    one: _FORWARDED), Python's and the C library's functions, and the objects linked against
    them: loaded directly (objload.py) on x86-64 Linux, else through LLVM's JIT (_JIT)."""

    def __init__(self):
        self.root = root = check_contract()
        for name, stem, _ in HELPER_MODULES:  # there, though loaded only once needed
            if name not in sys.modules and not any(os.path.isfile(os.path.join(root, stem) + suffix)
                                                   for suffix in importlib.machinery.EXTENSION_SUFFIXES):
                raise Unavailable(f"{name} is not at {os.path.join(root, stem)}.*")
        self.helpers: dict[str, int] | None = None  # symbol -> address, once the helper modules are loaded
        self._forwarders: dict[str, object] = {}  # the ctypes callbacks bound, kept alive
        # What Numba's JIT adds besides (numba.core.base._load_global_helpers): Py_None's C name and
        # every built-in exception class, each standing for the object itself (an error path's raise).
        self.symbols: dict[str, int] = {"_Py_NoneStruct": id(None)}
        for value in vars(builtins).values():
            if isinstance(value, type) and issubclass(value, BaseException):
                self.symbols[f"PyExc_{value.__name__}"] = id(value)
        self._process = ctypes.CDLL(None)  # the C library's and Python's own symbols
        self._direct = objload.supported()
        self._jit: _JIT | None = None

    def address_of(self, name: str) -> int | None:
        """Where symbol `name` is: one added here, else the process's own (None: nowhere)."""
        if name in self.symbols:
            return self.symbols[name]
        try:
            return ctypes.cast(getattr(self._process, name), ctypes.c_void_p).value
        except AttributeError:
            return None

    def load_helpers(self) -> dict[str, int]:
        """Numba's helper modules loaded (importing numpy) and their functions made known."""
        with _helpers_lock():
            if self.helpers is None:
                helpers = {}
                for name, stem, prefix in HELPER_MODULES:
                    table = getattr(_extension(name, os.path.join(self.root, stem)), "c_helpers", None)
                    if not isinstance(table, dict) or not table:
                        raise Unavailable(f"{name} has no c_helpers table")
                    for py_name, address in table.items():
                        helpers[py_name if prefix == "NRT_" and py_name.startswith("_") else prefix + py_name] = address
                self._add(helpers)
                self.helpers = helpers
        return self.helpers

    def _add(self, symbols: dict[str, int]) -> None:
        self.symbols.update(symbols)
        if self._jit is not None:
            for name, address in symbols.items():
                self._jit.llvm.add_symbol(name, address)

    def _forwarder(self, name: str) -> int:
        """The address of a C function standing for helper `name` (_FORWARDED): it loads the
        helpers on its first call, then calls the real one."""
        prototype = _FORWARDED[name]
        real = []

        def forward(*args):
            if not real:
                real.append(prototype(self.load_helpers()[name]))
            return real[0](*args)

        self._forwarders[name] = callback = prototype(forward)
        return ctypes.cast(callback, ctypes.c_void_p).value

    def load(self, code: bytes, symbol: str, needs: list[str]) -> int:
        """The address of `symbol` in the object code, once every symbol it needs from outside
        is found (an unresolved one would abort the process inside LLVM)."""
        missing = [name for name in needs if not self.address_of(name)]
        if missing and self.helpers is None:
            if all(name in _FORWARDED for name in missing):
                self._add({name: self._forwarder(name) for name in missing})
            else:
                self.load_helpers()
            missing = [name for name in needs if not self.address_of(name)]
        if missing:
            raise Unavailable(f"the compiled code calls {', '.join(missing)}, which this process lacks")
        if self._direct:
            try:
                return objload.load(code, symbol, self.address_of)
            except objload.Unsupported as exc:
                _warn_once(f"a kernel's object is linked through LLVM instead: {exc}")
        return self.jit().load(code, symbol)

    def jit(self) -> _JIT:
        """LLVM's JIT, made on first need, knowing every symbol added here."""
        with _helpers_lock():
            if self._jit is None:
                jit = _JIT()
                for name, address in self.symbols.items():
                    jit.llvm.add_symbol(name, address)
                self._jit = jit
        return self._jit


class _JIT:
    """Objects linked by LLVM's MCJIT, one engine each: objects compiled in different processes
    may repeat internal names."""

    def __init__(self):
        self.llvm = ll = _llvm()
        _, cpu, features = host_target()
        cpu = os.environ.get("NUMBA_CPU_NAME") or cpu
        features = os.environ.get("NUMBA_CPU_FEATURES") or features
        arch, target = ll.target()
        # the relocation model Numba's JIT uses on each architecture
        reloc = "static" if arch.startswith("x86") else "pic" if arch.startswith("ppc") else "default"
        self.machine = ll.target_machine(target, cpu, features, reloc)
        # The first JIT made makes the process's own symbols (the C library, Python's C API) searchable.
        self.engines = [ll.engine(self.machine)]

    def load(self, code: bytes, symbol: str) -> int:
        engine = self.llvm.engine(self.machine)
        address = self.llvm.link(engine, code, symbol)
        if not address:
            raise RuntimeError(f"precompiled object lacks {symbol}")
        self.engines.append(engine)
        return address


_the_llvm = None


def _llvm() -> _LLVM:
    """llvmlite's library, loaded and its native target initialised, once a process."""
    global _the_llvm
    with _llvm_lock:
        if _the_llvm is None:
            ll = _LLVM()
            ll.initialize_native_target()
            ll.initialize_native_asmprinter()
            _the_llvm = ll
    return _the_llvm


def host_target() -> tuple[str, str, str]:
    """LLVM's process triple, host CPU name and features, which the cache key holds. Asking LLVM
    means loading its library (~8 ms warm, ~2 s cold), so the answer is remembered in the cache
    under what the kernel says of the CPU (/proc/cpuinfo's identity and flags) with llvmlite's
    and Python's versions; where there is no /proc/cpuinfo, LLVM is asked every time."""
    import llvmlite

    signature = _cpu_signature()
    directory = private_dir("hosts") if signature else None
    memo = os.path.join(directory, sha256(
        f"{signature}\0{llvmlite.__version__}\0{sys.version}".encode()).hexdigest()[:32]) if directory else None
    data = _trusted_bytes(memo, 65536) if memo else None
    try:
        fields = data.decode().split("\t") if data else []
    except UnicodeDecodeError:
        fields = []
    if len(fields) == 3 and all(fields[:2]):
        return fields[0], fields[1], fields[2]
    ll = _llvm()
    found = ll.process_triple(), ll.host_cpu_name(), ll.host_cpu_features()
    if memo and not any("\t" in value for value in found):
        _replace(memo, "\t".join(found).encode())
    return found


_CPU_FIELDS = (b"vendor_id", b"cpu family", b"model", b"model name", b"stepping", b"microcode", b"flags",
               b"isa", b"features", b"cpu", b"CPU implementer", b"CPU architecture", b"CPU variant", b"CPU part")


def _cpu_signature() -> str | None:
    """The first processor's identity and feature flags in /proc/cpuinfo (None: unreadable)."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            first = f.read(1 << 20).split(b"\n\n", 1)[0]
    except OSError:
        return None
    kept = [line for line in first.splitlines() if line.split(b":", 1)[0].strip() in _CPU_FIELDS]
    return b"\n".join(kept).decode(errors="replace") if kept else None


def _extension(name: str, stem: str):
    """A Numba C extension module by file, stem + this Python's extension suffix (it imports
    nothing of Numba's Python code); the one already imported when Numba is."""
    if name in sys.modules:
        return sys.modules[name]
    paths = [f"{stem}{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    path = next((p for p in paths if os.path.isfile(p)), None)
    if path is None:
        raise Unavailable(f"{name} is not at {stem}.*")
    spec = importlib.util.spec_from_file_location(name, path)
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


# Every Kernel made (each adds itself), and the modules that make them: building the cache imports
# these, then compiles each kernel's every signature (tests/test_precompiled.py checks the list
# against the source).
KERNELS: list = []
KERNEL_MODULES = ("seqsift.find.cpu", "seqsift.scan.kernels", "seqsift.alignment.lanes", "seqsift.alignment.pairs",
                  "seqsift.alignment.reference", "seqsift.fmindex.query", "seqsift.fmindex.ssx",
                  "seqsift.fmindex.output", "seqsift.fmindex.verify",
                  "seqsift.fmindex.windows", "seqsift.fmindex.build", "seqsift.fmindex.pieces",
                  "seqsift.fmindex.stats", "seqsift.io.reads", "seqsift.map.seeding", "seqsift.map.extend",
                  "seqsift.map.batch_sam", "seqsift.io.gather")


def build_all() -> list[str]:
    """Compile every engine's kernels into the cache (those already there are kept); returns
    what each one is."""
    for module in KERNEL_MODULES:
        importlib.import_module(module)
    built = []
    for kernel in KERNELS:
        for variant in kernel.variants:
            variant.function()
            built.append(f"{kernel.module}.{kernel.name}({variant.signature})")
    return built


def main() -> int:
    """`python -m seqsift.precompiled`: build the cache; exit 1 where it cannot be used."""
    try:
        key = _cache_key()
    except Unavailable as exc:
        sys.stderr.write(f"seqsift: precompiled kernels cannot be built here: {exc}\n")
        return 1
    if private_dir(f"precompiled-{key}") is None:
        sys.stderr.write(f"seqsift: the cache directory {cache_dir()} cannot be used; nothing built\n")
        return 1
    names = build_all()
    removed = prune_stale(f"precompiled-{key}")
    print(f"{len(names)} precompiled kernels in {cache_dir()}"
          + (f"; {len(removed)} stale directories of other sources or releases removed" if removed else ""))
    return 0


if __name__ == "__main__":
    from seqsift import precompiled  # the module the engines' kernels register with (this file runs as __main__)

    sys.exit(precompiled.main())
