"""Smith-Waterman: seqsift against parasail and SSW, same inputs, same run.

1. Protein database search, score only, one thread: 20 queries of 100-1000 aa from
   ../shared/data/proteins_query.fa.gz (evenly spread over that length range) against all 20,000
   sequences of proteins_db.fa.gz, BLOSUM62, gap open 11 extend 1 (parasail/SSW: open 12). GCUPS
   per query for seqsift's lanes kernels (in process; the database profiles are built once, timed
   apart), parasail's Python sw_striped_profile_sat and _16 (query profile reused), and for the
   whole query set parasail_aligner -t 1 and SSW's ssw_test -p. Scores are compared to parasail's.
2. DNA pairs with traceback: 2,000 pairs of ~1 kbp at ~10% divergence, linear (1/-1, gap 2) and
   affine (2/-3, open 5 extend 2): pairs/s of seqsift.alignment.align_pairs (32 pairs in vector
   lanes, each result a full alignment: CIGAR, aligned strings, match line) against parasail
   sw_trace_scan_16 (score only, and with get_traceback() building the aligned strings) and SSW's
   library (libssw, CIGAR returned) called through ctypes. Scores are compared to the oracle's
   (seqsift's: the tests check it against the naive O(mn) one).

    python benchmarks/bench_align.py [--runs 3] [--only dna] [--render bench-data/bench_align.json]

--whole times whole processes only, one thread, in rounds, wall and CPU seconds, each also on a
tiny input (its fixed cost): `seqsift align -t 1` (query and target names and scores, as
parasail_aligner reports; and BLAST's 12 columns, whose alignments add a traceback per hit)
against parasail_aligner -t 1 (striped, 8 then 16 bit) and a script of parasail's Python
sw_striped_profile_sat, 5 queries against the 20,000 proteins; and a script of seqsift.alignment.align_pairs against one of parasail's
sw_trace_striped_16 and sw_trace_scan_16 with get_traceback(), on the 2,000 DNA pairs.

    python benchmarks/bench_align.py --whole [--runs 5]

Peers: pip install parasail (the bench extra), apt-get install parasail ssw-align.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import statistics
import subprocess
import time
from importlib import resources
from pathlib import Path

import numpy as np

import seqsift
from benchlib import bench_args, cpu_name, process_rounds, ratio, shared_data, tool_version
from seqsift.alignment import Database, align_pairs, dna, matrix
from seqsift.alignment.database import scores

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"


def read_fasta(path: Path) -> list[tuple[str, str]]:
    records = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith(">"):
                records.append([line[1:].split()[0], []])
            elif line.strip():
                records[-1][1].append(line.strip().upper())
    return [(n, "".join(s)) for n, s in records]


def pick_queries(records, count=20, lo=100, hi=1000):
    """count queries whose lengths spread evenly over [lo, hi]."""
    eligible = sorted((len(s), n, s) for n, s in records if lo <= len(s) <= hi)
    picks = [eligible[round(k * (len(eligible) - 1) / (count - 1))] for k in range(count)]
    return [(n, s) for _, n, s in picks]


def median_time(fn, runs):
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def in_rounds(tools: dict, runs: int) -> tuple[dict, dict]:
    """Each tool (a function of no arguments) run `runs` times in rounds, each once a round, so
    this machine's drift over minutes falls on all of them; (times per tool, last result per tool)."""
    times: dict[str, list[float]] = {tool: [] for tool in tools}
    results: dict = {}
    for _ in range(runs):
        for tool, fn in tools.items():
            start = time.perf_counter()
            results[tool] = fn()
            times[tool].append(time.perf_counter() - start)
    return times, results


