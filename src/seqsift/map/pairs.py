"""Paired-end mapping: two files read in step, each end mapped as a single read, then the pair
chosen with the library's insert size (bwa mem's method, mem_pair and mem_sam_pe).

Insert size: estimated from each batch's confidently placed pairs (both ends MAPQ >= 20, on one
record, facing each other): mean and deviation of those within two interquartile ranges of the
quartiles; a proper pair lies within three ranges of the quartiles, widened to four deviations
of the mean. A batch with fewer than MIN_PAIRS such pairs is mapped end by end (no pair flag
0x2). The estimate depends on the batch alone, so output is the same at any thread count.

Mate rescue: where an end's mate has no alignment at the expected distance, the mate is aligned
by the same clip-aware kernel over the whole window the insert size allows.

Pair score: the two ends' scores plus 0.721 log(2 erfc(|z| / sqrt 2)) match, z the insert's
deviation in standard deviations; the pair wins over the ends' own best alignments when it
scores at least their sum minus the unpaired penalty (bwa's -U 17). MAPQ of a pair's ends:
each end's own, raised up to the pair's (6.02 per point the best pair leads the next), by at
most 40."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from seqsift.errors import FormatError
from seqsift.io.openers import display_name
from seqsift.io.reads import ReadBatch, read_reads
from seqsift.map.batch_sam import PairReport
from seqsift.map.choose import Chosen, choose, ranked
from seqsift.map.extend import Placement, placements_of
from seqsift.map.layout import C_POSITION, C_RECORD, C_SPAN, C_STRAND
from seqsift.map.sam import Pairing, records

UNPAIRED_PENALTY = 17
MIN_PAIRS = 10
CONFIDENT_MAPQ = 20
CANDIDATES = 8  # alignments of each end tried in pairs and as rescue anchors


@dataclass(frozen=True)
class InsertSize:
    mean: float
    std: float
    low: int  # proper pairs' outer distance lies in [low, high]
    high: int


def joined(a: ReadBatch, b: ReadBatch) -> ReadBatch:
    """One batch of a's reads then b's (copies)."""
    shift = a.raw.size
    return ReadBatch(raw=np.concatenate((a.raw, b.raw)), seq=np.concatenate((a.seq, b.seq)),
                     codes=np.concatenate((a.codes, b.codes)),
                     bounds=np.concatenate((a.bounds, b.bounds[1:] - b.bounds[0] + a.bounds[-1])),
                     name_lo=np.concatenate((a.name_lo, b.name_lo + shift)),
                     name_hi=np.concatenate((a.name_hi, b.name_hi + shift)),
                     qual_lo=np.concatenate((a.qual_lo, np.where(b.qual_lo >= 0, b.qual_lo + shift, -1))), first=a.first)


def _part(batch: ReadBatch, lo: int, hi: int) -> ReadBatch:
    """Reads [lo, hi) of a batch, sharing its memory."""
    b0, b1 = batch.bounds[lo], batch.bounds[hi]
    return ReadBatch(raw=batch.raw, seq=batch.seq[b0:b1], codes=batch.codes[b0:b1], bounds=batch.bounds[lo : hi + 1] - b0,
                     name_lo=batch.name_lo[lo:hi], name_hi=batch.name_hi[lo:hi], qual_lo=batch.qual_lo[lo:hi],
                     first=batch.first + lo)


def pair_name(name: str) -> str:
    """A read's name without the /1 or /2 that tells the ends apart (bwa strips it too)."""
    return name[:-2] if len(name) > 2 and name[-2] == "/" and name[-1] in "12" else name


def _line(batch: ReadBatch, i: int) -> int:
    """The 1-based line of read i's header in a four-line FASTQ file; 0 (unknown) for FASTA."""
    return 4 * (batch.first + i) + 1 if batch.qual_lo[i] >= 0 else 0


