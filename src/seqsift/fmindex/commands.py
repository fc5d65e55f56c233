"""`seqsift index` and `seqsift search`: the FM-index engine's commands."""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import time


from seqsift.errors import UsageError
from seqsift.options import EXIT_OK, add_dask_options, dask_run, parse_size, positive_int, warn
from seqsift.fmindex import DEFAULT_VERIFY_ROWS, DEFAULT_WIDTH, SHORTCUTS

BATCH_READS = 1 << 16  # reads a batch (read_search.DEFAULT_BATCH)


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    # a copy of the shared options, so replacing -o's help here leaves the other commands' alone
    p = sub.add_parser("index", parents=[copy.deepcopy(parent)],
                       description="Index a FASTA reference (plain/gz/bz2/xz, any number of records) for "
                       "`seqsift search`. Non-ACGT bases are kept out of every match.", conflict_handler="resolve")
    p.add_argument("reference", help="FASTA reference")
    p.add_argument("-o", "--output", metavar="FILE", help="write the index to FILE (default: the reference's "
                   "name with .ssx in place of .fa/.fasta/.fna/.fas and .gz/.bz2/.xz, e.g. REF.fa.gz -> REF.ssx)")
    p.add_argument("--sa-sample", type=positive_int, default=32,
                   help="keep every s-th text position: locate takes at most s-1 steps (default %(default)s)")
    p.add_argument("--repeat-sample", type=int,
                   help="in repeats (windows of ceil(log4(bases))+4 bases that occur more than once) also keep every "
                   "r-th position, so the many rows a repeat gives are located in fewer steps; 0 for none "
                   "(default: 4 up to 2^27 bases, where that costs at most 128 MiB, else 8)")
    p.add_argument("--kmer", type=int, help="k-mer table length, 0 for none (default: from the genome size, "
                   "the largest k with 4^k <= bases/4, at most 12)")
    p.add_argument("--memory", type=parse_size, metavar="SIZE",
                   help="memory the construction may hold, e.g. 6G: beyond what sorting the whole suffix array at once "
                   "needs (~6 bytes a base below 2^31 bases, ~10 above) it is sorted in pieces, slower, to the same "
                   "index, on --threads threads; the least it takes is about 2 bytes a base past 1 Gbp, more on "
                   "smaller genomes and more threads (default: 4 bytes a base, at least 2G)")
    p.set_defaults(run=run_index)

    p = sub.add_parser("search", parents=[parent],
                       description="Count and locate every read of READS (FASTQ or FASTA, plain/gz/bz2/xz, - for "
                       "stdin) in the index, on both strands. TSV: read_id<TAB>count<TAB>hits, hits as "
                       "record:position:strand (0-based, leftmost forward position) in reference order, '-' when "
                       "none are listed. Reads with N or another non-ACGT letter have count 0. Exit status (as "
                       "bwa): 0 when the search ran, whether or not a read matched; 2 error.")
    p.add_argument("index", help="an .ssx file from `seqsift index`")
    p.add_argument("reads", help="reads file")
    p.add_argument("--format", choices=("tsv", "sam"), default="tsv", help="output format (default %(default)s)")
    p.add_argument("--max-hits", type=int, default=100,
                   help="hits listed per read, the first in reference order; the count stays exact; 0 counts "
                   "without locating (default %(default)s)")
    a = p.add_argument_group("approximate search (docs/formats.md, \"Approximate hits\")")
    a.add_argument("-e", "--errors", type=int, default=0, metavar="E",
                   help="list every place within E mismatches or edits, both strands: TSV hits become "
                   "record:position:strand:differences sorted by differences, then reference order; SAM records "
                   "carry CIGAR, NM and MD; reads must be longer than E; 0 is the exact search (default %(default)s)")
    a.add_argument("--distance", choices=("edit", "hamming"), default="edit",
                   help="edit: substitutions, insertions and deletions, places whose starts lie within E of each "
                   "other reported once; hamming: substitutions only (default %(default)s)")
    a.add_argument("--best-only", action="store_true",
                   help="list only the hits with the read's fewest differences (the count still covers all within E)")
    g = p.add_argument_group("optimizations (for the ablation benchmark; the defaults are the fastest measured)")
    g.add_argument("--no-kmer-table", action="store_true", help="search every base instead of looking up the last k")
    g.add_argument("--shortcut", choices=sorted(SHORTCUTS), default="verify",
                   help="what to do once the interval is small: none, one rank a step once one row is left "
                   "(hi-lo=1), or stop, locate the rows and compare the rest with the packed reference "
                   "(default %(default)s)")
    g.add_argument("--verify-rows", type=positive_int, default=DEFAULT_VERIFY_ROWS,
                   help="the largest interval the verify shortcut takes, 1 = hi-lo=1 only (default %(default)s)")
    g.add_argument("--interleave", type=positive_int, default=DEFAULT_WIDTH,
                   help="searches advanced in lockstep, 1 = one at a time (default %(default)s)")
    g.add_argument("--batch-reads", type=positive_int, default=BATCH_READS, help=argparse.SUPPRESS)
    add_dask_options(p, f"reads (default {BATCH_READS})")
    p.set_defaults(run=run_search)


