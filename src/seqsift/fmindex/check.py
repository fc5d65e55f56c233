"""`seqsift check`: verify search results against the reference itself.

Independent of the FM-index: every window of the reference is hashed, each read's hash (and
its reverse complement's) picks candidate windows, and each candidate is compared base by
base. A result passes when its count equals the number of true occurrences on both strands
and its listed hits are the first ones in reference order (as many as the run listed).
"""

from __future__ import annotations

import argparse
import numpy as np
from numba import njit, uint64

from seqsift.errors import FormatError
from seqsift.fmindex.reference import READ_CODE, load_reference
from seqsift.io.openers import display_name, open_decompressed
from seqsift.io.reads import read_reads

_MULT = uint64(0x9E3779B97F4A7C15)
SHOWN = 10


@njit(cache=True)
def _window_hashes(text, length):
    """Hash of every window text[i:i+length] (uint64 polynomial, wrapping)."""
    n = text.size
    out = np.zeros(max(n - length + 1, 0), np.uint64)
    power = uint64(1)
    for _ in range(length):
        power *= _MULT
    h = uint64(0)
    for i in range(n):
        h = h * _MULT + uint64(text[i])
        if i >= length:
            h -= power * uint64(text[i - length])
        if i >= length - 1:
            out[i - length + 1] = h
    return out


def _windows(text: np.ndarray, clean: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted hashes, window starts in that order) of the windows made only of A, C, G, T."""
    hashes = _window_hashes(text, length)
    ok = np.flatnonzero(clean[length:] == clean[:-length])
    order = ok[np.argsort(hashes[ok], kind="stable")]
    return hashes[order], order


@njit(cache=True)
def _row_hashes(patterns):
    """The window hash of each row (the same polynomial as _window_hashes)."""
    out = np.zeros(patterns.shape[0], np.uint64)
    for r in range(patterns.shape[0]):
        h = uint64(0)
        for x in patterns[r]:
            h = h * _MULT + uint64(x)
        out[r] = h
    return out


@njit(cache=True)
def _confirm(text, order, patterns, lo, hi, starts, rows):
    """Compare every hash candidate with its pattern base by base; the true ones go to
    starts/rows. Returns how many."""
    found = 0
    length = patterns.shape[1]
    for r in range(patterns.shape[0]):
        for k in range(lo[r], hi[r]):
            p = order[k]
            same = True
            for i in range(length):
                if text[p + i] != patterns[r, i]:
                    same = False
                    break
            if same:
                starts[found] = p
                rows[found] = r
                found += 1
    return found


def _occurrences(text, windows, patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(text start, pattern row) of every window equal to a row of patterns (text codes)."""
    hashes, order = windows
    h = _row_hashes(patterns)
    lo, hi = np.searchsorted(hashes, h, "left"), np.searchsorted(hashes, h, "right")
    size = int((hi - lo).sum())
    starts, rows = np.empty(size, np.int64), np.empty(size, np.int64)
    found = _confirm(text, order, patterns, lo, hi, starts, rows)
    return starts[:found], rows[:found]


def check(reference_path, results_path, reads_path) -> tuple[int, list[tuple[int, str]]]:
    """(results verified, (line, description) of each wrong result)."""
    reference = load_reference(reference_path)
    text = reference.text
    clean = np.concatenate(([0], np.cumsum(text < 2)))
    results = _read_results(results_path)
    by_length: dict[int, list[tuple[tuple, np.ndarray]]] = {}
    index = 0
    for batch in read_reads(reads_path, code_table=READ_CODE):
        lengths = np.diff(batch.bounds)
        worst = np.zeros(len(batch), np.uint8)  # the largest code of each read: > 3 means non-ACGT
        nonempty = lengths > 0
        if batch.codes.size:
            worst[nonempty] = np.maximum.reduceat(batch.codes, batch.bounds[:-1][nonempty])
        usable = nonempty & (worst <= 3) & (lengths < text.size)
        for i in range(len(batch)):
            if index >= len(results):
                raise FormatError(display_name(results_path), 0,
                                  f"ends before read {batch.name(i)!r} of {display_name(reads_path)}")
            entry = results[index]
            if entry[1] != batch.name(i):
                raise FormatError(display_name(results_path), entry[0],
                                  f"read {entry[1]!r} where {display_name(reads_path)} has {batch.name(i)!r}")
            seq = batch.codes[batch.bounds[i] : batch.bounds[i + 1]]
            by_length.setdefault(int(lengths[i]) if usable[i] else 0, []).append((entry, seq))
            index += 1
    if index < len(results):
        raise FormatError(display_name(results_path), results[index][0],
                          f"a result for read {results[index][1]!r}, which is not in {display_name(reads_path)}")
    problems = []
    for length, group in by_length.items():  # one pass over the reference per read length
        wants = _true_hits(reference, clean, length, [seq for _, seq in group])
        for ((line, rid, count, hits), _), want in zip(group, wants):
            problem = _compare(want, count, hits)
            if problem:
                problems.append((line, f"{display_name(results_path)}:{line}: read {rid}: {problem}"))
    return len(results), sorted(problems)


