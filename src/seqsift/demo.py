"""`seqsift demo`: every engine that exists, run on data shipped inside the package."""

from __future__ import annotations

import argparse
import time
from importlib import resources
from typing import TYPE_CHECKING

from seqsift import __version__
from seqsift import backend as backends
from seqsift.options import EXIT_OK

if TYPE_CHECKING:
    import numpy as np

# Restriction sites and the cos site of phage lambda: known answers a newcomer can check.
SITES = (
    ("GAATTC", "EcoRI restriction site"),
    ("GGATCC", "BamHI restriction site"),
    ("AAGCTT", "HindIII restriction site"),
    ("GGGCGGCGACCT", "cos site (left end of the genome)"),
)
THROUGHPUT_BYTES = 256 << 20


def genome_path():
    return resources.files("seqsift") / "data" / "lambda_virus.fa.gz"


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo", parents=[parent],
                       description="Runs each engine on the lambda phage genome shipped inside the package "
                       "and reports what was searched, what was found and how fast.")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    import seqsift
    from seqsift.io.fastx import read_batches

    with resources.as_file(genome_path()) as path:
        batches = list(read_batches(path))
        length = sum(b.seq.size for b in batches)
        backend = backends.resolve(args.backend)
        print(f"seqsift {__version__} demo, backend {backend}: {backends.describe(backend)}, {args.threads} threads")
        print(f"Data: {batches[0].names[0]}, the lambda phage genome, {length:,} bp (embedded in the package)\n")
        print("1. Exact search (seqsift find --fasta --revcomp): every occurrence on both strands")
        for site, what in SITES:
            hits = seqsift.find_records(site, path, revcomp=True, backend=args.backend, threads=args.threads)
            where = ", ".join(f"{p}{s}" for _, p, s in list(hits)[:6]) + (" ..." if len(hits) > 6 else "")
            print(f"   {site:<14} {what:<36} {len(hits):>3} {'hit ' if len(hits) == 1 else 'hits'} {where or '-'}")
        print("   (a palindromic site like GAATTC reads the same on both strands, so each site counts twice)")
    genome = np.concatenate([b.seq for b in batches])
    text = np.resize(genome, THROUGHPUT_BYTES)
    pattern = bytes(genome[1000:1020])
    seqsift.find_count(pattern, text[: 1 << 20], backend=args.backend, threads=args.threads)  # compile first
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        n = seqsift.find_count(pattern, text, backend=args.backend, threads=args.threads)
        runs.append(time.perf_counter() - start)
    rate = text.size / float(np.median(runs)) / 1e9
    print(f"\n   Speed: a 20-base pattern in the genome repeated to {text.size >> 20} MiB in memory: "
          f"{n:,} hits, {rate:.1f} GB/s (median of 3 runs)")
    _scan_part(args, genome)
    _fmindex_part(args)
    _alignment_part(args, genome)
    _map_part(args)
    print("\nTry it:  seqsift find --fasta --revcomp GAATTC genome.fa.gz   |   seqsift find -c --hex 4d5a9000 /usr/bin/*"
          "   |   seqsift scan -r --db sigs.ndb /usr/lib   |   seqsift map genome.fa r1.fq r2.fq -o out.bam")
    return EXIT_OK


