"""seqsift scan against Hyperscan, pyahocorasick, grep -F and clamscan: same corpus, same
signatures, same run, whole-process wall times, hit sets checked equal.

Corpus: >= 1 GiB of real binaries copied from /usr/lib and /usr/bin (shared with bench_find.py,
under bench-data/). Signature sets of 16-64 bytes: 30,000 with ~0, 0.1%, 1% and 10% of them cut
from the corpus (present), and 120,000 with 1% present; the rest random. Present signatures are
windows with at least half their bytes distinct (no padding runs). No signature holds 0x0a or
0x00, so grep -F -f can take them as lines.

Peers, each a separate process timed from start to exit:
- Hyperscan (python-hyperscan, block mode per file, HS_FLAG_SINGLEMATCH, patterns as \\xHH
  escapes: its literal mode cuts a pattern at a zero byte), compile included;
- pyahocorasick (one automaton, each file's bytes as latin-1 text);
- grep -F -a -r -l -f under LC_ALL=C (files with a match: grep stops at a file's first match, so
  it does less work than the others; its hit set is compared at file level; in a UTF-8 locale
  GNU grep took over 13 CPU minutes and 8 GB on the first set before it was stopped);
- clamscan -d SET.ndb --allmatch -r with archive/ELF/PE parsing off and the size limits raised.
seqsift runs `seqsift scan -r --db SET.ndb --no-summary -t 1` and with all threads. A peer
running past 15 minutes is stopped and reported so. Fast tools run --runs times (median), in
rounds (each tool once a round, so slow drifts of this noisy machine fall on all of them), the
slow peers (pyahocorasick, grep, clamscan) once.

    python benchmarks/bench_scan.py [--runs 3] [--quick] [--peers hyperscan,ahocorasick,grep,clamscan]

--size 200M scans the first 200 MiB of the corpus instead (hard links under bench-data/scan/);
--one-thread leaves out the all-threads run. Every tool also runs on a one-file tree of one byte
with the same signatures: its fixed cost (start-up and compiling the signatures) apart from the
cost per byte. CPU seconds (user + system) are reported beside wall seconds.

    python benchmarks/bench_scan.py --size 200M --one-thread --peers hyperscan --sets 30k-none,30k-1%,30k-10%,120k-none,120k-1%,120k-10%
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_find import DATA, GiB, build_binaries  # noqa: E402
from benchlib import bench_args, cpu_name, process_rounds, ratio, run_process, tool_version  # noqa: E402

import seqsift  # noqa: E402

SETS = [("30k-none", 30_000, 0.0), ("30k-0.1%", 30_000, 0.001), ("30k-1%", 30_000, 0.01),
        ("30k-10%", 30_000, 0.10), ("120k-1%", 120_000, 0.01), ("120k-none", 120_000, 0.0), ("120k-10%", 120_000, 0.10)]
SLOW_PEERS = ("ahocorasick", "grep", "clamscan")
SEQSIFT = [sys.executable, "-m", "seqsift", "scan"]

HYPERSCAN = textwrap.dedent("""
    import sys, hyperscan
    pats = [l for l in open(sys.argv[1], 'rb').read().split(b'\\n') if l]
    files = open(sys.argv[2]).read().split('\\n')
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[b''.join(b'\\\\x%02x' % c for c in p) for p in pats], ids=list(range(len(pats))),
               flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(pats))
    out = []
    for f in files:
        hits = set()
        db.scan(open(f, 'rb').read(), match_event_handler=lambda i, a, b, fl, c: hits.add(i))
        out.extend(f'{f}\\t{i}' for i in sorted(hits))
    print('\\n'.join(out))
""")

AHOCORASICK = textwrap.dedent("""
    import sys, ahocorasick
    pats = [l for l in open(sys.argv[1], 'rb').read().split(b'\\n') if l]
    files = open(sys.argv[2]).read().split('\\n')
    a = ahocorasick.Automaton()
    for i, p in enumerate(pats):
        a.add_word(p.decode('latin-1'), i)
    a.make_automaton()
    out = []
    for f in files:
        hits = {i for _, i in a.iter(open(f, 'rb').read().decode('latin-1'))}
        out.extend(f'{f}\\t{i}' for i in sorted(hits))
    print('\\n'.join(out))
