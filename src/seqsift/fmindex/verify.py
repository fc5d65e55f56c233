"""Verification of candidate places and the alignments behind them (kernels: _verify_cpu.py).
Shared by approximate search (approx.py) and the read mapper: given a read and a place on the
reference, the distance (Hamming or edit, N matching nothing) and, for SAM, CIGAR, NM and MD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from seqsift.errors import UsageError
from seqsift.fmindex.layout import IndexArrays
from seqsift.fmindex.seeds import Candidates
from seqsift.precompiled import Kernel

DISTANCES = ("edit", "hamming")
MAX_ERRORS = 16
_LETTERS = np.frombuffer(b"ACGTN", np.uint8)
_KERNELS = "seqsift.fmindex._verify_cpu"  # called precompiled (precompiled.py): no Numba import at start-up
_VERIFY = Kernel(_KERNELS, "verify_candidates", " ".join(["uint8[:]"] + ["int64[:]"] + ["uint8[:]"] + ["int64[:]"] * 8
                                                         + ["int64", "bool"] + ["int64[:]"] * 4), results=1)


def check_errors(errors: int, distance: str) -> None:
    """A clear error for an unusable errors/distance pair (names the parameters)."""
    if distance not in DISTANCES:
        raise UsageError(f"distance {distance!r} is not one of {', '.join(DISTANCES)}")
    if isinstance(errors, bool) or not isinstance(errors, (int, np.integer)) or not 0 <= errors <= MAX_ERRORS:
        raise UsageError(f"errors {errors!r}: give a whole number from 0 to {MAX_ERRORS}")


@dataclass
class Places:
    """Verified places, grouped by read then strand, in text order within a group."""

    read: np.ndarray
    text_pos: np.ndarray  # the leftmost text position of the aligned stretch
    strand: np.ndarray  # 0 forward, 1 reverse complement
    differences: np.ndarray  # mismatches or edits


class Reach(NamedTuple):
    """The text a verification may read: the packed bases, the gaps, each record's [start, end)."""

    packed: np.ndarray
    gap_starts: np.ndarray
    gap_ends: np.ndarray
    record_starts: np.ndarray
    record_ends: np.ndarray

    @classmethod
    def of(cls, arrays: IndexArrays, record_starts: np.ndarray, record_lengths: np.ndarray) -> "Reach":
        return cls(arrays.packed, np.ascontiguousarray(arrays.gaps[:, 0]), np.ascontiguousarray(arrays.gaps[:, 1]),
                   np.ascontiguousarray(record_starts, np.int64),
                   np.ascontiguousarray(record_starts + record_lengths, np.int64))


def verify(reach: Reach, codes: np.ndarray, bounds: np.ndarray, candidates: Candidates, errors: int,
           distance: str) -> Places:
    """Every place of each read within `errors` (Hamming: each start; edit: one start per
    cluster of starts within `errors` of each other, the one with the fewest edits, leftmost on
    ties) among the candidates' places."""
    check_errors(errors, distance)
    room = 2 * candidates.read.size
    out = Places(np.empty(room, np.int64), np.empty(room, np.int64), np.empty(room, np.int64), np.empty(room, np.int64))
    found = _VERIFY(codes, bounds, reach.packed, reach.gap_starts, reach.gap_ends, reach.record_starts,
                                reach.record_ends, candidates.read, candidates.strand, candidates.record,
                                candidates.diagonal, errors, distance == "edit", out.read, out.text_pos, out.strand,
                                out.differences)
    return Places(out.read[:found], out.text_pos[:found], out.strand[:found], out.differences[:found])


class Alignment(NamedTuple):
    cigar: str
    nm: int
    md: str


def align(reach: Reach, read_codes: np.ndarray, strand: int, text_pos: int, record: int, errors: int,
          distance: str) -> Alignment:
    """CIGAR (M, I, D), NM and MD of the read (codes 0-3, 255; strand 1: aligned as its reverse
    complement) placed at text_pos: gap-free for hamming; for edit, the fewest-edits alignment
    starting there and ending anywhere up to `errors` bases past the read's length, inside the
    record."""
    from seqsift.fmindex import _verify_cpu as k

    check_errors(errors, distance)
    m = read_codes.size
    read = np.empty(m, np.uint8)
    k.strand_codes(read_codes, 0, m, strand, read)
    end = min(text_pos + m + (errors if distance == "edit" else 0), int(reach.record_ends[record]))
    window = np.empty(max(end - text_pos, 1), np.uint8)
    k.unpack_window(reach.packed, reach.gap_starts, reach.gap_ends, text_pos, end, window)
    if distance == "hamming":
        ops = np.zeros(m, np.uint8)
        count = m
    else:
        ops = np.empty(m + end - text_pos, np.uint8)
        _, count, _ = k.edit_traceback(read, m, window, end - text_pos, ops)
    return describe(read, window, ops[:count])


def describe(read: np.ndarray, window: np.ndarray, ops: np.ndarray) -> Alignment:
    """CIGAR, NM and MD of an alignment given as operations (_verify_cpu's OP_*) from the start."""
    from seqsift.fmindex import _verify_cpu as k

    cigar, md, nm = [], [], 0
    i = j = same = 0
    last, run = -1, 0
    deleting = False
    for op in ops.tolist():
        if op != last and run:
            cigar.append(f"{run}{'MID'[last]}")
            run = 0
        last, run = op, run + 1
        if op == k.OP_MATCH:
            if read[i] <= 3 and read[i] == window[j]:
                same += 1
            else:
                md.append(f"{same}{chr(_LETTERS[window[j]])}")
                same, nm = 0, nm + 1
            i, j, deleting = i + 1, j + 1, False
        elif op == k.OP_INS:
            i, nm, deleting = i + 1, nm + 1, False
        else:
            if not deleting:
                md.append(f"{same}^")
                same = 0
            md.append(chr(_LETTERS[window[j]]))
            j, nm, deleting = j + 1, nm + 1, True
    if run:
        cigar.append(f"{run}{'MID'[last]}")
    md.append(str(same))
    return Alignment("".join(cigar), nm, "".join(md))