def protein_search(runs: int) -> tuple[list[dict], list[dict]]:
    import parasail

    db_records = read_fasta(shared_data("proteins_db.fa.gz"))
    queries = pick_queries(read_fasta(shared_data("proteins_query.fa.gz")))
    scoring = matrix("BLOSUM62", 11, 1)
    start = time.perf_counter()
    db = Database([n for n, _ in db_records], [s for _, s in db_records], scoring)
    for b in range(len(db.batches)):
        db.profile(b, 8)
    prep = time.perf_counter() - start
    residues = db.residues()
    db_seqs = [s for _, s in db_records]
    scores(scoring.encode(queries[0][1][:10]), db)  # compile the 8-bit pass
    longest = max(db.codes, key=len)
    scores(longest[:300], db)  # its own sequence saturates 8 bits: compile the 16-bit pass before timing
    rows, mismatches = [], 0
    for name, q in queries:
        cells = len(q) * residues
        encoded = scoring.encode(q)
        sat, wide = parasail.profile_create_sat(q, parasail.blosum62), parasail.profile_create_16(q, parasail.blosum62)
        times, results = in_rounds({
            "parasail sat (8 then 16 bit)": lambda: [parasail.sw_striped_profile_sat(sat, s, 12, 1).score for s in db_seqs],
            "parasail 16 bit": lambda: [parasail.sw_striped_profile_16(wide, s, 12, 1).score for s in db_seqs],
            "seqsift (8 then 16 bit lanes)": lambda: scores(encoded, db)}, runs)
        for tool, taken in times.items():
            rows.append({"query": name, "length": len(q), "tool": tool, "gcups": cells / statistics.median(taken) / 1e9,
                         "times": taken})
        mismatches += int(np.sum(np.asarray(results["parasail sat (8 then 16 bit)"]) != results["seqsift (8 then 16 bit lanes)"]))
    whole = cli_peers(queries, db_records, residues, runs)
    meta = {"database_prep_s": prep, "score_mismatches_vs_parasail": mismatches, "queries": len(queries),
            "db_sequences": len(db_records), "db_residues": residues}
    return rows, [meta] + whole


def cli_peers(queries, db_records, residues, runs) -> list[dict]:
    """parasail_aligner and SSW over the whole query set, one thread."""
    q_path, db_path = DATA / "align_queries.fa", DATA / "align_db.fa"
    q_path.write_text("".join(f">{n}\n{s}\n" for n, s in queries))
    db_path.write_text("".join(f">{n}\n{s}\n" for n, s in db_records))
    cells = sum(len(s) for _, s in queries) * residues
    # SSW's matrix reader takes the NCBI layout without its comment lines
    ssw_matrix = DATA / "blosum62_ssw.txt"
    shipped = (resources.files("seqsift.alignment") / "matrices" / "BLOSUM62").read_text()
    ssw_matrix.write_text("".join(line + "\n" for line in shipped.splitlines() if not line.startswith("#")))
    out = []
    commands = {  # parasail_aligner counts a non-terminal stdin as an input: the queries go there
        "parasail_aligner -t 1 (sat)": (["parasail_aligner", "-a", "sw_striped_profile_sat", "-x", "-t", "1", "-o", "12",
                                         "-e", "1", "-m", "blosum62", "-f", str(db_path), "-g", str(DATA / "parasail.out")],
                                        q_path),
        "SSW ssw_test -p": (["ssw_test", "-p", "-o", "12", "-e", "1", "-a", str(ssw_matrix), str(db_path), str(q_path)], None),
    }
    for label, (argv, stdin) in commands.items():
        def go():
            with open(stdin or os.devnull, "rb") as source:
                subprocess.run(argv, stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        try:
            t, _ = median_time(go, runs)
            out.append({"tool": label, "gcups": cells / t / 1e9, "seconds": t})
        except (OSError, subprocess.CalledProcessError) as exc:
            out.append({"tool": label, "gcups": None, "error": str(exc)})
    return out


def mutate(seq: np.ndarray, rng, rate: float) -> np.ndarray:
    out = []
    for c in seq.tolist():
        r = rng.random()
        if r < rate / 3:
            out.append(int(rng.integers(0, 4)))
        elif r < 2 * rate / 3:
            out += [c, int(rng.integers(0, 4))]
        elif r >= rate:
            out.append(c)
    return np.array(out, np.uint8)


def ssw_aligner(scoring):
    """A function (query, target) -> score through libssw (Debian's libssw0), or None without it.
    SSW charges its gap open for the first residue: ours (open, extend) is its (open + extend,
    extend). flag 1 asks for the CIGAR, as our results carry the alignment."""
    import ctypes

    try:
        lib = ctypes.CDLL("libssw.so.0")
    except OSError:
        return None

    class Alignment(ctypes.Structure):
        _fields_ = [("score1", ctypes.c_uint16), ("score2", ctypes.c_uint16), ("ref_begin1", ctypes.c_int32),
                    ("ref_end1", ctypes.c_int32), ("read_begin1", ctypes.c_int32), ("read_end1", ctypes.c_int32),
                    ("ref_end2", ctypes.c_int32), ("cigar", ctypes.POINTER(ctypes.c_uint32)), ("cigarLen", ctypes.c_int32)]

    lib.ssw_init.restype = ctypes.c_void_p
    lib.ssw_init.argtypes = [ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int8]
    lib.ssw_align.restype = ctypes.POINTER(Alignment)
    lib.ssw_align.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_uint8, ctypes.c_uint8,
                              ctypes.c_uint8, ctypes.c_uint16, ctypes.c_int32, ctypes.c_int32]
    lib.init_destroy.argtypes = [ctypes.c_void_p]
    lib.align_destroy.argtypes = [ctypes.POINTER(Alignment)]
    table = bytes.maketrans(b"ACGTN", bytes(range(5)))
    mat = scoring.matrix.astype(np.int8).tobytes()
    go, ge = scoring.gap_open + scoring.gap_extend, scoring.gap_extend

    def align(query: str, target: str) -> int:
        q, t = query.encode().translate(table), target.encode().translate(table)
        profile = lib.ssw_init(q, len(q), mat, 5, 2)
        result = lib.ssw_align(profile, t, len(t), go, ge, 1, 0, 0, 15)
        score = result.contents.score1
        lib.align_destroy(result)
        lib.init_destroy(profile)
        return score

    return align