def default_output(reference: str) -> str:
    base = reference
    for suffix in (".gz", ".bz2", ".xz", ".fasta", ".fa", ".fna", ".fas"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base + ".ssx"


def run_index(args: argparse.Namespace) -> int:
    from seqsift.fmindex.api import FMIndex

    output = args.output or default_output(args.reference)
    start = time.perf_counter()
    r, arrays = FMIndex.build_file(args.reference, output, sa_sample=args.sa_sample, repeat_sample=args.repeat_sample,
                                   kmer=args.kmer, memory=args.memory, threads=args.threads)
    size = "" if output == "-" else f"({os.path.getsize(output) / 2**20:.1f} MiB) "
    warn(args, f"{len(r.names)} records, {int(r.lengths.sum()):,} bases, k-mer table k={arrays.kmer}, "
               f"SA sample {args.sa_sample} (repeats {arrays.repeat_sample or 'none'}): {output} {size}"
               f"in {time.perf_counter() - start:.2f} s")
    return EXIT_OK


def run_search(args: argparse.Namespace) -> int:
    from seqsift.fmindex import cluster
    from seqsift.fmindex.api import FMIndex
    from seqsift.backend import resolve_unmeasured
    from seqsift.fmindex.query import SearchOptions
    from seqsift.fmindex.read_search import search_reads
    from seqsift.fmindex.verify import MAX_ERRORS
    from seqsift.io.openers import check_readable
    from seqsift.io.provenance import Provenance, sam_header
    from seqsift.io.writers import open_output

    if args.max_hits < 0:
        raise UsageError(f"--max-hits {args.max_hits}: give 0 (count only) or more")
    if args.format == "sam" and args.max_hits == 0:
        raise UsageError("--format sam needs positions: give --max-hits 1 or more")
    if not 0 <= args.errors <= MAX_ERRORS:  # the API's own limit, named as the option
        raise UsageError(f"--errors {args.errors}: give 0 to {MAX_ERRORS}")
    index = FMIndex.load(args.index)  # checked here whatever runs the batches: a bad index fails at once
    check_readable(args.reads)
    options = SearchOptions(kmer_table=not args.no_kmer_table, shortcut=args.shortcut, width=args.interleave,
                            verify_rows=args.verify_rows)
    job = cluster.work(index, options, args.backend, args.max_hits, args.format, path=args.index, errors=args.errors,
                       distance=args.distance, best_only=args.best_only)
    with contextlib.ExitStack() as stack:
        client, progress = stack.enter_context(dask_run(args)) if args.dask else (None, None)
        # a read longer than the longest record (plus the edits allowed) matches nowhere: not held
        longest = int(index.reference.lengths.max()) + args.errors
        results = search_reads(job, args.reads, args.partition or args.batch_reads, args.threads, client,
                               progress and progress.advance, longest)
        out = stack.enter_context(open_output(args.output, sam=args.format == "sam"))
        if args.format == "sam":
            provenance = Provenance(resolve_unmeasured(args.backend))
            out.write(sam_header(index.names, index.reference.lengths, provenance))
        for text, _ in results:
            out.write(text)
    return EXIT_OK
