"""SAM text to BAM: the binary encoding of the SAM/BAM format specification (section 4.2), written
through BGZF blocks. Every command that writes SAM writes text; `-o NAME.bam` puts this encoder
behind the output stream, so one formatter serves SAM and BAM alike.
"""

from __future__ import annotations

import re
import struct
from typing import BinaryIO

from seqsift.errors import FormatError
from seqsift.io.bgzf import BgzfWriter

_CIGAR_OPS = {c: k for k, c in enumerate(b"MIDNSHP=X")}
_CIGAR = re.compile(rb"(?:[0-9]+[MIDNSHP=X])*")
_CIGAR_OP = re.compile(rb"([0-9]+)([MIDNSHP=X])")
_CONSUMES_REFERENCE = frozenset(b"MDN=X")


def _hex_digits() -> bytes:
    """SEQ letters to the hex digit of their 4-bit code, so bytes.fromhex packs two bases a byte,
    the first in the high nibble as BAM wants; any other byte to 'x', which fromhex refuses."""
    table = bytearray(b"x") * 256
    for code, letter in enumerate(b"=ACMGRSVTWYHKDBN"):
        table[letter] = table[ord(chr(letter).lower())] = b"0123456789abcdef"[code]
    return bytes(table)


_SEQ_HEX = _hex_digits()
_QUAL_CHARS = bytes(range(33, 127))
_PHRED = bytes((c - 33) & 0xFF for c in range(256))
_CORE = struct.Struct("<iiBBHHHiiii")  # refID .. tlen, after block_size
_ARRAY_TYPES = {"c": "b", "C": "B", "s": "h", "S": "H", "i": "i", "I": "I", "f": "f"}
_INT_TYPES = (("C", "B", 0, 255), ("c", "b", -128, 127), ("S", "H", 0, 65535), ("s", "h", -32768, 32767),
              ("I", "I", 0, 2**32 - 1), ("i", "i", -2**31, 2**31 - 1))


def reg2bin(beg: int, end: int) -> int:
    """The UCSC bin of the 0-based, half-open region [beg, end) (the specification's reg2bin)."""
    end -= 1
    for shift, offset in ((14, 4681), (17, 585), (20, 73), (23, 9), (26, 1)):
        if beg >> shift == end >> shift:
            return offset + (beg >> shift)
    return 0


class BamWriter:
    """A write-only binary stream taking SAM text (header lines, then records, split anywhere
    between writes) and writing BAM to `out`. close() writes the header if no record came, then
    the BGZF EOF block; it does not close `out`."""

    def __init__(self, out: BinaryIO, name: str = "(output)"):
        self.bgzf = BgzfWriter(out)
        self.name = name
        self._partial = b""
        self._header: list[bytes] = []
        self._refs: dict[bytes, int] | None = None  # set once the header is written
        self._line = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        lines = (self._partial + bytes(data)).split(b"\n")
        self._partial = lines.pop()
        records = []
        for line in lines:
            self._line += 1
            if self._refs is None and line.startswith(b"@"):
                self._header.append(line)
            elif line:
                if self._refs is None:
                    self._write_header()
                records.append(self._record(line))
        if records:
            self.bgzf.write(b"".join(records))
        return len(data)

    def close(self) -> None:
        if self.closed:
            return
        if self._partial:
            self.write(b"\n")
        if self._refs is None:
            self._write_header()
        self.bgzf.close()
        self.closed = True

    def _write_header(self) -> None:
        text = b"".join(line + b"\n" for line in self._header)
        refs = []
        for line in self._header:
            if line.startswith(b"@SQ\t"):
                fields = dict(f.split(b":", 1) for f in line.split(b"\t")[1:] if b":" in f)
                if b"SN" not in fields or b"LN" not in fields:
                    raise self._error("an @SQ line without SN and LN")
                refs.append((fields[b"SN"], int(fields[b"LN"])))
        parts = [b"BAM\1", struct.pack("<i", len(text)), text, struct.pack("<i", len(refs))]
        for name, length in refs:
            parts += [struct.pack("<i", len(name) + 1), name, b"\0", struct.pack("<i", length)]
        self.bgzf.write(b"".join(parts))
        self._refs = {name: k for k, (name, _) in enumerate(refs)}

    def _error(self, why: str) -> FormatError:
        return FormatError(self.name, self._line, f"cannot write as BAM: {why}")

    def _ref(self, name: bytes, same: int = -1) -> int:
        if name == b"*":
            return -1
        if name == b"=":
            return same
        if name not in self._refs:
            raise self._error(f"reference {name.decode(errors='replace')!r} is not in the header's @SQ lines")
        return self._refs[name]

    def _record(self, line: bytes) -> bytes:
        fields = line.split(b"\t")
        if len(fields) < 11:
            raise self._error(f"a SAM record has 11 mandatory fields, this one {len(fields)}")
        qname, flag, rname, pos, mapq, cigar, rnext, pnext, tlen, seq, qual = fields[:11]
        try:
            ref_id = self._ref(rname)
            cigar_ops = _cigar(cigar)
            start = int(pos) - 1
            span = sum(n for n, op in cigar_ops if op in _CONSUMES_REFERENCE)
            core = _CORE.pack(ref_id, start, len(qname) + 1, int(mapq), reg2bin(start, start + max(span, 1)),
                              len(cigar_ops), int(flag), 0 if seq == b"*" else len(seq), self._ref(rnext, ref_id),
                              int(pnext) - 1, int(tlen))
            cigar_words = struct.pack(f"<{len(cigar_ops)}I", *(n << 4 | _CIGAR_OPS[op] for n, op in cigar_ops))
            parts = [core, qname, b"\0", cigar_words]
            parts += [_seq(seq), _qual(qual, seq)]
            parts += [_tag(t) for t in fields[11:]]
        except (ValueError, KeyError, struct.error) as exc:
            raise self._error(str(exc) or type(exc).__name__) from None
        body = b"".join(parts)
        return struct.pack("<i", len(body)) + body


