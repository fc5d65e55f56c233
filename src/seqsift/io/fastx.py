"""Streaming FASTA/FASTQ readers (plain, gzip, bzip2, xz, stdin) yielding record batches.

A batch is flat: the upper-cased bases of its pieces back to back, plus
offsets. A record longer than the batch size is cut into pieces, each starting
with the last `overlap` bases of the piece before, so memory stays bounded by
the batch size even for a whole chromosome on one line; shorter records are
never cut. Every malformed input raises FormatError with path and 1-based line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import numpy as np

from seqsift.errors import FormatError
from seqsift.io.openers import STDIN, display_name, open_decompressed, read_or_raise

BLOCK = 4 << 20
MAX_HEADER = 1 << 20
_WHITESPACE = b"\r\n \t"
_VALID = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz*-"


def _fold_table() -> bytes:
    """Letters to upper case, '*' and '-' and whitespace kept, every other byte to 0 (invalid)."""
    table = bytearray(256)
    for c in _VALID:
        table[c] = ord(chr(c).upper())
    for c in _WHITESPACE:
        table[c] = c
    return bytes(table)


FOLD = _fold_table()


@dataclass(frozen=True)
class SequenceBatch:
    """Pieces of records, back to back. Piece i is seq[bounds[i]:bounds[i+1]], the bases of
    record number record[i] (0-based in the file, named names[i]) from position start[i]. cut:
    the last piece's record goes on in the next batch, whose first piece starts again `overlap`
    bases before this one's end."""

    seq: np.ndarray
    bounds: np.ndarray
    names: list[str]
    record: np.ndarray
    start: np.ndarray
    cut: bool = False

    def __len__(self) -> int:
        return len(self.names)


