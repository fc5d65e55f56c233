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
    match nowhere)."""
    read, offset, length = pieces(bounds, options.seed_length, options.seed_step)
    piece_bounds = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
    flat = np.repeat(bounds[read] + offset - piece_bounds[:-1], length) + np.arange(int(piece_bounds[-1]))
    hits = piece_hits(searcher, np.ascontiguousarray(codes[flat]), piece_bounds, offset,
                      np.diff(bounds)[read] - offset - length, options.max_occurrences)
    keep = hits.counts[hits.piece] <= options.max_occurrences  # a repeat's seeds place nothing
    piece, text_pos, strand, diag = hits.piece[keep], hits.text_pos[keep], hits.strand[keep], hits.diagonal[keep]
    r = read[piece]
    order = np.lexsort((diag, strand, r))
    r, strand, diag, text_pos, piece = r[order], strand[order], diag[order], text_pos[order], piece[order]
    other = np.ones(r.size, bool)
    other[1:] = (r[1:] != r[:-1]) | (strand[1:] != strand[:-1])
    step = np.zeros(r.size, np.int64)
    step[1:] = diag[1:] - diag[:-1]
    near = other | (step > options.band)  # seeds a band apart or more, or of another read or strand
    new = other | (step > options.chain_gap)
    # A chain holding one piece twice is a tandem repeat (the piece matches every copy), not an
    # indel: it is cut wherever its diagonals jump by more than the band, so each copy is its own
    # chain and competes for the read (MAPQ 0 between equal copies, as bwa mem gives).
    coarse = np.cumsum(new) - 1
    stride = max(read.size, 1)
    hits_of = np.bincount(coarse, minlength=int(coarse[-1]) + 1 if coarse.size else 0)
    pieces_of = np.bincount(np.unique(coarse * stride + piece) // stride, minlength=hits_of.size)
    new |= near & (hits_of > pieces_of)[coarse]
    chain = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], r.size)[: starts.size] - 1  # no seeds at all: no chains
    weight = np.bincount(np.unique(chain * stride + piece) // stride, minlength=starts.size)
    chain_read = r[starts]
    ranked = np.lexsort((-weight, chain_read))
    offsets = np.searchsorted(chain_read[ranked], np.arange(bounds.size), "left").astype(np.int64)
    return Chains(offsets=offsets, strand=strand[starts][ranked], diag_lo=diag[starts][ranked],
                  diag_hi=diag[ends][ranked], anchor=text_pos[starts][ranked], weight=weight[ranked])
