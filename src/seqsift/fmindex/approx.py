"""Approximate search: every place a read occurs with at most E mismatches (hamming) or edits
(edit), on both strands (docs/formats.md, "Approximate hits", defines a place).

Pigeonhole seeds through the exact search (seeds.py), then every candidate verified (verify.py:
direct comparison, or Myers' bit-parallel edit distance over the merged start windows), then
the places ordered for output. E = 0 never comes here: it is the exact search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.errors import UsageError
from seqsift.fmindex.query import Searcher
from seqsift.fmindex.seeds import seed_candidates
from seqsift.fmindex.verify import Reach, check_errors, verify


@dataclass
class ApproxHits:
    """Per read: count (places within E, both strands), best (how many of them have the read's
    fewest differences) and its listed places, sorted by differences, then text position (record
    order, position), then strand: read i's are [offsets[i], offsets[i + 1]). Searched with seeds
    (ApproxSearcher.hits), a read's first listed place is the one its seed picked among all its
    best places, listed or not, and the others follow in that order."""

    counts: np.ndarray
    offsets: np.ndarray
    text_pos: np.ndarray
    strand: np.ndarray
    differences: np.ndarray
    best: np.ndarray


class ApproxSearcher:
    """Approximate search over one exact Searcher; safe to call from several threads at once."""

    def __init__(self, searcher: Searcher, record_starts: np.ndarray, record_lengths: np.ndarray):
        self.searcher = searcher
        self.record_starts = np.ascontiguousarray(record_starts, np.int64)
        self.reach = Reach.of(searcher.a, record_starts, record_lengths)

    def hits(self, codes: np.ndarray, bounds: np.ndarray, errors: int, distance: str, max_hits: int,
             best_only: bool = False, names=None, seeds: np.ndarray | None = None) -> ApproxHits:
        """Every place of every read within `errors`; the first max_hits of each listed (with
        best_only, only those with the read's fewest differences). names(i): read i's name for
        errors (its number otherwise). seeds (uint64, one a read; output.primary_seeds): list
        first the place that the read's seed modulo its count of best places picks among all of
        them (SAM's primary: uniform over every place with the fewest differences, listed or
        not, as Searcher.hits picks among exact sites), then the first max_hits - 1 others.
        Every place is verified before any is listed, so the pick needs no further search."""
        check_errors(errors, distance)
        if errors == 0:
            raise UsageError("errors 0 is the exact search: use Searcher.hits")
        lengths = np.diff(bounds)
        short = np.flatnonzero(lengths <= errors)
        if short.size:
            i = int(short[0])
            label = names(i) if names else f"number {i + 1}"
            raise UsageError(f"read {label} has {int(lengths[i])} bases: errors {errors} needs reads longer than that")
        candidates = seed_candidates(self.searcher, self.record_starts, codes, bounds, errors + 1)
        places = verify(self.reach, codes, bounds, candidates, errors, distance)
        order = np.lexsort((places.strand, places.text_pos, places.differences, places.read))
        read, text_pos = places.read[order], places.text_pos[order]
        strand, diff = places.strand[order], places.differences[order]
        reads = lengths.size
        counts = np.bincount(read, minlength=reads).astype(np.int64)
        first = np.concatenate(([0], np.cumsum(counts)))[:-1]
        rank = np.arange(read.size) - first[read]  # each place's rank within its read
        fewest = diff == diff[first[read]]  # sorted by differences: a read's first place has its fewest
        best = np.bincount(read[fewest], minlength=reads).astype(np.int64)
        if seeds is not None and read.size:
            # the picked place (one of the read's first `best`) moves to rank 0, those before it one on
            pick = (seeds % np.maximum(best, 1).astype(np.uint64)).astype(np.int64)[read]
            rank = np.where(rank == pick, 0, rank + (rank < pick))
            order = np.empty(read.size, np.int64)
            order[first[read] + rank] = np.arange(read.size)
            read, text_pos, strand, diff, rank, fewest = (a[order] for a in (read, text_pos, strand, diff, rank, fewest))
        keep = rank < max_hits
        if best_only:
            keep &= fewest
        listed = np.bincount(read[keep], minlength=reads).astype(np.int64)
        offsets = np.concatenate(([0], np.cumsum(listed))).astype(np.int64)
        return ApproxHits(counts=counts, offsets=offsets, text_pos=text_pos[keep], strand=strand[keep],
                          differences=diff[keep], best=best)
