"""A multi-record FASTA reference as one text of symbol codes, ready for suffix sorting.

Codes: 0 '$' (the end, once), 1 '#' (a record boundary or any non-ACGT base), 2-5 A C G T.
Every non-ACGT base becomes '#' in place, so positions stay those of the FASTA, and a pattern
of A, C, G and T can never match across a boundary or include an N.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from seqsift.errors import FormatError
from seqsift.io.fastx import read_batches
from seqsift.io.openers import display_name

END, SEP = 0, 1
BATCH_BASES = 16 << 20  # bases read at a time: the file's bytes, the batch and its codes, ~50 MiB at once
BASES = b"ACGT"
_TEXT_CODE = np.full(256, SEP, np.uint8)
READ_CODE = np.full(256, 255, np.uint8)  # reads: A C G T -> 0..3, anything else -> 255
for _i, _b in enumerate(BASES):
    _TEXT_CODE[_b] = _TEXT_CODE[_b + 32] = _i + 2
    READ_CODE[_b] = READ_CODE[_b + 32] = _i


@dataclass(frozen=True)
class Reference:
    """text: codes of every record, one '#' between records, '$' last; starts[i]: where record
    i begins in text; names and lengths per record."""

    text: np.ndarray
    names: list[str]
    starts: np.ndarray
    lengths: np.ndarray

    def to_record(self, text_positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(record index, 0-based position in that record) of text positions."""
        record = np.searchsorted(self.starts, text_positions, "right") - 1
        return record, text_positions - self.starts[record]


def load_reference(path: str | os.PathLike) -> Reference:
    """Read every record of a FASTA file (plain/gz/bz2/xz) into one encoded text. The file is read
    in batches (a long record across several), each batch's codes written straight into the text,
    so the peak is the text and one batch, about a byte a base (issue 29), never the raw file or
    all the codes besides."""
    names, lengths = [], []
    text = _Text(path)
    for batch in read_batches(path, batch_bases=BATCH_BASES):
        for i in range(len(batch)):
            seq = batch.seq[batch.bounds[i] : batch.bounds[i + 1]]
            if batch.start[i] == 0:
                if names:
                    text.add(np.full(1, SEP, np.uint8))
                names.append(batch.names[i])
                lengths.append(0)
            text.add(_TEXT_CODE[seq])
            lengths[-1] += seq.size
    if not names:
        raise FormatError(display_name(path), 0, "the reference has no records")
    text.add(np.full(1, END, np.uint8))
    lengths = np.asarray(lengths, np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    codes = text.whole()
    # looked for a batch at a time: `codes >= 2` whole is a byte a base beside the text (2.3 Gbp:
    # 2.3 GB more at the load's peak), and the first batch usually answers
    if not any(np.any(codes[i : i + BATCH_BASES] >= 2) for i in range(0, codes.size, BATCH_BASES)):
        raise FormatError(display_name(path), 0, "the reference has no A, C, G or T")
    return Reference(text=codes, names=names, starts=starts, lengths=lengths)


class _Text:
    """The text, filled in order: room for the file's size at first (a plain FASTA's text is no
    longer than its file; pages never written are never held), grown by a quarter where a
    compressed file holds more (a reallocation, no copy of the pages), shrunk to its length."""

    def __init__(self, path: str | os.PathLike):
        try:
            room = os.path.getsize(path) + 1
        except OSError:  # not a file (a pipe): grown as it comes
            room = 1 << 20
        self.codes, self.used = np.empty(max(room, 1 << 20), np.uint8), 0

    def add(self, codes: np.ndarray) -> None:
        end = self.used + codes.size
        if end > self.codes.size:
            self.codes.resize(max(end, self.codes.size + self.codes.size // 4), refcheck=False)
        self.codes[self.used : end] = codes
        self.used = end

    def whole(self) -> np.ndarray:
        self.codes.resize(self.used, refcheck=False)
        return self.codes


def encode_reads(reads: list[bytes | str]) -> tuple[np.ndarray, np.ndarray]:
    """Reads as flat codes 0..3 (255 for any other letter) plus bounds."""
    raw = [r.encode() if isinstance(r, str) else bytes(r) for r in reads]
    flat = np.frombuffer(b"".join(raw), np.uint8)
    bounds = np.concatenate(([0], np.cumsum([len(r) for r in raw]))).astype(np.int64)
    return READ_CODE[flat], bounds
