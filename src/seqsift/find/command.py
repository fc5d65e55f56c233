"""`seqsift find`: the exact-search subcommand (argument parsing and output only). The engine and
the readers are imported when the command runs, so building the parser (`find --help`) does not
import them (or numpy, or Numba)."""

from __future__ import annotations

import argparse
import contextlib
import sys

from seqsift.errors import FormatError, InputError, UsageError
from seqsift.find import DEFAULT_CHUNK_SIZE
from seqsift.options import EXIT_ERROR, EXIT_FOUND, EXIT_NONE, add_dask_options, dask_run, parse_size, warn

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from seqsift.find.api import Batch, FindJob, PatternSet
    from seqsift.io.writers import RowWriter
    from seqsift.progress import Progress

# From this many patterns, -c, -l and -L run the scan engine once (filter, then verify) instead of
# one search per pattern: on 32 MiB of text, one thread, 2026-12-01, each further pattern cost
# ~65 ms searched alone while a scan of 2 to 200 patterns took ~0.1 s.
SCAN_FROM = 3
# Options whose next word is their value whatever it looks like, as grep reads them (cli.attach_values).
VALUE_OPTIONS = ("-e", "--pattern", "-f", "--file")


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "find",
        parents=[parent],
        description="Report every occurrence of PATTERN, overlapping ones included, as path<TAB>offset "
        "(0-based byte offset; with several patterns path<TAB>offset<TAB>pattern). Patterns are fixed "
        "strings (grep -F), not regular expressions. A file that cannot be read is named on stderr and "
        "skipped; the others are still searched. Exit status as grep: 0 found, 1 none, 2 an error "
        "occurred (even beside matches; -q only silences stderr, it is not grep's -q).",
    )
    p.add_argument("pattern", metavar="PATTERN", nargs="?", help="the pattern; with -e or -f, the first FILE")
    p.add_argument("files", metavar="FILE", nargs="*", help="files to search; none or - reads standard input "
                   "(with -r and none: the current directory)")
    p.add_argument("-e", "--pattern", dest="patterns", action="append", metavar="PATTERN",
                   help="a pattern; repeat for several (an occurrence of any is reported)")
    p.add_argument("-f", "--file", dest="pattern_files", action="append", metavar="FILE",
                   help="patterns from FILE, one a line (blank lines skipped)")
    p.add_argument("-i", "--ignore-case", action="store_true", help="ASCII letters match in either case")
    p.add_argument("-c", "--count", action="store_true",
                   help="print path<TAB>count per file: the number of occurrences, overlapping ones included "
                   "(grep -c counts matching lines instead)")
    p.add_argument("-l", "--files-with-matches", action="store_true", help="print only the names of files "
                   "with a match")
    p.add_argument("-L", "--files-without-match", action="store_true", help="print only the names of files "
                   "without a match")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="search the files under directories, in sorted order; symlinks met inside a directory "
                   "are not followed (those named on the command line are)")
    p.add_argument("-Z", "--null", action="store_true",
                   help="end each file name with a NUL byte instead of a tab or newline (for xargs -0)")
    p.add_argument("--hex", action="store_true", help="patterns are hex digits, e.g. 4d5a9000")
    p.add_argument("--fasta", action="store_true",
                   help="search the sequences of FASTA/FASTQ records (plain/gz/bz2/xz), case-insensitive, "
                   "line breaks ignored; output path<TAB>record<TAB>position<TAB>strand (<TAB>pattern with several)")
    p.add_argument("--revcomp", action="store_true", help="with --fasta, also report the reverse complement on strand -")
    p.add_argument("--json", action="store_true", help="JSON Lines output, opening with a provenance object")
    p.add_argument("--chunk-size", type=parse_size, default=DEFAULT_CHUNK_SIZE, metavar="SIZE",
                   help="bytes read at a time; bounds memory (default: 64M)")
    add_dask_options(p, "bytes (bases with --fasta) (default 64M)", parse_size)
    p.set_defaults(run=run)


def patterns_of(args: argparse.Namespace) -> list[str]:
    """The patterns as typed: PATTERN, or those of -e and -f (PATTERN then names the first file)."""
    if not args.patterns and not args.pattern_files:
        if args.pattern is None:
            raise UsageError("give a PATTERN, or patterns with -e PATTERN or -f FILE")
        return [args.pattern]
    from seqsift.io.openers import check_readable, open_binary

    if args.pattern is not None:
        args.files = [args.pattern, *args.files]
    texts = list(args.patterns or [])
    for name in args.pattern_files or []:
        check_readable(name)
        with open_binary(name) as f:
            texts += [line for line in f.read().decode("utf-8", "surrogateescape").splitlines() if line]
    if not texts:
        raise UsageError(f"-f {', '.join(args.pattern_files)}: no pattern in the file")
    return list(dict.fromkeys(texts))  # a pattern given twice is searched once