def _true_hits(reference, clean, length: int, reads: list[np.ndarray]) -> list[list[tuple[str, int, str]]]:
    """Every occurrence of each read (codes 0-3, all of one length; length 0: reads that match
    nowhere) on both strands, in reference order."""
    if not length:
        return [[] for _ in reads]
    text = reference.text
    windows = _windows(text, clean, length)
    codes = np.stack(reads)
    starts, rows, strands = [], [], []
    for strand, patterns in ((0, codes + 2), (1, 5 - codes[:, ::-1])):
        s, r = _occurrences(text, windows, np.ascontiguousarray(patterns, np.uint8))
        starts.append(s)
        rows.append(r)
        strands.append(np.full(s.size, strand, np.int64))
    start, row, strand = np.concatenate(starts), np.concatenate(rows), np.concatenate(strands)
    order = np.lexsort((strand, start, row))
    start, row, strand = start[order], row[order], strand[order]
    record, position = reference.to_record(start)
    names = reference.names
    hits = [(names[a], int(b), "+-"[c]) for a, b, c in zip(record.tolist(), position.tolist(), strand.tolist())]
    edges = np.searchsorted(row, np.arange(len(reads) + 1))
    return [hits[edges[k] : edges[k + 1]] for k in range(len(reads))]


def _compare(want, count, hits) -> str:
    if count != len(want):
        return f"count {count}, the reference holds {len(want)}"
    if len(hits) > count:
        return f"{len(hits)} hits listed for count {count}"
    if [h for h in hits] != want[: len(hits)]:
        bad = next(h for h, w in zip(hits, want) if h != w)
        return f"hit {bad[0]}:{bad[1]}:{bad[2]} is not the next true occurrence in reference order"
    return ""


def _read_results(path) -> list[tuple[int, str, int, list[tuple[str, int, str]]]]:
    name = display_name(path)
    out = []
    with open_decompressed(path) as stream:
        for number, raw in enumerate(stream, 1):
            fields = raw.rstrip(b"\r\n").decode("utf-8", "replace").split("\t")
            try:
                rid, count, listed = fields
                hits = [] if listed == "-" else [_parse_hit(h) for h in listed.split(",")]
                out.append((number, rid, int(count), hits))
            except ValueError:
                raise FormatError(name, number, "expected read_id<TAB>count<TAB>hits (hits record:position:strand "
                                  "joined by ',', or '-')") from None
    return out


def _parse_hit(text: str) -> tuple[str, int, str]:
    record, position, strand = text.rsplit(":", 2)
    if strand not in "+-" or len(strand) != 1:
        raise ValueError(text)
    return record, int(position), strand


def add_parser(sub, parent) -> None:
    p = sub.add_parser("check", parents=[parent], help="verify `seqsift search` results against the reference",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reference", help="the FASTA reference the index was built from")
    p.add_argument("results", help="TSV output of `seqsift search`")
    p.add_argument("reads", help="the reads file that was searched (the results name reads, not their bases)")
    p.add_argument("-e", "--errors", type=int, default=0, metavar="E",
                   help="the results are of `seqsift search --errors E`: verify them as such (default %(default)s)")
    p.add_argument("--distance", choices=("edit", "hamming"), default="edit",
                   help="the --distance the search ran with (default %(default)s)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from seqsift.options import EXIT_OK, EXIT_WRONG

    if args.errors:
        from seqsift.fmindex import check_approx
        from seqsift.fmindex.verify import check_errors

        check_errors(args.errors, args.distance)
        checked, problems = check_approx.check(args.reference, args.results, args.reads, args.errors, args.distance)
    else:
        checked, problems = check(args.reference, args.results, args.reads)
    if problems:
        shown = [text for _, text in problems[:SHOWN]]
        sys.stdout.write("".join(text + "\n" for text in shown))
        sys.stdout.write(f"{len(problems)} of {checked} results are wrong (the first {len(shown)} shown)\n")
        return EXIT_WRONG
    sys.stdout.write(f"all {checked} results verified against {display_name(args.reference)}\n")
    return EXIT_OK
