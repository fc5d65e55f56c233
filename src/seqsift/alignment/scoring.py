"""Scoring schemes: substitution matrices (shipped NCBI files or any NCBI-format file), DNA
match/mismatch, and gap penalties.

Gap convention (BLAST's): a gap of length L costs open + L * extend, so `--gap-open 11
--gap-extend 1` charges 12 for one residue, and open 0, extend 2 is a linear gap of -2 per
residue. parasail and SSW charge their `open` for the first residue instead: our (open, extend)
is their (open + extend, extend).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from importlib import resources

import numpy as np

from seqsift.alignment import MATRICES
from seqsift.errors import FormatError, UsageError
from seqsift.io.openers import read_small

DNA_ALPHABET = b"ACGTN"
# Residues some databases use that the matrices lack: selenocysteine, pyrrolysine, Leu/Ile.
PROTEIN_ALIASES = {ord("U"): ord("X"), ord("O"): ord("X"), ord("J"): ord("X")}
MAX_SCORE = 1000  # per residue pair, so 32-bit scores cannot overflow on any real sequence
MAX_PENALTY = 1000  # gap open and extend, for the same reason (and the 16-bit lanes' headroom)


@dataclass(frozen=True)
class Scoring:
    """A substitution matrix over `alphabet` (letter i scores matrix[i, j] against letter j) and
    affine gap penalties (positive numbers: a gap of L residues costs open + L * extend)."""

    name: str
    alphabet: bytes
    matrix: np.ndarray
    gap_open: int
    gap_extend: int
    unknown: int  # code every letter outside the alphabet maps to (X or N), -1 for an error

    def __post_init__(self):
        for option, value, low in (("--gap-open", self.gap_open, 0), ("--gap-extend", self.gap_extend, 1)):
            if value > MAX_PENALTY:
                raise UsageError(f"{option} {value}: give {low} to {MAX_PENALTY}")
        if self.gap_open < 0 or self.gap_extend < 1:
            raise UsageError(f"gap penalties must be positive numbers (a gap costs open + length * extend): "
                             f"got --gap-open {self.gap_open} --gap-extend {self.gap_extend}; extend must be at least 1")
        if np.abs(self.matrix).max(initial=0) > MAX_SCORE:
            raise UsageError(f"matrix {self.name}: scores beyond +-{MAX_SCORE} are not supported")

    @property
    def is_dna(self) -> bool:
        return self.alphabet == DNA_ALPHABET

    def encode(self, seq: bytes | str, where: str = "sequence") -> np.ndarray:
        """Residue codes (uint8). Case is folded; for DNA every other IUPAC letter becomes N, for
        proteins U, O and J become X; any other letter is an error naming `where` and position."""
        return self.encode_all([seq], lambda k: where)[0]

    def encode_all(self, seqs: list[bytes | str], where) -> list[np.ndarray]:
        """encode() of every sequence at once (views into one array: a call per sequence costs
        more than aligning short ones); where(k) names the k-th (0-based) in an error."""
        raws = [seq.encode() if isinstance(seq, str) else bytes(seq) for seq in seqs]
        bounds = np.zeros(len(raws) + 1, np.int64)
        np.cumsum([len(raw) for raw in raws], out=bounds[1:])
        letters = np.frombuffer(b"".join(raws), np.uint8)
        return self.split_codes(self.code_table[letters], letters, bounds, where)  # case, aliases: in the table

    def split_codes(self, codes: np.ndarray, letters: np.ndarray, bounds: np.ndarray, where) -> list[np.ndarray]:
        """Sequence k's codes, codes[bounds[k]:bounds[k+1]] (letters through code_table), as a view
        each; a letter outside the alphabet is an error naming where(k) and its position."""
        if codes.size and codes.max() == 255:
            first = int(np.flatnonzero(codes == 255)[0])
            k = int(np.searchsorted(bounds, first, side="right")) - 1
            pos = first - int(bounds[k])
            raise UsageError(f"{where(k)}: letter {chr(letters[first])!r} at position {pos + 1} is not in the "
                             f"{self.name} alphabet ({self.alphabet.decode()})")
        edges = bounds.tolist()
        return [codes[edges[k] : edges[k + 1]] for k in range(len(edges) - 1)]

    @functools.cached_property
    def code_table(self) -> np.ndarray:
        """Each byte's residue code; 255 for a letter outside the alphabet and its aliases."""
        table = np.full(256, 255, np.uint8)
        for i, letter in enumerate(self.alphabet):
            table[letter] = i
        aliases = dict.fromkeys(b"RYSWKMBDHV", ord("N")) if self.is_dna else PROTEIN_ALIASES
        for letter, same_as in aliases.items():
            table[letter] = table[same_as]
        upper = bytes(range(256)).upper()
        return table[np.frombuffer(upper, np.uint8)]  # a lowercase letter codes as its capital