def paired_batches(reads, mates, batch_reads: int, code_table: np.ndarray) -> Iterator[tuple[ReadBatch, ReadBatch]]:
    """Batches of the two files in step, equal in size; names must agree read by read (but for
    a trailing /1 and /2), and the files must hold as many reads, else FormatError naming the
    read, file and line."""
    streams = (read_reads(reads, batch_reads, code_table), read_reads(mates, batch_reads, code_table))
    paths = (display_name(reads), display_name(mates))
    held: list = [None, None]  # (batch, next read) per file
    while True:
        for k in (0, 1):
            if held[k] is None or held[k][1] == len(held[k][0]):
                batch = next(streams[k], None)
                held[k] = None if batch is None else (batch, 0)
        if held[0] is None and held[1] is None:
            return
        if held[0] is None or held[1] is None:
            k = 0 if held[0] is not None else 1
            batch, i = held[k]
            raise FormatError(paths[k], _line(batch, i), f"read {batch.name(i)!r} (read {batch.first + i + 1}) has no "
                              f"mate: {paths[1 - k]} holds fewer reads")
        (a, i), (b, j) = held
        n = min(len(a) - i, len(b) - j)
        first, second = _part(a, i, i + n), _part(b, j, j + n)
        for r in _misnamed(first, second):
            if pair_name(first.name(r)) != pair_name(second.name(r)):
                raise FormatError(paths[1], _line(second, r), f"read {second.name(r)!r} (read {second.first + r + 1}) "
                                  f"does not match its mate {first.name(r)!r} in {paths[0]} (line {_line(first, r)})")
        held[0], held[1] = (a, i + n), (b, j + n)
        yield first, second


def _pair_name_spans(batch: ReadBatch) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) in batch.raw of every read's name without a trailing /1 or /2 (pair_name)."""
    lo, hi = batch.name_lo, batch.name_hi
    raw = batch.raw
    long = hi - lo > 2
    slash = raw[np.maximum(hi - 2, 0)] == ord("/")
    digit = (raw[np.maximum(hi - 1, 0)] == ord("1")) | (raw[np.maximum(hi - 1, 0)] == ord("2"))
    return lo, np.where(long & slash & digit, hi - 2, hi)


def _misnamed(a: ReadBatch, b: ReadBatch) -> list[int]:
    """The reads r whose pair names may differ between a and b, in order (the names'
    bytes compared; the caller compares the decoded names, as the error message shows them)."""
    (alo, ahi), (blo, bhi) = _pair_name_spans(a), _pair_name_spans(b)
    length = ahi - alo
    differ = length != bhi - blo
    same = np.flatnonzero(~differ & (length > 0))
    if same.size:
        size = length[same]
        ends = np.cumsum(size)
        inside = np.arange(int(ends[-1])) - np.repeat(ends - size, size)
        unequal = a.raw[np.repeat(alo[same], size) + inside] != b.raw[np.repeat(blo[same], size) + inside]
        differ[same] = np.logical_or.reduceat(unequal, ends - size)
    return np.flatnonzero(differ).tolist()


def _facing(a: Placement, b: Placement) -> int | None:
    """The outer distance of two alignments on one record facing each other (forward one
    leftmost), else None."""
    if a.record != b.record or a.strand == b.strand:
        return None
    forward, reverse = (a, b) if a.strand == 0 else (b, a)
    if forward.position > reverse.end:
        return None
    return reverse.end - forward.position


def estimate(chosen_pairs: list[tuple[list[Chosen], list[Chosen]]]) -> InsertSize | None:
    sizes = []
    for ca, cb in chosen_pairs:
        if ca and cb and min(ca[0].mapq, cb[0].mapq) >= CONFIDENT_MAPQ:
            d = _facing(ca[0].placement, cb[0].placement)
            if d is not None:
                sizes.append(d)
    return insert_size(sizes)


def confident_sizes(table: np.ndarray, primary: np.ndarray, quality: np.ndarray) -> np.ndarray:
    """estimate's outer distances, in pair order, from batch_sam's arrays: pair r's ends are
    reads r and r + half, primary their placement rows (-1 unmapped), quality their MAPQs."""
    half = primary.size // 2
    a, b = primary[:half], primary[half:]
    confident = (a >= 0) & (b >= 0) & (np.minimum(quality[:half], quality[half:]) >= CONFIDENT_MAPQ)
    ra, rb = table[a[confident]], table[b[confident]]
    end_a, end_b = ra[:, C_POSITION] + ra[:, C_SPAN], rb[:, C_POSITION] + rb[:, C_SPAN]
    a_forward = ra[:, C_STRAND] == 0
    forward_at = np.where(a_forward, ra[:, C_POSITION], rb[:, C_POSITION])
    reverse_end = np.where(a_forward, end_b, end_a)
    facing = (ra[:, C_RECORD] == rb[:, C_RECORD]) & (ra[:, C_STRAND] != rb[:, C_STRAND]) & (forward_at <= reverse_end)
    return (reverse_end - forward_at)[facing]