def dna_pairs(runs: int, count: int = 2000) -> list[dict]:
    import parasail

    rng = np.random.default_rng(11)
    letters = np.frombuffer(b"ACGT", np.uint8)
    pairs = []
    for _ in range(count):
        q = rng.integers(0, 4, int(rng.integers(900, 1100))).astype(np.uint8)
        pairs.append((letters[q].tobytes().decode(), letters[mutate(q, rng, 0.1)].tobytes().decode()))
    rows = []
    for label, scoring in (("linear 1/-1, gap 2", dna(1, -1, 0, 2)), ("affine 2/-3, open 5 extend 2", dna(2, -3, 5, 2))):
        pm = parasail.matrix_create("ACGT", int(scoring.matrix[0, 0]), int(scoring.matrix[0, 1]))
        go, ge = scoring.gap_open + scoring.gap_extend, scoring.gap_extend
        queries, targets = [q for q, _ in pairs], [t for _, t in pairs]
        align_pairs(queries[:2], targets[:2], scoring)

        def with_traceback(q, t):
            result = parasail.sw_trace_scan_16(q, t, go, ge, pm)
            result.get_traceback()  # the aligned strings and match line, as our results carry
            return result.score

        tools = {"seqsift align_pairs (alignments)": lambda: [a.score for a in align_pairs(queries, targets, scoring)],
                 "parasail sw_trace_scan_16 (score)": lambda: [parasail.sw_trace_scan_16(q, t, go, ge, pm).score for q, t in pairs],
                 "parasail sw_trace_scan_16 + get_traceback": lambda: [with_traceback(q, t) for q, t in pairs]}
        ssw = ssw_aligner(scoring)
        if ssw:
            tools["SSW (libssw, CIGAR)"] = lambda: [ssw(q, t) for q, t in pairs]
        times, results = in_rounds(tools, runs)
        ours = results["seqsift align_pairs (alignments)"]
        for tool in tools:
            row = {"scoring": label, "tool": tool, "pairs_per_s": count / statistics.median(times[tool]),
                   "times": times[tool]}
            if results[tool] is not ours:
                row["score_mismatches"] = int(sum(a != b for a, b in zip(ours, results[tool])))
            rows.append(row)
    return rows


PARASAIL_SEARCH = """
import sys, gzip, parasail
def fasta(path):
    name, seq, out = None, [], []
    for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
        if line.startswith(">"):
            if name is not None: out.append((name, "".join(seq)))
            name, seq = line[1:].split()[0], []
        else: seq.append(line.strip().upper())
    if name is not None: out.append((name, "".join(seq)))
    return out
db = fasta(sys.argv[2])
for qname, q in fasta(sys.argv[1]):
    profile = parasail.profile_create_sat(q, parasail.blosum62)
    scored = sorted(((parasail.sw_striped_profile_sat(profile, s, 12, 1).score, n) for n, s in db), reverse=True)[:10]
    print("\\n".join(f"{qname}\\t{n}\\t{score}" for score, n in scored))
"""