def dna(match: int = 1, mismatch: int = -1, gap_open: int = 0, gap_extend: int = 2) -> Scoring:
    """A, C, G, T scoring match/mismatch; N (and any IUPAC code) scores `mismatch` against everything,
    itself included, so an N never adds to a score."""
    if match <= 0 or mismatch >= 0:
        raise UsageError(f"--match {match} --mismatch {mismatch}: match must be positive and mismatch negative")
    m = np.full((5, 5), mismatch, np.int32)
    m[np.arange(4), np.arange(4)] = match
    return Scoring(f"DNA {match}/{mismatch}", DNA_ALPHABET, m, gap_open, gap_extend, unknown=4)


def matrix(name: str, gap_open: int = 11, gap_extend: int = 1) -> Scoring:
    """A shipped matrix by name (BLOSUM62, ...) or an NCBI-format matrix file by path."""
    if name.upper() in MATRICES:
        text = (resources.files("seqsift.alignment") / "matrices" / name.upper()).read_text()
        return _parse(text, name.upper(), gap_open, gap_extend)
    if os.path.exists(name):
        return _parse(read_small(name, 1 << 20).decode("utf-8", errors="replace"), name, gap_open, gap_extend)
    raise UsageError(f"--matrix {name}: not a file, nor one of {', '.join(MATRICES)}")


def _parse(text: str, name: str, gap_open: int, gap_extend: int) -> Scoring:
    """NCBI format: '#' comments, a header line of single letters, then one row per letter: the
    letter and its scores."""
    header, rows = None, []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or line.startswith("#"):
            continue
        if header is None:
            # one ASCII letter each: str.upper() of some letters is several ('\ufb03' -> 'FFI')
            bad = next((f for f in fields if len(f) != 1 or not f.isascii() or not f.isprintable()), None)
            if bad is not None:
                raise FormatError(name, number, f"expected the header line of single-letter column names, "
                                  f"found {bad!r}")
            header = [f.upper() for f in fields]
            if len(set(header)) != len(header):
                raise FormatError(name, number, "a letter is named twice in the header line")
            continue
        if len(rows) == len(header):
            raise FormatError(name, number, "more rows than the header has letters")
        if fields[0].upper() != header[len(rows)]:
            raise FormatError(name, number, f"expected the row of {header[len(rows)]!r}")
        try:
            values = [int(v) for v in fields[1:]]
        except ValueError:
            raise FormatError(name, number, "scores must be whole numbers") from None
        big = next((v for v in values if abs(v) > MAX_SCORE), None)
        if big is not None:
            raise FormatError(name, number, f"score {big} is beyond +-{MAX_SCORE}")
        if len(values) != len(header):
            raise FormatError(name, number, f"{len(values)} scores where the header names {len(header)} letters")
        rows.append(values)
    if header is None or len(rows) != len(header):
        raise FormatError(name, 0, "the matrix is incomplete: every header letter needs its row")
    alphabet = "".join(header).encode()
    unknown = alphabet.find(b"X")
    return Scoring(name, alphabet, np.array(rows, np.int32), gap_open, gap_extend, unknown)
