"""`seqsift align --outfmt sam`: DNA reads against DNA targets, on both strands, reported as a read
mapper reports them (one primary record per read, the rest secondary).

Each read is searched twice, as itself and as its reverse complement; per target the better strand
is kept, then the `top` best targets. A reverse-strand record has flag 16 and carries the reverse
complement and the reversed qualities, so SEQ, QUAL and CIGAR read along the reference, as SAM
requires. MAPQ follows bwa-sw: 250 (S1 - S2) / S1, at most 60, from the best score S1 and the
second best S2 over both strands and every target (0 when they tie, 60 when there is no second);
secondary records get 0. Tags: AS (score), XS (S2, when there is one), NM (edit distance).
"""

from __future__ import annotations

import collections
from typing import Iterable, Iterator

from seqsift.alignment.database import DatabaseHit

_COMPLEMENT = bytes.maketrans(b"ACGTRYKMSWBDHVN", b"TGCAYRMKSWVHDBN")


def reverse_complement(seq: bytes) -> bytes:
    return seq.upper().translate(_COMPLEMENT)[::-1]


def reads(path) -> Iterator[tuple[str, bytes, bytes | None]]:
    """(name, sequence, quality or None for FASTA) of every read, through io.reads' parser (the one
    `seqsift search` reads with), which keeps FASTQ qualities."""
    from seqsift.io.reads import read_reads

    for batch in read_reads(path, 4096):
        for i in range(len(batch)):
            lo, hi = int(batch.bounds[i]), int(batch.bounds[i + 1])
            start = int(batch.qual_lo[i])
            yield batch.name(i), batch.seq[lo:hi].tobytes(), (batch.raw[start : start + hi - lo].tobytes()
                                                              if start >= 0 else None)


class BothStrands:
    """The queries for the search, each read twice (forward, then reverse complement), and the
    SAM text of the search's results; the reads' qualities wait in a queue meanwhile (as many as
    the search holds in flight)."""

    def __init__(self, source: Iterable[tuple[str, bytes, bytes | None]], top: int):
        self.source = source
        self.top = top
        self.waiting: collections.deque = collections.deque()

    def queries(self) -> Iterator[tuple[str, bytes]]:
        for name, seq, qual in self.source:
            self.waiting.append(qual)
            yield name, seq
            yield name, reverse_complement(seq)

    def records(self, found: Iterable[tuple[str, bytes, list[DatabaseHit]]]) -> Iterator[bytes]:
        """One read's SAM records per pair of results (its forward and reverse searches)."""
        pairs = iter(found)
        for (name, seq, forward), (_, _, reverse) in zip(pairs, pairs):
            yield read_records(name, seq, self.waiting.popleft(), forward, reverse, self.top).encode()


def mapping_quality(best: int, second: int | None) -> int:
    """bwa-sw's MAPQ (module docstring); 0 for a best score of 0 or below, which a semi-global
    alignment can have and the formula cannot take."""
    if best <= 0:
        return 0
    if second is None:
        return 60
    if second >= best:
        return 0
    return min(60, int(250 * (best - second) / best + 0.499))


def read_records(name: str, seq: bytes, qual: bytes | None, forward: list[DatabaseHit],
                 reverse: list[DatabaseHit], top: int) -> str:
    hits = [(h, False) for h in forward if h.alignment.length] + [(h, True) for h in reverse if h.alignment.length]
    if not hits:
        return f"{name}\t4\t*\t0\t0\t*\t*\t0\t0\t{seq.decode() or '*'}\t{(qual or b'*').decode()}\n"
    scores = sorted((h.score for h, _ in hits), reverse=True)
    second = scores[1] if len(scores) > 1 else None
    per_target: dict = {}
    for h, rev in hits:
        if h.target not in per_target or h.score > per_target[h.target][0].score:
            per_target[h.target] = (h, rev)
    ranked = sorted(per_target.values(), key=lambda x: (-x[0].score, x[0].target, x[1]))[:top]
    lines = []
    for k, (h, rev) in enumerate(ranked):
        a = h.alignment
        length = len(seq)
        clip = (f"{a.query_start}S" if a.query_start else "") + a.cigar + (
            f"{length - a.query_end}S" if a.query_end < length else "")
        if k:
            body = "*\t*"
        else:
            bases = reverse_complement(seq) if rev else seq
            quality = (qual[::-1] if rev else qual) if qual is not None else b"*"
            body = f"{bases.decode()}\t{quality.decode()}"
        edits = sum(1 for x, y in zip(a.query_aligned, a.target_aligned) if x != y)
        tags = f"AS:i:{h.score}" + (f"\tXS:i:{second}" if second is not None else "") + f"\tNM:i:{edits}"
        flag = (16 if rev else 0) | (256 if k else 0)
        mapq = mapping_quality(h.score, second) if k == 0 else 0
        lines.append(f"{name}\t{flag}\t{h.name}\t{a.target_start + 1}\t{mapq}\t{clip}\t*\t0\t0\t{body}\t{tags}\n")
    return "".join(lines)
