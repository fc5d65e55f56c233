"""BGZF, the blocked gzip of BAM files (the SAM/BAM format specification, section 4.1): a series
of gzip members of at most 64 KiB each, every one naming its own compressed size in a 'BC' extra
field so readers can seek by block, closed by a fixed empty block that marks a complete file.

Deflate is ISA-L's (isal, already what reads gzip inputs), about twice the standard library's.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from isal import isal_zlib

BLOCK_DATA = 0xFF00  # uncompressed bytes a block holds (htslib's choice, leaving room for the framing)
BLOCK_MAX = 1 << 16  # whole block, framing included
EOF_BLOCK = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")
_HEADER = struct.Struct("<4BI2BH2BHH")  # gzip header with FEXTRA, then subfield 'BC' of length 2: BSIZE
_FOOTER = struct.Struct("<II")  # CRC32, ISIZE


def block(data: bytes | memoryview, level: int = 2) -> bytes:
    """One BGZF block holding `data` (at most BLOCK_DATA bytes)."""
    deflated = isal_zlib.compress(data, level, -15)
    if len(deflated) + _HEADER.size + _FOOTER.size > BLOCK_MAX:  # incompressible: stored blocks always fit
        deflated = isal_zlib.compress(data, 0, -15)
    size = _HEADER.size + len(deflated) + _FOOTER.size
    head = _HEADER.pack(0x1F, 0x8B, 8, 4, 0, 0, 0xFF, 6, ord("B"), ord("C"), 2, size - 1)
    return head + deflated + _FOOTER.pack(isal_zlib.crc32(data), len(data))


class BgzfWriter:
    """A write-only binary stream that compresses into BGZF blocks on `out`; close() flushes the
    last block and writes the EOF block (it does not close `out`)."""

    def __init__(self, out: BinaryIO, level: int = 2):
        self.out = out
        self.level = level
        self._pending = bytearray()
        self.closed = False

    def write(self, data: bytes) -> int:
        self._pending += data
        if len(self._pending) >= BLOCK_DATA:
            view = memoryview(self._pending)
            full = len(view) - len(view) % BLOCK_DATA
            self.out.write(b"".join(block(view[k : k + BLOCK_DATA], self.level) for k in range(0, full, BLOCK_DATA)))
            view.release()
            del self._pending[:full]
        return len(data)

    def close(self) -> None:
        if self.closed:
            return
        if self._pending:
            self.out.write(block(bytes(self._pending), self.level))
            self._pending.clear()
        self.out.write(EOF_BLOCK)
        self.closed = True
