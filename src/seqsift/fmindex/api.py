"""Public FM-index API: build from a FASTA reference, count and locate exact matches."""

from __future__ import annotations

import os

from typing import TYPE_CHECKING

import numpy as np

from seqsift.fmindex.reference import Reference, encode_reads, load_reference

if TYPE_CHECKING:  # the kernels and the suffix sorter load on first use, not on `import seqsift`
    from seqsift.fmindex.build import IndexArrays


class FMIndex:
    """An FM-index of a DNA reference. Reads match only A, C, G and T (case-insensitive); a read
    with any other letter occurs nowhere, and no match spans two records or includes an N."""

    def __init__(self, reference: Reference, arrays: "IndexArrays"):
        self.reference = reference
        self.arrays = arrays

    @classmethod
    def build(cls, fasta: str | os.PathLike, sa_sample: int = 32) -> "FMIndex":
        from seqsift.fmindex.build import build_arrays

        reference = load_reference(fasta)
        return cls(reference, build_arrays(reference, sa_sample))

    @property
    def names(self) -> list[str]:
        return self.reference.names

    def intervals(self, reads: list[bytes | str]) -> tuple[np.ndarray, np.ndarray]:
        """BWT interval [lo, hi) of each read (forward strand)."""
        from seqsift.fmindex import _cpu

        seq, bounds = encode_reads(reads)
        lo = np.empty(len(reads), np.int64)
        hi = np.empty(len(reads), np.int64)
        a = self.arrays
        _cpu.intervals(a.blocks, a.C, a.n, seq, bounds, lo, hi)
        return lo, hi

    def count(self, reads: list[bytes | str]) -> np.ndarray:
        """Occurrences of each read in the reference (forward strand)."""
        lo, hi = self.intervals(reads)
        return hi - lo

    def locate(self, read: bytes | str) -> list[tuple[str, int]]:
        """(record name, 0-based position) of every occurrence, in reference order."""
        from seqsift.fmindex import _cpu

        lo, hi = self.intervals([read])
        a = self.arrays
        text_pos = np.empty(int(hi[0] - lo[0]), np.int64)
        _cpu.locate_rows(a.blocks, a.C, a.samples, int(lo[0]), int(hi[0]), text_pos)
        record, position = self.reference.to_record(np.sort(text_pos))
        return [(self.names[r], int(p)) for r, p in zip(record, position)]
