"""`seqsift align QUERY.fa DB.fa`: each query against every database sequence, the best --top
per query, as BLAST tabular, a custom BLAST column list, readable pairs, or SAM (DNA)."""

from __future__ import annotations

import argparse
import contextlib

from seqsift import __version__
from seqsift.alignment import scoring as scorings
from seqsift.alignment import cluster
from seqsift.alignment.cluster import QUERIES_PER_PARTITION
from seqsift.alignment.database import Database
from seqsift.errors import UsageError
from seqsift.options import EXIT_OK, add_dask_options, dask_run, positive_int

DEFAULT_COLUMNS = "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore".split()
COLUMNS = set(DEFAULT_COLUMNS) | {"score", "cigar", "qlen", "slen", "nident", "qseq", "sseq"}


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("align", parents=[parent], help="Smith-Waterman alignment of queries against a database",
                       description="Align every query (FASTA) against every database sequence (FASTA) and "
                       "report the best --top per query. Gap of L residues costs open + L * extend (BLAST's "
                       "convention). Exit status: 0 done, 2 error.")
    p.add_argument("queries", help="query FASTA (plain/gz/bz2/xz)")
    p.add_argument("database", help="database FASTA")
    p.add_argument("--top", type=positive_int, default=10, help="hits per query (default %(default)s)")
    p.add_argument("--mode", choices=("local", "global", "semi-global"), default="local",
                   help="local (Smith-Waterman), global (Needleman-Wunsch) or semi-global (the whole query "
                   "against any stretch of the target) (default %(default)s)")
    p.add_argument("--matrix", default="BLOSUM62",
                   help=f"{', '.join(scorings.MATRICES)} or an NCBI-format matrix file (default %(default)s)")
    p.add_argument("--dna", action="store_true", help="DNA scoring with --match/--mismatch instead of a matrix")
    p.add_argument("--match", type=int, default=1, help="with --dna (default %(default)s)")
    p.add_argument("--mismatch", type=int, default=-1, help="with --dna (default %(default)s)")
    p.add_argument("--gap-open", type=int, help="default 11 with a matrix, 0 with --dna")
    p.add_argument("--gap-extend", type=int, help="default 1 with a matrix, 2 with --dna")
    p.add_argument("--outfmt", default="6", help="'6' BLAST tabular, '6 qseqid sseqid score ...' chosen columns "
                   f"({', '.join(sorted(COLUMNS))}), 'pair' readable alignments, 'sam' (DNA)")
    add_dask_options(p, f"queries (default {QUERIES_PER_PARTITION})")
    p.set_defaults(run=run)


def scoring_from(args: argparse.Namespace) -> scorings.Scoring:
    if args.dna:
        return scorings.dna(args.match, args.mismatch, 0 if args.gap_open is None else args.gap_open,
                            2 if args.gap_extend is None else args.gap_extend)
    return scorings.matrix(args.matrix, 11 if args.gap_open is None else args.gap_open,
                           1 if args.gap_extend is None else args.gap_extend)


def parse_outfmt(text: str) -> tuple[str, list[str]]:
    words = text.split()
    if not words or words[0] not in ("6", "pair", "sam"):
        raise UsageError(f"--outfmt {text!r}: use '6', '6 col col ...', 'pair' or 'sam'")
    if words[0] != "6":
        if len(words) > 1:
            raise UsageError(f"--outfmt {words[0]} takes no columns")
        return words[0], []
    columns = words[1:] or DEFAULT_COLUMNS
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise UsageError(f"--outfmt: unknown column(s) {', '.join(unknown)}; known: {', '.join(sorted(COLUMNS))}")
    return "6", columns


def run(args: argparse.Namespace) -> int:
    from seqsift.io.writers import atomic_output
    from seqsift.progress import Progress

    fmt, columns = parse_outfmt(args.outfmt)
    scoring = scoring_from(args)
    if fmt == "sam" and not scoring.is_dna:
        raise UsageError("--outfmt sam is for DNA: add --dna")
    q_names, q_seqs = cluster.read_fasta(args.queries)
    d_names, d_seqs = cluster.read_fasta(args.database)
    db = Database(d_names, d_seqs, scoring)  # built here whatever runs the queries: bad letters fail at once
    job = cluster.work(db, args.top, args.mode, fmt, columns, args.backend, path=args.database)
    queries = list(zip(q_names, q_seqs))
    with contextlib.ExitStack() as stack:
        if args.dask:  # tasks of --partition queries, progress in tasks
            per_part = args.partition or QUERIES_PER_PARTITION
            client, progress = stack.enter_context(dask_run(args, -(-len(queries) // per_part)))
        else:  # a query at a time on each thread, progress in queries
            per_part, client = 1, None
            progress = Progress("align", len(queries), enabled=not args.quiet, unit=" queries")
            stack.callback(progress.close)
        texts = cluster.align_queries(job, queries, per_part, args.threads, client, progress.advance)
        out = stack.enter_context(atomic_output(args.output))
        if fmt == "sam":
            out.write(_sam_header(d_names, d_seqs).encode())
        for text in texts:
            out.write(text)
    return EXIT_OK


def _sam_header(names: list[str], seqs: list[bytes]) -> str:
    lines = ["@HD\tVN:1.6\tSO:unsorted"] + [f"@SQ\tSN:{n}\tLN:{max(1, len(s))}" for n, s in zip(names, seqs)]
    return "\n".join(lines + [f"@PG\tID:seqsift\tPN:seqsift\tVN:{__version__}"]) + "\n"