def run(args: argparse.Namespace) -> int:
    from seqsift.find.api import FindJob, PatternSet, as_pattern
    from seqsift.io.openers import STDIN, named_regular
    from seqsift.io.provenance import Provenance
    from seqsift.io.tree import walk
    from seqsift.io.writers import RowWriter, open_output
    from seqsift.progress import Progress

    if args.revcomp and not args.fasta:
        raise UsageError("--revcomp needs --fasta: reverse complements are of sequence records")
    texts = patterns_of(args)
    listing = args.files_with_matches or args.files_without_match
    if args.files_with_matches and args.files_without_match:
        raise UsageError("-l and -L: choose one")
    if args.null and args.json:
        raise UsageError("--null is for TSV output; JSON Lines quote every name already")
    patterns = [as_pattern(text.encode("utf-8", "surrogateescape"), hex=args.hex) for text in texts]
    files = args.files or (["."] if args.recursive else [STDIN])
    if listing:
        fields = ("path",)
    elif args.count:
        fields = ("path", "count")
    elif args.fasta:
        fields = ("path", "record", "position", "strand") + (("pattern",) if len(patterns) > 1 else ())
    else:
        fields = ("path", "offset", "pattern") if len(patterns) > 1 else ("path", "offset")
    readable = []
    regular = True  # every file a regular one (a walk's, or named ones a stat found so): read unstat'ed
    failed = False

    def report(path: str, why: str) -> None:
        nonlocal failed
        failed = True
        sys.stderr.write(f"seqsift find: {path}: {why}\n")

    def skip(k: int, exc: Exception) -> None:  # a file failed while searched: named, the others go on
        nonlocal failed
        failed = True
        sys.stderr.write(f"seqsift find: error: {exc}\n")

    if args.recursive:  # the scan walk's rules (io/tree.py); a file that cannot be read is named when opened
        readable = [path for path, _ in walk(files, True, report, check_readable=False)]
        if not args.files:  # grep -r without a FILE names the files under . without "./"
            readable = [path[2:] if path.startswith("./") else path for path in readable]
    else:
        for path in files:
            try:
                regular = named_regular(path) and regular
                readable.append(path)
            except InputError as exc:  # named now, the other files still searched, exit 2 at the end
                failed = True
                sys.stderr.write(f"seqsift find: error: {exc}\n")
    found = False
    count_only = args.count or bool(listing)
    with contextlib.ExitStack() as stack:
        jobs = [stack.enter_context(FindJob(pattern, backend=args.backend, threads=args.threads,
                                            chunk_size=args.chunk_size, ignore_case=args.ignore_case))
                for pattern in patterns]
        out = stack.enter_context(open_output(args.output))
        provenance = Provenance(jobs[0].backend).as_dict(threads=jobs[0].threads)
        writer = RowWriter(out, fields, "json" if args.json else "tsv", provenance, null=args.null)
        stack.callback(writer.flush)  # the rows held go out before the output is closed, as a stream's buffer
        progress = Progress("find", None, enabled=not args.quiet)
        stack.callback(progress.close)
        if progress.enabled and not args.fasta:  # --fasta counts bases, not file bytes
            total = _total_size(readable)
            progress.total = total and total * len(jobs)
        client, bar = stack.enter_context(dask_run(args)) if args.dask else (None, None)
        if args.fasta:
            records = jobs[0] if len(jobs) == 1 else PatternSet(jobs)
            results = isolated(lambda paths: _records(args, records, paths, progress, count_only, client, bar),
                               readable, skip)
        elif args.dask and len(jobs) == 1:
            results = isolated(lambda paths: _on_cluster(args, patterns[0], paths, count_only, client, bar),
                               readable, skip)
        elif args.dask:  # each pattern over the files on the cluster in turn, merged here
            searches = [lambda paths, p=p: _on_cluster(args, p, paths, count_only, client, bar) for p in patterns]
            results = _several(searches, readable, count_only, stack, skip)
        elif len(jobs) >= SCAN_FROM and count_only and not args.ignore_case:
            results = _counts_by_scan(args, patterns, readable, stack, skip)
        elif len(jobs) > 1:
            searches = [lambda paths, job=job: job.search_files(paths, count_only, progress.advance) for job in jobs]
            results = _several(searches, readable, count_only, stack, skip)
        else:
            results = isolated(lambda paths: jobs[0].search_files(paths, count_only, progress.advance,
                                                                  regular=regular, batches=True),
                               readable, skip)
        write = _results_writer(args, writer, texts)
        for path, parts in results:
            found = write(path, parts) or found
    if found and not args.quiet and args.output:
        warn(args, f"results written to {args.output}")
    return EXIT_ERROR if failed else EXIT_FOUND if found else EXIT_NONE