def _cigar(text: bytes) -> list[tuple[int, int]]:
    """(length, operation letter) pairs of a CIGAR string."""
    if text == b"*":
        return []
    if not text or not _CIGAR.fullmatch(text):
        raise ValueError(f"CIGAR {text.decode(errors='replace')!r} is malformed")
    ops = [(int(n), op[0]) for n, op in _CIGAR_OP.findall(text)]
    if len(ops) > 0xFFFF:
        raise ValueError(f"{len(ops)} CIGAR operations, more than BAM's 65535")
    return ops


def _seq(seq: bytes) -> bytes:
    if seq == b"*":
        return b""
    digits = seq.translate(_SEQ_HEX)
    if b"x" in digits:
        raise ValueError("SEQ has a letter outside =ACMGRSVTWYHKDBN")
    return bytes.fromhex((digits + b"0" if len(digits) % 2 else digits).decode())


def _qual(qual: bytes, seq: bytes) -> bytes:
    n = 0 if seq == b"*" else len(seq)
    if qual == b"*":
        return b"\xff" * n
    if len(qual) != n:
        raise ValueError(f"QUAL has {len(qual)} characters, SEQ {n}")
    if qual.translate(None, _QUAL_CHARS):
        raise ValueError("QUAL has a character outside '!' to '~'")
    return qual.translate(_PHRED)


def _tag(field: bytes) -> bytes:
    tag, kind, value = field.split(b":", 2)
    if len(tag) != 2:
        raise ValueError(f"tag {tag.decode(errors='replace')!r} is not two characters")
    kind = kind.decode()
    if kind == "i":
        number = int(value)
        for code, fmt, lo, hi in _INT_TYPES:
            if lo <= number <= hi:
                return tag + code.encode() + struct.pack(f"<{fmt}", number)
        raise ValueError(f"integer tag {tag.decode()} = {number} does not fit 32 bits")
    if kind == "A":
        if len(value) != 1:
            raise ValueError(f"tag {tag.decode()} of type A holds one character")
        return tag + b"A" + value
    if kind == "f":
        return tag + b"f" + struct.pack("<f", float(value))
    if kind in ("Z", "H"):
        return tag + kind.encode() + value + b"\0"
    if kind == "B":
        sub, *items = value.decode().split(",")
        if sub not in _ARRAY_TYPES:
            raise ValueError(f"array tag {tag.decode()} has subtype {sub!r}")
        numbers = [float(v) if sub == "f" else int(v) for v in items]
        return tag + b"B" + sub.encode() + struct.pack(f"<i{len(numbers)}{_ARRAY_TYPES[sub]}", len(numbers), *numbers)
    raise ValueError(f"tag {tag.decode()} has type {kind!r}, not one of A i f Z H B")
