"""`seqsift simulate`: test reads from a reference, with their origin in each header.

A chosen fraction of reads is cut from the reference (either strand, never across a record
boundary or an N), substitutions are injected at the error rate, insertions and deletions of
1-3 bases at the indel rate (on the forward strand, the read then cut to its length), and the
rest are random bases. Each read's header says where it came from, so results can be checked by eye.
"""

from __future__ import annotations

import argparse
import os
from typing import Iterator

import numpy as np

from seqsift.errors import UsageError
from seqsift.fmindex.reference import load_reference
from seqsift.io.writers import open_output

_LETTERS = np.frombuffer(b"ACGT", np.uint8)
MAX_TRIES = 64


CHUNK = 1 << 16


def simulate(reference_path: str | os.PathLike, n: int, length: int, max_length: int | None = None,
             found_fraction: float = 0.9, error_rate: float = 0.0, seed: int = 0,
             indel_rate: float = 0.0) -> list[tuple[str, bytes]]:
    """(header, sequence) of n reads."""
    return [read for chunk in simulate_chunks(reference_path, n, length, max_length, found_fraction, error_rate, seed,
                                              indel_rate)
            for read in chunk]


def simulate_chunks(reference_path: str | os.PathLike, n: int, length: int, max_length: int | None = None,
                    found_fraction: float = 0.9, error_rate: float = 0.0, seed: int = 0,
                    indel_rate: float = 0.0) -> Iterator[list[tuple[str, bytes]]]:
    """The same reads in chunks of CHUNK, so memory stays bounded for any n."""
    max_length = length if max_length is None else max_length
    if length < 1 or max_length < length:
        raise UsageError(f"--length {length} / --max-length {max_length}: need 1 <= length <= max-length")
    if not 0 <= found_fraction <= 1 or not 0 <= error_rate <= 1 or not 0 <= indel_rate <= 1:
        raise UsageError("--found-fraction, --error-rate and --indel-rate must lie between 0 and 1")
    reference = load_reference(reference_path)
    rng = np.random.default_rng(seed)
    bad_before = np.concatenate(([0], np.cumsum(reference.text < 2)))
    for first in range(0, n, CHUNK):
        yield _chunk(reference, bad_before, rng, first, min(CHUNK, n - first), length, max_length,
                     found_fraction, error_rate, reference_path, indel_rate)


def _indels(rng, text, start: int, length: int, rate: float, room: int) -> tuple[np.ndarray, int]:
    """(codes, indels) of a read of `length` bases from text[start:], with an insertion or a
    deletion of 1-3 bases starting at each base with probability rate (half each); the text is
    clean for `room` bases, which bounds the deletions."""
    out, pos, events = [], start, 0
    while len(out) < length:
        x = rng.random()
        if x < rate / 2 and pos + 3 + (length - len(out)) <= start + room:
            pos += int(rng.integers(1, 4))
            events += 1
            continue
        if x < rate:
            out.extend(rng.integers(0, 4, int(rng.integers(1, 4))).tolist())
            events += 1
        out.append(int(text[pos]) - 2)
        pos += 1
    return np.asarray(out[:length], np.int64), events


def _chunk(reference, bad_before, rng, first, n, length, max_length, found_fraction, error_rate, reference_path,
           indel_rate=0.0):
    text = reference.text
    slack = int(6 * max_length * indel_rate) + 6 if indel_rate else 0  # room for the deletions
    lengths = rng.integers(length, max_length + 1, n)
    found = rng.random(n) < found_fraction
    starts = np.full(n, -1, np.int64)
    todo = np.flatnonzero(found)
    for _ in range(MAX_TRIES):  # rejection sampling of windows made only of A, C, G, T
        if not todo.size:
            break
        span = lengths[todo] + slack
        pick = rng.integers(0, np.maximum(1, text.size - span), todo.size)
        clean = (pick + span <= text.size) & (bad_before[np.minimum(pick + span, text.size)] == bad_before[pick])
        starts[todo[clean]] = pick[clean]
        todo = todo[~clean]
    if todo.size:
        raise UsageError(f"{reference_path}: no stretch of {max_length + slack} bases without N or a record boundary "
                         "was found")
    strands = rng.integers(0, 2, n)
    longest = int(lengths.max()) if n else 0
    columns = np.arange(longest)
    codes = rng.integers(0, 4, (n, longest))  # random reads; found ones are overwritten
    window = np.minimum(starts[found, None] + columns, text.size - 1)
    codes[found] = text[window].astype(np.int64) - 2
    indels = np.zeros(n, np.int64)
    if indel_rate:
        for i in np.flatnonzero(found):
            codes[i, : lengths[i]], indels[i] = _indels(rng, text, starts[i], lengths[i], indel_rate,
                                                        lengths[i] + slack)
    reverse = found & (strands == 1)  # reverse complement within each read's own length
    flipped = np.clip(lengths[reverse, None] - 1 - columns, 0, None)
    codes[reverse] = 3 - np.take_along_axis(codes[reverse], flipped, 1)
    errors = (rng.random((n, longest)) < error_rate) & (columns < lengths[:, None])
    codes[errors] = (codes[errors] + rng.integers(1, 4, int(errors.sum()))) % 4
    error_counts = errors.sum(1)
    record, position = reference.to_record(np.maximum(starts, 0))
    letters = _LETTERS[codes]
    reads = []
    for i in range(n):
        if found[i]:
            origin = f"from={reference.names[record[i]]}:{position[i]}:{'+-'[strands[i]]} errors={error_counts[i]}"
            if indel_rate:
                origin += f" indels={indels[i]}"
        else:
            origin = "random"
        reads.append((f"read{first + i + 1} {origin}", letters[i, : lengths[i]].tobytes()))
    return reads


def add_parser(sub, parent) -> None:
    from seqsift.options import positive_int

    p = sub.add_parser("simulate", parents=[parent],
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reference", help="FASTA reference (plain, .gz, .bz2, .xz)")
    p.add_argument("-n", "--reads", type=positive_int, required=True, help="how many reads")
    p.add_argument("--length", type=positive_int, required=True, help="read length (the minimum, with --max-length)")
    p.add_argument("--max-length", type=positive_int, help="longest read; lengths are uniform in between")
    p.add_argument("--found-fraction", type=float, default=0.9, help="share cut from the reference (default %(default)s)")
    p.add_argument("--error-rate", type=float, default=0.0, help="substitutions per base (default %(default)s)")
    p.add_argument("--indel-rate", type=float, default=0.0,
                   help="insertions and deletions (1-3 bases each) per base (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    p.add_argument("--fasta", action="store_true", help="write FASTA instead of FASTQ")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from seqsift.options import EXIT_OK

    chunks = simulate_chunks(args.reference, args.reads, args.length, args.max_length, args.found_fraction,
                             args.error_rate, args.seed, args.indel_rate)
    with open_output(args.output) as out:
        for reads in chunks:
            if args.fasta:
                out.write(b"".join(b">%s\n%s\n" % (h.encode(), s) for h, s in reads))
            else:
                out.write(b"".join(b"@%s\n%s\n+\n%s\n" % (h.encode(), s, b"I" * len(s)) for h, s in reads))
    return EXIT_OK