def isolated(search, paths: list[str], skip):
    """(path, parts) per path as search(paths) gives them (or a find.api Batch of several, as
    (Batch, None)), except that a file whose reading fails
    (InputError, FormatError, or the place-holder a cluster search puts in its results) is passed
    to skip(k, error) and the search goes on after it: one file's failure never loses another's
    matches (grep's rule). search must give the paths in order, each one's parts consumed before
    the next is asked for; an error raised ends its generator, so search starts again after the
    file. What the failing file gave before its error stays written, as grep prints the lines it
    read before a read error."""
    from seqsift.find.api import Batch

    start = 0
    while start < len(paths):
        k, failure = start, []
        results = search(paths[start:])
        failed_type = None
        try:
            for path, parts in results:
                if type(path) is Batch:  # several files, results in hand: nothing can fail
                    yield path, parts
                    k += len(path)
                    continue
                if failed_type is None:  # once the search has started (and imported what it uses)
                    failed_type = _failed_type()
                # results already in hand (a packed file's: a tuple) cannot fail while read
                yield path, parts if type(parts) is tuple and failed_type == () else _Guarded(parts, failure, failed_type)
                if failure:
                    error, raised = failure.pop()
                    skip(k, error)
                    if raised:
                        break
                k += 1
            else:
                return
        except (InputError, FormatError) as exc:  # before the file's first part: none of it written
            skip(k, exc)
        finally:
            if hasattr(results, "close"):
                results.close()
        start = k + 1


def _failed_type() -> type | tuple:
    """The place-holder type a failed file's results come as: find.cluster's Failed, which only
    a search on a cluster makes, so where that module was never imported there is none to look
    for (importing it, with seqsift.distributed and logging, would cost every run its start-up)."""
    cluster = sys.modules.get("seqsift.find.cluster")
    return cluster.Failed if cluster is not None else ()


class _Guarded:
    """A file's parts, ending early with (the error, whether it was raised) put in failure if
    reading the file fails; failed says so to the writer (no count or name line for it)."""

    __slots__ = ("parts", "failure", "failed", "failed_type")

    def __init__(self, parts, failure: list, failed_type: type | tuple = ()):
        self.parts, self.failure, self.failed, self.failed_type = parts, failure, False, failed_type

    def __iter__(self):
        failed_type = self.failed_type
        try:
            for part in self.parts:
                if isinstance(part, failed_type):
                    self.failure.append((part.message, False))
                    break
                yield part
        except (InputError, FormatError) as exc:
            self.failure.append((exc, True))
        self.failed = bool(self.failure)


def _counts_by_scan(args: argparse.Namespace, patterns: list[bytes], paths: list[str], stack: contextlib.ExitStack,
                    skip):
    """(path, [its count of occurrences of every pattern]) per path for -c, -l and -L with several
    patterns: one pass of the scan engine's filter and verification over each file, every
    pattern a signature of its bytes (the counts are exact, overlapping occurrences included)."""
    from seqsift.io.openers import spooled_stdin
    from seqsift.scan.api import scan

    sources = [stack.enter_context(spooled_stdin(path)) for path in paths]
    results = scan(sources, [p.hex() for p in patterns], backend=args.backend, threads=args.threads)
    for k, (path, result) in enumerate(zip(paths, results)):
        if result.error:
            skip(k, InputError(path, result.error))
            continue
        yield path, [sum(m.count for m in result.matches)]


def _several(searches: list, paths: list[str], count_only: bool, stack: contextlib.ExitStack, skip):
    """(path, [its merged results]) per path for several patterns: each pattern's search (a function
    of the paths, as FindJob.search_files) over the files in turn (standard input spooled to a
    file, read once per pattern), then per file the counts
    summed or the occurrences as (offset, pattern number) in offset order. Positions are held
    until every pattern is done: memory grows with the number of occurrences. A file that fails
    for any pattern is skipped, named once."""
    import numpy as np

    from seqsift.io.openers import spooled_stdin

    sources = [stack.enter_context(spooled_stdin(path)) for path in paths]
    errors: dict[int, Exception] = {}
    per_pattern = []
    for search in searches:
        results: list[list] = [[] for _ in paths]
        left = [k for k in range(len(paths)) if k not in errors]
        following = 0  # the index in left of the next file isolated() gives

        def failed(i: int, exc: Exception) -> None:
            nonlocal following
            errors.setdefault(left[i], exc)
            following = i + 1

        for _, parts in isolated(search, [sources[k] for k in left], failed):
            results[left[following]] = list(parts)
            following += 1
        per_pattern.append(results)
    for k, path in enumerate(paths):
        if k in errors:
            skip(k, errors[k])
            continue
        if count_only:
            yield path, [sum(sum(results[k]) for results in per_pattern)]
            continue
        offsets = [np.concatenate(results[k]) if results[k] else np.empty(0, np.int64) for results in per_pattern]
        which = np.concatenate([np.full(o.size, j, np.int64) for j, o in enumerate(offsets)])
        offsets = np.concatenate(offsets)
        order = np.lexsort((which, offsets))
        yield path, [list(zip(offsets[order].tolist(), which[order].tolist()))]


