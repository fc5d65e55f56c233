"""Queries in, report out: the BLAST tabular and readable-pair formatters of `seqsift align`
(`ReportFormat`), and what every database search runs on each part of its queries (`AlignReport`,
called by cluster.run_queries), on this machine or on a Dask worker."""

from __future__ import annotations

from seqsift import __version__
from seqsift.alignment import DEFAULT_EVALUE
from seqsift.alignment import scoring as scorings
from seqsift.alignment.database import Database, DatabaseHit, search_database
from seqsift.alignment.statistics import KarlinAltschul, format_bits, format_evalue
from seqsift.io.writers import printable

# The columns that need the alignment itself (a traceback); the others come from the score and the lengths.
ALIGNED_COLUMNS = {"pident", "length", "mismatch", "gapopen", "qstart", "qend", "sstart", "send", "nident", "qseq",
                   "sseq", "cigar"}
# What BLAST's outfmt 7 calls each column on its "# Fields:" line.
FIELD_NAMES = {"qseqid": "query id", "sseqid": "subject id", "pident": "% identity", "length": "alignment length",
               "mismatch": "mismatches", "gapopen": "gap opens", "qstart": "q. start", "qend": "q. end",
               "sstart": "s. start", "send": "s. end", "evalue": "evalue", "bitscore": "bit score", "score": "score",
               "qlen": "query length", "slen": "subject length", "nident": "identical", "qseq": "query seq",
               "sseq": "subject seq", "cigar": "cigar"}


class ReportFormat:
    """One report form: '6' (BLAST tabular with `columns`), '7' (the same with BLAST's comment
    lines per query) or 'pair' (SAM, on both strands, is sam.py's). Hits whose e-value is above
    `evalue` are left out, as by blastp's -evalue; where the scoring has no known statistics (DNA,
    a matrix file, gap costs BLAST has no parameters for) evalue and bitscore print as NA and
    every hit is kept."""

    def __init__(self, scoring: scorings.Scoring, fmt: str, columns: list[str], evalue: float = DEFAULT_EVALUE,
                 database: str | None = None):
        self.scoring = scoring
        self.fmt = fmt
        self.columns = columns
        self.evalue = evalue
        self.database = database
        self.karlin = KarlinAltschul.of(scoring.name, scoring.gap_open, scoring.gap_extend)

    @property
    def needs_alignments(self) -> bool:
        """Whether a hit must be traced back: readable pairs, or a column of ALIGNED_COLUMNS."""
        return self.fmt == "pair" or not ALIGNED_COLUMNS.isdisjoint(self.columns)

    def __call__(self, name: str, seq: bytes, hits: list[DatabaseHit], residues: int) -> str:
        """The report of one query's hits; `residues` is the whole database's (for the e-value)."""
        stats = [self._statistics(len(seq), h, residues) for h in hits]
        kept = [(h, st) for h, st in zip(hits, stats) if st is None or st[0] <= self.evalue]
        if self.fmt in ("6", "7"):
            # outfmt 7's name is the whole header line (blastp's '# Query:'); qseqid its first word
            rows = "".join(_tabular(name.split(None, 1)[0], len(seq), h, self.columns, st) for h, st in kept)
            if self.fmt == "6":
                return rows
            head = [f"# seqsift align {__version__}", f"# Query: {printable(name)}"]
            head += [f"# Database: {self.database}"] if self.database else []
            head += [f"# Fields: {', '.join(FIELD_NAMES[c] for c in self.columns)}"] if kept else []
            return "\n".join(head + [f"# {len(kept)} hits found"]) + "\n" + rows
        return "".join(_pair(name, h, self.scoring) for h, _ in kept)

    def _statistics(self, qlen: int, hit: DatabaseHit, residues: int) -> tuple[float, float] | None:
        """(e-value, bit score) of a hit, None where the scoring's statistics are unknown."""
        if self.karlin is None:
            return None
        return (self.karlin.evalue(hit.score, qlen, hit.target_length, residues),
                self.karlin.bit_score(hit.score))


def closing(fmt: str, queries: int) -> str:
    """What ends a whole report: BLAST's '# BLAST processed N queries' under outfmt 7, nothing
    otherwise (blastp prints it after the last query's lines, however many hits each had)."""
    return f"# BLAST processed {queries} queries\n" if fmt == "7" else ""


class AlignReport:
    """One database, one scoring and report form; safe to call from several threads at once.
    fmt: "6" or "7" (BLAST tabular, with columns) or "pair" gives text; "hits" gives each query's
    DatabaseHit list, as search_database does."""

    def __init__(self, db: Database, scoring: scorings.Scoring, top: int, mode: str, fmt: str, columns: list[str],
                 backend: str, evalue: float = DEFAULT_EVALUE, database: str | None = None):
        self.db = db
        self.top = top
        self.mode = mode
        self.backend = backend
        self.fmt = fmt
        self.format = ReportFormat(scoring, fmt, columns, evalue, database)

    def __call__(self, queries: list[tuple[str, bytes]]) -> bytes | list[list[DatabaseHit]]:
        """The report of each (name, sequence) query, in order."""
        text, found = [], []
        for name, seq in queries:
            hits = search_database([seq], self.db, top=self.top, mode=self.mode, threads=1, backend=self.backend,
                                   alignments=self.fmt == "hits" or self.format.needs_alignments)[0]
            if self.fmt == "hits":
                found.append(hits)
            else:
                text.append(self.format(name, seq, hits, self.db.residues()))
        return found if self.fmt == "hits" else "".join(text).encode()


def _tabular(qname: str, qlen: int, hit: DatabaseHit, columns: list[str], stats: tuple[float, float] | None) -> str:
    values = {"qseqid": qname, "sseqid": hit.name, "score": str(hit.score), "qlen": str(qlen),
              "slen": str(hit.target_length)}
    if stats:
        values["evalue"], values["bitscore"] = format_evalue(stats[0]), format_bits(stats[1])
    else:
        values["bitscore"] = values["evalue"] = "NA"
    a = hit.alignment
    if a is not None:
        values.update({
            "length": str(a.length), "pident": f"{100 * a.identities / a.length:.3f}" if a.length else "0.000",
            "nident": str(a.identities), "mismatch": str(a.mismatches), "gapopen": str(a.gap_opens),
            "qstart": str(a.query_start + 1), "qend": str(a.query_end), "sstart": str(a.target_start + 1),
            "send": str(a.target_end), "cigar": a.cigar or "*", "qseq": a.query_aligned, "sseq": a.target_aligned})
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
