"""Signature databases: ClamAV `.ndb` body signatures and plain hex lists, parsed into pieces.

A signature is a list of elements: a byte under a mask (`4d`, `??`, `4?`, `?d`), a set of
alternatives (`(4d|5a90)`), and gaps (`{n}`, `{n-m}`, `{-n}`, `{n-}`, `*`). It is cut at its
unbounded gaps (`*`, `{n-}`) into *pieces*, each of bounded length: pieces are what the filter
and the verifier work on, and a signature matches where its pieces occur in order with at
least the gap minimum between them. Offsets (`*`, `n`, `n,m`, `EOF-n`, `EOF-n,m`) constrain
where the first piece starts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from seqsift.errors import FormatError
from seqsift.io.openers import open_decompressed, read_or_raise

BYTE, GAP, ALT = 0, 1, 2
ANY_OFFSET, FROM_START, FROM_EOF = 0, 1, 2
# A longer bounded span would need a carry between buffers comparable to the buffers themselves.
MAX_PIECE_SPAN = 1 << 16
# Offsets, shifts and unbounded gaps' minimums: sums of a few of them and a file position stay
# inside int64 (the kernels' positions), and no file is larger.
MAX_OFFSET = 1 << 60
_HEX = re.compile(r"[0-9a-fA-F?]{2}")
_LITERAL = re.compile(r"(?:[0-9a-fA-F]{2})+")
_SIMPLE_NDB = re.compile(r"([^:]+):\d+:\*:((?:[0-9a-fA-F]{2})+)")
_GAP = re.compile(r"\{(\d*)(-?)(\d*)\}")
_OFFSET = re.compile(r"^(?:(\*)|(?:(EOF-)?(\d+))(?:,(\d+))?)$")


@dataclass(frozen=True)
class Piece:
    """A run of elements of bounded length: ('byte', value, mask), ('alt', options), ('gap', lo, hi),
    where each alternative option is a tuple of (value, mask) bytes. A piece of exact bytes only
    is kept as `literal` alone (elements empty): most signatures are, and they load faster so."""

    elements: tuple
    min_len: int
    max_len: int
    literal: bytes | None = None  # the bytes, when every element is an exact byte (the common case)


@dataclass(frozen=True)
class Signature:
    name: str
    pieces: tuple[Piece, ...]
    gaps: tuple[int, ...]  # minimum bytes between piece k and k+1 (no maximum: the gap was unbounded)
    offset_kind: int = ANY_OFFSET
    offset: int = 0  # n of `n` or `EOF-n`
    shift: int = 0  # m of `n,m`: the first piece may start anywhere in [n, n+m]
    source: str = ""  # "file:line", for messages


@dataclass
class SignatureSet:
    """Signatures in database order, with where each came from."""

    signatures: list[Signature] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.signatures)

    def names(self) -> list[str]:
        return [s.name for s in self.signatures]


def parse_hex_signature(text: str) -> tuple[tuple[Piece, ...], tuple[int, ...]]:
    """Pieces and the minimum gaps between them, or ValueError saying what is wrong."""
    text = text.strip()
    if _LITERAL.fullmatch(text):  # plain hex: one piece of exact bytes, no per-character parsing
        data = bytes.fromhex(text)
        return (Piece((), len(data), len(data), data),), ()
    elements = _elements(text)
    if not any(e[0] != "gap" for e in elements):
        raise ValueError("a signature needs at least one byte")
    if elements[0][0] == "gap" or elements[-1][0] == "gap":
        raise ValueError("a signature may not start or end with a gap")
    pieces, gaps, current = [], [], []
    for e in _merge_gaps(elements):
        if e[0] == "gap" and e[2] is None:
            pieces.append(_piece(current))
            gaps.append(e[1])
            current = []
        else:
            current.append(e)
    pieces.append(_piece(current))
    return tuple(pieces), tuple(gaps)


def _elements(text: str) -> list[tuple]:
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "*":
            out.append(("gap", 0, None))
            i += 1
        elif c == "{":
            m = _GAP.match(text, i)
            if not m or (not m.group(1) and not m.group(3)) or (not m.group(2) and not m.group(1)):
                raise ValueError(f"bad gap at character {i + 1}: use {{n}}, {{n-m}}, {{-n}} or {{n-}}")
            lo = int(m.group(1) or 0)
            hi = lo if not m.group(2) else (int(m.group(3)) if m.group(3) else None)
            if max(lo, hi or 0) > MAX_OFFSET:
                raise ValueError(f"gap {m.group(0)} at character {i + 1} is beyond 2^60 bytes")
            if hi is not None and hi < lo:
                raise ValueError(f"gap {m.group(0)} at character {i + 1} has its maximum below its minimum")
            out.append(("gap", lo, hi))
            i = m.end()
        elif c == "(":
            end = text.find(")", i)
            if end < 0:
                raise ValueError(f"alternatives opened at character {i + 1} are not closed")
            options = tuple(_hex_bytes(o, i + 1) for o in text[i + 1 : end].split("|"))
            if any(not o for o in options):
                raise ValueError(f"an empty alternative at character {i + 1}")
            out.append(("alt", options))
            i = end + 1
        elif c == "!" or c == "[" or c == "B" or c == "L":
            raise ValueError(f"{c!r} at character {i + 1}: negated alternatives, anchored byte ranges and "
                             "boundaries are not supported")
        else:
            if not _HEX.match(text, i):
                raise ValueError(f"{text[i:i + 2]!r} at character {i + 1} is not a hex byte, ?? or a gap")
            out.append(("byte", *_masked(text[i : i + 2])))
            i += 2
    return out


def _hex_bytes(text: str, where: int) -> tuple:
    if len(text) % 2 or not all(_HEX.fullmatch(text[k : k + 2]) for k in range(0, len(text), 2)):
        raise ValueError(f"alternative {text!r} at character {where} is not hex bytes")
    return tuple(_masked(text[k : k + 2]) for k in range(0, len(text), 2))


def _masked(pair: str) -> tuple[int, int]:
    """'4d' -> (0x4d, 0xff); '4?' -> (0x40, 0xf0); '?d' -> (0x0d, 0x0f); '??' -> (0, 0)."""
    hi, lo = pair[0], pair[1]
    value = (0 if hi == "?" else int(hi, 16) << 4) | (0 if lo == "?" else int(lo, 16))
    mask = (0 if hi == "?" else 0xF0) | (0 if lo == "?" else 0x0F)
    return value, mask


def _merge_gaps(elements: list[tuple]) -> list[tuple]:
    out: list[tuple] = []
    for e in elements:
        if e[0] == "gap" and out and out[-1][0] == "gap":
            lo, hi = out[-1][1] + e[1], None if out[-1][2] is None or e[2] is None else out[-1][2] + e[2]
            out[-1] = ("gap", lo, hi)
        else:
            out.append(e)
    return out


def element_span(e: tuple) -> tuple[int, int]:
    """The least and most bytes an element (byte, bounded gap or alternatives) covers."""
    if e[0] == "byte":
        return 1, 1
    if e[0] == "gap":
        return e[1], e[2]
    return min(map(len, e[1])), max(map(len, e[1]))


def _piece(elements: list[tuple]) -> Piece:
    lo = hi = 0
    for e in elements:
        a, b = element_span(e)
        lo, hi = lo + a, hi + b
    if hi > MAX_PIECE_SPAN:
        raise ValueError(f"a part between unbounded gaps spans up to {hi} bytes; the limit is {MAX_PIECE_SPAN} "
                         "(use * for longer gaps)")
    if all(e[0] == "byte" and e[2] == 0xFF for e in elements):
        return Piece((), lo, hi, bytes(e[1] for e in elements))
    return Piece(tuple(elements), lo, hi)


def parse_offset(text: str) -> tuple[int, int, int]:
    m = _OFFSET.match(text.strip())
    if not m:
        raise ValueError(f"offset {text!r} is not supported: use *, n, n,m, EOF-n or EOF-n,m")
    if m.group(1):
        return ANY_OFFSET, 0, 0
    n, shift = int(m.group(3)), int(m.group(4) or 0)
    if n + shift > MAX_OFFSET:
        raise ValueError(f"offset {text!r} reaches past 2^60 bytes")
    return (FROM_EOF if m.group(2) else FROM_START), n, shift


def parse_line(line: str, path: str, lineno: int, default_name: str) -> Signature | None:
    """One database line: None for a blank line or a comment; a .ndb record when it has colons,
    else a bare hex signature named after the file and line."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    where = f"{path}:{lineno}"
    simple = _SIMPLE_NDB.fullmatch(text)
    if simple:  # Name:N:*:hex, the common form: one literal piece, no further parsing
        data = bytes.fromhex(simple.group(2))
        return Signature(simple.group(1), (Piece((), len(data), len(data), data),), (), ANY_OFFSET, 0, 0, where)
    try:
        if ":" in text:
            fields = text.split(":")
            if len(fields) < 4 or len(fields) > 6:
                raise ValueError(f"expected Name:TargetType:Offset:HexSignature[:MinFL[:MaxFL]], found {len(fields)} fields")
            name, target, offset, body = fields[:4]
            if not name:
                raise ValueError("the signature name is empty")
            if not target.strip().isdigit():
                raise ValueError(f"target type {target!r} is not a number")
            kind, n, m = parse_offset(offset)
        else:
            name, body, (kind, n, m) = default_name, text, (ANY_OFFSET, 0, 0)
        pieces, gaps = parse_hex_signature(body)
    except ValueError as exc:
        raise FormatError(path, lineno, str(exc)) from None
    return Signature(name, pieces, gaps, kind, n, m, where)


def load_databases(paths: list[str | os.PathLike]) -> SignatureSet:
    """Every signature of every database, in order; a malformed line is a FormatError naming it."""
    out = SignatureSet()
    for path in paths:
        p = os.fspath(path)
        with open_decompressed(p) as stream:
            data = read_or_raise(stream, -1, p)
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise FormatError(p, line, "not a text signature database (non-ASCII byte)") from None
        base = os.path.basename(p)
        for lineno, line in enumerate(text.splitlines(), 1):
            sig = parse_line(line, p, lineno, f"{base}:{lineno}")
            if sig is not None:
                out.signatures.append(sig)
    return out


def from_strings(signatures: list[str | tuple[str, str]]) -> SignatureSet:
    """A SignatureSet from Python: hex strings (named sig0, sig1, ...), (name, hex) pairs, or
    whole .ndb lines."""
    out = SignatureSet()
    for i, s in enumerate(signatures):
        name, body = (f"sig{i}", s) if isinstance(s, str) else s
        line = body if isinstance(s, str) and ":" in s else f"{name}:0:*:{body}"
        sig = parse_line(line, "(signatures)", i + 1, name)
        if sig is None:
            raise FormatError("(signatures)", i + 1, "empty signature")
        out.signatures.append(sig)
    return out
