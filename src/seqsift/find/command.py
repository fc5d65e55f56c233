"""`seqsift find`: the exact-search subcommand (argument parsing and output only)."""

from __future__ import annotations

import argparse
import contextlib
import sys

from seqsift.errors import InputError, UsageError
from seqsift.find.api import DEFAULT_CHUNK_SIZE, FindJob, as_pattern
from seqsift.io.pack import regular_size
from seqsift.io.openers import STDIN, check_readable
from seqsift.io.provenance import Provenance
from seqsift.io.writers import RowWriter, open_output
from seqsift.options import EXIT_ERROR, EXIT_FOUND, EXIT_NONE, add_dask_options, dask_run, parse_size, warn
from seqsift.progress import Progress
from seqsift.runner import by_source


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "find",
        parents=[parent],
        help="every occurrence of a pattern in files (data-parallel KMP)",
        description="Report every occurrence of PATTERN, overlapping ones included, as path<TAB>offset "
        "(0-based byte offset). Exit status: 0 found, 1 none, 2 error.",
    )
    p.add_argument("pattern", metavar="PATTERN")
    p.add_argument("files", metavar="FILE", nargs="*", help="files to search; none or - reads standard input")
    p.add_argument("-c", "--count", action="store_true", help="print path<TAB>count per file instead")
    p.add_argument("--hex", action="store_true", help="PATTERN is hex digits, e.g. 4d5a9000")
    p.add_argument("--fasta", action="store_true",
                   help="search the sequences of FASTA/FASTQ records (plain/gz/bz2/xz), case-insensitive, "
                   "line breaks ignored; output path<TAB>record<TAB>position<TAB>strand")
    p.add_argument("--revcomp", action="store_true", help="with --fasta, also report the reverse complement on strand -")
    p.add_argument("--json", action="store_true", help="JSON Lines output, opening with a provenance object")
    p.add_argument("--chunk-size", type=parse_size, default=DEFAULT_CHUNK_SIZE, metavar="SIZE",
                   help="bytes read at a time; bounds memory (default: 64M)")
    add_dask_options(p, "bytes (bases with --fasta) (default 64M)", parse_size)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.revcomp and not args.fasta:
        raise UsageError("--revcomp needs --fasta: reverse complements are of sequence records")
    pattern = as_pattern(args.pattern, hex=args.hex)
    files = args.files or [STDIN]
    if args.count:
        fields = ("path", "count")
    elif args.fasta:
        fields = ("path", "record", "position", "strand")
    else:
        fields = ("path", "offset")
    readable = []
    for path in files:
        try:
            check_readable(path)
            readable.append(path)
        except InputError as exc:  # named now, the other files still searched, exit 2 at the end
            sys.stderr.write(f"seqsift find: error: {exc}\n")
    found = False
    with FindJob(pattern, backend=args.backend, threads=args.threads, chunk_size=args.chunk_size) as job, \
            open_output(args.output) as out:
        provenance = Provenance(job.backend).as_dict(threads=job.threads)
        writer = RowWriter(out, fields, "json" if args.json else "tsv", provenance)
        progress = Progress("find", None, enabled=not args.quiet)
        if progress.enabled and not args.fasta:  # --fasta counts bases, not file bytes
            progress.total = _total_size(readable)
        try:
            if args.fasta:
                results = _records(args, job, readable, progress)
            elif args.dask:
                results = _on_cluster(args, pattern, readable)
            else:
                results = job.search_files(readable, args.count, progress.advance)
            for path, parts in results:
                found = _write_results(path, parts, args, writer) > 0 or found
        finally:
            progress.close()
    if found and not args.quiet and args.output:
        warn(args, f"results written to {args.output}")
    failed = len(readable) < len(files)
    return EXIT_ERROR if failed else EXIT_FOUND if found else EXIT_NONE


def _records(args: argparse.Namespace, job: FindJob, paths: list[str], progress: Progress):
    """(path, its record hits or counts) per path: one engine call, batches of records searched
    here one after another (each on job's threads) or by Dask workers, runner.ordered deciding."""
    from seqsift.find import cluster

    work = cluster.work(job.pattern, args.chunk_size, args.backend, job=job)
    with contextlib.ExitStack() as stack:
        if args.dask:  # the bar counts partitions
            client, bar = stack.enter_context(dask_run(args))
            partition, done_parts, bases = args.partition or cluster.DEFAULT_PARTITION, bar.advance, None
        else:  # the bar counts bases
            client, partition, done_parts, bases = None, job.chunk_size, None, progress.advance
        done = cluster.search_records(work, paths, len(job.pattern), partition, args.revcomp, args.count, client,
                                      done_parts, bases)
        for k, parts in by_source(len(paths), done):
            yield paths[k], parts


def _on_cluster(args: argparse.Namespace, pattern: bytes, paths: list[str]):
    """(path, its results) per path, as FindJob.search_files gives them, computed by Dask workers."""
    from seqsift.find import cluster

    partition = args.partition or cluster.DEFAULT_PARTITION
    with dask_run(args) as (client, progress):
        job = cluster.work(pattern, args.chunk_size, args.backend)
        done = cluster.search_sources(job, paths, len(pattern), partition, args.count, client, progress.advance)
        for k, parts in by_source(len(paths), done):
            yield paths[k], parts


def _write_results(path: str, parts, args: argparse.Namespace, writer: RowWriter) -> int:
    """Write one file's rows as they come; returns its number of occurrences."""
    n = 0
    for part in parts:
        if args.count:
            n += part
        else:
            n += len(part)
            if args.fasta:
                writer.write_rows((path, r, p, s) for r, p, s in part)
            else:
                writer.write_rows((path, o) for o in part.tolist())
    if args.count:
        writer.write_rows([(path, n)])
    return n


def _total_size(paths: list[str]) -> int | None:
    """Bytes to search, for the progress bar; None when stdin or a pipe is among them."""
    sizes = [regular_size(p) for p in paths]
    return None if None in sizes else sum(sizes)
