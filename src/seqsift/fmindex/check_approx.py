"""`seqsift check --errors E`: verify approximate search results against the reference itself.

Independent of the FM-index and of the search's verification kernels: each read (and its
reverse complement) is cut into E + 1 pieces, every exact occurrence of a piece is found
through windows.py's hashed reference windows, every start those allow (pigeonhole: a piece o
bases into the read at p allows p - o - E .. p - o + E) is scored by the textbook dynamic
program (edit) or a direct comparison (hamming), and places are formed as docs/formats.md
defines them. A result passes when its count is the number of places and its listed hits are
the first ones in the output order (differences, reference order, position, strand).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seqsift.errors import FormatError
from seqsift.fmindex.results import read_results
from seqsift.fmindex.windows import occurrences, windows
from seqsift.fmindex.reference import READ_CODE, load_reference
from seqsift.io.openers import display_name
from seqsift.io.reads import read_reads


@njit(cache=True)
def _start_distances(text, pattern, starts, ends, errors, edit, out):
    """out[i]: the distance of pattern (codes 0-3, other letters never match) aligned from
    text[starts[i]] within text[:ends[i]] (edit: the fewest edits over every end, by dynamic
    programming; hamming: mismatches of the gap-free window), errors + 1 when more."""
    m = pattern.size
    row = np.empty(m + errors + 2, np.int64)
    new = np.empty(m + errors + 2, np.int64)
    for k in range(starts.size):
        s, e = starts[k], ends[k]
        if not edit:
            d = errors + 1
            if s + m <= e:
                d = 0
                for i in range(m):
                    if pattern[i] > 3 or text[s + i] != pattern[i] + 2:
                        d += 1
            out[k] = min(d, errors + 1)
            continue
        n = min(m + errors, e - s)
        for j in range(n + 1):
            row[j] = j
        for i in range(1, m + 1):
            new[0] = i
            for j in range(1, n + 1):
                same = pattern[i - 1] <= 3 and text[s + j - 1] == pattern[i - 1] + 2
                new[j] = min(row[j - 1] + (0 if same else 1), row[j] + 1, new[j - 1] + 1)
            row[: n + 1] = new[: n + 1]
        out[k] = min(row[: n + 1].min(), errors + 1)


class _Pieces:
    """Exact occurrences of pieces by hashed windows, one window table per piece length."""

    def __init__(self, text, clean):
        self.text, self.clean, self.tables = text, clean, {}

    def occurrences(self, piece: np.ndarray) -> np.ndarray:
        if piece.size == 0 or piece.max() > 3:
            return np.empty(0, np.int64)
        if piece.size not in self.tables:
            self.tables[piece.size] = windows(self.text, self.clean, piece.size)
        starts, _ = occurrences(self.text, self.tables[piece.size], (piece + 2).astype(np.uint8)[None, :])
        return starts


def true_places(reference, pieces: _Pieces, read: np.ndarray, errors: int, distance: str):
    """Every place of the read (codes) within `errors`, sorted by differences, text position,
    strand: (text position, strand, differences)."""
    text = reference.text
    rec_ends = reference.starts + reference.lengths
    m = read.size
    places = []
    for strand in (0, 1):
        pattern = read if strand == 0 else np.where(read > 3, read, 3 - read)[::-1].astype(np.uint8)
        starts = set()
        for i in range(errors + 1):
            lo, hi = i * m // (errors + 1), (i + 1) * m // (errors + 1)
            for p in pieces.occurrences(pattern[lo:hi]).tolist():
                starts.update(range(p - lo - errors, p - lo + errors + 1))
        if not starts:
            continue
        s = np.array(sorted(starts), np.int64)
        record = np.searchsorted(reference.starts, s, "right") - 1
        inside = (record >= 0) & (s >= reference.starts[np.maximum(record, 0)]) & (s < rec_ends[np.maximum(record, 0)])
        s, record = s[inside], record[inside]
        d = np.empty(s.size, np.int64)
        _start_distances(text, np.ascontiguousarray(pattern), s, rec_ends[record], errors, distance == "edit", d)
        ok = d <= errors
        s, record, d = s[ok], record[ok], d[ok]
        if distance == "edit":  # starts within E of each other on one record: one place
            kept, k = [], 0
            while k < s.size:
                j = k + 1
                while j < s.size and record[j] == record[k] and s[j] - s[j - 1] <= errors:
                    j += 1
                best = k + int(np.argmin(d[k:j]))  # the first of the fewest: the leftmost
                kept.append(best)
                k = j
            s, d = s[kept], d[kept]
        places += [(int(a), strand, int(b)) for a, b in zip(s, d)]
    return sorted(places, key=lambda h: (h[2], h[0], h[1]))


def check(reference_path, results_path, reads_path, errors: int, distance: str) -> tuple[int, list[tuple[int, str]]]:
    """(results verified, (line, description) of each wrong result)."""
    reference = load_reference(reference_path)
    pieces = _Pieces(reference.text, np.concatenate(([0], np.cumsum(reference.text < 2))))
    results = read_results(results_path, differences=True)
    names = reference.names
    problems, index = [], 0
    for batch in read_reads(reads_path, code_table=READ_CODE):
        for i in range(len(batch)):
            if index >= len(results):
                raise FormatError(display_name(results_path), 0,
                                  f"ends before read {batch.name(i)!r} of {display_name(reads_path)}")
            line, rid, count, hits = results[index]
            if rid != batch.name(i):
                raise FormatError(display_name(results_path), line,
                                  f"read {rid!r} where {display_name(reads_path)} has {batch.name(i)!r}")
            index += 1
            read = batch.codes[batch.bounds[i] : batch.bounds[i + 1]]
            found = true_places(reference, pieces, read, errors, distance) if read.size > errors else []
            record, position = reference.to_record(np.array([p for p, _, _ in found], np.int64))
            want = [(names[r], int(p), "+-"[s], d) for r, p, (_, s, d) in zip(record.tolist(), position.tolist(), found)]
            problem = _compare(want, count, hits)
            if problem:
                problems.append((line, f"{display_name(results_path)}:{line}: read {rid}: {problem}"))
    if index < len(results):
        raise FormatError(display_name(results_path), results[index][0],
                          f"a result for read {results[index][1]!r}, which is not in {display_name(reads_path)}")
    return len(results), sorted(problems)


def _compare(want, count, hits) -> str:
    if count != len(want):
        return f"count {count}, the reference holds {len(want)} places within the errors"
    if len(hits) > count:
        return f"{len(hits)} hits listed for count {count}"
    if hits != want[: len(hits)]:
        bad = next(h for h, w in zip(hits, want) if h != w)
        return f"hit {':'.join(map(str, bad))} is not the next true place (by differences, then reference order)"
    return ""
