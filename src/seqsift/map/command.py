"""`seqsift map REF READS`: reads placed on a reference, as SAM."""

from __future__ import annotations

import argparse
import contextlib

from seqsift.errors import UsageError
from seqsift.map import BATCH_READS
from seqsift.map.scoring import MapOptions
from seqsift.options import EXIT_OK, add_dask_options, dask_run, positive_int, warn

_D = MapOptions()


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("map", parents=[parent], description="Place every read of READS (FASTQ or FASTA, plain/gz/bz2/xz, - for stdin) "
                       "on the reference, allowing mismatches and indels: exact seeds from the FM-index, chained, each chain "
                       "extended by a banded affine-gap alignment that pays a penalty to clip a read end. SAM on "
                       "stdout or -o: every read once as a primary record (flag 4 when unmapped) in input order, "
                       "supplementary records for the other parts of chimeric reads; MAPQ 0-60 from the best and "
                       "second-best scores (0 when two places are equally good); tags NM, MD, AS, XS, SA, RG. "
                       "-o NAME.bam writes BAM, NAME.gz gzipped SAM. Exit status: 0 done (whatever maps), 2 error.")
    p.add_argument("reference", help="an .ssx index from `seqsift index`, or a FASTA file (indexed in memory first)")
    p.add_argument("reads", help="reads file")
    p.add_argument("mates", nargs="?", help="the second reads of pairs, in the same order as READS (names may end "
                   "in /1 and /2): paired-end mapping with the insert size estimated from the data")
    p.add_argument("-R", "--read-group", metavar="LINE",
                   help="read group header line, e.g. '@RG\\tID:lane1\\tSM:sample1'; adds RG:Z: to every record")
    g = p.add_argument_group("scoring (bwa mem's defaults)")
    g.add_argument("-A", "--match", type=int, default=_D.match, help="match score (default %(default)s)")
    g.add_argument("-B", "--mismatch", type=int, default=_D.mismatch, help="mismatch penalty (default %(default)s)")
    g.add_argument("-O", "--gap-open", type=int, default=_D.gap_open,
                   help="gap open penalty: a gap of L bases costs O + L * E (default %(default)s)")
    g.add_argument("-E", "--gap-extend", type=int, default=_D.gap_extend, help="gap extension penalty "
                   "(default %(default)s)")
    g.add_argument("-L", "--clip", type=int, default=_D.clip, help="penalty for clipping a read end "
                   "(default %(default)s)")
    g.add_argument("-T", "--min-score", type=int, default=_D.min_score,
                   help="alignments scoring less are not reported (default %(default)s)")
    g = p.add_argument_group("seeds and chains")
    g.add_argument("-k", "--seed-length", type=positive_int, default=_D.seed_length,
                   help="exact seed length, at most 32 (default %(default)s)")
    g.add_argument("--seed-step", type=positive_int, default=_D.seed_step,
                   help="a seed starts every this many read bases (default %(default)s)")
    g.add_argument("-c", "--max-occurrences", type=positive_int, default=_D.max_occurrences,
                   help="seeds occurring more often are skipped (default %(default)s)")
    g.add_argument("-w", "--band", type=positive_int, default=_D.band,
                   help="diagonals searched beyond a chain's: the longest indel found near a read's ends "
                   "(default %(default)s)")
    g.add_argument("--chain-gap", type=positive_int, default=_D.chain_gap,
                   help="seeds whose diagonals differ by at most this form one chain: the longest indel aligned in "
                   "one piece between seeds (default %(default)s)")
    g = p.add_argument_group("output")
    g.add_argument("-a", "--all", action="store_true",
                   help="also write every other alignment scoring at least -T as a secondary record (flag 0x100, "
                   "MAPQ 0), as bwa mem -a")
    g.add_argument("--batch-reads", type=positive_int, default=BATCH_READS, help=argparse.SUPPRESS)
    add_dask_options(p, f"reads (default {BATCH_READS})")
    p.set_defaults(run=run)
    p.epilog = ("--backend: the extension runs on the CPU; a GPU extension is not written yet, so --backend cuda is "
                "refused and auto means cpu.")


def options_from(args: argparse.Namespace) -> MapOptions:
    return MapOptions(match=args.match, mismatch=args.mismatch, gap_open=args.gap_open, gap_extend=args.gap_extend,
                      clip=args.clip, min_score=args.min_score, seed_length=args.seed_length,
                      seed_step=args.seed_step, max_occurrences=args.max_occurrences, band=args.band,
                      chain_gap=args.chain_gap, secondary=args.all)


def run(args: argparse.Namespace) -> int:
    from seqsift.io.openers import check_readable
    from seqsift.io.provenance import Provenance
    from seqsift.map.api import Mapper, load_index, sam_batches, write_sam
    from seqsift.map.sam import parse_read_group
    from seqsift.progress import Progress

    if args.backend == "cuda":
        raise UsageError("--backend cuda: seqsift map extends reads on the CPU only (a GPU extension is not written "
                         "yet); use --backend cpu or auto")
    options = options_from(args)
    rg_line, rg_id = parse_read_group(args.read_group)
    for path in (args.reads, args.mates):
        if path and path != "-":
            check_readable(path)
    index = load_index(args.reference, announce=lambda message: warn(args, message))
    batch_reads = args.partition or args.batch_reads
    with contextlib.ExitStack() as stack:
        if args.dask:
            client, progress = stack.enter_context(dask_run(args))
        else:
            client, progress = None, Progress("map", enabled=not args.quiet, unit=" batches")
            stack.callback(progress.close)
        results = sam_batches(Mapper(index, options), args.reads, args.mates, args.threads, rg_id, batch_reads,
                              client, args.reference, progress.advance)
        counts = write_sam(args.output, index, results, Provenance("cpu"), rg_line)
    warn(args, f"{counts['reads']:,} reads, {counts['mapped']:,} mapped")
    return EXIT_OK
