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


def find_chains(searcher: Searcher, codes: np.ndarray, bounds: np.ndarray, options: MapOptions) -> Chains:
    """Chains of every read of a batch (codes 0-3, 255 for other letters; pieces holding one
    match nowhere): the hits of its pieces chained by the compiled _chains.chain_hits."""
    read, offset, length = pieces(bounds, options.seed_length, options.seed_step)
    piece_bounds = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
    flat = np.empty(int(piece_bounds[-1]), np.uint8)
    _PIECE_CODES(codes, bounds, read, offset, piece_bounds, flat)
    hits = piece_hits(searcher, flat, piece_bounds, offset,
                      np.diff(bounds)[read] - offset - length, options.max_occurrences)
    reads = bounds.size - 1
    room = max(hits.piece.size, 1)
    offsets = np.empty(reads + 1, np.int64)
    strand, diag_lo, diag_hi, anchor, weight = (np.empty(room, np.int64) for _ in range(5))
    total = _CHAIN_HITS(read, hits.piece, hits.strand, hits.text_pos, hits.diagonal, hits.counts,
                        options.max_occurrences, options.band, options.chain_gap, reads, offsets, strand, diag_lo,
                        diag_hi, anchor, weight)
    return Chains(offsets=offsets, strand=strand[:total], diag_lo=diag_lo[:total], diag_hi=diag_hi[:total],
                  anchor=anchor[:total], weight=weight[:total])
