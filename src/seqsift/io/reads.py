"""Short reads (FASTQ, or FASTA with wrapped lines) parsed by a compiled kernel, in batches.

The general reader (fastx.py) spends a few microseconds of Python per record; for millions of
reads that alone would cap a search below its goal, so this reader parses whole blocks in
Numba (_reads_cpu.py, called precompiled). Names and qualities stay in the raw block (offsets
only); the same validation and messages as fastx.py: every malformed record raises FormatError
with path and line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from seqsift.errors import FormatError, InputError
from seqsift.io.fastx import FOLD
from seqsift.io.openers import (DECOMPRESSION_ERRORS, STDIN, decompression_failed, display_name, open_decompressed,
                                sniff_compression)
from seqsift.io.recycled import Buffers
from seqsift.precompiled import Kernel

# Bytes read at a time, and so at most about twice that a batch: 4 MiB blocks ran a whole
# `seqsift search` 1.1-1.5x faster than 16 MiB ones in rounds (their buffers and the kernels'
# intermediates stay in the L3; docs/benchmarks.md). A Dask partition is a task of its own and
# keeps 16 MiB.
BLOCK = 4 << 20
PARTITION_BLOCKS = 4
# A record longer than this is not held: its bases are read past, streaming, and it is searched
# as an empty read (count 0: no reference is this long to hold it; a 2 GB read in a 1.9 MB gzip
# cost 6 GB and minutes to say so).
MAX_RECORD = 1 << 28
# Where records are held whole (read_records): a header line still without its end past this many
# bytes, once it outgrows the blocks read, is refused (one within a block's reach is held as any line is)
MAX_HEADER = 1 << 20
_FOLD = np.frombuffer(FOLD, np.uint8)
_ACGT = np.frombuffer(b"ACGT", np.uint8)
_OK, _BAD_CHAR, _NO_AT, _NO_PLUS, _QUAL_LEN, _NO_NAME, _TRUNCATED, _NO_GT, _NAME_CONTROL = range(9)
_MESSAGES = {
    _NO_AT: "expected a FASTQ header line starting with '@'",
    _NO_PLUS: "expected a '+' separator line",
    _NO_NAME: "record header has no name",
    _TRUNCATED: "file ends inside a FASTQ record",
    _NO_GT: "expected a FASTA header line starting with '>'",
}


@dataclass(frozen=True)
class ReadBatch:
    """Reads back to back: read i is seq[bounds[i]:bounds[i+1]] (upper case), named
    raw[name_lo[i]:name_hi[i]], with quality raw[qual_lo[i]:qual_lo[i] + its length] (FASTQ;
    qual_lo is -1 for FASTA). first: the 0-based number of its first read in the file."""

    raw: np.ndarray
    seq: np.ndarray
    codes: np.ndarray  # seq translated through read_reads' code_table
    bounds: np.ndarray
    name_lo: np.ndarray
    name_hi: np.ndarray
    qual_lo: np.ndarray
    first: int

    def __len__(self) -> int:
        return self.bounds.size - 1

    def name(self, i: int) -> str:
        return self.raw[self.name_lo[i] : self.name_hi[i]].tobytes().decode("utf-8", "replace")


_PARSE = Kernel("seqsift.io._reads_cpu", "parse",
                "uint8[:] bool bool int64 bool uint8[:] uint8[:] uint8[:] uint8[:] int64[:] int64[:] int64[:] int64[:]",
                results=6)


def read_reads(source: str | os.PathLike, batch_reads: int = 1 << 16, code_table: np.ndarray | None = None,
               longest: int | None = None) -> Iterator[ReadBatch]:
    """Stream a FASTQ or FASTA file of reads (format from its first byte) in batches of at most
    batch_reads reads and about 2 x BLOCK bytes; with code_table (256 entries), each batch also
    holds its bases translated through it. longest: a read found to have more bases than this
    (once past a block) is read through without being held and given empty (a search passes the
    longest a match could be: its reference's longest record)."""
    table = _FOLD if code_table is None else code_table
    for batch, _, _, _ in _framed(source, batch_reads, copy=True, table=table, block=BLOCK, longest=longest):
        yield batch


@dataclass(frozen=True)
class Records:
    """Whole records back to back: record i is named names[i], its bases (folded to upper case)
    letters[bounds[i]:bounds[i+1]], and the same bases through read_records' code table codes[...]."""

    names: list[str]
    letters: np.ndarray
    codes: np.ndarray
    bounds: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    def part(self, first: int, end: int) -> Records:
        """Records first to end - 1 (views)."""
        lo, hi = int(self.bounds[first]), int(self.bounds[end])
        return Records(self.names[first:end], self.letters[lo:hi], self.codes[lo:hi], self.bounds[first : end + 1] - lo)


def read_records(source: str | os.PathLike, code_table: np.ndarray, residues: int | None = None) -> Iterator[Records]:
    """Every record of a FASTA or FASTQ file whole, however long (a database sequence, a genome's
    chromosome: never cut, never read past), its bases folded and coded through code_table, in
    batches of about `residues` bases (each at least one record; None: the whole file in one).
    The parsing is read_reads' kernel: 20,000 proteins (9.6 MB) took 0.15-0.28 s through
    fastx.record_batches' Python per record."""
    pending: list[Records] = []
    size = 0
    for batch, _, _, _ in _framed(source, 1 << 16, copy=True, table=code_table, block=BLOCK, whole=True):
        raw = batch.raw.tobytes()
        names = [raw[lo:hi].decode("utf-8", "replace") for lo, hi in zip(batch.name_lo.tolist(), batch.name_hi.tolist())]
        rest = Records(names, batch.seq, batch.codes, batch.bounds)
        while residues is not None and size + rest.letters.size >= residues:  # close after the record reaching it
            last = int(np.searchsorted(rest.bounds, residues - size, side="left"))
            pending.append(rest.part(0, max(last, 1)))
            yield _joined(pending)
            pending, size, rest = [], 0, rest.part(max(last, 1), len(rest))
        if len(rest):
            pending.append(rest)
            size += rest.letters.size
    if pending:
        yield _joined(pending)


def _joined(parts: list[Records]) -> Records:
    """One Records of several, in memory of its own (a batch's arrays are reused buffers)."""
    bounds = np.zeros(sum(len(p) for p in parts) + 1, np.int64)
    at, start = 1, 0
    for p in parts:
        bounds[at : at + len(p)] = p.bounds[1:] + start
        at, start = at + len(p), start + int(p.bounds[-1])
    return Records([name for p in parts for name in p.names], np.concatenate([p.letters for p in parts]),
                   np.concatenate([p.codes for p in parts]), bounds)


@dataclass(frozen=True)
class RawBlock:
    """Whole records of a reads file, cut at a record boundary but not parsed (parse_block does
    that, wherever it runs): their bytes, or where to read them (data None: `length` bytes at
    `offset` of the plain file `source`); the name to report, and their first line and read."""

    data: bytes | None
    path: str
    fastq: bool
    first_line: int
    first_read: int
    source: str | None = None
    offset: int = 0
    length: int = 0


def read_blocks(source: str | os.PathLike, batch_reads: int = 1 << 16, by_path: bool = False,
                longest: int | None = None) -> Iterator[RawBlock]:
    """The file as blocks of batch_reads records (fewer where 2 x PARTITION_BLOCKS x BLOCK bytes
    hold fewer), their framing checked (a malformed header, separator or quality length raises
    here, as read_reads would) but their bases not copied: several times cheaper than
    read_reads, so one reader keeps many parsers busy. by_path: a plain (uncompressed) file's
    blocks say where they lie instead of carrying their bytes."""
    located = by_path and str(source) != STDIN and _is_plain(source)
    offset = 0
    for data, fastq, line, index in _framed(source, batch_reads, copy=False, table=_FOLD,
                                           block=PARTITION_BLOCKS * BLOCK, longest=longest):
        if located:
            yield RawBlock(None, display_name(source), fastq, line, index, os.path.abspath(source), offset, data.size)
        else:
            yield RawBlock(data.tobytes(), display_name(source), fastq, line, index)
        offset += data.size


def parse_block(block: RawBlock, code_table: np.ndarray | None = None) -> ReadBatch:
    """A RawBlock's records as read_reads gives them; a bad base raises FormatError with the
    line it has in the file."""
    table = _FOLD if code_table is None else code_table
    raw = block.data
    if raw is None:
        try:
            with open(block.source, "rb") as f:
                f.seek(block.offset)
                raw = f.read(block.length)
        except OSError as exc:
            raise InputError(block.path, f"read failed: {exc.strerror or exc}") from None
        if len(raw) != block.length:
            raise InputError(block.path, "the file changed while it was being searched")
    data = np.frombuffer(raw, np.uint8)
    batch, _, _ = _parse_batch(data, True, block.fastq, len(data) // 2 + 1, True, table, block.path,
                               block.first_line, block.first_read)
    return batch


def _is_plain(source) -> bool:
    """A regular file that is not compressed: its decompressed offsets are its file offsets."""
    try:
        with open(source, "rb") as f:
            return os.path.isfile(source) and sniff_compression(f.read(6)) is None
    except OSError:
        return False


def _parse_batch(data, final, fastq, batch_reads, copy, table, path, line, index, buffers: Buffers | None = None):
    """(ReadBatch or None when no record is complete, bytes used, lines used) of data's start;
    the bases go to buffers' memory when given."""
    cap = min(batch_reads, data.size // 2 + 1)
    size = data.size if copy else 0
    if buffers is None or not copy:
        seq, codes = np.empty(size, np.uint8), np.empty(size, np.uint8)
    else:
        seq, codes = buffers.get(size), buffers.get(size)
    bounds = np.zeros(cap + 1, np.int64)
    name_lo, name_hi, qual_lo = (np.empty(cap, np.int64) for _ in range(3))
    reads, used, lines, err, err_line, byte = _PARSE(data, final, fastq, cap, copy, _FOLD, table, seq, codes,
                                                     bounds, name_lo, name_hi, qual_lo)
    if err != _OK:
        raise FormatError(path, line + err_line, _message(err, byte))
    if not reads:
        return None, used, lines
    return ReadBatch(raw=data[:used], seq=seq[: bounds[reads]], codes=codes[: bounds[reads]],
                     bounds=bounds[: reads + 1], name_lo=name_lo[:reads], name_hi=name_hi[:reads],
                     qual_lo=qual_lo[:reads], first=index), used, lines


def _framed(source, batch_reads: int, copy: bool, table: np.ndarray, block: int, longest: int | None = None,
            whole: bool = False):
    """(ReadBatch when copy else the raw records, fastq, first line, first read) per batch of
    complete records, streaming the file `block` bytes at a time into reused buffers. A record
    past MAX_RECORD bytes, or found to hold more than `longest` bases, is read past (_read_past);
    with `whole`, every record is held however long (the buffer doubling as it outgrows it), and
    only a header line that outgrows the blocks with no end in its first MAX_HEADER bytes is refused."""
    path = display_name(source)
    stream = open_decompressed(source)
    buffers = Buffers(2 * block + (1 << 20))  # a batch never holds more than twice block but for an overlong record
    try:
        data, final = _extended(stream, np.empty(0, np.uint8), block, buffers, path, 1)
        head = data[: 1 << 16].tobytes().lstrip()[:1]
        if not head:
            return
        if head not in (b">", b"@"):
            raise FormatError(path, 1, "not FASTA or FASTQ: the first character is neither '>' nor '@'")
        fastq = head == b"@"
        line, index = 1, 0
        while True:
            if not final and data.size < block:
                data, final = _extended(stream, data, block, buffers, path, line)
            batch, used, lines = _parse_batch(data, final, fastq, batch_reads, copy, table, path, line, index,
                                              buffers)
            if batch is not None:
                yield (batch if copy else data[:used]), fastq, line, index
                index += len(batch)
                line += lines
                data = data[used:]
            elif final:
                return
            elif whole:
                if data.size > MAX_HEADER and not (data[: MAX_HEADER + 1] == 10).any():
                    raise FormatError(path, line, f"header line longer than {MAX_HEADER >> 20} MiB")
                data, final = _extended(stream, data, max(block, data.size), buffers, path, line)
            elif data.size >= MAX_RECORD or _longer(data, fastq, longest):  # past any reference: read past it
                empty, data, final, skipped = _read_past(stream, data, final, fastq, path, line)
                batch, _, _ = _parse_batch(empty, True, fastq, 1, copy, table, path, line, index)
                yield (batch if copy else empty), fastq, line, index
                index += 1
                line += skipped
            elif data.size >= block:  # one record longer than the buffer: read on
                data, final = _extended(stream, data, block, buffers, path, line)
    finally:
        if str(source) != STDIN:  # never close the process's stdin
            stream.close()


def _longer(data: np.ndarray, fastq: bool, longest: int | None) -> bool:
    """Whether the record that data starts with (not complete in it) has more than `longest`
    bases for certain: its sequence line so far (FASTQ), or the bytes after its header less line
    breaks (FASTA). Asked only when a record outgrows a block, so its cost stays that of reading."""
    if longest is None:
        return False
    header_end = int(np.argmax(data == 10)) if data.size and (data == 10).any() else -1
    if header_end < 0:
        return False
    body = data[header_end + 1 :]
    if fastq:
        breaks = np.flatnonzero(body == 10)
        return int(breaks[0] if breaks.size else body.size) > longest
    return int(body.size - np.count_nonzero(body == 10) - np.count_nonzero(body == 13)) > longest


class _Bytes:
    """What is left of a block, then the stream, a piece at a time: for reading past a record."""

    def __init__(self, stream, data: np.ndarray, final: bool, path: str, line: int):
        self.stream, self.piece, self.final, self.path, self.line = stream, data.tobytes(), final, path, line
        self.newlines = 0

    def more(self) -> bool:
        if self.final:
            return False
        try:
            got = self.stream.read(BLOCK)
        except DECOMPRESSION_ERRORS as exc:
            raise decompression_failed(self.path, self.line + self.newlines, exc) from None
        self.final = not got
        self.piece += got
        return bool(got)

    def line_length(self) -> int | None:
        """Bytes up to the next newline, consumed with it (None at the end of the input)."""
        length = 0
        while True:
            at = self.piece.find(b"\n")
            if at >= 0:
                length += at
                self.piece = self.piece[at + 1 :]
                self.newlines += 1
                return length
            length += len(self.piece)
            self.piece = b""
            if not self.more():
                return length if length else None

    def until_header(self) -> None:
        """Past every line up to the next one starting with '>' (FASTA's next record)."""
        while True:
            at = self.piece.find(b"\n>")
            if at >= 0:
                self.newlines += self.piece.count(b"\n", 0, at + 1)
                self.piece = self.piece[at + 1 :]
                return
            keep = self.piece[-1:] if self.piece.endswith(b"\n") else b""
            self.newlines += self.piece.count(b"\n") - len(keep)
            self.piece = keep
            if not self.more():
                self.newlines += len(keep)
                self.piece = b""
                return


def _read_past(stream, data: np.ndarray, final: bool, fastq: bool, path: str, line: int):
    """(the record at data's start with its bases left out, what follows it, whether the stream has
    ended, the lines it took): a record past MAX_RECORD bytes read through without being held."""
    header_end = int(np.argmax(data == 10)) if (data == 10).any() else -1
    if header_end < 0:
        raise FormatError(path, line, f"a header line longer than {MAX_RECORD} bytes")
    header = data[: header_end + 1].tobytes()
    rest = _Bytes(stream, data[header_end + 1 :], final, path, line)
    if fastq:
        length = rest.line_length()
        plus = rest.piece[:1]
        separator = rest.line_length()
        quality = rest.line_length()
        if length is None or separator is None or quality is None or plus != b"+":
            raise FormatError(path, line, "file ends inside a FASTQ record" if quality is None else
                              "expected a '+' separator line")
        if quality != length:
            raise FormatError(path, line + 3, f"quality length {quality} differs from the sequence length {length}")
        empty = header + b"\n+\n\n"
    else:
        rest.until_header()
        empty = header + b"\n"
    return (np.frombuffer(empty, np.uint8).copy(), np.frombuffer(rest.piece, np.uint8).copy(), rest.final,
            1 + rest.newlines)


def _extended(stream, rest: np.ndarray, block: int, buffers: Buffers, path: str, line: int) -> tuple[np.ndarray, bool]:
    """(rest followed by up to `block` more bytes of the stream, whether the stream has ended),
    read straight into one buffer."""
    data = buffers.get(rest.size + block)
    data[: rest.size] = rest
    view = memoryview(data)
    got = rest.size
    while got < data.size:
        try:
            n = stream.readinto(view[got:])
        except DECOMPRESSION_ERRORS as exc:  # named at the line the stream broke in, not the block's first
            raise decompression_failed(path, line + int(np.count_nonzero(data[:got] == ord("\n"))), exc) from None
        if not n:
            return data[:got], True
        got += n
    return data, False


def _message(err: int, byte: int) -> str:
    if err == _BAD_CHAR:
        return f"invalid character {chr(byte)!r} in sequence"
    if err == _QUAL_LEN:
        return f"quality length {byte} differs from the sequence length"
    if err == _NAME_CONTROL:
        return (f"read name holds control character {bytes([byte])!r}; names are printed in TSV and SAM, where "
                "it could forge a field or a line")
    return _MESSAGES[err]
