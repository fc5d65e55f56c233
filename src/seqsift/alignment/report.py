"""Queries in, report out: the BLAST tabular, readable-pair and SAM formatters of `seqsift align`
(`ReportFormat`), and what every database search runs on each part of its queries (`AlignReport`,
called by cluster.run_queries), on this machine or on a Dask worker."""

from __future__ import annotations

import math

from seqsift.alignment import scoring as scorings
from seqsift.alignment.database import Database, DatabaseHit, search_database

# Karlin-Altschul parameters (lambda, K) of gapped alignment, from NCBI BLAST's tables, for the
# (matrix, open, extend) where they are known; elsewhere evalue and bitscore print as NA.
KARLIN = {("BLOSUM62", 11, 1): (0.267, 0.041)}


class ReportFormat:
    """One report form: '6' (BLAST tabular with `columns`), 'pair' or 'sam'."""

    def __init__(self, scoring: scorings.Scoring, fmt: str, columns: list[str]):
        self.scoring = scoring
        self.fmt = fmt
        self.columns = columns
        self.karlin = KARLIN.get((scoring.name, scoring.gap_open, scoring.gap_extend))

    def __call__(self, name: str, seq: bytes, hits: list[DatabaseHit], residues: int) -> str:
        """The report of one query's hits; `residues` is the whole database's (for the e-value)."""
        if self.fmt == "6":
            return "".join(_tabular(name, len(seq), h, self.columns, self.karlin, residues) for h in hits)
        if self.fmt == "pair":
            return "".join(_pair(name, h, self.scoring) for h in hits)
        return "".join(_sam(name, seq, h) for h in hits)


class AlignReport:
    """One database, one scoring and report form; safe to call from several threads at once.
    fmt: "6" (BLAST tabular, with columns), "pair" or "sam" gives text; "hits" gives each query's
    DatabaseHit list, as search_database does."""

    def __init__(self, db: Database, scoring: scorings.Scoring, top: int, mode: str, fmt: str, columns: list[str],
                 backend: str):
        self.db = db
        self.top = top
        self.mode = mode
        self.backend = backend
        self.fmt = fmt
        self.format = ReportFormat(scoring, fmt, columns)

    def __call__(self, queries: list[tuple[str, bytes]]) -> bytes | list[list[DatabaseHit]]:
        """The report of each (name, sequence) query, in order."""
        text, found = [], []
        for name, seq in queries:
            hits = search_database([seq], self.db, top=self.top, mode=self.mode, threads=1, backend=self.backend)[0]
            if self.fmt == "hits":
                found.append(hits)
            else:
                text.append(self.format(name, seq, hits, self.db.residues()))
        return found if self.fmt == "hits" else "".join(text).encode()


def _tabular(qname: str, qlen: int, hit: DatabaseHit, columns: list[str], karlin, residues: int) -> str:
    a = hit.alignment
    values = {
        "qseqid": qname, "sseqid": hit.name, "score": str(hit.score), "length": str(a.length),
        "pident": f"{100 * a.identities / a.length:.3f}" if a.length else "0.000", "nident": str(a.identities),
        "mismatch": str(a.mismatches), "gapopen": str(a.gap_opens), "qstart": str(a.query_start + 1),
        "qend": str(a.query_end), "sstart": str(a.target_start + 1), "send": str(a.target_end), "cigar": a.cigar or "*",
        "qlen": str(qlen), "slen": str(hit.target_length), "qseq": a.query_aligned, "sseq": a.target_aligned,
    }
    if karlin:
        lam, K = karlin
        values["bitscore"] = f"{(lam * hit.score - math.log(K)) / math.log(2):.1f}"
        values["evalue"] = f"{K * qlen * residues * math.exp(-lam * hit.score):.2e}"
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


def _sam(qname: str, seq: bytes, hit: DatabaseHit) -> str:
    a = hit.alignment
    if not a.length:
        return ""
    clip = (f"{a.query_start}S" if a.query_start else "") + a.cigar + (f"{len(seq) - a.query_end}S" if a.query_end < len(seq) else "")
    return f"{qname}\t0\t{hit.name}\t{a.target_start + 1}\t255\t{clip}\t*\t0\t0\t{seq.decode()}\t*\tAS:i:{hit.score}\n"
