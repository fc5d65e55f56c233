"""`seqsift align QUERY.fa DB.fa`: each query against every database sequence, the best --top
per query, as BLAST tabular, a custom BLAST column list, readable pairs, or SAM (DNA)."""

from __future__ import annotations

import argparse
import math

from seqsift import __version__
from seqsift.alignment import scoring as scorings
from seqsift.alignment.database import Database, DatabaseHit, search_database
from seqsift.errors import UsageError

DEFAULT_COLUMNS = "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore".split()
COLUMNS = set(DEFAULT_COLUMNS) | {"score", "cigar", "qlen", "slen", "nident", "qseq", "sseq"}
# Karlin-Altschul parameters (lambda, K) of gapped alignment, from NCBI BLAST's tables, for the
# (matrix, open, extend) where they are known; elsewhere evalue and bitscore print as NA.
KARLIN = {("BLOSUM62", 11, 1): (0.267, 0.041)}


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    from seqsift.cli import positive_int

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


def read_fasta(path) -> tuple[list[str], list[bytes]]:
    from seqsift.io.fastx import read_batches

    names, seqs = [], []
    for batch in read_batches(path, batch_bases=1 << 62):
        for i, name in enumerate(batch.names):
            names.append(name)
            seqs.append(batch.seq[batch.bounds[i] : batch.bounds[i + 1]].tobytes())
    return names, seqs


def run(args: argparse.Namespace) -> int:
    from seqsift.backend import resolve_unmeasured
    from seqsift.io.writers import atomic_output
    from seqsift.progress import Progress

    fmt, columns = parse_outfmt(args.outfmt)
    scoring = scoring_from(args)
    if fmt == "sam" and not scoring.is_dna:
        raise UsageError("--outfmt sam is for DNA: add --dna")
    q_names, q_seqs = read_fasta(args.queries)
    d_names, d_seqs = read_fasta(args.database)
    db = Database(d_names, d_seqs, scoring)
    backend = resolve_unmeasured(args.backend)
    karlin = KARLIN.get((scoring.name, scoring.gap_open, scoring.gap_extend))
    progress = Progress("align", len(q_seqs), enabled=not args.quiet, unit=" queries")
    with atomic_output(args.output) as out:
        if fmt == "sam":
            out.write(_sam_header(d_names, d_seqs).encode())
        for k, (name, seq) in enumerate(zip(q_names, q_seqs)):
            hits = search_database([seq], db, top=args.top, mode=args.mode, threads=1, backend=backend)[0]
            if fmt == "6":
                text = "".join(_tabular(name, len(seq), h, columns, karlin, db) for h in hits)
            elif fmt == "pair":
                text = "".join(_pair(name, h, scoring) for h in hits)
            else:
                text = "".join(_sam(name, seq, h) for h in hits)
            out.write(text.encode())
            progress.advance(1)
    progress.close()
    return 0


def _tabular(qname: str, qlen: int, hit: DatabaseHit, columns: list[str], karlin, db: Database) -> str:
    a = hit.alignment
    values = {
        "qseqid": qname, "sseqid": hit.name, "score": str(hit.score), "length": str(a.length),
        "pident": f"{100 * a.identities / a.length:.3f}" if a.length else "0.000", "nident": str(a.identities),
        "mismatch": str(a.mismatches), "gapopen": str(a.gap_opens), "qstart": str(a.query_start + 1),
        "qend": str(a.query_end), "sstart": str(a.target_start + 1), "send": str(a.target_end), "cigar": a.cigar or "*",
        "qlen": str(qlen), "slen": str(len(db.codes[hit.target])), "qseq": a.query_aligned, "sseq": a.target_aligned,
    }
    if karlin:
        lam, K = karlin
        values["bitscore"] = f"{(lam * hit.score - math.log(K)) / math.log(2):.1f}"
        values["evalue"] = f"{K * qlen * db.residues() * math.exp(-lam * hit.score):.2e}"
    else:
        values["bitscore"] = values["evalue"] = "NA"
    return "\t".join(values[c] for c in columns) + "\n"


def _pair(qname: str, hit: DatabaseHit, scoring: scorings.Scoring) -> str:
    a = hit.alignment
    lines = [f"# {qname} vs {hit.name}: score {hit.score}, {a.identities}/{a.length} identical, cigar {a.cigar or '*'} "
             f"({scoring.name}, gap {scoring.gap_open}+{scoring.gap_extend}L)"]
    qi, ti = a.query_start, a.target_start
    for k in range(0, a.length, 60):
        qa, ml, ta = a.query_aligned[k : k + 60], a.match_line[k : k + 60], a.target_aligned[k : k + 60]
        q_used = len(qa) - qa.count("-")
        t_used = len(ta) - ta.count("-")
        lines += [f"Query  {qi + 1:>8}  {qa}  {qi + q_used}", f"{'':17}{ml}", f"Target {ti + 1:>8}  {ta}  {ti + t_used}", ""]
        qi, ti = qi + q_used, ti + t_used
    return "\n".join(lines) + "\n"


def _sam_header(names: list[str], seqs: list[bytes]) -> str:
    lines = ["@HD\tVN:1.6\tSO:unsorted"] + [f"@SQ\tSN:{n}\tLN:{max(1, len(s))}" for n, s in zip(names, seqs)]
    return "\n".join(lines + [f"@PG\tID:seqsift\tPN:seqsift\tVN:{__version__}"]) + "\n"


def _sam(qname: str, seq: bytes, hit: DatabaseHit) -> str:
    a = hit.alignment
    if not a.length:
        return ""
    clip = (f"{a.query_start}S" if a.query_start else "") + a.cigar + (f"{len(seq) - a.query_end}S" if a.query_end < len(seq) else "")
    return f"{qname}\t0\t{hit.name}\t{a.target_start + 1}\t255\t{clip}\t*\t0\t0\t{seq.decode()}\t*\tAS:i:{hit.score}\n"
