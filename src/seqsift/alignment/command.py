"""`seqsift align QUERY.fa DB.fa`: each query against every database sequence, the best --top
per query, as BLAST tabular, a custom BLAST column list, readable pairs, or SAM (DNA). The engine
is imported when the command runs, so `align --help` imports neither it nor numpy."""

from __future__ import annotations

import argparse
import contextlib
import itertools

from typing import TYPE_CHECKING

from seqsift.alignment import DEFAULT_EVALUE, MATRICES, QUERIES_PER_PARTITION
from seqsift.errors import UsageError
from seqsift.options import EXIT_OK, add_dask_options, dask_run, positive_int

if TYPE_CHECKING:
    from seqsift.alignment.scoring import Scoring

DEFAULT_COLUMNS = "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore".split()
COLUMNS = set(DEFAULT_COLUMNS) | {"score", "cigar", "qlen", "slen", "nident", "qseq", "sseq"}


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("align", parents=[parent],
                       description="Align every query (FASTA) against every database sequence (FASTA) and "
                       "report the best --top per query. Gap of L residues costs open + L * extend (BLAST's "
                       "convention). Exit status: 0 done, 2 error.")
    p.add_argument("queries", help="query FASTA (plain/gz/bz2/xz)")
    p.add_argument("database", help="database FASTA")
    p.add_argument("--top", type=positive_int, default=10, help="hits per query (default %(default)s)")
    p.add_argument("--mode", choices=("local", "global", "semi-global"), default="local",
                   help="local (Smith-Waterman), global (Needleman-Wunsch) or semi-global (the whole query "
                   "against any stretch of the target) (default %(default)s)")
    p.add_argument("--matrix", help=f"{', '.join(MATRICES)} or an NCBI-format matrix file "
                   "(default BLOSUM62)")
    p.add_argument("--dna", action="store_true", help="DNA scoring with --match/--mismatch instead of a matrix")
    p.add_argument("--match", type=int, help="DNA match score; implies --dna (default 1)")
    p.add_argument("--mismatch", type=int, help="DNA mismatch score; implies --dna (default -1)")
    p.add_argument("--gap-open", type=int, help="default 11 with a matrix, 0 with --dna")
    p.add_argument("--gap-extend", type=int, help="default 1 with a matrix, 2 with --dna")
    p.add_argument("--outfmt", default="6", help="'6' BLAST tabular, '6 qseqid sseqid score ...' chosen columns "
                   f"({', '.join(sorted(COLUMNS))}; 'std' stands for the 12 of '6'; names, scores, e-values and lengths "
                   "alone need no traceback and run none), '7' the same with BLAST's "
                   "comment lines per query, 'pair' readable alignments, 'sam' (DNA reads on both strands, "
                   "with their qualities and a MAPQ; --mode local or semi-global; a full alignment per read and "
                   "target, under a "
                   "second for 100 reads against lambda: to map read sets, use `seqsift map`; --evalue does not "
                   "apply)")
    p.add_argument("--evalue", type=float, default=DEFAULT_EVALUE, metavar="E",
                   help="report only hits with an e-value of at most E, as blastp's -evalue (default %(default)g); "
                   "hits without known statistics (DNA, a matrix file) are all kept")
    p.add_argument("--db-batch", type=positive_int, help=argparse.SUPPRESS)  # residues a database part
    p.add_argument("--query-batch", type=positive_int, help=argparse.SUPPRESS)  # residues a query batch
    add_dask_options(p, f"queries (default {QUERIES_PER_PARTITION})")
    p.set_defaults(run=run)


def scoring_from(args: argparse.Namespace) -> Scoring:
    """--match/--mismatch score DNA, so they imply --dna (they were once ignored without it, and
    BLOSUM62 scored the DNA); with --matrix they contradict it."""
    from seqsift.alignment import scoring as scorings

    dna_scores = [f"--{name} {value}" for name, value in (("match", args.match), ("mismatch", args.mismatch))
                  if value is not None]
    if dna_scores and args.matrix is not None:
        raise UsageError(f"{' '.join(dna_scores)} score DNA and --matrix {args.matrix} scores proteins: "
                         "drop --matrix for DNA, or drop --match/--mismatch for the matrix")
    if args.dna or dna_scores:
        if args.matrix is not None:
            raise UsageError(f"--dna and --matrix {args.matrix}: choose one")
        return scorings.dna(1 if args.match is None else args.match, -1 if args.mismatch is None else args.mismatch,
                            0 if args.gap_open is None else args.gap_open,
                            2 if args.gap_extend is None else args.gap_extend)
    return scorings.matrix(args.matrix or "BLOSUM62", 11 if args.gap_open is None else args.gap_open,
                           1 if args.gap_extend is None else args.gap_extend)


def parse_outfmt(text: str) -> tuple[str, list[str]]:
    words = text.split()
    if not words or words[0] not in ("6", "7", "pair", "sam"):
        raise UsageError(f"--outfmt {text!r}: use '6', '6 col col ...', '7 ...' (with comment lines), 'pair' or 'sam'")
    if words[0] not in ("6", "7"):
        if len(words) > 1:
            raise UsageError(f"--outfmt {words[0]} takes no columns")
        return words[0], []
    columns = [c for word in (words[1:] or ["std"]) for c in (DEFAULT_COLUMNS if word == "std" else [word])]
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise UsageError(f"--outfmt: unknown column(s) {', '.join(unknown)}; known: std, {', '.join(sorted(COLUMNS))}")
    return words[0], columns