SEQSIFT_PAIRS = """
import sys
from seqsift.alignment import align_pairs, dna
lines = open(sys.argv[1]).read().split()
for a in align_pairs(lines[0::2], lines[1::2], dna(1, -1, 0, 2), threads=1):
    print(a.score, a.cigar, a.query_aligned, a.match_line, a.target_aligned)
"""

PARASAIL_PAIRS = """
import sys, parasail
lines = open(sys.argv[1]).read().split()
align = getattr(parasail, sys.argv[2])
matrix = parasail.matrix_create("ACGT", 1, -1)
for q, t in zip(lines[0::2], lines[1::2]):
    r = align(q, t, 2, 2, matrix)
    tb = r.get_traceback()
    print(r.score, r.cigar.decode.decode() if hasattr(r.cigar.decode, "decode") else r.cigar.decode, tb.query, tb.comp, tb.ref)
"""


def whole_processes(runs: int) -> dict:
    """The protein search and the DNA pairs as whole processes, one thread, each tool also on a
    tiny input; scores checked equal (the protein hits as sets of (query, target, score))."""
    import sys

    db_records = read_fasta(shared_data("proteins_db.fa.gz"))
    db_note = f"{len(db_records):,} proteins of {shared_data('proteins_db.fa.gz')}"
    if len(db_records) < 20_000:  # the subset under tests/data: repeated to the database's 20,000
        db_note += ", repeated to 20,000"
        db_records = [(f"{n}.{k}", s) for k in range(-(-20_000 // len(db_records))) for n, s in db_records][:20_000]
    queries = pick_queries(read_fasta(shared_data("proteins_query.fa.gz")), count=5)
    q_path, db_path, tiny_q, tiny_db = (DATA / name for name in ("whole_q.fa", "whole_db.fa", "tiny_q.fa", "tiny_db.fa"))
    q_path.write_text("".join(f">{n}\n{s}\n" for n, s in queries))
    db_path.write_text("".join(f">{n}\n{s}\n" for n, s in db_records))
    tiny_q.write_text("".join(f">{n}\n{s}\n" for n, s in queries[:1]))  # the same kernels, on 20 sequences
    tiny_db.write_text("".join(f">{n}\n{s}\n" for n, s in db_records[:20]))
    seqsift_cmd = [sys.executable, "-m", "seqsift", "align", "-q", "-t", "1", "--top", "10", "--evalue", "1e9",
                   "--outfmt", "6 qseqid sseqid score"]

    def aligner(q, d):
        return ["sh", "-c", f"parasail_aligner -a sw_striped_profile_sat -x -t 1 -o 12 -e 1 -m blosum62 -f {d} "
                            f"-g {DATA / 'parasail_whole.out'} < {q}"]

    commands = {"seqsift align -t 1": seqsift_cmd + [str(q_path), str(db_path)],
                # BLAST's 12 columns need each hit's alignment (a traceback), which the scores alone do not
                "seqsift align -t 1, 12 columns": seqsift_cmd[:-2] + ["--outfmt", "6", str(q_path), str(db_path)],
                "parasail_aligner -t 1 (sat)": aligner(q_path, db_path),
                "parasail Python sat (script)": [sys.executable, "-c", PARASAIL_SEARCH, str(q_path), str(db_path)]}
    tiny = {t + " (tiny)": argv[:-2] + [str(tiny_q), str(tiny_db)] if not t.startswith("parasail_aligner") else aligner(tiny_q, tiny_db)
            for t, argv in commands.items()}
    protein = process_rounds({**commands, **tiny}, runs)
    hits = {t: {tuple(line.split(b"\t")) for line in protein[t]["stdout"].splitlines()}
            for t in commands if "Python" in t or t == "seqsift align -t 1"}
    cells = sum(len(s) for _, s in queries) * sum(len(s) for _, s in db_records)
    result = {"protein": {t: {k: v for k, v in e.items() if k != "stdout"} for t, e in protein.items()}, "database": db_note,
              "protein_cells": cells, "protein_same_top_scores": _same_scores(*hits.values())}

    rng = np.random.default_rng(11)
    letters = np.frombuffer(b"ACGT", np.uint8)
    pairs_path, tiny_pairs = DATA / "whole_pairs.txt", DATA / "tiny_pairs.txt"
    with open(pairs_path, "w") as out:
        for _ in range(2000):
            q = rng.integers(0, 4, int(rng.integers(900, 1100))).astype(np.uint8)
            out.write(f"{letters[q].tobytes().decode()}\n{letters[mutate(q, rng, 0.1)].tobytes().decode()}\n")
    tiny_pairs.write_text("".join(pairs_path.read_text().splitlines(keepends=True)[:4]))  # two of the pairs
    pair_tools = {"seqsift align_pairs (script)": [sys.executable, "-c", SEQSIFT_PAIRS],
                  "parasail sw_trace_striped_16 (script)": [sys.executable, "-c", PARASAIL_PAIRS, "", "sw_trace_striped_16"],
                  "parasail sw_trace_scan_16 (script)": [sys.executable, "-c", PARASAIL_PAIRS, "", "sw_trace_scan_16"]}
    def with_input(argv, path):
        return [a if a != "" else str(path) for a in argv] if "" in argv else argv + [str(path)]
    pair_commands = {t: with_input(a, pairs_path) for t, a in pair_tools.items()}
    pair_commands.update({t + " (tiny)": with_input(a, tiny_pairs) for t, a in pair_tools.items()})
    dna_runs = process_rounds(pair_commands, runs)
    scores_of = {t: [int(line.split()[0]) for line in dna_runs[t]["stdout"].splitlines()] for t in pair_tools}
    result["dna"] = {t: {k: v for k, v in e.items() if k != "stdout"} for t, e in dna_runs.items()}
    result["dna_same_scores"] = len({tuple(v) for v in scores_of.values()}) == 1
    return result


def _same_scores(a: set, b: set) -> bool:
    """The same multiset of top scores per query (ties may name other targets)."""
    def per_query(hits):
        out: dict = {}
        for q, _, score in hits:
            out.setdefault(q, []).append(int(score))
        return {q: sorted(v) for q, v in out.items()}
    return per_query(a) == per_query(b)


def whole_markdown(result: dict) -> str:
    lines = ["| task | tool | wall (CPU) s | on a tiny input: wall (CPU) s | peer time / seqsift time: wall (CPU) |",
             "| --- | --- | --- | --- | --- |"]
    for task, ours in (("protein", "seqsift align -t 1"), ("dna", "seqsift align_pairs (script)")):
        rows = {t: e for t, e in result[task].items() if not t.endswith("(tiny)")}
        for tool, e in rows.items():
            tiny = result[task][tool + " (tiny)"]
            rel = "" if tool == ours else f"{ratio(e['wall'], rows[ours]['wall'])} ({ratio(e['cpu'], rows[ours]['cpu'])})"
            lines.append(f"| {task} | {tool} | {e['wall']:.2f} ({e['cpu']:.2f}) | {tiny['wall']:.2f} ({tiny['cpu']:.2f}) | {rel} |")
    lines.append(f"\nDatabase: {result['database']}. Tiny inputs: the first query against the first 20 database "
                 "sequences; two of the DNA pairs. "
                 f"Top-10 scores per query the same as parasail's: {result['protein_same_top_scores']}; "
                 f"DNA pair scores all equal: {result['dna_same_scores']}.")
    return "\n".join(lines)


def main() -> None:
    args = bench_args(__doc__, DATA / "bench_align.json", markdown,
                      lambda p: (p.add_argument("--only", choices=["dna"], help="run the DNA pairs part alone"),
                                 p.add_argument("--whole", action="store_true", help="whole processes only")))
    if args is None:
        return
    DATA.mkdir(exist_ok=True)
    if args.whole:
        result = whole_processes(args.runs)
        result["meta"] = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_name(), "cores": os.cpu_count(),
                          "seqsift": seqsift.__version__, "runs": args.runs}
        (DATA / "bench_align_whole.json").write_text(json.dumps(result, indent=1))
        print(whole_markdown(result))
        return
    protein_rows, whole = protein_search(args.runs) if args.only != "dna" else ([], [])
    import parasail

    meta = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_name(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numba": __import__("numba").__version__, "seqsift": seqsift.__version__,
            "parasail": parasail.__version__, "parasail_aligner": tool_version(["dpkg-query", "-W", "-f", "${Version}", "parasail"]),
            "ssw": tool_version(["dpkg-query", "-W", "-f", "${Version}", "ssw-align"]), "runs": args.runs}
    result = {"meta": meta, "protein": protein_rows, "whole": whole, "dna": dna_pairs(args.runs)}
    args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))


