"""Seeds and chains: each read's fixed-length pieces looked up exactly in the FM-index (both
strands at once, the whole batch in one search: fmindex.seeds.piece_hits, as approximate search
seeds), then grouped by diagonal.

A seed on the forward strand at text position p from read offset o lies on diagonal p - o:
where the read's first base would sit. A reverse-strand hit (the piece's reverse complement
at p) is placed on the reverse-complemented read, where the piece starts at L - o - k, so its
diagonal is p - (L - o - k). Seeds of one read and strand whose sorted diagonals step by at
most `chain_gap` form a chain (an indel shifts the diagonal by its length, so a read with an
indel of up to that many bases between two seeds is one chain, aligned in one piece), unless the
chain holds a piece twice (a tandem repeat: it is cut where its diagonals jump by more than
`band`); a chain's weight is how many distinct pieces it holds.

Quick pieces first (Quick): most reads differ from their origin in a base or two, and a few
non-overlapping pieces place them as well as all of them would. Each read is first searched by
at most `quick_pieces` pieces of seed_length bases, at least seed_length apart, spread from its
first base to its last; a read is settled by them (its one chain is what is extended) when they
prove that the read laid without gaps on their one diagonal is its best alignment anywhere, by
a margin that gives MAPQ 60 whatever scores elsewhere. The other reads are seeded again with
every piece, as without the quick search.

Why it holds. Call an alignment's loss (read length * match) minus its score with clip
penalties. Every piece an alignment breaks (a piece that does not lie exactly on the reference
in it) costs it at least `unit` of loss (loss_per_piece): a mismatch breaks one piece for match +
mismatch, a deletion between two read bases one for gap_open + gap_extend, an insertion of g
read bases at most ceil((g + seed_length - 1) / seed_length) pieces for gap_open + g *
(gap_extend + match), a clip of g bases at most ceil(g / seed_length) for clip + g * match
(pieces at least seed_length apart, inside the read); bases against a reference N break a few
pieces for less (Quick says how many). So an alignment with a loss below `least` (unit * n for n
pieces, less that allowance) holds one of the pieces exactly, whose occurrence the search listed
(every piece occurring at most max_occurrences times is located). When all those occurrences
lie on one diagonal D of one strand, every alignment with a loss below `least` shares a piece
with D. When the read laid on D has a loss0 below that and below gapless_budget, every
alignment as good holds at most one gap, of a few bases, so lies on diagonals D +- band, where
the extension's own rules prove the gapless one the best (few differences, or gapless_is_best).
Every other alignment has a loss of `least` or more: where a second-best scoring length * match
- least still leaves MAPQ 60 (Quick.confident), a search with every piece reports the same
primary with the same MAPQ. It may report that weaker alignment's score as XS (and XA) where
the quick search reports none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.fmindex.query import Searcher
from seqsift.fmindex.reference import Reference
from seqsift.fmindex.seeds import piece_hits
from seqsift.map.extend import kernel_params
from seqsift.map.scoring import MapOptions, mapq
from seqsift.precompiled import Kernel

_CHAIN_HITS = Kernel("seqsift.map._chains", "chain_hits", "int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64 "
                     "int64 int64 int64 int64[:] int64[:] int64[:] int64[:] int64[:] int64[:]", results=1)
_PIECE_CODES = Kernel("seqsift.map._chains", "piece_codes", "uint8[:] int64[:] int64[:] int64[:] int64[:] uint8[:]")
_PLAN_ROWS = Kernel("seqsift.map._chains", "plan_rows", "int64[:] int64[:] int64[:] uint8[:] int64[:] int64[:]",
                    results=1)
_PREDICT_ROWS = Kernel("seqsift.map._chains", "predict_rows", "uint8[:] int64[:] int64[:] int64[:] int8[:] uint8[:] "
                       "int64[:] int64[:] int64[:] int64[:]", results=1)
_SETTLED_READS = Kernel("seqsift.map._chains", "settled_reads", "uint8[:] int64[:] int64[:] int64[:] int64 int64[:] "
                        "int64[:] int64[:] int64[:] int64[:] int8[:] int64[:] int64[:] int64[:] uint8[:,:] uint8[:] "
                        "int64[:]", results=1)
LOSSES = 64  # columns of Quick.confident: losses past gapless_budget are never settled


@dataclass(frozen=True)
class Chains:
    """Chains of a batch, grouped by read and strongest first: read r's are
    [offsets[r], offsets[r + 1]). diag_lo/diag_hi: the extreme diagonals (text positions);
    anchor: the text position of one of its seeds (it names the record); weight: pieces."""

    offsets: np.ndarray
    strand: np.ndarray
    diag_lo: np.ndarray
    diag_hi: np.ndarray
    anchor: np.ndarray
    weight: np.ndarray
    settled: np.ndarray | None = None  # per read, 1 where the quick pieces placed it (Quick)
    gapless: np.ndarray | None = None  # per read, a settled read's score on its one diagonal


def pieces(bounds: np.ndarray, k: int, step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(read, offset, length) of every piece: offsets 0, step, 2 step, ... and the last k bases;
    a read shorter than k is one piece."""
    lengths = np.diff(bounds)
    count = np.where(lengths > k, (lengths - k + step - 1) // step + 1, 1)
    read = np.repeat(np.arange(lengths.size), count)
    first = np.concatenate(([0], np.cumsum(count)[:-1]))
    rank = np.arange(read.size) - first[read]
    length = np.minimum(lengths[read], k)
    offset = np.minimum(rank * step, lengths[read] - length)
    return read, offset, length


class NeighbourLocate:
    """Searcher.hits' locate for a batch's pieces: a piece that occurs once on a strand where an
    earlier piece of its read occurs once too is looked for on that piece's diagonal, its bases
    compared with the text there (ref: reference codes, 4 at gaps); only the first of them, the
    pieces that occur more often and those not found there (past an indel) walk the LF steps to
    a sampled row (~16 a row). Most reads lie on one diagonal, so one walk a read and strand
    replaces ~15; the positions are the same (a query with one row occurs nowhere else)."""

    def __init__(self, searcher: Searcher, ref: np.ndarray, codes, piece_bounds, piece_read, into_forward, into_reverse):
        self.searcher, self.ref, self.codes, self.piece_bounds = searcher, ref, codes, piece_bounds
        self.piece_read, self.into_forward, self.into_reverse = piece_read, into_forward, into_reverse

    def __call__(self, rows: np.ndarray, starts: np.ndarray, left: np.ndarray) -> np.ndarray:
        queries = starts.size - 1
        plan, anchor_of, listed = np.empty(queries, np.uint8), np.empty(queries, np.int64), np.empty(rows.size, np.int64)
        located = np.empty(rows.size, np.int64)
        walk = listed[: _PLAN_ROWS(self.piece_read, starts, left, plan, anchor_of, listed)]
        located[walk] = self.searcher.locate(rows[walk])
        missed = listed[: _PREDICT_ROWS(plan, anchor_of, starts, located, self.ref, self.codes, self.piece_bounds,
                                        self.into_forward, self.into_reverse, listed)]
        if missed.size:
            located[missed] = self.searcher.locate(rows[missed])
        return located


def quick_pieces(bounds: np.ndarray, k: int, most: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(read, offset, length, first) of the quick pieces: min(most, length // k) pieces of k
    bases per read, spread evenly from its first base to its last (so at least k apart); read
    r's are [first[r], first[r + 1])."""
    lengths = np.diff(bounds)
    count = np.minimum(most, lengths // k)
    read = np.repeat(np.arange(lengths.size), count)
    first = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
    rank = np.arange(read.size) - first[read]
    offset = rank * (lengths[read] - k) // np.maximum(count[read] - 1, 1)
    return read, offset, np.full(read.size, k, np.int64), first


def loss_per_piece(options: MapOptions) -> float:
    """The least loss an alignment pays for each quick piece it breaks other than by a base
    against a reference N (the module's proof): pieces of seed_length bases at least
    seed_length apart."""
    o, k = options, options.seed_length
    units = [o.match + o.mismatch, o.gap_open + o.gap_extend]
    longest = 4 * k
    for g in range(1, longest + 1):
        met = -(-(g + k - 1) // k)  # most pieces a run of g read bases meets
        units += [(o.gap_open + g * (o.gap_extend + o.match)) / met, (o.clip + g * o.match) / -(-g // k)]  # at an end
    # past `longest` bases, a run meets at most (g + 2k - 1) / k pieces: the ratio is at least
    # the smaller of its value at `longest` and its limit
    units += [k * (o.gap_open + longest * (o.gap_extend + o.match)) / (longest + 2 * k - 1), k * (o.gap_extend + o.match),
              k * (o.clip + longest * o.match) / (longest + k), k * o.match]
    return min(units)


def n_runs(ref_codes: np.ndarray, reference: Reference) -> tuple[np.ndarray, np.ndarray]:
    """[start, end) of every run of reference N (other letters inside records)."""
    at = np.flatnonzero(ref_codes == 4)
    record = np.searchsorted(reference.starts, at, "right") - 1
    at = at[at - reference.starts[record] < reference.lengths[record]]
    first, last = np.ones(at.size, bool), np.ones(at.size, bool)
    first[1:] = last[:-1] = at[1:] != at[:-1] + 1
    return at[first].astype(np.int64), (at[last] + 1).astype(np.int64)


class Quick:
    """The quick search's settings on one reference (the module's proof): its records, the
    extension's parameters and which (read length, loss) a settled read may have.

    Reference N: a read base against one costs only match + ambiguous and breaks a piece. The
    read bases an alignment lays on one run of N are one stretch (or more, split by deletions
    that pay for the pieces they add), and a stretch of h bases meets at most ceil((h +
    seed_length - 1) / seed_length) pieces for 2 h: at most two of them cheaply, the others for
    seed_length * (match + ambiguous) or more each. So an alignment of a read of m bases breaks at
    most twice as many pieces cheaply as the runs of N that meet the most of any m + u * n
    reference bases (its span, deletions included, when its loss is below u * n)."""

    def __init__(self, reference: Reference, ref_codes: np.ndarray, options: MapOptions):
        self.options, self.unit = options, loss_per_piece(options)
        self.run_starts, self.run_ends = n_runs(ref_codes, reference)
        self.starts, self.lengths = reference.starts.astype(np.int64), reference.lengths.astype(np.int64)
        self.params = kernel_params(options)
        self._rows: dict[int, np.ndarray] = {}

    def runs_meeting(self, span: int) -> int:
        """The most runs of reference N that any `span` reference bases meet."""
        last = np.searchsorted(self.run_starts, self.run_ends - 1 + span, "left")
        return int((last - np.arange(self.run_starts.size)).max(initial=0))

    def confident(self, longest: int, lengths: np.ndarray) -> np.ndarray:
        """uint8 (longest + 1, LOSSES): 1 where a read of that length with that loss may be
        settled (only the rows of `lengths` filled)."""
        table = np.zeros((longest + 1, LOSSES), np.uint8)
        # the lengths present, by bincount: np.unique imports numpy.ma on first use (8 ms of a
        # 0.7 s run on 50,000 reads)
        for m in np.flatnonzero(np.bincount(lengths, minlength=longest + 1)).tolist():
            row = self._rows.get(m)
            if row is None:
                o = self.options
                n = min(o.quick_pieces, m // o.seed_length)
                runs = self.runs_meeting(m + int(self.unit * n) // max(o.gap_extend, 1) + 1)
                cheap = 0 if o.match + o.ambiguous >= self.unit else (
                    min(n, 2 * runs) if o.seed_length * (o.match + o.ambiguous) >= self.unit else n)
                row = self._rows[m] = _confident_row(o, self.unit * (n - cheap) + (o.match + o.ambiguous) * cheap, m)
            table[m] = row
        return table


def _confident_row(o: MapOptions, least: float, m: int) -> np.ndarray:
    """Per loss: below `least` (the least loss of an alignment breaking every quick piece of a
    read of m bases), and MAPQ 60 both with no other alignment and with one scoring m * match
    less `least` (the best any other may)."""
    row = np.zeros(LOSSES, np.uint8)
    elsewhere = int(np.floor(m * o.match - least))
    for loss in range(LOSSES):
        score = m * o.match - loss
        row[loss] = loss < least and mapq(o, score, 0, 0, m, m) == 60 and mapq(o, score, max(elsewhere, 0), 0, m, m) == 60
    return row


def _chains_of(searcher: Searcher, codes: np.ndarray, bounds: np.ndarray, options: MapOptions, ref, read, offset,
               length) -> tuple[Chains, np.ndarray]:
    """The chains of a batch's pieces (read, offset, length), and each piece's occurrences."""
    piece_bounds = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
    flat = np.empty(int(piece_bounds[-1]), np.uint8)
    _PIECE_CODES(codes, bounds, read, offset, piece_bounds, flat)
    into_reverse = np.diff(bounds)[read] - offset - length
    locate = None if ref is None else NeighbourLocate(searcher, ref, flat, piece_bounds, read, offset, into_reverse)
    hits = piece_hits(searcher, flat, piece_bounds, offset, into_reverse, options.max_occurrences, locate)
    reads = bounds.size - 1
    room = max(hits.piece.size, 1)
    offsets = np.empty(reads + 1, np.int64)
    strand, diag_lo, diag_hi, anchor, weight = (np.empty(room, np.int64) for _ in range(5))
    total = _CHAIN_HITS(read, hits.piece, hits.strand, hits.text_pos, hits.diagonal, hits.counts,
                        options.max_occurrences, options.band, options.chain_gap, reads, offsets, strand, diag_lo,
                        diag_hi, anchor, weight)
    chains = Chains(offsets=offsets, strand=strand[:total], diag_lo=diag_lo[:total], diag_hi=diag_hi[:total],
                    anchor=anchor[:total], weight=weight[:total])
    return chains, hits.counts


def find_chains(searcher: Searcher, codes: np.ndarray, bounds: np.ndarray, options: MapOptions,
                ref: np.ndarray | None = None, quick: Quick | None = None) -> Chains:
    """Chains of every read of a batch (codes 0-3, 255 for other letters; pieces holding one
    match nowhere): the hits of its pieces chained by the compiled _chains.chain_hits. ref: the
    reference's codes (extend.reference_codes), which let most hits be found without LF walks
    (NeighbourLocate); the same hits without. quick (with ref, and options.quick_pieces): the
    quick pieces first, every piece only for the reads they do not settle."""
    if quick is None or ref is None or options.quick_pieces == 0:
        return _chains_of(searcher, codes, bounds, options, ref, *pieces(bounds, options.seed_length,
                                                                         options.seed_step))[0]
    read, offset, length, first = quick_pieces(bounds, options.seed_length, options.quick_pieces)
    fast, counts = _chains_of(searcher, codes, bounds, options, ref, read, offset, length)
    reads = bounds.size - 1
    lengths = np.diff(bounds)
    longest = int(lengths.max(initial=0))
    settled, gapless = np.empty(reads, np.uint8), np.empty(reads, np.int64)
    done = _SETTLED_READS(codes, bounds, first, counts, options.max_occurrences, fast.offsets, fast.strand, fast.diag_lo,
                          fast.diag_hi, fast.anchor, ref, quick.starts, quick.lengths, quick.params,
                          quick.confident(longest, lengths), settled, gapless)
    if done == reads:
        return Chains(**{**fast.__dict__, "settled": settled, "gapless": gapless})
    rest = np.flatnonzero(settled == 0)
    rest_bounds = np.concatenate(([0], np.cumsum(lengths[rest]))).astype(np.int64)
    rest_codes = codes[np.repeat(settled == 0, lengths)]
    slow = _chains_of(searcher, rest_codes, rest_bounds, options, ref,
                      *pieces(rest_bounds, options.seed_length, options.seed_step))[0]
    return merged(fast, slow, settled, rest, gapless)


def merged(fast: Chains, slow: Chains, settled: np.ndarray, rest: np.ndarray, gapless: np.ndarray) -> Chains:
    """One batch's chains: the settled reads' one chain each from fast (the quick search), the
    others' (rest, in read order) from slow (every piece, those reads alone); gapless: the
    settled reads' scores, per read."""
    count = settled.astype(np.int64)
    count[rest] = np.diff(slow.offsets)
    offsets = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
    keep = settled == 1
    take_fast, put_fast = fast.offsets[:-1][keep], offsets[:-1][keep]
    put_slow = np.repeat(offsets[:-1][rest] - slow.offsets[:-1], np.diff(slow.offsets)) + np.arange(slow.offsets[-1])
    fields = {}
    for name in ("strand", "diag_lo", "diag_hi", "anchor", "weight"):
        out = np.empty(int(offsets[-1]), np.int64)
        out[put_fast] = getattr(fast, name)[take_fast]
        out[put_slow] = getattr(slow, name)
        fields[name] = out
    return Chains(offsets=offsets, settled=settled, gapless=gapless, **fields)
