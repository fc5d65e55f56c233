"""The mapper's parameters, checked before any kernel runs, and MAPQ from the best and
second-best alignment scores (bwa mem's formula, mem_approx_mapq_se)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from seqsift.errors import UsageError


@dataclass(frozen=True)
class MapOptions:
    """Scores as bwa mem's defaults (-A 1 -B 4 -O 6 -E 1 -L 5 -T 30): a gap of L bases costs
    gap_open + L * gap_extend. Seeds: the read's `seed_length`-mers every `seed_step` bases,
    dropped when they occur more than `max_occurrences` times (bwa's -c 500); seeds within
    `chain_gap` diagonals of the next form a chain (the longest indel aligned in one piece
    between seeds, bwa's band -w 100), and the extension searches `band` diagonals beyond the
    chain's (indels near the read's ends). Chains weaker than `drop_ratio` of the read's best are not extended,
    at most `max_chains` are. quick_pieces: non-overlapping seeds searched first, every seed only
    for the reads they do not place (seeding.py; 0: every seed at once). secondary: also report
    every other alignment scoring min_score (bwa mem -a)."""

    match: int = 1
    mismatch: int = 4
    gap_open: int = 6
    gap_extend: int = 1
    clip: int = 5
    ambiguous: int = 1  # the score of N (or any non-ACGT letter) against anything is -ambiguous
    min_score: int = 30
    seed_length: int = 19
    seed_step: int = 10
    max_occurrences: int = 500
    band: int = 16
    chain_gap: int = 100
    drop_ratio: float = 0.5
    max_chains: int = 20
    quick_pieces: int = 7
    secondary: bool = False

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "secondary":
                continue
            if f.name == "drop_ratio":
                if not 0 <= value <= 1:
                    raise UsageError(f"drop_ratio={value}: give a fraction between 0 and 1")
            elif f.name in ("gap_open", "ambiguous", "clip", "min_score", "mismatch", "quick_pieces"):
                if value < 0:
                    raise UsageError(f"{f.name}={value}: give 0 or more")
            elif value < 1:
                raise UsageError(f"{f.name}={value}: give a whole number of at least 1")
        if self.seed_length > 32:
            raise UsageError(f"seed_length={self.seed_length}: give at most 32")

    @property
    def ungapped_limit(self) -> int:
        """Differing bases up to which a read laid on its seeds' diagonal without gaps is its
        best alignment there: 0 always; 1 when clipping the differing base off the end costs at
        least as much as it does (clip >= its penalty) and so does any gap (open + extend >= match
        + its penalty)."""
        worst = max(self.mismatch, self.ambiguous)
        return 1 if self.clip >= worst and self.gap_open + self.gap_extend >= self.match + worst else 0


def mapq(options: MapOptions, score: int, sub: int, sub_count: int, read_span: int, ref_span: int) -> int:
    """bwa mem's MAPQ: 0 when the second-best alignment scores as well as the best, else up to
    60, scaled down for low identity and for the number of near-best alternatives. Without a
    second-best, sub is taken as seed_length * match (a seed's worth of score), as bwa does."""
    sub = sub if sub > 0 else options.seed_length * options.match
    if sub >= score or score <= 0:
        return 0
    span = max(read_span, ref_span)
    identity = 1.0 - (span * options.match - score) / (options.match + options.mismatch) / span
    factor = 1.0 if span < 50 else math.log(50) / math.log(span)
    factor *= identity * identity
    q = int(6.02 * (score - sub) / options.match * factor * factor + 0.499)
    if sub_count > 0:
        q -= int(4.343 * math.log(sub_count + 1) + 0.499)
    return max(0, min(60, q))