def insert_size(sizes) -> InsertSize | None:
    """The library's insert size from confidently placed pairs' outer distances (the module's
    docstring), None from fewer than MIN_PAIRS."""
    if len(sizes) < MIN_PAIRS:
        return None
    x = np.asarray(sizes, np.float64)
    q25, q75 = np.percentile(x, [25, 75])
    iqr = q75 - q25
    kept = x[(x >= q25 - 2 * iqr) & (x <= q75 + 2 * iqr)]
    mean, std = float(kept.mean()), max(float(kept.std()), 1.0)
    low = max(1, int(min(q25 - 3 * iqr, mean - 4 * std) + 0.499))
    high = int(max(q75 + 3 * iqr, mean + 4 * std) + 0.499)
    return InsertSize(mean, std, low, high)


class PairBatches:
    """A pair of batches (ends 1 and 2) to (SAM records, reads, reads mapped)."""

    def __init__(self, mapper, rg_id: str | None = None):
        self.mapper = mapper
        self.rg_id = rg_id
        self.report = PairReport(mapper, rg_id)

    def __call__(self, batches: tuple[ReadBatch, ReadBatch]) -> tuple[bytes, int, int]:
        index = self.mapper.index  # its file checked around the batch, as SamBatches does
        index.check_unchanged()
        result = self._pairs(batches)
        index.check_unchanged()
        return result

    def _pairs(self, batches: tuple[ReadBatch, ReadBatch]) -> tuple[bytes, int, int]:
        """Both ends placed and chosen as one batch (end 1's reads, then end 2's) by the
        compiled steps (batch_sam.PairReport); the pairs those leave (a rescue, several
        candidates, chimeric or -a ends) by _pair and sam.records, in their place."""
        first, second = batches
        half = len(first)
        both = joined(first, second)
        run = self.report.start(both)
        insert = insert_size(confident_sizes(run.table, run.primary, run.quality))
        out, starts, used, mapped = self.report.finish(run, insert, UNPAIRED_PENALTY)
        later = np.flatnonzero(run.proper == 2)
        if later.size == 0:
            return out[:used].tobytes(), 2 * half, mapped
        per_read = placements_of(run.table[: run.n], run.ops, run.lens, both.bounds, np.concatenate((later, later + half)))
        size = run.forward.size
        pieces, done = [], 0
        for r in later.tolist():
            ends = []
            for k in (r, r + half):
                lo, hi = int(both.bounds[k]), int(both.bounds[k + 1])
                ends.append(((run.forward[lo:hi], run.reverse[size - hi : size - lo]), per_read[k]))
            text, n = self._python_pair(both, r, half, ends, insert)
            pieces += [out[starts[done] : starts[r]].tobytes(), text]
            mapped += n
            done = r + 1
        pieces.append(out[starts[done] : used].tobytes())
        return b"".join(pieces), 2 * half, mapped

    def in_python(self, batches: tuple[ReadBatch, ReadBatch]) -> tuple[bytes, int, int]:
        """What __call__ gives, every pair by the Python path (the tests' reference)."""
        first, second = batches
        half = len(first)
        both = joined(first, second)
        candidates = self.mapper.candidates(both)
        insert = estimate([(choose(candidates[r][1], self.mapper.options),
                            choose(candidates[r + half][1], self.mapper.options)) for r in range(half)])
        done = [self._python_pair(both, r, half, (candidates[r], candidates[r + half]), insert) for r in range(half)]
        return b"".join(text for text, _ in done), 2 * half, sum(n for _, n in done)

    def _python_pair(self, both: ReadBatch, r: int, half: int, ends, insert: InsertSize | None) -> tuple[bytes, int]:
        """(SAM records, reads mapped) of pair r of a joined batch: ends holds each end's
        ((forward, reverse-complement codes), candidate placements)."""
        m, o = self.mapper, self.mapper.options
        (reads1, cand1), (reads2, cand2) = ends
        chosen1, chosen2, proper = choose(cand1, o), choose(cand2, o), False
        if insert is not None:
            paired = self._pair(reads1, cand1, reads2, cand2, chosen1, chosen2, insert)
            if paired is not None:
                chosen1, chosen2, proper = paired
        one, two = m.report(both, r, reads1, chosen1, pair_name), m.report(both, r + half, reads2, chosen2, pair_name)
        names = m.index.names
        text = records(one, names, self.rg_id, Pairing(True, two, proper)) + \
            records(two, names, self.rg_id, Pairing(False, one, proper))
        return text.encode(), one.mapped + two.mapped

    def _pair(self, reads1, cand1, reads2, cand2, chosen1, chosen2, insert: InsertSize):
        """(chosen of end 1, chosen of end 2, proper) for the best pair when it beats the ends
        placed apart, else None. Rescued mates join the candidates."""
        o = self.mapper.options
        top1, top2 = ranked(cand1)[:CANDIDATES], ranked(cand2)[:CANDIDATES]
        rescued2 = self._rescue(top1, top2, reads2, insert)
        rescued1 = self._rescue(top2 + rescued2, top1, reads1, insert)
        top1, top2 = top1 + rescued1, top2 + rescued2
        scored = []
        for a in top1:
            for b in top2:
                d = _facing(a, b)
                if d is None or not insert.low <= d <= insert.high:
                    continue
                z = abs(d - insert.mean) / insert.std
                tail = max(math.erfc(z / math.sqrt(2)), 1e-300)
                scored.append((a.score + b.score + 0.721 * math.log(2 * tail) * o.match, a, b))
        if not scored:
            return None
        scored.sort(key=lambda s: -s[0])
        best, a, b = scored[0]
        apart = (chosen1[0].placement.score if chosen1 else 0) + (chosen2[0].placement.score if chosen2 else 0) \
            - UNPAIRED_PENALTY
        if best < apart:
            return None
        runner_up = max(scored[1][0] if len(scored) > 1 else 0, apart)
        q_pair = min(60, int(6.02 * (best - runner_up) / o.match + 0.499))
        # each end's own choice stands where the pair agrees with it (the common case)
        one = chosen1 if not rescued1 and chosen1 and chosen1[0].placement is a else choose(cand1 + rescued1, o, a)
        two = chosen2 if not rescued2 and chosen2 and chosen2[0].placement is b else choose(cand2 + rescued2, o, b)
        return self._raised(one, q_pair), self._raised(two, q_pair), True

    @staticmethod
    def _raised(chosen: list[Chosen], q_pair: int) -> list[Chosen]:
        first = chosen[0]
        q = max(first.mapq, min(q_pair, first.mapq + 40))
        return chosen if q == first.mapq else [replace(first, mapq=q)] + chosen[1:]

    def _rescue(self, anchors: list[Placement], mates: list[Placement], reads, insert: InsertSize) -> list[Placement]:
        """Alignments of the mate found by aligning it over the window each anchor's insert size
        allows, for the two best anchors (those within the unpaired penalty of the best) none of
        whose mates already lies there."""
        m, o = self.mapper, self.mapper.options
        ext, ref = m.extender(), m.index.reference
        found = []
        best = max((a.score for a in anchors), default=0)
        for a in anchors[:2]:  # as bwa mem: only from alignments within the unpaired penalty of the best
            placed = [_facing(a, b) for b in mates + found]
            if a.score < max(o.min_score, best - UNPAIRED_PENALTY) or any(
                    d is not None and insert.low <= d <= insert.high for d in placed):
                continue
            start = int(ref.starts[a.record])
            length = reads[0].size
            if a.strand == 0:  # the mate is reverse, ending within [position + low, position + high]
                lo, hi = a.position + insert.low - length, a.position + insert.high - length
            else:  # the mate is forward, starting within [end - high, end - low]
                lo, hi = a.end - insert.high, a.end - insert.low
            strand = 1 - a.strand
            lo, hi = max(lo, 0), min(max(hi, lo), int(ref.lengths[a.record]))
            p = ext.place(reads[strand], strand, start + lo, start + hi, start + min(a.position, int(ref.lengths[a.record]) - 1))
            if p is not None and p.score >= o.min_score:
                found.append(p)
        return found
