"""`seqsift scan`: signature scanning in clamscan's output form (argument parsing and output only).
The engine is imported when the command runs, so `scan --help` imports neither it nor numpy."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from typing import TYPE_CHECKING

from seqsift import __version__
from seqsift.errors import UsageError
from seqsift.options import (ALWAYS, EXIT_CLEAN, EXIT_ERROR, EXIT_INFECTED, NAMED, NEVER, add_dask_options, dask_run,
                             parse_size, positive_int, warn)
from seqsift.scan import DEFAULT_BUFFER, DEFAULT_STRIDE, FILTERS, MIN_BUFFERS

if TYPE_CHECKING:
    from seqsift.scan.pipeline import Scanner


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "scan",
        parents=[parent],
        description="Report every (file, signature) match as clamscan --allmatch does: 'path: Name FOUND'. "
        "Exit status (clamscan's): 1 something found (even beside an error), 0 nothing found, 2 nothing found "
        "and an error (a file that cannot be scanned is reported on stderr and skipped; the rest go on).",
    )
    p.add_argument("paths", metavar="PATH", nargs="*", help="files or directories (with -r); - or none reads standard input")
    p.add_argument("--db", "-d", action="append", required=True, metavar="FILE",
                   help="signature database: ClamAV .ndb, or one hex signature per line (repeatable)")
    p.add_argument("-r", "--recursive", action="store_true", help="scan directories recursively")
    for kind in ("dir", "file"):
        p.add_argument(f"--follow-{kind}-symlinks", type=int, choices=(NEVER, NAMED, ALWAYS), default=NAMED,
                       metavar="0|1|2", help=f"symlinks to {kind}s, as clamscan: 0 never, 1 only those named on "
                       "the command line, 2 also those met inside directories (default 1)")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per match, with offsets")
    p.add_argument("--no-summary", action="store_true", help="omit the closing summary")
    p.add_argument("--stats", action="store_true", help="print per-stage times, candidates and table statistics on stderr")
    p.add_argument("--buffer-size", type=parse_size, default=DEFAULT_BUFFER, metavar="SIZE",
                   help="bytes per buffer files are packed into (default: 8M)")
    p.add_argument("--buffers", type=positive_int, default=MIN_BUFFERS,
                   help="rotating buffers; 1 runs fill, filter and verify one after another (default: %(default)s)")
    p.add_argument("--filter", choices=FILTERS, default="stride",
                   help="CPU filter: stride (fast prefilter) or table (2-byte key + 4-byte tag at every byte, as on the GPU) "
                   "(default: %(default)s)")
    p.add_argument("--stride", type=positive_int, default=DEFAULT_STRIDE, help=argparse.SUPPRESS)
    p.add_argument("--no-verify", action="store_true",
                   help="report raw filter candidates ('CANDIDATE') instead of verified matches")
    p.add_argument("--block-threshold", type=int, metavar="N",
                   help="a buffer with more filter candidates is verified by one full CPU pass "
                   "(default: buffer bytes / 48, the measured crossover)")
    p.add_argument("--object-threshold", type=int, metavar="N",
                   help="an object part with more candidates is rescanned whole on the CPU "
                   "(default: 4096 + its bytes / 48)")
    add_dask_options(p, "bytes of files (default 64M; a file is never split)", parse_size)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from seqsift.io.openers import STDIN, spool_stdin, stdin_file
    from seqsift.io.provenance import Provenance
    from seqsift.io.writers import open_output, printable
    from seqsift.scan.api import objects_of
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import load_databases

    for name in ("block_threshold", "object_threshold"):
        if getattr(args, name) is not None and getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 0")
    started = time.perf_counter()
    signatures = load_databases(args.db)
    paths = args.paths or [STDIN]
    errors = 0

    def report(path: str, why: str) -> None:
        nonlocal errors
        errors += 1
        sys.stderr.write(f"seqsift scan: {printable(path)}: {why}\n")

    redirected = stdin_file() if STDIN in paths else None  # `< file`: read as the file, not copied
    spooled = spool_stdin() if STDIN in paths and redirected is None else None
    stand_in = redirected or spooled
    found_files = 0
    try:
        sources = [stand_in if p == STDIN else p for p in paths]
        with Scanner(signatures, threads=args.threads, **_options(args)) as scanner, \
                open_output(args.output) as out:
            _load_report(args, scanner)
            if args.json:
                out.write(_json(Provenance(scanner.backend).as_dict(signatures=len(signatures))))
            word = "CANDIDATE" if args.no_verify else "FOUND"
            objects = objects_of(sources, args.recursive, report, args.follow_dir_symlinks, args.follow_file_symlinks)
            results = _on_cluster(args, scanner, objects, report) if args.dask else scanner.scan(objects, report)
            for result in results:
                path = STDIN if stand_in and result.path == stand_in else result.path  # '-', as find and grep
                if result.error:
                    report(path, result.error)
                    continue
                if result.matches:
                    found_files += 1
                for m in result.matches:
                    if args.json:
                        out.write(_json({"path": path, "signature": m.name, "count": m.count, "offsets": m.offsets}))
                    else:
                        line = f"{printable(path)}: {printable(m.name)} {word}\n"  # a newline in a name forges no line
                        out.write(line.encode(errors="surrogateescape"))
            if not args.no_summary:
                out.write(_summary(args, scanner, found_files, time.perf_counter() - started))
        if args.stats:
            sys.stderr.write(_stats(scanner))
    finally:
        if spooled:
            os.unlink(spooled)
    return EXIT_INFECTED if found_files else EXIT_ERROR if errors else EXIT_CLEAN  # clamscan: found wins


def _options(args: argparse.Namespace) -> dict:
    """The Scanner's options other than threads: the same here and on every Dask worker."""
    return {"backend": args.backend, "buffer_size": args.buffer_size, "buffers": args.buffers, "filter": args.filter,
            "stride": args.stride, "verify": not args.no_verify, "block_threshold": args.block_threshold,
            "object_threshold": args.object_threshold}


