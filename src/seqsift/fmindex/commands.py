"""`seqsift index` and `seqsift search`: the FM-index engine's commands."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor


from seqsift.errors import UsageError
from seqsift.fmindex.query import SHORTCUTS, SearchOptions

BATCH_READS = 1 << 16


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    from seqsift.cli import positive_int

    p = sub.add_parser("index", parents=[parent], help="build an FM-index (.ssx) of a DNA reference",
                       description="Index a FASTA reference (plain/gz/bz2/xz, any number of records) for "
                       "`seqsift search`. Non-ACGT bases are kept out of every match.")
    p.add_argument("reference", help="FASTA reference")
    p.add_argument("--sa-sample", type=positive_int, default=32,
                   help="keep every s-th text position: locate takes at most s-1 steps (default %(default)s)")
    p.add_argument("--kmer", type=int, help="k-mer table length, 0 for none (default: from the genome size, "
                   "the largest k with 4^k <= bases/4, at most 10)")
    p.set_defaults(run=run_index)

    p = sub.add_parser("search", parents=[parent], help="exact matches of DNA reads in an FM-index, both strands",
                       description="Count and locate every read of READS (FASTQ or FASTA, plain/gz/bz2/xz, - for "
                       "stdin) in the index, on both strands. TSV: read_id<TAB>count<TAB>hits, hits as "
                       "record:position:strand (0-based, leftmost forward position) in reference order, '-' when "
                       "none are listed. Reads with N or another non-ACGT letter have count 0. Exit status: 0 a "
                       "read matched, 1 none did, 2 error.")
    p.add_argument("index", help="an .ssx file from `seqsift index`")
    p.add_argument("reads", help="reads file")
    p.add_argument("--format", choices=("tsv", "sam"), default="tsv", help="output format (default %(default)s)")
    p.add_argument("--max-hits", type=int, default=100,
                   help="hits listed per read, the first in reference order; the count stays exact; 0 counts "
                   "without locating (default %(default)s)")
    g = p.add_argument_group("optimizations (for the ablation benchmark; the defaults are the fastest measured)")
    g.add_argument("--no-kmer-table", action="store_true", help="search every base instead of looking up the last k")
    g.add_argument("--shortcut", choices=sorted(SHORTCUTS), default="verify",
                   help="what to do once one row is left (hi-lo=1): none, one rank a step, or locate and compare "
                   "with the packed reference (default %(default)s)")
    g.add_argument("--interleave", type=positive_int, default=SearchOptions.width,
                   help="searches advanced in lockstep, 1 = one at a time (default %(default)s)")
    g.add_argument("--batch-reads", type=positive_int, default=BATCH_READS, help=argparse.SUPPRESS)
    p.set_defaults(run=run_search)


def default_output(reference: str) -> str:
    base = reference
    for suffix in (".gz", ".bz2", ".xz", ".fasta", ".fa", ".fna", ".fas"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base + ".ssx"


def run_index(args: argparse.Namespace) -> int:
    from seqsift.cli import warn
    from seqsift.fmindex.api import FMIndex

    output = args.output or default_output(args.reference)
    start = time.perf_counter()
    index = FMIndex.build(args.reference, sa_sample=args.sa_sample, kmer=args.kmer)
    index.save(output)
    r = index.reference
    warn(args, f"{len(r.names)} records, {int(r.lengths.sum()):,} bases, k-mer table k={index.arrays.kmer}, "
               f"SA sample {args.sa_sample}: {output} ({os.path.getsize(output) / 2**20:.1f} MiB) in "
               f"{time.perf_counter() - start:.2f} s")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from seqsift.cli import EXIT_FOUND, EXIT_NONE
    from seqsift import backend as backends
    from seqsift.fmindex.api import FMIndex
    from seqsift.fmindex.output import name_table, sam, sam_header, tsv
    from seqsift.fmindex.reference import READ_CODE
    from seqsift.io.openers import check_readable
    from seqsift.io.reads import read_reads
    from seqsift.io.writers import atomic_output

    if args.max_hits < 0:
        raise UsageError(f"--max-hits {args.max_hits}: give 0 (count only) or more")
    if args.format == "sam" and args.max_hits == 0:
        raise UsageError("--format sam needs positions: give --max-hits 1 or more")
    backend = backends.resolve_unmeasured(args.backend)
    index = FMIndex.load(args.index)
    check_readable(args.reads)
    options = SearchOptions(kmer_table=not args.no_kmer_table, shortcut=args.shortcut, width=args.interleave)
    searcher = index.searcher(options, backend)
    names = index.names
    packed_names = name_table(names)
    write = sam if args.format == "sam" else tsv

    def work(batch):
        found = searcher.hits(batch.codes, batch.bounds, args.max_hits)
        record, position = index.reference.to_record(found.text_pos)
        return write(batch, found, record, position, packed_names), bool(found.counts.any())

    matched = False
    with atomic_output(args.output) as out:
        if args.format == "sam":
            out.write(sam_header(names, index.reference.lengths, shlex.join(["seqsift"] + sys.argv[1:])))
        for text, hit in _in_order(work, read_reads(args.reads, args.batch_reads, READ_CODE), args.threads):
            out.write(text)
            matched |= hit
    return EXIT_FOUND if matched else EXIT_NONE


def _in_order(work, batches, threads: int):
    """work(batch) for every batch, results in input order. One thread does everything itself
    (so -t 1 is one core); more keep a few batches in flight on a pool while this thread parses."""
    if threads == 1:
        yield from map(work, batches)
        return
    with ThreadPoolExecutor(threads) as pool:
        pending: deque = deque()
        for batch in batches:
            pending.append(pool.submit(work, batch))
            if len(pending) > 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
