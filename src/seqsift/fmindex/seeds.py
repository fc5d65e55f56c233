"""Exact seeds: pieces of reads looked up through the FM-index's exact search, turned into
candidate places (read, strand, record, diagonal) on the reference. Shared by approximate
search (approx.py) and the read mapper: seeding knows nothing of distances or output.

Pigeonhole (the GEM paper's filtering, after Baeza-Yates and Navarro): a read cut into E + 1
pieces that occurs with at most E mismatches or edits contains at least one piece exactly, at
its own offset in the read give or take the net indels before it (at most E). Every occurrence
of every piece is located, however repetitive the piece: the candidate lists are exhaustive,
and their size (the sum of the pieces' occurrence counts) is the worst case's cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.fmindex.query import Searcher

ALL = np.iinfo(np.int64).max  # Searcher.hits' max_hits: list every occurrence


def pigeonhole_bounds(bounds: np.ndarray, pieces: int) -> np.ndarray:
    """Bounds (into the same codes) of every read's `pieces` pieces, read by read: piece i of a
    read of m bases starts at i * m // pieces from the read's start. Reads tile the codes, so
    the pieces do too; a read shorter than `pieces` gets empty pieces."""
    lo = bounds[:-1, None]
    m = np.diff(bounds)[:, None]
    cuts = lo + (np.arange(pieces)[None, :] * m) // pieces
    return np.concatenate((cuts.ravel(), bounds[-1:])).astype(np.int64)


@dataclass
class Candidates:
    """Candidate places, sorted by read, strand, record, diagonal, without duplicates: the read
    (strand 1: its reverse complement) may start at text position `diagonal` of `record`."""

    read: np.ndarray
    strand: np.ndarray
    record: np.ndarray
    diagonal: np.ndarray


@dataclass
class PieceHits:
    """Located occurrences of pieces, piece by piece, in the order Searcher.hits lists them:
    occurrence i is of piece[i] on strand[i] at text position text_pos[i], which puts its read
    (strand 1: its reverse complement) at text position diagonal[i]. counts: every piece's
    occurrences, listed or not."""

    piece: np.ndarray
    strand: np.ndarray
    text_pos: np.ndarray
    diagonal: np.ndarray
    counts: np.ndarray


def piece_hits(searcher: Searcher, codes: np.ndarray, piece_bounds: np.ndarray, into_forward: np.ndarray,
               into_reverse: np.ndarray, max_hits: int = ALL, locate=None) -> PieceHits:
    """The first max_hits occurrences of each piece codes[piece_bounds[p]:piece_bounds[p+1]],
    both strands, with the diagonal of its read: piece p lies into_forward[p] bases into its read,
    and into_reverse[p] bases into the read's reverse complement (read length - offset - piece
    length). The one place seeds become read positions: approximate search and the read mapper
    (map/seeding.py) both call it; locate: Searcher.hits'."""
    found = searcher.hits(codes, piece_bounds, max_hits, locate=locate)
    piece = np.repeat(np.arange(piece_bounds.size - 1), np.diff(found.offsets))
    strand = found.strand.astype(np.int64)
    diagonal = found.text_pos - np.where(strand == 0, into_forward[piece], into_reverse[piece])
    return PieceHits(piece=piece, strand=strand, text_pos=found.text_pos, diagonal=diagonal, counts=found.counts)


def seed_candidates(searcher: Searcher, record_starts: np.ndarray, codes: np.ndarray, bounds: np.ndarray,
                    pieces: int) -> Candidates:
    """Every exact occurrence of every pigeonhole piece of every read, both strands, as
    candidate places of its read. A piece with a letter other than A, C, G, T occurs nowhere."""
    piece_bounds = pigeonhole_bounds(bounds, pieces)
    of_read = np.repeat(np.arange(bounds.size - 1), pieces)
    # forward: the piece lies (piece start - read start) into the read; reverse complement: the
    # complemented piece lies (read end - piece end) into the reversed read
    hits = piece_hits(searcher, codes, piece_bounds, piece_bounds[:-1] - bounds[of_read],
                      bounds[of_read + 1] - piece_bounds[1:])
    read, strand, diagonal = hits.piece // pieces, hits.strand, hits.diagonal
    record = np.searchsorted(record_starts, hits.text_pos, "right") - 1
    order = np.lexsort((diagonal, record, strand, read))
    read, strand, record, diagonal = read[order], strand[order], record[order], diagonal[order]
    if read.size:
        new = np.ones(read.size, bool)
        new[1:] = (read[1:] != read[:-1]) | (strand[1:] != strand[:-1]) | (record[1:] != record[:-1]) \
            | (diagonal[1:] != diagonal[:-1])
        read, strand, record, diagonal = read[new], strand[new], record[new], diagonal[new]
    return Candidates(read=np.ascontiguousarray(read), strand=np.ascontiguousarray(strand),
                      record=np.ascontiguousarray(record), diagonal=np.ascontiguousarray(diagonal))