def _scan_part(args: argparse.Namespace, genome: np.ndarray) -> None:
    """Signature scanning: three in-memory 'files', a small ClamAV-style database with wildcards,
    then the filter's speed on the genome repeated."""
    import numpy as np
    import seqsift
    from seqsift.scan.api import objects_of
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import from_strings

    cos = bytes(genome[:12]).hex()
    sigs = from_strings([
        ("Demo.EcoRI-BamHI", "474141545443????????{0-1200}474741544343"),  # GAATTC, 4 any, 0-1200 more, GGATCC
        ("Demo.cos-site", cos),
        ("Demo.MZ-header", "4d5a90000300000004000000ffff0000"),
        ("Demo.Hello", "48656c6c6f2c20(77|57)6f726c64"),  # 'Hello, world' or 'Hello, World'
    ])
    files = [bytes(genome[:100]) + bytes(genome[21_000:22_600]), b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + bytes(200),
             b"say Hello, World to " + bytes(genome[20_000:20_500])]
    print("\n2. Signature scanning (seqsift scan --db sigs.ndb): three small objects, four signatures "
          "(one with wildcards and a gap)")
    for k, result in enumerate(seqsift.scan(files, sigs, backend=args.backend, threads=args.threads)):
        for m in result.matches:
            print(f"   object {k}: {m.name} FOUND at offset {m.offsets[0]}" + (f" (+{m.count - 1} more)" if m.count > 1 else ""))
    rng = np.random.default_rng(3)
    hexes = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes().hex() for n in rng.integers(16, 65, 30_000)]
    text = np.resize(genome, 256 << 20).tobytes()
    seqsift.scan([text[: 1 << 20]], hexes[:10], threads=args.threads)  # compile first
    start = time.perf_counter()
    with Scanner(from_strings(hexes), threads=args.threads) as scanner:
        list(scanner.scan(objects_of([text[: 1 << 20]]), lambda path, why: None))  # builds the tables
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        list(scanner.scan(objects_of([text]), lambda path, why: None))
        took = time.perf_counter() - start
    print(f"   Speed: 30,000 random signatures of 16-64 bytes loaded in {loaded:.2f} s, then "
          f"{len(text) >> 20} MiB scanned at {len(text) / took / 1e9:.2f} GB/s")


def _fmindex_part(args: argparse.Namespace) -> None:
    """The FM-index engine: build and save an index, simulate reads, search them, check them."""
    import tempfile

    import seqsift
    from seqsift.fmindex.simulate import simulate

    with resources.as_file(genome_path()) as path, tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        seqsift.FMIndex.build(path).save(f"{tmp}/lambda.ssx")
        built = time.perf_counter() - start
        index = seqsift.FMIndex.load(f"{tmp}/lambda.ssx")
        sites = [site for site, _ in SITES]
        print(f"\n3. FM-index (seqsift index / search): built and saved in {built:.2f} s; the same sites, both strands:")
        for site, (count, hits) in zip(sites, index.locate(sites, max_hits=3)):
            where = ", ".join(f"{h.position}{h.strand}" for h in hits) + (" ..." if count > 3 else "")
            print(f"   {site:<14} {count:>3} {'hit ' if count == 1 else 'hits'} {where or '-'}   (find agrees: "
                  f"{len(seqsift.find_records(site, path, revcomp=True, threads=args.threads))})")
        reads = [seq for _, seq in simulate(path, 200_000, 100, found_fraction=0.9, seed=7)]
        index.count(reads[:100])  # compile first
        start = time.perf_counter()
        counts = index.count(reads)
        rate = len(reads) / (time.perf_counter() - start)
        print(f"   {len(reads):,} simulated 100 bp reads (90% cut from the genome): {int((counts > 0).sum()):,} "
              f"found, {rate / 1e3:,.0f} k reads/s counted on both strands")
        noisy = [seq for _, seq in simulate(path, 20_000, 100, found_fraction=0.9, error_rate=0.01, seed=8,
                                            indel_rate=0.002)]
        exact = int((index.count(noisy) > 0).sum())
        index.count(noisy[:100], errors=2)  # compile first
        start = time.perf_counter()
        within = index.count(noisy, errors=2, distance="edit")
        rate = len(noisy) / (time.perf_counter() - start)
        print(f"   {len(noisy):,} reads with 1% substitutions and 0.2% indels (seqsift search --errors 2): "
              f"{exact:,} found exactly, {int((within > 0).sum()):,} within 2 edits, every place listed, "
              f"{rate / 1e3:,.0f} k reads/s")


