"""`seqsift check`: verify search results against the reference itself.

Independent of the FM-index: every window of the reference is hashed, each read's hash (and
its reverse complement's) picks candidate windows, and each candidate is compared base by
base (windows.py). A result passes when its count equals the number of true occurrences on both strands
and its listed hits are the first ones in reference order (as many as the run listed).
"""

from __future__ import annotations

import argparse

import numpy as np

from seqsift.errors import FormatError
from seqsift.fmindex.results import read_results
from seqsift.fmindex.windows import occurrences, windows
from seqsift.fmindex.reference import READ_CODE, load_reference
from seqsift.io.openers import display_name
from seqsift.io.reads import read_reads

SHOWN = 10


def check(reference_path, results_path, reads_path) -> tuple[int, list[tuple[int, str]]]:
    """(results verified, (line, description) of each wrong result)."""
    reference = load_reference(reference_path)
    text = reference.text
    clean = np.concatenate(([0], np.cumsum(text < 2)))
    results = read_results(results_path)
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
    table = windows(text, clean, length)
    codes = np.stack(reads)
    starts, rows, strands = [], [], []
    for strand, patterns in ((0, codes + 2), (1, 5 - codes[:, ::-1])):
        s, r = occurrences(text, table, np.ascontiguousarray(patterns, np.uint8))
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


def add_parser(sub, parent) -> None:
    p = sub.add_parser("check", parents=[parent],
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