def run(args: argparse.Namespace) -> int:
    from seqsift.alignment import cluster, reads
    from seqsift.alignment.sam import BothStrands
    from seqsift.alignment.sam import reads as sam_reads
    from seqsift.alignment.report import ReportFormat, closing
    from seqsift.alignment.stream import DATABASE_RESIDUES, QUERY_RESIDUES, DatabaseParts, query_batches, search
    from seqsift.backend import resolve_unmeasured
    from seqsift.io.fastx import record_batches
    from seqsift.io.openers import spooled_stdin
    from seqsift.io.provenance import Provenance, sam_header
    from seqsift.io.writers import open_output
    from seqsift.progress import Progress

    fmt, columns = parse_outfmt(args.outfmt)
    if not args.evalue > 0:  # NaN too
        raise UsageError(f"--evalue {args.evalue}: give a number above 0, e.g. 10 (blastp's default) or 1e-5")
    scoring = scoring_from(args)
    if fmt == "sam" and not scoring.is_dna:
        raise UsageError("--outfmt sam is for DNA: add --dna")
    if fmt == "sam" and args.dask:
        raise UsageError("--outfmt sam runs on this machine: drop --dask")
    if fmt == "sam" and args.mode not in reads.MODES:  # every target column in the alignment: not a read's place
        raise UsageError(f"--outfmt sam places reads on targets, and --mode {args.mode} aligns every base of each "
                         "target (a read against a genome becomes thousands of deletions): use --mode semi-global "
                         "(every base of the read) or local (the default)")
    with contextlib.ExitStack() as stack:
        if fmt == "7":  # its '# Query:' lines give the whole header: the file is read twice
            args.queries = stack.enter_context(spooled_stdin(args.queries))
        both = BothStrands(sam_reads(args.queries), args.top) if fmt == "sam" else None
        queries = both.queries() if both else (record for batch in record_batches(args.queries) for record in batch)
        if fmt == "7":
            queries = _titled(queries, args.queries)
        read = [0]  # queries read, all of them processed once every text is written
        queries = _tallied(queries, read)
        database = stack.enter_context(spooled_stdin(args.database))  # read once per query batch
        parts = DatabaseParts(database, scoring, args.db_batch or DATABASE_RESIDUES)
        names, lengths = [], []
        if fmt == "sam" or args.dask:  # read through first: the SAM header lists it, bad letters fail at once
            for _, db in parts:
                names += db.names
                lengths += [codes.size for codes in db.codes]
        if args.dask:  # tasks of --partition queries, each worker holding the whole database
            client, progress = stack.enter_context(dask_run(args))
            job = cluster.work(scoring, args.top, args.mode, fmt, columns, args.backend, path=database,
                              evalue=args.evalue, database=args.database)
            per_part = args.partition or QUERIES_PER_PARTITION
            texts = cluster.align_queries(job, query_batches(queries, count=per_part), 1, client, progress.advance)
        else:  # database parts in turn, each batch of queries on the threads (stream.search)
            progress = Progress("align", None, enabled=not args.quiet, unit=" queries")
            stack.callback(progress.close)
            report = ReportFormat(scoring, fmt, columns, args.evalue, args.database)
            top = args.top + 1 if both else args.top  # SAM: a second best for MAPQ
            backend, batch = resolve_unmeasured(args.backend), args.query_batch or QUERY_RESIDUES
            if both:  # reads against long targets: the same hits, reads in the lanes
                found = reads.search(queries, parts, top, backend, args.threads, batch, args.mode)
            else:
                found = search(queries, parts, top, args.mode, backend, args.threads, batch, report.needs_alignments)
            if both:
                texts = both.records(_counted(found, progress))
            else:
                texts = (_reported(report, hits, parts, progress) for hits in found)
        out = stack.enter_context(open_output(args.output, sam=fmt == "sam"))
        if fmt == "sam":
            out.write(sam_header(names, lengths, Provenance(resolve_unmeasured(args.backend))))
        for text in texts:
            out.write(text)
        out.write(closing(fmt, read[0]).encode())
    return EXIT_OK


def _titled(records, path):
    """(the whole header line, sequence) per record of a FASTA file, for outfmt 7's '# Query:' line
    (blastp's); the report takes the first word of it as qseqid. FASTQ records keep their names."""
    from seqsift.io.openers import open_decompressed

    stream = open_decompressed(path)
    try:
        lines = (line for line in stream if line.strip())
        first = next(lines, b"")
        if not first.lstrip().startswith(b">"):
            yield from records
            return
        headers = itertools.chain([first.lstrip()], (line for line in lines if line.startswith(b">")))
        titles = (line[1:].strip().decode("utf-8", "replace") for line in headers)  # as blastp: no trailing blanks
        for (name, seq), title in zip(records, titles):
            yield (title if title.split(None, 1)[:1] == [name] else name), seq
    finally:
        stream.close()


def _tallied(records, read: list[int]):
    """records as they are, counted in read[0]."""
    for record in records:
        read[0] += 1
        yield record


def _counted(found, progress):
    """found as it is, each read (two searches: both strands) counted on the progress bar."""
    for k, result in enumerate(found):
        progress.advance(k % 2)
        yield result


def _reported(report, found, parts, progress) -> bytes:
    """One query's report; the database has been read through once its first query is done."""
    name, seq, hits = found
    progress.advance(1)
    return report(name, seq, hits, parts.total_residues).encode()
