"""From a read's candidate alignments to what SAM reports: the primary (highest score with clip
penalties), the second-best score among alignments of the same read bases (XS, and MAPQ from
the difference), and supplementary alignments of other read bases (chimeric reads).

bwa mem's rules: two alignments compete for the same read bases when they overlap on the read
by at least half the shorter one (its mask level, 0.5); competitors within max(match +
mismatch, gap_open + gap_extend) of the best lower MAPQ further, by their count. Competitors
scoring at least XA_DROP of a reported alignment are its alternatives (SAM's XA tag), listed
only when there are at most XA_HITS of them and secondary records are not written (bwa mem's -h
5 and its rule for -a)."""

from __future__ import annotations

from dataclasses import dataclass

from seqsift.map.extend import Placement
from seqsift.map.scoring import MapOptions, mapq

MASK_LEVEL = 0.5
XA_DROP = 0.8
XA_HITS = 5


@dataclass(frozen=True)
class Chosen:
    """A reported alignment: its placement, second-best score of the same read bases and MAPQ."""

    placement: Placement
    sub: int
    mapq: int
    supplementary: bool
    secondary: bool = False
    alternatives: tuple = ()  # Placements for the XA tag


def _read_overlap(a: Placement, b: Placement) -> bool:
    """Whether a and b align mostly the same read bases (read coordinates of the forward read)."""
    a0, a1 = (a.qb, a.qe) if a.strand == 0 else (a.read_length - a.qe, a.read_length - a.qb)
    b0, b1 = (b.qb, b.qe) if b.strand == 0 else (b.read_length - b.qe, b.read_length - b.qb)
    shared = min(a1, b1) - max(a0, b0)
    return shared >= MASK_LEVEL * min(a1 - a0, b1 - b0)


def _same_place(a: Placement, b: Placement) -> bool:
    """Two chains of one locus (split by an indel wider than the band) align the same way."""
    if a.record != b.record or a.strand != b.strand:
        return False
    shared = min(a.end, b.end) - max(a.position, b.position)
    return shared > MASK_LEVEL * min(a.ref_span, b.ref_span)


def ranked(placements: list[Placement]) -> list[Placement]:
    """Best first (score with clip penalties, then without), ties in reference order."""
    return sorted(placements, key=lambda p: (-p.total, -p.score, p.record, p.position, p.strand))


def choose(placements: list[Placement], options: MapOptions, primary: Placement | None = None) -> list[Chosen]:
    """The primary first, then supplementary alignments, then (with options.secondary) every
    other alignment scoring min_score as secondary, MAPQ 0 (bwa mem -a); empty when the read is
    unmapped (no alignment scores min_score). primary: the one to report first (a pair's
    choice)."""
    if len(placements) == 1 and primary is None:  # most reads: the general path's answer, directly
        p = placements[0]
        if p.score < options.min_score:
            return []
        return [Chosen(placement=p, sub=0, mapq=mapq(options, p.score, 0, 0, p.qe - p.qb, p.ref_span),
                       supplementary=False)]
    order = ranked(placements)
    if primary is not None:
        order = [primary] + [p for p in order if p is not primary]
    distinct: list[Placement] = []
    for p in order:
        if not any(_same_place(p, q) for q in distinct):
            distinct.append(p)
    tolerance = max(options.match + options.mismatch, options.gap_open + options.gap_extend)
    chosen: list[Chosen] = []
    for i, p in enumerate(distinct):
        if p.score < options.min_score:
            continue
        if any(_read_overlap(p, c.placement) for c in chosen):
            continue
        competing = [q for j, q in enumerate(distinct) if j != i and _read_overlap(p, q)]
        rivals = [q.score for q in competing]
        sub = max(rivals, default=0)
        near = sum(1 for s in rivals if s >= p.score - tolerance) - (1 if sub >= p.score else 0)
        q = mapq(options, p.score, sub, max(near, 0), p.qe - p.qb, p.ref_span)
        alternatives = [a for a in competing if a.score >= XA_DROP * p.score]
        if options.secondary or len(alternatives) > XA_HITS:
            alternatives = []
        chosen.append(Chosen(placement=p, sub=sub, mapq=q, supplementary=bool(chosen), alternatives=tuple(alternatives)))
    if options.secondary and chosen:
        reported = {id(c.placement) for c in chosen}
        best = chosen[0].placement.score
        chosen += [Chosen(placement=p, sub=best, mapq=0, supplementary=False, secondary=True) for p in distinct
                   if id(p) not in reported and p.score >= options.min_score]
    return chosen
