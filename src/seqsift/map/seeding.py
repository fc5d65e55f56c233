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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.fmindex.query import Searcher
from seqsift.fmindex.seeds import piece_hits
from seqsift.map.scoring import MapOptions
from seqsift.precompiled import Kernel

_CHAIN_HITS = Kernel("seqsift.map._chains", "chain_hits", "int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64 "
                     "int64 int64 int64 int64[:] int64[:] int64[:] int64[:] int64[:] int64[:]", results=1)
_PIECE_CODES = Kernel("seqsift.map._chains", "piece_codes", "uint8[:] int64[:] int64[:] int64[:] int64[:] uint8[:]")
_PLAN_ROWS = Kernel("seqsift.map._chains", "plan_rows", "int64[:] int64[:] int64[:] uint8[:] int64[:] int64[:]",
                    results=1)
_PREDICT_ROWS = Kernel("seqsift.map._chains", "predict_rows", "uint8[:] int64[:] int64[:] int64[:] int8[:] uint8[:] "
                       "int64[:] int64[:] int64[:] int64[:]", results=1)


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


def find_chains(searcher: Searcher, codes: np.ndarray, bounds: np.ndarray, options: MapOptions,
                ref: np.ndarray | None = None) -> Chains:
    """Chains of every read of a batch (codes 0-3, 255 for other letters; pieces holding one
    match nowhere): the hits of its pieces chained by the compiled _chains.chain_hits. ref: the
    reference's codes (extend.reference_codes), which let most hits be found without LF walks
    (NeighbourLocate); the same hits without."""
    read, offset, length = pieces(bounds, options.seed_length, options.seed_step)
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
    return Chains(offsets=offsets, strand=strand[:total], diag_lo=diag_lo[:total], diag_hi=diag_hi[:total],
                  anchor=anchor[:total], weight=weight[:total])
