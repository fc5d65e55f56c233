"""The seeding kernels (seeding.py calls them precompiled): a batch's pieces copied out of its
reads for the FM-index search, its seed hits, grouped by read as the FM-index lists them, to
each read's chains, strongest first, and which reads their first few seeds already place. The
rules are seeding.py's."""

import numpy as np
from numba import njit

from seqsift.map._extend import gapless_is_best, ungapped
from seqsift.map.layout import P_AMBIGUOUS, P_BAND, P_CLIP, P_EXTEND, P_MATCH, P_MISMATCH, P_OPEN, P_UNGAPPED


@njit(nogil=True, cache=True, boundscheck=False)
def piece_codes(codes, bounds, piece_read, offset, piece_bounds, out):
    """Piece p's codes, codes[bounds[piece_read[p]] + offset[p]:][:its length], copied to
    out[piece_bounds[p]:piece_bounds[p + 1]]: the search takes its queries end to end, and
    overlapping pieces cannot be views of the reads. One pass without the index arrays numpy's
    gather would build (8 bytes a base)."""
    for p in range(piece_read.size):
        start = bounds[piece_read[p]] + offset[p]
        lo = piece_bounds[p]
        out[lo : piece_bounds[p + 1]] = codes[start : start + piece_bounds[p + 1] - lo]


@njit(nogil=True, cache=True)
def chain_hits(piece_read, piece, strand, text_pos, diag, counts, max_occurrences, band, chain_gap, reads,
               offsets, chain_strand, diag_lo, diag_hi, anchor, weight):
    """Hits i (of piece[i], listed piece by piece, pieces read by read) of pieces occurring at
    most max_occurrences times, per read sorted by (strand, diagonal) keeping the listed order
    among equals, cut into chains where the diagonal steps by more than chain_gap, or by more than
    band inside a chain that holds one piece twice; chains ranked by weight (distinct pieces),
    ties in (strand, diagonal) order. Writes read r's chains at [offsets[r], offsets[r + 1]) of
    the output arrays (room: one per hit); returns the number of chains."""
    hits = piece.size
    order = np.empty(hits, np.int64)
    seen = np.full(counts.size, -1, np.int64)
    cut = np.empty(hits, np.bool_)
    first_of = np.empty(hits, np.int64)
    last_of = np.empty(hits, np.int64)
    weight_of = np.empty(hits, np.int64)
    rank = np.empty(hits, np.int64)
    stamp = 0
    total = 0
    i = 0
    for r in range(reads):
        offsets[r] = total
        # this read's kept hits, insertion-sorted by (strand, diagonal): stable
        m = 0
        while i < hits and piece_read[piece[i]] == r:
            if counts[piece[i]] <= max_occurrences:
                at = m
                while at > 0 and (strand[order[at - 1]] > strand[i]
                                  or (strand[order[at - 1]] == strand[i] and diag[order[at - 1]] > diag[i])):
                    order[at] = order[at - 1]
                    at -= 1
                order[at] = i
                m += 1
            i += 1
        if m == 0:
            continue
        # coarse chains (steps above chain_gap), each cut at steps above band if it holds a piece twice
        start = 0
        chains = 0
        while start < m:
            end = start + 1
            while end < m and strand[order[end]] == strand[order[end - 1]] \
                    and diag[order[end]] - diag[order[end - 1]] <= chain_gap:
                end += 1
            stamp += 1
            distinct = 0
            for k in range(start, end):
                if seen[piece[order[k]]] != stamp:
                    seen[piece[order[k]]] = stamp
                    distinct += 1
            tandem = distinct < end - start
            for k in range(start, end):
                cut[k] = k == start or (tandem and diag[order[k]] - diag[order[k - 1]] > band)
            for k in range(start, end):
                if cut[k]:
                    first_of[chains] = k
                    chains += 1
                last_of[chains - 1] = k
            start = end
        for c in range(chains):
            stamp += 1
            distinct = 0
            for k in range(first_of[c], last_of[c] + 1):
                if seen[piece[order[k]]] != stamp:
                    seen[piece[order[k]]] = stamp
                    distinct += 1
            weight_of[c] = distinct
            at = c  # insertion sort by weight, heaviest first: stable
            while at > 0 and weight_of[rank[at - 1]] < distinct:
                rank[at] = rank[at - 1]
                at -= 1
            rank[at] = c
        for k in range(chains):
            c = rank[k]
            h0, h1 = order[first_of[c]], order[last_of[c]]
            chain_strand[total] = strand[h0]
            diag_lo[total] = diag[h0]
            diag_hi[total] = diag[h1]
            anchor[total] = text_pos[h0]
            weight[total] = weight_of[c]
            total += 1
    offsets[reads] = total
    return total


@njit(nogil=True, cache=True, boundscheck=False)
def plan_rows(piece_read, starts, left, plan, anchor_of, walk):
    """Which rows of a batch's seed search must be located (seeding.NeighbourLocate): query q
    = 2 p + strand of piece p has rows [starts[q], starts[q + 1]). plan[q] = 1 where q has one
    row and an earlier piece of its read has one on that strand too (anchor_of[q]: the first
    such query, located itself), else 0: its rows are listed in walk, their number returned.
    Queries whose search stopped early (left[q] > 0: their rows stand for a suffix) take no
    part."""
    read = -1
    anchor = np.full(2, -1, np.int64)
    listed = 0
    for p in range(piece_read.size):
        if piece_read[p] != read:
            read = piece_read[p]
            anchor[0] = anchor[1] = -1
        for s in range(2):
            q = 2 * p + s
            plan[q] = 0
            if starts[q + 1] - starts[q] == 1 and left[q] == 0:
                if anchor[s] < 0:
                    anchor[s] = q
                else:
                    plan[q] = 1
                    anchor_of[q] = anchor[s]
                    continue
            for i in range(starts[q], starts[q + 1]):
                walk[listed] = i
                listed += 1
    return listed


