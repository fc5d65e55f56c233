"""`seqsift.align`: one query against one target, with the alignment itself (CIGAR, aligned
strings and a match line), by the reference kernel's checkpointed traceback."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.alignment import reference as ref
from seqsift.alignment.scoring import Scoring, dna, matrix
from seqsift.backend import check_threads, resolve_unmeasured
from seqsift.errors import UsageError
from seqsift.runner import split

ONE_PASS_BYTES = 64 << 20  # up to this many direction bytes, the forward pass keeps them all
LANES_DIRS_BYTES = 256 << 20  # the most direction bytes one batch of align_pairs lanes holds


@dataclass(frozen=True)
class Alignment:
    """Coordinates are 0-based, end exclusive: the query residues query[query_start:query_end]
    align to target[target_start:target_end]."""

    score: int
    query_start: int
    query_end: int
    target_start: int
    target_end: int
    cigar: str  # M aligned pair, I query residue against a gap, D target residue against a gap
    query_aligned: str
    target_aligned: str
    match_line: str  # '|' identical, '+' positive score, ' ' otherwise or a gap

    @property
    def length(self) -> int:
        return len(self.query_aligned)

    @property
    def identities(self) -> int:
        return self.match_line.count("|")

    @property
    def mismatches(self) -> int:
        return sum(1 for a, b in zip(self.query_aligned, self.target_aligned) if a != b and a != "-" and b != "-")

    @property
    def gap_opens(self) -> int:
        return sum(1 for op in _runs(self.cigar) if op[1] in "ID")

    def __str__(self) -> str:
        return f"{self.query_aligned}\n{self.match_line}\n{self.target_aligned}"


def _runs(cigar: str) -> list[tuple[int, str]]:
    out, number = [], ""
    for c in cigar:
        if c.isdigit():
            number += c
        else:
            out.append((int(number), c))
            number = ""
    return out


def mode_code(mode: str) -> int:
    if mode not in ref.MODES:
        raise UsageError(f"mode {mode!r} is not one of {', '.join(ref.MODES)}")
    return ref.MODES[mode]


def align_codes(q: np.ndarray, t: np.ndarray, scoring: Scoring, mode: str = "local") -> tuple[int, np.ndarray, int, int, int, int]:
    """(score, ops, query start, query end, target start, target end) of residue codes."""
    code = mode_code(mode)
    m, n = q.size, t.size
    one_pass = m * (n + 1) <= ONE_PASS_BYTES  # small enough to keep every direction: no recompute
    every = max(m, 1) if one_pass else ref.band_rows(m)
    checkpoints = np.empty((m // every + 1, 2, n + 1), np.int32)
    H, I = np.empty(n + 1, np.int32), np.empty(n + 1, np.int32)
    ref.first_rows(t, scoring.gap_open, scoring.gap_extend, code, H, I)
    checkpoints[0, 0], checkpoints[0, 1] = H, I
    best = np.zeros(3, np.int64)
    no_dirs = np.empty((0, n + 1), np.uint8)
    matrix = np.ascontiguousarray(scoring.matrix, np.int32)
    first_dirs = np.empty((m, n + 1), np.uint8) if one_pass else no_dirs
    ref.advance(q, t, matrix, scoring.gap_open, scoring.gap_extend, code, 0, m, H, I, first_dirs, checkpoints, every, best)
    score, i, j = (int(x) for x in best)
    if m == 0 or n == 0:  # nothing to align: the border value, an all-gap alignment
        score, i, j = _empty_score(m, n, scoring, code)
    end_i, end_j = i, j
    ops = np.empty(m + n, np.int8)
    count, state, finished = 0, 0, code == ref.LOCAL and score == 0
    scratch = np.zeros(3, np.int64)
    while not finished and i > 0:
        start = ((i - 1) // every) * every
        if one_pass:
            dirs = first_dirs
        else:
            H[:], I[:] = checkpoints[start // every, 0], checkpoints[start // every, 1]
            dirs = np.empty((i - start, n + 1), np.uint8)
            ref.advance(q, t, matrix, scoring.gap_open, scoring.gap_extend, code, start, i, H, I, dirs, checkpoints, 0, scratch)
        i, j, state, steps, finished = ref.trace_band(dirs, start, i, j, state, code, ops[count:])
        count += steps
    if not finished and i == 0 and code == ref.GLOBAL:  # row 0 of a global alignment: leading target gap
        ops[count : count + j] = 2
        count += j
        j = 0
    if code == ref.LOCAL and score == 0:
        i, j = end_i, end_j = 0, 0
    return score, ops[:count][::-1].copy(), i, end_i, j, end_j


def _empty_score(m: int, n: int, scoring: Scoring, code: int) -> tuple[int, int, int]:
    if code == ref.LOCAL or (code == ref.SEMIGLOBAL and m == 0):
        return 0, 0, 0
    k = m + (n if code == ref.GLOBAL else 0)
    return (-(scoring.gap_open + k * scoring.gap_extend) if k else 0), m, (n if code == ref.GLOBAL else 0)


def align(query: str | bytes, target: str | bytes, scoring: Scoring | str, mode: str = "local", *,
          threads: int | None = None, backend: str = "auto") -> Alignment:
    """Align query to target: mode 'local' (Smith-Waterman, default), 'global' (Needleman-Wunsch)
    or 'semi-global' (the whole query against any stretch of the target). scoring is required,
    so a protein is never scored as DNA by default: a Scoring (dna(...), matrix(...)), a matrix
    name ("BLOSUM62", with BLAST's gaps 11 + 1) or "dna" (match 1, mismatch -1, linear gap 2, Smith
    and Waterman's example scheme). A letter outside its alphabet is an error naming the sequence
    and position. One pair runs on one thread of the CPU; threads and backend are checked as
    everywhere else."""
    _cpu_only(threads, backend)
    scoring = scoring_named(scoring)
    q = scoring.encode(query, "query")
    t = scoring.encode(target, "target")
    score, ops, qs, qe, ts, te = align_codes(q, t, scoring, mode)
    return render(q, t, scoring, score, ops, qs, qe, ts, te)


def scoring_named(scoring: Scoring | str) -> Scoring:
    """A Scoring as given, or the one a name stands for: "dna" or a matrix (matrix()'s names)."""
    if isinstance(scoring, Scoring):
        return scoring
    if not isinstance(scoring, str):
        raise UsageError(f"scoring {scoring!r}: give a Scoring (dna(...), matrix(...)), a matrix name or 'dna'")
    return dna() if scoring.lower() == "dna" else matrix(scoring)


def align_pairs(queries: list[str | bytes], targets: list[str | bytes], scoring: Scoring | None = None,
                mode: str = "local", *, threads: int | None = None, backend: str = "auto") -> list[Alignment]:
    """align() of each (query, target) pair. Local DNA match/mismatch pairs run PAIR_LANES at a
    time in vector lanes (the same alignments, much faster), batched by length so little of a
    batch is padding; pairs too long for a batch's direction bytes to fit LANES_DIRS_BYTES, and
    every other scheme, run one by one with align()'s bounded memory. Batches, then the pairs
    run one by one, are shared among `threads` threads (None: every core); CPU only."""
    from seqsift.alignment import pairs

    threads = _cpu_only(threads, backend)
    scoring = scoring or dna()
    if len(queries) != len(targets):
        raise UsageError(f"{len(queries)} queries but {len(targets)} targets: give one target per query")
    q_codes = scoring.encode_all(queries, lambda k: f"query {k + 1}")
    t_codes = scoring.encode_all(targets, lambda k: f"target {k + 1}")
    results: list = [None] * len(q_codes)
    if mode_code(mode) == ref.LOCAL and pairs.usable(scoring):
        match, mismatch = int(scoring.matrix[0, 0]), int(scoring.matrix[0, 1])
        longest = int((LANES_DIRS_BYTES // pairs.PAIR_LANES) ** 0.5) - 1  # any batch of these fits
        fits = [k for k in range(len(q_codes)) if max(q_codes[k].size, t_codes[k].size) <= longest]
        fits.sort(key=lambda k: q_codes[k].size + t_codes[k].size)
        batches = [fits[first : first + pairs.PAIR_LANES] for first in range(0, len(fits), pairs.PAIR_LANES)]
        size = max((pairs.dirs_bytes(max(q_codes[k].size for k in batch), max(t_codes[k].size for k in batch))
                    for batch in batches), default=0)
        spaces = [np.empty(size, np.uint8) for _ in range(min(threads, len(batches)))]  # one a thread, reused

        def lanes(batch, slot):
            return pairs.align_lanes([q_codes[k] for k in batch], [t_codes[k] for k in batch], match, mismatch,
                                      scoring.gap_open, scoring.gap_extend, spaces[slot])

        for batch, found in zip(batches, split(lanes, batches, threads, slot=True)):
            for k, result in zip(batch, found):
                results[k] = result
    rest = [k for k, found in enumerate(results) if not found]  # saturated lanes, long pairs and other schemes
    for k, found in zip(rest, split(lambda k: align_codes(q_codes[k], t_codes[k], scoring, mode), rest, threads)):
        results[k] = found
    return [render(q, t, scoring, *found) for q, t, found in zip(q_codes, t_codes, results)]


def _cpu_only(threads: int | None, backend: str) -> int:
    """threads checked, and backend: pairwise alignment has no GPU kernel (the GPU scores a query
    against a database: search_database)."""
    threads = check_threads(threads)
    if resolve_unmeasured(backend) == "cuda":
        raise UsageError("backend='cuda': pairwise alignment runs on the CPU only; give backend='cpu' or 'auto' "
                         "(search_database scores on the GPU)")
    return threads


def render(q, t, scoring: Scoring, score, ops, qs, qe, ts, te) -> Alignment:
    letters = np.frombuffer(scoring.alphabet, np.uint8)
    columns = np.empty((3, ops.size), np.uint8)
    cigar = np.empty(max(2 * ops.size, 1), np.uint8)  # a run of L columns takes at most L digits and a letter
    size = ref.columns(q, t, letters, scoring.matrix, ops, qs, ts, columns, cigar)
    qa, ta, line = (row.tobytes().decode() for row in columns)
    return Alignment(score=score, query_start=qs, query_end=qe, target_start=ts, target_end=te,
                     cigar=cigar[:size].tobytes().decode(), query_aligned=qa, target_aligned=ta, match_line=line)


def rescore(alignment: Alignment, scoring: Scoring) -> int:
    """The score of an alignment's columns under scoring: the check that a traceback is right."""
    total, gap = 0, None
    for a, b in zip(alignment.query_aligned, alignment.target_aligned):
        kind = "I" if b == "-" else "D" if a == "-" else None
        if kind is None:
            total += int(scoring.matrix[scoring.encode(a)[0], scoring.encode(b)[0]])
        else:
            total -= scoring.gap_extend + (scoring.gap_open if kind != gap else 0)
        gap = kind
    return total