def markdown(result: dict) -> str:
    if "protein_cells" in result:
        return whole_markdown(result)
    m = result["meta"]
    lines = [f"{m['date']}, {m['cpu']} ({m['cores']} cores), Python {m['python']}, numba {m['numba']}, seqsift "
             f"{m['seqsift']}, parasail (Python) {m['parasail']}, parasail_aligner {m['parasail_aligner']}, "
             f"SSW {m['ssw']}; medians of {m['runs']} runs, one thread.", ""]
    lines += ["| DNA pairs (~1 kbp, 10% divergence, 2,000) | tool | pairs/s | scores differing from seqsift's |",
              "| --- | --- | --- | --- |"]
    lines += [f"| {r['scoring']} | {r['tool']} | {r['pairs_per_s']:,.0f} | {r.get('score_mismatches', '')} |"
              for r in result["dna"]]
    for scoring in dict.fromkeys(r["scoring"] for r in result["dna"]):
        rows = {r["tool"]: r for r in result["dna"] if r["scoring"] == scoring}
        ours, theirs = rows["seqsift align_pairs (alignments)"], rows["parasail sw_trace_scan_16 (score)"]
        if "times" in ours:
            ratios = [b / a for a, b in zip(ours["times"], theirs["times"])]
            lines.append(f"\n{scoring}: parasail's trace kernel time / seqsift's, round by round: "
                         + ", ".join(f"{x:.2f}" for x in ratios) + f" (seqsift faster in {sum(x > 1 for x in ratios)} of {len(ratios)}).")
    if not result["protein"]:
        return "\n".join(lines)
    lines.append("")
    info = result["whole"][0]
    tools = list(dict.fromkeys(r["tool"] for r in result["protein"]))
    lines += ["| query | length | " + " | ".join(tools) + " |", "| --- | --- |" + " --- |" * len(tools)]
    for q in dict.fromkeys(r["query"] for r in result["protein"]):
        cells = {r["tool"]: r for r in result["protein"] if r["query"] == q}
        first = next(iter(cells.values()))
        lines.append(f"| {q} | {first['length']} | " + " | ".join(f"{cells[t]['gcups']:.2f}" for t in tools) + " |")
    medians = {t: statistics.median(r["gcups"] for r in result["protein"] if r["tool"] == t) for t in tools}
    lines.append("| median | | " + " | ".join(f"**{medians[t]:.2f}**" for t in tools) + " |")
    timed = {(r["query"], r["tool"]): r["times"] for r in result["protein"] if "times" in r}
    if timed:
        ratios = [(b / a, q) for (q, tool), times in timed.items() if tool.startswith("seqsift")
                  for a, b in zip(times, timed[(q, "parasail sat (8 then 16 bit)")])]
        worst = min(ratios)
        lengths = {r["query"]: r["length"] for r in result["protein"]}
        lines += ["", f"Round by round (each tool once a round, per query): seqsift faster than parasail sat in "
                  f"{sum(x > 1 for x, _ in ratios)} of {len(ratios)} rounds; the smallest ratio {worst[0]:.2f} "
                  f"({lengths[worst[1]]} aa)."]
    lines += ["", f"Whole set ({info['queries']} queries x {info['db_sequences']:,} sequences, {info['db_residues']:,} "
              f"residues): " + "; ".join(f"{r['tool']} {r['gcups']:.2f} GCUPS" if r.get("gcups") else f"{r['tool']} failed"
                                         for r in result["whole"][1:])
              + f". Database profiles built in {info['database_prep_s']:.2f} s (once per database and scoring). "
              f"Scores differing from parasail's: {info['score_mismatches_vs_parasail']}."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