class _Batcher:
    """Collects pieces into batches of about `capacity` bases; cuts only over-long records."""

    def __init__(self, capacity: int, overlap: int):
        if capacity <= overlap:
            raise ValueError(f"batch size {capacity} must exceed the overlap {overlap}")
        self.capacity = capacity
        self.overlap = overlap
        self._reset()

    def _reset(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.bounds = [0]
        self.names: list[str] = []
        self.records: list[int] = []
        self.starts: list[int] = []
        self.piece_len = 0
        self.open = False

    def begin_record(self, index: int, name: str) -> Iterator[SequenceBatch]:
        self._close_piece()
        if self.size >= self.capacity:
            yield self._emit()
        self._open_piece(index, name, 0, b"")

    def add(self, data: bytes) -> Iterator[SequenceBatch]:
        while data:
            take = data[: self.capacity - self.piece_len]
            data = data[len(take) :]
            self.parts.append(take)
            self.size += len(take)
            self.piece_len += len(take)
            if self.piece_len >= self.capacity:
                yield from self._cut_piece()

    def finish(self) -> Iterator[SequenceBatch]:
        self._close_piece()
        if self.names:
            yield self._emit()

    def _open_piece(self, index: int, name: str, start: int, head: bytes) -> None:
        self.names.append(name)
        self.records.append(index)
        self.starts.append(start)
        if head:
            self.parts.append(head)
            self.size += len(head)
        self.piece_len = len(head)
        self.open = True

    def _close_piece(self) -> None:
        if self.open:
            self.bounds.append(self.size)
            self.open = False

    def _cut_piece(self) -> Iterator[SequenceBatch]:
        index, name, start, length = self.records[-1], self.names[-1], self.starts[-1], self.piece_len
        self._close_piece()
        batch = self._emit(cut=True)
        tail = batch.seq[len(batch.seq) - self.overlap :].tobytes() if self.overlap else b""
        yield batch
        self._open_piece(index, name, start + length - len(tail), tail)

    def _emit(self, cut: bool = False) -> SequenceBatch:
        seq = np.frombuffer(b"".join(self.parts), np.uint8)
        batch = SequenceBatch(
            seq=seq,
            bounds=np.asarray(self.bounds, np.int64),
            names=self.names,
            record=np.asarray(self.records, np.int64),
            start=np.asarray(self.starts, np.int64),
            cut=cut,
        )
        self._reset()
        return batch


def _clean(seg: bytes, path: str, first_line: int) -> bytes:
    """Upper-cased bases of a run of sequence text, or FormatError at the first bad byte."""
    folded = seg.translate(FOLD)
    bad = folded.find(0)
    if bad >= 0:
        line = first_line + seg.count(b"\n", 0, bad)
        raise FormatError(path, line, f"invalid character {chr(seg[bad])!r} in sequence")
    return folded.translate(None, _WHITESPACE)


def _record_name(header: bytes, path: str, line: int) -> str:
    words = header.split(None, 1)
    if not words:
        raise FormatError(path, line, "record header has no name")
    bad = next((c for c in words[0] if c < 0x20 or c == 0x7F), None)
    if bad is not None:  # the same rule as reads.py's parser
        raise FormatError(path, line, f"record name holds control character {bytes([bad])!r}; names are printed "
                          "in TSV and SAM, where it could forge a field or a line")
    return words[0].decode("utf-8", "replace")


def _read_fasta(stream: BinaryIO, path: str, data: bytes, batcher: _Batcher) -> Iterator[SequenceBatch]:
    line = 1  # 1-based line number of data[0]
    at_line_start = True
    record = -1
    while True:
        pos = 0
        while pos < len(data):
            if at_line_start and data[pos] == 0x3E:  # '>'
                nl = data.find(b"\n", pos)
                if nl < 0:
                    if len(data) - pos > MAX_HEADER:
                        raise FormatError(path, line, "header line longer than 1 MiB")
                    break
                record += 1
                yield from batcher.begin_record(record, _record_name(data[pos + 1 : nl], path, line))
                line += 1
                pos = nl + 1
                continue
            nxt = data.find(b"\n>", pos)
            end = len(data) if nxt < 0 else nxt + 1
            seg = data[pos:end]
            bases = _clean(seg, path, line)
            if record < 0 and bases:
                raise FormatError(path, line, "expected a FASTA header line starting with '>'")
            yield from batcher.add(bases)
            line += seg.count(b"\n")
            at_line_start = seg.endswith(b"\n")
            pos = end
        rest = data[pos:]
        block = read_or_raise(stream, BLOCK, path, line)
        if not block:
            if rest:  # a final header line without a newline
                record += 1
                yield from batcher.begin_record(record, _record_name(rest[1:], path, line))
            break
        data = rest + block
    yield from batcher.finish()


def _iter_lines(stream: BinaryIO, path: str, data: bytes) -> Iterator[bytes]:
    """Lines without their line breaks, read block by block."""
    line = 1
    while True:
        lines = data.split(b"\n")
        data = lines.pop()
        for text in lines:
            yield text.rstrip(b"\r")
        line += len(lines)
        block = read_or_raise(stream, BLOCK, path, line)
        if not block:
            if data:
                yield data.rstrip(b"\r")
            return
        data += block


def _read_fastq(stream: BinaryIO, path: str, data: bytes, batcher: _Batcher) -> Iterator[SequenceBatch]:
    lines = _iter_lines(stream, path, data)
    line = 0
    record = -1
    for header in lines:
        line += 1
        if not header.strip():
            continue
        if header[:1] != b"@":
            raise FormatError(path, line, "expected a FASTQ header line starting with '@'")
        record += 1
        name = _record_name(header[1:], path, line)
        seq, plus, qual = next(lines, None), next(lines, None), next(lines, None)
        if qual is None:
            raise FormatError(path, line, f"file ends inside FASTQ record {name!r}")
        if plus[:1] != b"+":
            raise FormatError(path, line + 2, "expected a '+' separator line")
        if len(qual) != len(seq):
            raise FormatError(
                path, line + 3, f"quality length {len(qual)} differs from sequence length {len(seq)}"
            )
        yield from batcher.begin_record(record, name)
        yield from batcher.add(_clean(seq, path, line + 1))
        line += 3
    yield from batcher.finish()


def read_batches(
    source: str | os.PathLike, batch_bases: int = 64 << 20, overlap: int = 0
) -> Iterator[SequenceBatch]:
    """Stream a FASTA or FASTQ file (format from its first byte) as SequenceBatch objects."""
    path = display_name(source)
    batcher = _Batcher(batch_bases, overlap)
    stream = open_decompressed(source)
    try:
        data = read_or_raise(stream, BLOCK, path, 1)
        first = data.lstrip()[:1]
        if first == b">":
            yield from _read_fasta(stream, path, data, batcher)
        elif first == b"@":
            yield from _read_fastq(stream, path, data, batcher)
        elif first:
            raise FormatError(path, 1, "not FASTA or FASTQ: the first character is neither '>' nor '@'")
    finally:
        if str(source) != STDIN:  # never close the process's stdin
            stream.close()


def record_batches(source: str | os.PathLike, batch_bases: int = 16 << 20) -> Iterator[list[tuple[str, bytes]]]:
    """Whole records as (name, upper-cased sequence), in lists of about `batch_bases` bases: the
    batches of read_batches with a record cut across batches joined again, for consumers that need
    every record whole (a database sequence to align against). A list holds at least one record,
    so one record longer than `batch_bases` is a list of its own."""
    done: list[tuple[str, bytes]] = []
    size = 0
    name, pieces, record = "", [], -1
    for batch in read_batches(source, batch_bases):
        for i, piece_record in enumerate(batch.record.tolist()):
            piece = batch.seq[batch.bounds[i] : batch.bounds[i + 1]].tobytes()
            if piece_record == record:
                pieces.append(piece)
                continue
            if record >= 0:
                done.append((name, b"".join(pieces)))
                size += len(done[-1][1])
                if size >= batch_bases:
                    yield done
                    done, size = [], 0
            name, pieces, record = batch.names[i], [piece], piece_record
    if record >= 0:
        done.append((name, b"".join(pieces)))
    if done:
        yield done