def _records(args: argparse.Namespace, job: FindJob | PatternSet, paths: list[str], progress: Progress,
             count_only: bool, client=None, bar=None):
    """(path, its record hits or counts) per path: one engine call, batches of records searched
    here one after another (each on job's threads) or by Dask workers (client; bar counts
    partitions), runner.ordered deciding. Several patterns (a PatternSet) are searched in the
    same batches, read once."""
    from seqsift.find import cluster
    from seqsift.find.api import PatternSet
    from seqsift.runner import by_source

    several = isinstance(job, PatternSet)
    pattern = tuple(j.pattern for j in job.jobs) if several else job.pattern
    work = cluster.work(pattern, args.chunk_size, args.backend, job=job)
    if client is not None:  # the bar counts partitions
        partition, done_parts, bases = args.partition or cluster.DEFAULT_PARTITION, bar.advance, None
    else:  # the bar counts bases
        partition, done_parts, bases = job.chunk_size, None, progress.advance
    m = job.longest if several else len(job.pattern)
    done = cluster.search_records(work, paths, m, partition, args.revcomp, count_only, client, done_parts, bases)
    for k, parts in by_source(len(paths), done):
        yield paths[k], parts


def _on_cluster(args: argparse.Namespace, pattern: bytes, paths: list[str], count_only: bool, client, bar):
    """(path, its results) per path, as FindJob.search_files gives them, computed by Dask workers."""
    from seqsift.find import cluster
    from seqsift.runner import by_source

    partition = args.partition or cluster.DEFAULT_PARTITION
    job = cluster.work(pattern, args.chunk_size, args.backend, ignore_case=args.ignore_case)
    done = cluster.search_sources(job, paths, len(pattern), partition, count_only, client, bar.advance)
    for k, parts in by_source(len(paths), done):
        yield paths[k], parts


def _results_writer(args: argparse.Namespace, writer: RowWriter, texts: list[str]):
    """A function (path, parts) -> whether the file counts as found for the exit status (with
    -L: the file was listed, as grep), writing the file's rows as they come. The options are
    read once here: a tree of thousands of small files writes a row each."""
    from seqsift.find.api import Batch

    listing = args.files_with_matches or args.files_without_match
    counting = args.count or listing
    several = len(texts) > 1 and not counting
    add = writer.write_row

    def count(path: str | Batch, parts) -> bool:
        if type(path) is Batch:  # one row a file of the batch, in one go
            if listing:
                listed = [(name,) for name, n in zip(path.paths, path.results) if (n > 0) == args.files_with_matches]
                writer.write_rows(listed)
                return bool(listed)
            writer.write_rows(zip(path.paths, path.results))
            return any(path.results)
        if type(parts) is tuple:  # results in hand (find.api's packed files): nothing can fail
            n = sum(parts)
        else:
            n = sum(int(part) for part in parts)
            if getattr(parts, "failed", False):  # its count is not known: no line, as no name
                return False
        if listing:
            listed = (n > 0) == args.files_with_matches
            if listed:
                add((path,))
            return listed
        add((path, n))
        return n > 0

    def rows(path: str | Batch, parts) -> bool:
        if type(path) is Batch:
            found = [rows(name, (result,)) for name, result in zip(path.paths, path.results)]
            return any(found)
        n = 0
        for part in parts:
            if args.fasta and several:  # (hits, the pattern number of each)
                hits, which = part
                n += len(hits)
                writer.write_rows((path, r, p, s, texts[k]) for (r, p, s), k in zip(hits, which.tolist()))
            else:
                n += len(part)
                if args.fasta:
                    writer.write_rows((path, r, p, s) for r, p, s in part)
                elif several:
                    writer.write_rows((path, o, texts[k]) for o, k in part)
                else:
                    writer.write_rows((path, o) for o in part.tolist())
        return n > 0

    return count if counting else rows


def _total_size(paths: list[str]) -> int | None:
    """Bytes to search, for the progress bar; None when stdin or a pipe is among them."""
    from seqsift.io.pack import regular_size

    sizes = [regular_size(p) for p in paths]
    return None if None in sizes else sum(sizes)