@njit(nogil=True, cache=True, boundscheck=False)
def predict_rows(plan, anchor_of, starts, located, ref, codes, piece_bounds, into_forward, into_reverse, missed):
    """For each query q with plan[q] = 1 (plan_rows), its one occurrence where its anchor's
    diagonal puts it (the anchor's text position, less the anchor piece's offset into its read
    or into the reverse complement, plus q's own), if the text (ref: codes 0-3, 4 at gaps and
    record ends) there is q's query (piece p's codes; strand 1 their reverse complement): into
    located[starts[q]]; else its row is listed in missed. Returns how many are. A query that
    occurs once occurs there if anywhere, so the position is the one its row's LF walk would
    reach."""
    n = ref.size
    listed = 0
    for q in range(plan.size):
        if plan[q] != 1:
            continue
        a = anchor_of[q]
        p, pa, s = q >> 1, a >> 1, q & 1
        into = into_forward if s == 0 else into_reverse
        at = located[starts[a]] - into[pa] + into[p]
        lo, hi = piece_bounds[p], piece_bounds[p + 1]
        same = 0 <= at and at + hi - lo <= n
        for i in range(hi - lo if same else 0):
            b = np.int64(codes[lo + i]) if s == 0 else 3 - np.int64(codes[hi - 1 - i])
            if ref[at + i] != b:
                same = False
                break
        if same:
            located[starts[q]] = at
        else:
            missed[listed] = starts[q]
            listed += 1
    return listed


@njit(nogil=True, cache=True, boundscheck=False)
def settled_reads(codes, bounds, piece_first, counts, max_occurrences, offsets, strand, diag_lo, diag_hi, anchor, ref,
                  rec_starts, rec_lengths, params, confident, settled, gapless):
    """Which reads the few non-overlapping pieces of the quick search already place
    (seeding.find_chains; the proof is there): settled[r] = 1 where read r (codes 0-3, 255 for
    other letters; its pieces [piece_first[r], piece_first[r + 1]) of the quick search, each
    occurring counts[p] times) has no other letter, every piece occurs at most max_occurrences
    times (all located), its hits make one chain on one diagonal, the read lies there inside the
    record without gaps with a loss (length * match - score) that confident[length, loss] allows
    (below the least loss of an alignment that breaks every piece, and MAPQ 60 whatever scores
    elsewhere: seeding.Quick.confident), and it is the best over the band around it: it differs
    in at most params[P_UNGAPPED] bases (MapOptions.ungapped_limit) and has two pieces or more,
    or gapless_is_best proves it; gapless[r] gets a settled read's score there (what
    place_chain would find: _extend.settled_chain lays it without the reference). Returns how
    many reads are settled."""
    match, mismatch, ambiguous = params[P_MATCH], params[P_MISMATCH], params[P_AMBIGUOUS]
    band = params[P_BAND]
    longest = 0
    for r in range(bounds.size - 1):
        longest = max(longest, bounds[r + 1] - bounds[r])
    q = np.empty(longest, np.int8)
    total = 0
    for r in range(bounds.size - 1):
        settled[r] = 0
        c = offsets[r]
        if offsets[r + 1] - c != 1 or diag_lo[c] != diag_hi[c]:
            continue
        lo, hi = bounds[r], bounds[r + 1]
        m = hi - lo
        if m >= confident.shape[0]:
            continue
        located = True
        for p in range(piece_first[r], piece_first[r + 1]):
            located = located and counts[p] <= max_occurrences
        plain = True
        for i in range(m):
            b = codes[lo + i] if strand[c] == 0 else codes[hi - 1 - i]
            plain = plain and b <= 3
            q[i] = b if strand[c] == 0 else 3 - b
        if not (located and plain):
            continue
        record = np.searchsorted(rec_starts, anchor[c], "right") - 1
        rec_start = rec_starts[record]
        rec_end = rec_start + rec_lengths[record]
        d = diag_lo[c]
        w_lo, w_hi = max(rec_start, d - band), min(rec_end, d + m + band)
        if d < w_lo or d + m > w_hi:
            continue
        read, window = q[:m], ref[w_lo:w_hi]
        score, differ = ungapped(read, window, d - w_lo, match, mismatch, ambiguous)
        loss = m * match - score
        if loss >= confident.shape[1] or not confident[m, loss]:
            continue
        # as place_chain: few enough differences prove it (with two pieces or more, another diagonal
        # as good would have put a piece there too), else gapless_is_best must
        if (differ <= params[P_UNGAPPED] and piece_first[r + 1] - piece_first[r] >= 2) or gapless_is_best(
                read, window, d - w_lo, d - w_lo - band, d - w_lo + band, score, match, mismatch, params[P_OPEN],
                params[P_EXTEND], params[P_CLIP]):
            settled[r] = 1
            gapless[r] = score
            total += 1
    return total