def _alignment_part(args: argparse.Namespace, genome: np.ndarray) -> None:
    """Smith-Waterman: one alignment shown in full, then a database search and its speed."""
    import numpy as np
    import seqsift
    from seqsift.alignment import Database, dna, search_database

    rng = np.random.default_rng(5)
    region = genome[30_000:30_060].copy()
    mutated = np.delete(region, [20, 21, 22])  # a 3-base deletion
    mutated[40] = ord("A") if mutated[40] != ord("A") else ord("C")
    scoring = dna(2, -3, 5, 2)
    a = seqsift.align(bytes(mutated), bytes(genome[29_950:30_150]), scoring)
    print("\n4. Smith-Waterman (seqsift align): 57 bases with a 3-base deletion and a substitution against "
          "200 bases of the genome (match 2, mismatch -3, gap 5 + 2 per base):")
    print(f"   score {a.score}, query {a.query_start}-{a.query_end}, target {29_950 + a.target_start}-"
          f"{29_950 + a.target_end}, CIGAR {a.cigar}")
    for line in str(a).splitlines():
        print(f"   {line}")
    pieces = [bytes(genome[p : p + 300]) for p in rng.integers(0, genome.size - 300, 2000)]
    db = Database([f"piece{i}" for i in range(len(pieces))], pieces, scoring)
    query = bytes(genome[10_000:10_150])
    search_database([query], db, top=3, threads=args.threads, backend=args.backend)  # compile, build profiles
    start = time.perf_counter()
    hits = search_database([query], db, top=3, threads=args.threads, backend=args.backend)[0]
    took = time.perf_counter() - start
    print(f"   database search: a 150-base query against {len(db):,} pieces of 300 bases: best "
          + ", ".join(f"{h.name} ({h.score})" for h in hits)
          + f", {150 * db.residues() / took / 1e9:.2f} GCUPS")


def _map_part(args: argparse.Namespace) -> None:
    """Read mapping: simulated lambda reads with substitutions and indels, placed as SAM and
    checked against where they were cut."""
    import tempfile

    from seqsift.fmindex.simulate import simulate
    from seqsift.map.api import map_reads

    with resources.as_file(genome_path()) as path, tempfile.TemporaryDirectory() as tmp:
        reads = simulate(path, 20_000, 150, found_fraction=0.95, error_rate=0.005, seed=11, indel_rate=0.001)
        fastq = f"{tmp}/reads.fq"
        with open(fastq, "w") as f:
            f.write("".join(f"@{h}\n{s.decode()}\n+\n{'I' * len(s)}\n" for h, s in reads))
        map_reads(path, fastq, f"{tmp}/warm.sam", threads=args.threads)  # index and compile first
        start = time.perf_counter()
        counts = map_reads(path, fastq, f"{tmp}/reads.sam", threads=args.threads, read_group="@RG\tID:demo\tSM:lambda")
        took = time.perf_counter() - start
        lines = [line.rstrip("\n").split("\t") for line in open(f"{tmp}/reads.sam") if not line.startswith("@")]
    primary = [f for f in lines if not int(f[1]) & 0x900]
    placed = gapped = 0
    for (header, _), f in zip(reads, primary):
        if "from=" in header and f[2] != "*":
            _, position, _ = header.split()[1][5:].rsplit(":", 2)
            placed += abs(int(f[3]) - 1 - int(position)) <= 10
            gapped += "I" in f[5] or "D" in f[5]
    cut = sum("from=" in h for h, _ in reads)
    print(f"\n5. Read mapping (seqsift map genome.fa reads.fq -o out.sam): {len(reads):,} simulated 150 bp reads "
          f"({cut:,} cut from the genome with 0.5% substitutions and 0.1% indels, the rest random)")
    print(f"   {counts['mapped']:,} mapped, {placed:,} where they were cut ({gapped:,} with an indel in the CIGAR), "
          f"{len(reads) / took / 1e3:,.1f} k reads/s; two records of the SAM:")
    for f in [f for f in primary if "D" in f[5] or "I" in f[5]][:1] + [f for f in primary if f[2] == "*"][:1]:
        print("   " + "  ".join(f[:6] + [f[9][:20] + "..."] + f[11:]))