def _on_cluster(args: argparse.Namespace, scanner: Scanner, objects, report):
    """ObjectResults in object order from Dask workers, each scanning groups of files with the
    same Scanner options; their counts of files and bytes added to scanner.stats for the summary."""
    from seqsift.scan import cluster

    if args.no_verify or args.stats:
        raise UsageError("--no-verify and --stats show one machine's filter at work: run them without --dask")
    with dask_run(args) as (client, progress):
        done = cluster.scan_groups(cluster.work(args.db, _options(args)), objects, report,
                                   args.partition or cluster.DEFAULT_PARTITION, client, args.paths, progress.advance)
        for group in done:
            for path, why in group.errors:
                report(path, why)
            scanner.stats.files += group.files
            scanner.stats.bytes += group.bytes
            yield from group.results


def _json(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _load_report(args, scanner: Scanner) -> None:
    pieces = scanner.stats.pieces
    cpu_only = pieces["short_cpu"] + pieces["sweep_cpu"]
    if cpu_only:
        warn(args, f"{cpu_only} signature parts have no fixed run of 6 bytes: they go to the CPU path "
                   f"({pieces['sweep_cpu']} of them, with under 2 fixed bytes, are tried at every byte)")


def _summary(args, scanner: Scanner, infected: int, seconds: float) -> bytes:
    s = scanner.stats
    if args.json:
        return _json({"summary": {"signatures": s.signatures, "files": s.files, "bytes": s.bytes,
                                  "infected_files": infected, "seconds": round(seconds, 3)}})
    return (
        "\n----------- SCAN SUMMARY -----------\n"
        f"Known viruses: {s.signatures}\n"
        f"Engine version: seqsift {__version__} ({scanner.backend})\n"
        f"Scanned files: {s.files}\n"
        f"Infected files: {infected}\n"
        f"Data scanned: {s.bytes / 1e6:.2f} MB\n"
        f"Time: {seconds:.3f} sec\n"
    ).encode()


def _stats(scanner: Scanner) -> str:
    scanner.table_stats()
    s = scanner.stats
    mb = s.bytes / 1e6
    lines = [
        "seqsift scan stats:",
        f"  signatures {s.signatures}; parts {s.pieces}",
        f"  key+tag table: {s.table['entries']} entries, {s.table['keys_used']} keys used, largest bucket "
        f"{s.table['largest_bucket']}; a one-entry-per-key table would lose {s.table['one_per_key_lost']}",
        f"  {s.files} files, {mb:.2f} MB in {s.buffers} buffers; {s.candidates} filter candidates, "
        f"{s.checks} starts verified, {s.verified} confirmed",
        f"  thresholds: block {scanner.block_threshold} ({s.block_fallbacks} buffers to the full pass), "
        f"object fallbacks {s.object_fallbacks}",
        "  seconds: " + ", ".join(f"{k} {v:.3f}" for k, v in s.seconds.items()) + f", wall {s.wall:.3f}"
        + (f" ({mb / s.wall:.1f} MB/s)" if s.wall > 0 else ""),
    ]
    return "\n".join(lines) + "\n"
