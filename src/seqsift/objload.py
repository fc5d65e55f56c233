"""Relocatable x86-64 ELF objects (the kernels' cached machine code) loaded into executable memory
without LLVM.

Why: linking a cached kernel through LLVM's JIT first loads and initialises llvmlite's library,
~8 ms of every command's start when it is in the page cache and ~2 s when it is not, then ~1.7 ms
a kernel; what the link does for these objects is small. Numba compiles with LLVM's large code
model, so an object's code and constants reach each other and the outside through 64-bit
absolute (R_X86_64_64) and 64-bit PC-relative (R_X86_64_PC64) relocations only: no GOT, no
PLT, no range to overflow. load() lays out the object's allocated sections (code read+execute,
constants read-only, writable data and COMMON symbols read+write), applies those relocations,
and returns the address of a symbol. The unwind tables (.eh_frame) are not loaded: Numba's code
raises no C++ exceptions, and nothing unwinds through it.

Anything else (another machine, another relocation, a malformed file) raises Unsupported, and
the caller links through LLVM instead (precompiled.py). The memory is never freed: a kernel lives
as long as the process.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from typing import Callable

PAGE = mmap.PAGESIZE
MAX_SPAN = 1 << 28  # bytes an object may lay out (a kernel's: ~10-100 KB); past it, malformed
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_SHT_NOBITS, _SHT_RELA, _SHT_SYMTAB, _SHT_X86_64_UNWIND = 8, 4, 2, 0x70000001
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 1, 2, 4
_SHN_UNDEF, _SHN_ABS, _SHN_COMMON = 0, 0xFFF1, 0xFFF2
_R_NONE, _R_64, _R_PC64 = 0, 1, 24
_PROT = {"code": mmap.PROT_READ | mmap.PROT_EXEC, "constants": mmap.PROT_READ,
         "data": mmap.PROT_READ | mmap.PROT_WRITE}
_kept: list = []  # every region loaded, alive for the process


class Unsupported(Exception):
    """The object cannot be loaded here: link it another way."""


def supported() -> bool:
    """Whether this process can load objects so (x86-64 Linux, mprotect reachable)."""
    return sys.platform.startswith("linux") and os.uname().machine == "x86_64" and _mprotect() is not None


def load(code: bytes, symbol: str, resolve: Callable[[str], int | None]) -> int:
    """The address of `symbol` in the object `code`, loaded, its outside symbols found by
    resolve(name) (None: not found, Unsupported)."""
    try:
        return _load(code, symbol, resolve)
    except (struct.error, IndexError, ValueError, OverflowError, OSError) as exc:  # ValueError: a name without its NUL
        raise Unsupported(f"a malformed object ({exc})") from None


def _load(code: bytes, symbol: str, resolve: Callable[[str], int | None]) -> int:
    (ident, e_type, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = _EHDR.unpack_from(code)
    if ident[:7] != b"\x7fELF\x02\x01\x01" or e_type != 1 or machine != 62 or shentsize != _SHDR.size:
        raise Unsupported("not a relocatable x86-64 ELF object")
    sections = [_SHDR.unpack_from(code, shoff + k * _SHDR.size) for k in range(shnum)]
    names = sections[shstrndx]

    def string(table: tuple, offset: int) -> str:
        start = table[4] + offset
        end = code.index(b"\0", start, table[4] + table[5])
        return code[start:end].decode()

    # where each allocated section goes: (kind, offset in that kind's region)
    kinds = {"code": 0, "constants": 0, "data": 0}
    placed: dict[int, tuple[str, int]] = {}
    for k, (name, kind_, flags, _, offset, size, _, _, align, _) in enumerate(sections):
        if not flags & _SHF_ALLOC or kind_ == _SHT_X86_64_UNWIND or string(names, name) == ".eh_frame":
            continue
        if kind_ != _SHT_NOBITS and offset + size > len(code):
            raise Unsupported("a section runs past the file")
        kind = "code" if flags & _SHF_EXECINSTR else "data" if flags & _SHF_WRITE or kind_ == _SHT_NOBITS else "constants"
        at = _aligned(kinds[kind], align)
        placed[k] = (kind, at)
        kinds[kind] = at + size
    symtab = next((k for k, s in enumerate(sections) if s[1] == _SHT_SYMTAB), None)
    if symtab is None:
        raise Unsupported("no symbol table")
    strtab = sections[sections[symtab][6]]
    symbols = [_SYM.unpack_from(code, sections[symtab][4] + j * _SYM.size)
               for j in range(sections[symtab][5] // _SYM.size)]
    commons: dict[int, int] = {}  # symbol index -> offset in the data region
    for j, (_, _, _, shndx, value, size) in enumerate(symbols):
        if shndx == _SHN_COMMON:
            commons[j] = at = _aligned(kinds["data"], value)  # a COMMON symbol's value is its alignment
            kinds["data"] = at + size
    starts, total = {}, 0
    for kind in kinds:
        starts[kind] = total
        total += _aligned(kinds[kind], PAGE)
    if total > MAX_SPAN:
        raise Unsupported(f"sections of {total} bytes")
    region = mmap.mmap(-1, max(total, PAGE), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    for k, (kind, at) in placed.items():
        _, kind_, _, _, offset, size, _, _, _, _ = sections[k]
        if kind_ != _SHT_NOBITS:
            region[starts[kind] + at:starts[kind] + at + size] = code[offset:offset + size]

    outside: dict[int, int] = {}

    def address(j: int) -> int:
        name, info, _, shndx, value, _ = symbols[j]
        if shndx == _SHN_UNDEF:
            if j not in outside:
                outside[j] = resolve(string(strtab, name)) or 0
                if not outside[j]:
                    raise Unsupported(f"{string(strtab, name)} is not found")
            return outside[j]
        if shndx == _SHN_ABS:
            return value
        if shndx == _SHN_COMMON:
            return base + starts["data"] + commons[j]
        if shndx not in placed:
            raise Unsupported(f"a symbol in section {shndx}, which is not loaded")
        kind, at = placed[shndx]
        return base + starts[kind] + at + value

    for name_, kind_, _, _, offset, size, link, target, _, _ in sections:
        if kind_ != _SHT_RELA or target not in placed:
            continue
        if link != symtab:
            raise Unsupported("relocations against another symbol table")
        kind, at = placed[target]
        target_size = sections[target][5]
        for r in range(size // _RELA.size):
            where, info, addend = _RELA.unpack_from(code, offset + r * _RELA.size)
            rtype = info & 0xFFFFFFFF
            if rtype == _R_NONE:
                continue
            if where + 8 > target_size:
                raise Unsupported("a relocation past its section")
            s = address(info >> 32)
            p = base + starts[kind] + at + where
            if rtype == _R_64:
                value = s + addend
            elif rtype == _R_PC64:
                value = s + addend - p
            else:
                raise Unsupported(f"relocation type {rtype}")
            struct.pack_into("<Q", region, starts[kind] + at + where, value & 0xFFFFFFFFFFFFFFFF)
    found = None
    for j, (name, info, _, shndx, _, _) in enumerate(symbols):
        if shndx != _SHN_UNDEF and info >> 4 != 0 and string(strtab, name) == symbol:  # not a local
            found = address(j)
            break
    if found is None:
        raise Unsupported(f"the object lacks {symbol}")
    mprotect = _mprotect()
    for kind, size in kinds.items():
        if size and mprotect(ctypes.c_void_p(base + starts[kind]), ctypes.c_size_t(_aligned(size, PAGE)),
                             _PROT[kind]) != 0:
            raise Unsupported(f"mprotect failed (errno {ctypes.get_errno()})")
    _kept.append(region)
    return found


def _aligned(n: int, align: int) -> int:
    return n if align <= 1 else (n + align - 1) // align * align


_libc = []


def _mprotect():
    if not _libc:
        try:
            f = ctypes.CDLL(None, use_errno=True).mprotect
            f.restype, f.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            _libc.append(f)
        except (OSError, AttributeError):
            _libc.append(None)
    return _libc[0]