""")


def make_signatures(files: list[Path], n: int, present: float, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    sigs, seen = [], set()
    n_present = int(round(n * present))
    sizes = np.array([f.stat().st_size for f in files])
    while len(sigs) < n_present:
        length = int(rng.integers(16, 65))
        f = files[int(rng.choice(len(files), p=sizes / sizes.sum()))]
        if f.stat().st_size <= length:
            continue
        with open(f, "rb") as fh:
            fh.seek(int(rng.integers(0, f.stat().st_size - length)))
            w = fh.read(length)
        if len(set(w)) >= length // 2 and 0 not in w and 10 not in w and w not in seen:
            seen.add(w)
            sigs.append(w)
    while len(sigs) < n:
        w = rng.integers(1, 256, int(rng.integers(16, 65)), dtype=np.uint8).tobytes().replace(b"\n", b"\x0b")
        if w not in seen:
            seen.add(w)
            sigs.append(w)
    rng.shuffle(sigs)
    return sigs


def write_set(name: str, sigs: list[bytes]) -> tuple[Path, Path]:
    d = DATA / "scan"
    d.mkdir(parents=True, exist_ok=True)
    ndb, lines = d / f"{name}.ndb", d / f"{name}.txt"
    ndb.write_text("".join(f"Sig{k}:0:*:{s.hex()}\n" for k, s in enumerate(sigs)))
    lines.write_bytes(b"".join(s + b"\n" for s in sigs))
    return ndb, lines


PEER_TIMEOUT = 900  # seconds; a peer past it is reported as timed out


def run(argv: list[str], ok=(0, 1)) -> tuple[float | None, float | None, bytes]:
    """Wall and CPU seconds and stdout of one whole process (LC_ALL=C: grep's bytes are bytes, not
    UTF-8); (None, None, b"") past PEER_TIMEOUT."""
    try:
        return run_process(argv, ok, env={**os.environ, "LC_ALL": "C"}, timeout=PEER_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, None, b""


def hits_seqsift(out: bytes) -> set:
    found = set()
    for line in out.splitlines():
        p, _, n = line[: -len(b" FOUND")].rpartition(b": ")
        found.add((p.decode(), int(n[3:])))
    return found


def hits_tab(out: bytes) -> set:
    return {(a.decode(), int(b)) for a, b in (line.split(b"\t") for line in out.splitlines() if line)}


def hits_clamscan(out: bytes) -> set:
    found = set()
    for line in out.splitlines():
        if line.endswith(b" FOUND"):
            p, _, n = line[: -len(b" FOUND")].rpartition(b": ")
            found.add((p.decode(), int(n.decode().split(".")[0][3:])))
    return found


def bench_set(name, ndb, lines, listing, tree, total, args) -> dict:
    res = {"set": name, "tools": {}}
    threads = os.cpu_count() or 1
    tools = {"seqsift -t 1": ([*SEQSIFT, "-r", "--db", str(ndb), "--no-summary", "-q", "-t", "1", str(tree)], hits_seqsift)}
    if not args.one_thread:
        tools[f"seqsift -t {threads}"] = ([*SEQSIFT, "-r", "--db", str(ndb), "--no-summary", "-q", "-t", str(threads), str(tree)],
                                          hits_seqsift)
    peers = args.peers.split(",") if args.peers else []
    if "hyperscan" in peers:
        tools["hyperscan"] = ([sys.executable, "-c", HYPERSCAN, str(lines), str(listing)], hits_tab)
    if "ahocorasick" in peers:
        tools["pyahocorasick"] = ([sys.executable, "-c", AHOCORASICK, str(lines), str(listing)], hits_tab)
    if "grep" in peers:
        tools["grep -F -f"] = (["grep", "-F", "-a", "-r", "-l", "-f", str(lines), str(tree)],
                               lambda out: {(p.decode(), None) for p in out.splitlines()})
    if "clamscan" in peers:
        tools["clamscan"] = (["clamscan", "-d", str(ndb), "--allmatch", "--no-summary", "-r", "-i", "--scan-archive=no",
                              "--scan-elf=no", "--scan-pe=no", "--scan-ole2=no", "--scan-pdf=no", "--scan-html=no",
                              "--scan-mail=no", "--max-filesize=4000M", "--max-scansize=4000M", str(tree)], hits_clamscan)
    walls: dict[str, list[float]] = {tool: [] for tool in tools}
    cpus: dict[str, list[float]] = {tool: [] for tool in tools}
    hits: dict = {}
    slow = [tool for tool in tools if any(tool.startswith(s) for s in ("pyaho", "grep", "clam"))]
    # the fast tools in rounds, each once a round, so the machine's drift falls on all of them alike
    rounds = [[tool for tool in tools if tool not in slow]] * args.runs + [slow]
    for round_tools in rounds:
        for tool in round_tools:
            if walls[tool] is None:
                continue
            wall, cpu, out = run(tools[tool][0])
            if wall is None:
                walls[tool] = None
                continue
            walls[tool].append(wall)
            cpus[tool].append(cpu)
            hits[tool] = tools[tool][1](out)
    reference = None
    for tool in tools:
        if not walls[tool]:
            res["tools"][tool] = {"timed_out": PEER_TIMEOUT}
            print(f"  {name:9s} {tool:16s} timed out after {PEER_TIMEOUT} s", flush=True)
            continue
        median = float(np.median(walls[tool]))
        entry = {"seconds": median, "times": walls[tool], "runs": len(walls[tool]), "gbps": total / median / 1e9,
                 "pairs": len(hits[tool]), "cpu": float(np.median(cpus[tool])), "cpus": cpus[tool]}
        if reference is None:
            reference = hits[tool]
        elif tool.startswith("grep"):
            entry["same_hits"] = {p for p, _ in reference} == {p for p, _ in hits[tool]}
        else:
            entry["same_hits"] = hits[tool] == reference
        res["tools"][tool] = entry
        print(f"  {name:9s} {tool:16s} {entry['seconds']:7.2f} s (CPU {entry['cpu']:.2f} s)  {entry['gbps']:.3f} GB/s  "
              f"pairs {entry['pairs']}" + ("" if "same_hits" not in entry else f"  same {entry['same_hits']}"), flush=True)
    fast = {tool: argv for tool, (argv, _) in tools.items() if tool not in slow and walls[tool]}
    res["fixed"] = fixed_costs(fast, tree, args.runs)
    return res


def fixed_costs(commands: dict[str, list[str]], tree: Path, runs: int) -> dict[str, dict]:
    """Each command's run on a tree of one one-byte file instead of `tree` (the listing of the
    Hyperscan script likewise): start-up and compiling the signatures, apart from the bytes."""
    tiny = DATA / "scan" / "tiny"
    (tiny / "tree").mkdir(parents=True, exist_ok=True)
    (tiny / "tree" / "one").write_bytes(b"A")
    (tiny / "files.txt").write_text(str(tiny / "tree" / "one"))
    swap = {str(tree): str(tiny / "tree"), str(DATA / "scan" / "files.txt"): str(tiny / "files.txt")}
    on_tiny = {tool: [swap.get(a, a) for a in argv] for tool, argv in commands.items()}
    timed = process_rounds(on_tiny, runs, env={**os.environ, "LC_ALL": "C"})
    for tool, entry in timed.items():
        del entry["stdout"]
        print(f"  {'':9s} {tool:16s} on one byte: {entry['wall']:.2f} s (CPU {entry['cpu']:.2f} s)", flush=True)
    return timed


def thresholds(files: list[Path], limit: int) -> dict:
    """The cost controls' crossover, in process on the first `limit` bytes of the corpus with the
    key + tag table as filter (--filter table): verifying candidates one by one costs c_v seconds a
    candidate, the full CPU pass c_f seconds a byte; past c_f / c_v candidates per byte the full
    pass is cheaper. Measured at 1% and 10% of 30,000 signatures present."""
    from seqsift.scan.api import objects_of
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import load_databases

    chosen, total = [], 0
    for f in files:
        if total >= limit:
            break
        chosen.append(str(f))
        total += f.stat().st_size
    out = {"bytes": total}
    for name in ("30k-1%", "30k-10%"):
        sigs = load_databases([DATA / "scan" / f"{name}.ndb"])
        row = {}
        for mode, block in (("one_by_one", 1 << 62), ("full_pass", 0)):
            with Scanner(sigs, filter="table", threads=1, block_threshold=block, object_threshold=1 << 62) as sc:
                for _ in sc.scan(objects_of(chosen), lambda p, w: None):
                    pass
                row[mode] = {"verify_s": sc.stats.seconds["verify"], "candidates": sc.stats.candidates,
                             "filter_s": sc.stats.seconds["filter"]}
        c_v = row["one_by_one"]["verify_s"] / max(row["one_by_one"]["candidates"], 1)
        c_f = row["full_pass"]["verify_s"] / total
        row["ns_per_candidate"], row["ns_per_byte_full_pass"] = c_v * 1e9, c_f * 1e9
        row["crossover_candidates_per_byte"] = c_f / c_v
        out[name] = row
        print(name, json.dumps(row), flush=True)
    return out


def markdown(result: dict) -> str:
    if any("fixed" in s for s in result["sets"]):
        return whole_markdown(result)
    tools = list(result["sets"][0]["tools"])
    rows = [f"| set | {' | '.join(tools)} |", "|---" * (len(tools) + 1) + "|"]
    for s in result["sets"]:
        cells = []
        for t in tools:
            e = s["tools"].get(t)
            if e is None or "timed_out" in e:
                cells.append("-" if e is None else f"over {e['timed_out']} s")
                continue
            cells.append(f"{e['gbps']:.2f} GB/s ({e['seconds']:.1f} s)" + ("" if e.get("same_hits", True) else " **hits differ**"))
        rows.append(f"| {s['set']} | {' | '.join(cells)} |")
    pairs = ", ".join(f"{s['set']}: {s['tools'][tools[0]]['pairs']}" for s in result["sets"])
    return "\n".join(rows) + (f"\n\n(file, signature) pairs found: {pairs}. "
                               f"Corpus {result['corpus_bytes'] / 1e9:.2f} GB in {result['files']} files.\n")


def whole_markdown(result: dict) -> str:
    """Per set: seqsift -t 1 and Hyperscan, wall (CPU) on the corpus and on one byte, the ratio,
    and the CPU cost per GB once the fixed cost is taken off."""
    gb = result["corpus_bytes"] / 1e9
    rows = ["| set | seqsift -t 1 wall (CPU) s | Hyperscan wall (CPU) s | Hyperscan time / seqsift time: wall (CPU) "
            "| seqsift CPU: fixed + per GB | Hyperscan CPU: fixed + per GB | same hits |", "|---" * 7 + "|"]
    for s in result["sets"]:
        ours, peer = s["tools"].get("seqsift -t 1"), s["tools"].get("hyperscan")
        if not ours or not peer or "timed_out" in peer:
            continue
        fo, fp = s["fixed"]["seqsift -t 1"]["cpu"], s["fixed"]["hyperscan"]["cpu"]
        rows.append(f"| {s['set']} | {ours['seconds']:.2f} ({ours['cpu']:.2f}) | {peer['seconds']:.2f} ({peer['cpu']:.2f}) "
                    f"| {ratio(peer['seconds'], ours['seconds'])} ({ratio(peer['cpu'], ours['cpu'])}) "
                    f"| {fo:.2f} s + {max(ours['cpu'] - fo, 0) / gb:.2f} s | {fp:.2f} s + {max(peer['cpu'] - fp, 0) / gb:.2f} s "
                    f"| {peer.get('same_hits')} |")
    return "\n".join(rows) + (f"\n\nCorpus {result['corpus_bytes'] / 2**20:,.0f} MiB in {result['files']} files; "
                               f"(file, signature) pairs: " + ", ".join(f"{s['set']}: {s['tools']['seqsift -t 1']['pairs']}"
                                                                      for s in result["sets"]) + ".\n")


def main() -> None:
    args = bench_args(__doc__, DATA / "bench_scan.json", markdown, lambda p: (
        p.add_argument("--quick", action="store_true", help="a 128 MiB corpus and the 30k sets only"),
        p.add_argument("--size", help="scan only the first SIZE of the corpus (e.g. 200M)"),
        p.add_argument("--one-thread", action="store_true", help="leave out the all-threads run"),
        p.add_argument("--peers", default="hyperscan,ahocorasick,grep,clamscan"),
        p.add_argument("--thresholds", action="store_true", help="only measure the threshold crossover (needs the sets)"),
        p.add_argument("--sets", help="comma-separated set names to run (default: all)"),
        p.add_argument("--merge", action="store_true",
                       help="update the tools measured now in an existing --json, keeping the other tools' entries")))
    if args is None:
        return
    tree, files = build_binaries(GiB)
    tree = Path(os.path.realpath(tree))  # the listing holds resolved paths: tools must print the same
    if args.quick or args.size:
        from seqsift.options import parse_size

        limit = parse_size(args.size) if args.size else 128 << 20
        if args.quick:
            files = files[: np.searchsorted(np.cumsum([f.stat().st_size for f in files]), limit)]
        else:  # files in corpus order while they fit: one large file early does not end the list
            chosen, total = [], 0
            for f in files:
                if total + f.stat().st_size <= limit:
                    chosen.append(f)
                    total += f.stat().st_size
            files = chosen
        tree = DATA / "scan" / ("quick" if args.quick else f"first-{args.size}")
        if not tree.exists():
            for f in files:
                dst = tree / f.relative_to(DATA / "binaries")
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.link(f, dst)
        files = sorted(p for p in tree.rglob("*") if p.is_file())
    if args.thresholds:
        (DATA / "scan_thresholds.json").write_text(json.dumps(thresholds(files, 256 << 20), indent=1))
        return
    listing = DATA / "scan" / "files.txt"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text("\n".join(str(f) for f in files))
    total = sum(f.stat().st_size for f in files)
    print(f"corpus: {total / 1e9:.2f} GB in {len(files)} files")
    result = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_name(), "cores": os.cpu_count(), "seqsift": seqsift.__version__,
              "hyperscan": _pkg("hyperscan"), "pyahocorasick": _pkg("pyahocorasick"),
              "grep": tool_version(["grep", "--version"]), "clamscan": tool_version(["clamscan", "--version"]),
              "corpus_bytes": total, "files": len(files), "runs": args.runs, "sets": []}
    wanted = set(args.sets.split(",")) if args.sets else None
    earlier = json.loads(args.json.read_text()) if args.merge and args.json.exists() else None
    for k, (name, n, present) in enumerate(SETS[:4] if args.quick else SETS):
        if wanted and name not in wanted:
            continue
        ndb, lines = write_set(name, make_signatures(files, n, present, seed=k))
        measured = bench_set(name, ndb, lines, listing, tree, total, args)
        if earlier is not None:
            old = next(s for s in earlier["sets"] if s["set"] == name)
            old["tools"].update(measured["tools"])
            earlier.setdefault("reruns", []).append({"date": result["date"], "set": name, "tools": list(measured["tools"])})
            args.json.write_text(json.dumps(earlier, indent=1))
        else:
            result["sets"].append(measured)
            args.json.write_text(json.dumps(result, indent=1))
    if earlier is not None:
        result = earlier
    print(markdown(result))


def _pkg(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    main()
