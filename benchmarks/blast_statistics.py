"""seqsift align's bit scores and e-values against blastp's (BLAST+, `-comp_based_stats 0`).

blastp is run on the same queries and database (made with makeblastdb) with `-seg no -evalue
1000`; seqsift align with `--top 500 --evalue 1000`. blastp is heuristic and may report several
alignments (HSPs) per pair, seqsift the one optimal local alignment: the pairs compared are those
where blastp's best HSP has the same raw score as seqsift's, and there the printed evalue and
bitscore must be identical. Every blastp row is also recomputed from its raw score, query length
and subject length (seqsift.alignment.statistics), whether or not seqsift found the same score.

    python benchmarks/blast_statistics.py [--queries Q.fa.gz] [--db DB.fa.gz] [--count 5]

Defaults: the first 5 queries of ../shared/data/proteins_query.fa.gz (else tests/data's) against
tests/data/proteins_db.fa.gz. Peer: apt-get install ncbi-blast+ (the Makefile's bench-peers).
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile

from seqsift.alignment.statistics import KarlinAltschul, format_bits, format_evalue

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def records(path: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                out.append((line[1:].split()[0], ""))
            elif line:
                out[-1] = (out[-1][0], out[-1][1] + line)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default=os.path.join(DATA, "proteins_query.fa.gz"))
    parser.add_argument("--db", default=os.path.join(DATA, "proteins_db.fa.gz"))
    parser.add_argument("--count", type=int, default=5, help="queries taken from the start of --queries")
    args = parser.parse_args()
    version = subprocess.run(["blastp", "-version"], capture_output=True, text=True, check=True).stdout.split("\n")[0]
    with tempfile.TemporaryDirectory() as tmp:
        q, db = os.path.join(tmp, "q.fa"), os.path.join(tmp, "db.fa")
        with open(q, "w") as f:
            f.write("".join(f">{n}\n{s}\n" for n, s in records(args.queries)[: args.count]))
        database = records(args.db)
        with open(db, "w") as f:
            f.write("".join(f">{n}\n{s}\n" for n, s in database))
        subprocess.run(["makeblastdb", "-in", db, "-dbtype", "prot", "-out", os.path.join(tmp, "db")],
                       check=True, capture_output=True)
        fields = "6 qseqid sseqid score evalue bitscore qlen slen"
        blast = subprocess.run(["blastp", "-query", q, "-db", os.path.join(tmp, "db"), "-comp_based_stats", "0",
                                "-seg", "no", "-evalue", "1000", "-max_target_seqs", "500", "-outfmt", fields],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        ours = subprocess.run([sys.executable, "-m", "seqsift", "align", "-q", q, db, "--top", "500", "--evalue",
                               "1000", "--outfmt", fields], capture_output=True, text=True, check=True).stdout.splitlines()
    residues = sum(len(s) for _, s in database)
    ka = KarlinAltschul.of("BLOSUM62", 11, 1)
    recomputed = 0
    best: dict = {}
    for line in blast:
        qn, sn, score, evalue, bits, qlen, slen = line.split("\t")
        recomputed += (format_evalue(ka.evalue(int(score), int(qlen), int(slen), residues)) == evalue
                       and format_bits(ka.bit_score(int(score))) == bits)
        if (qn, sn) not in best or int(score) > int(best[qn, sn][0]):
            best[qn, sn] = (score, evalue, bits)
    mine = {(r[0], r[1]): (r[2], r[3], r[4]) for r in (line.split("\t") for line in ours)}
    same = [k for k in best if k in mine and best[k][0] == mine[k][0]]
    agree = sum(best[k] == mine[k] for k in same)
    print(f"{version}; {args.count} queries, {len(database)} database sequences, {residues:,} residues")
    print(f"blastp rows: {len(blast)}; recomputed from (score, qlen, slen) to the printed digits: {recomputed}")
    print(f"pairs: blastp {len(best)}, seqsift {len(mine)}, same raw score {len(same)}, "
          f"identical evalue and bitscore {agree}")
    for k in same:
        if best[k] != mine[k]:
            print("differs:", k, best[k], mine[k])


if __name__ == "__main__":
    main()
