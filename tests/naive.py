"""Slow, obvious oracles every fast path is checked against."""

from __future__ import annotations

import bz2
import gzip
import lzma

COMPLEMENT = {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N"}


def find_all(text: bytes, pattern: bytes) -> list[int]:
    """Every start i with text[i:i+m] == pattern, by comparing at every position."""
    m = len(pattern)
    return [i for i in range(len(text) - m + 1) if text[i : i + m] == pattern]


def find_all_fast(text: bytes, pattern: bytes) -> list[int]:
    """The same answer as find_all through bytes.find, for the multi-megabyte real files."""
    out, i = [], text.find(pattern)
    while i >= 0:
        out.append(i)
        i = text.find(pattern, i + 1)
    return out


def open_any(path):
    with open(path, "rb") as f:
        head = f.read(6)
    if head.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rb")
    if head.startswith(b"BZh"):
        return bz2.open(path, "rb")
    if head.startswith(b"\xfd7zXZ"):
        return lzma.open(path, "rb")
    return open(path, "rb")


def read_records(path) -> list[tuple[str, str]]:
    """(name, upper-case sequence) of every FASTA or FASTQ record, line by line."""
    with open_any(path) as f:
        lines = f.read().decode().splitlines()
    records = []
    if lines and lines[0].startswith("@"):
        for i in range(0, len(lines) - 3, 4):
            records.append((lines[i][1:].split()[0], lines[i + 1].strip().upper()))
        return records
    for line in lines:
        if line.startswith(">"):
            records.append((line[1:].split()[0], []))
        elif line.strip():
            records[-1][1].append(line.strip().upper())
    return [(name, "".join(parts)) for name, parts in records]


def reverse_complement(seq: str) -> str:
    return "".join(COMPLEMENT.get(c, c) for c in reversed(seq))


def record_hits(records, pattern: str, revcomp: bool) -> list[tuple[str, int, str]]:
    """Sorted (record, position, strand) of pattern (and its reverse complement) in each record."""
    pattern = pattern.upper()
    hits = []
    for name, seq in records:
        seq_b = seq.encode()
        hits += [(name, i, "+") for i in find_all_fast(seq_b, pattern.encode())]
        if revcomp:
            hits += [(name, i, "-") for i in find_all_fast(seq_b, reverse_complement(pattern).encode())]
    order = {name: k for k, (name, _) in enumerate(records)}
    return sorted(hits, key=lambda h: (order[h[0]], h[1], h[2]))


def dna_hits(records, read: str) -> list[tuple[str, int, str]]:
    """What `seqsift search` must report for a read: its hits on both strands in reference
    order; none for an empty read or one with a letter other than A, C, G, T."""
    read = read.upper()
    if not read or set(read) - set("ACGT"):
        return []
    return record_hits(records, read, revcomp=True)


def sam_primary(name: str, sites: int) -> int:
    """Which of a read's listed sites search's SAM makes primary: FNV-1a (64 bits) of the name,
    from the offset basis mixed with the fixed seed, modulo the number of sites."""
    h = 0xCBF29CE484222325 ^ 0x5EED5EED
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001B3) % 2**64
    return h % sites if sites > 1 else 0


def alignment_score(q: str, t: str, score, gap_open: int, gap_extend: int, mode: str = "local") -> int:
    """Gotoh's recurrences written out with full matrices (O(mn) memory): the oracle for every
    alignment kernel. score(a, b) gives the substitution score of two letters; a gap of L costs
    gap_open + L * gap_extend; semi-global aligns the whole query to any stretch of the target."""
    NEG = float("-inf")
    m, n = len(q), len(t)
    H = [[0] * (n + 1) for _ in range(m + 1)]
    I = [[NEG] * (n + 1) for _ in range(m + 1)]
    D = [[NEG] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        H[i][0] = 0 if mode == "local" else -(gap_open + i * gap_extend)
    for j in range(1, n + 1):
        H[0][j] = -(gap_open + j * gap_extend) if mode == "global" else 0
    best = 0
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            I[i][j] = max(H[i - 1][j] - gap_open - gap_extend, I[i - 1][j] - gap_extend)
            D[i][j] = max(H[i][j - 1] - gap_open - gap_extend, D[i][j - 1] - gap_extend)
            H[i][j] = max(H[i - 1][j - 1] + score(q[i - 1], t[j - 1]), I[i][j], D[i][j])
            if mode == "local":
                H[i][j] = max(H[i][j], 0)
                best = max(best, H[i][j])
    if mode == "local":
        return best
    if mode == "global":
        return H[m][n]
    return max(H[m]) if m else 0



# -- read mapping --------------------------------------------------------------------------------
def clip_alignment_score(q: str, t: str, match: int, mismatch: int, ambiguous: int, gap_open: int, gap_extend: int,
                         clip5: int, clip3: int, band: tuple[int, int] | None = None) -> int:
    """The mapper's objective with full matrices: the best score of aligning read bases
    [qb, qe) to any stretch of t, minus clip5 when qb > 0 and clip3 when qe < len(q); N (or any
    non-ACGT letter) scores -ambiguous against anything. band (dlo, dhi): only cells with
    dlo <= j - i <= dhi exist."""
    NEG = float("-inf")
    m, n = len(q), len(t)

    def inside(i, j):
        return band is None or band[0] <= j - i <= band[1]

    def s(a, b):
        if a not in "ACGT" or b not in "ACGT":
            return -ambiguous
        return match if a == b else -mismatch

    H = [[NEG] * (n + 1) for _ in range(m + 1)]
    I = [[NEG] * (n + 1) for _ in range(m + 1)]
    D = [[NEG] * (n + 1) for _ in range(m + 1)]
    best = NEG
    for i in range(m + 1):
        for j in range(n + 1):
            if not inside(i, j):
                continue
            h = 0 if i == 0 else -clip5
            if i and j:
                h = max(h, H[i - 1][j - 1] + s(q[i - 1], t[j - 1]))
            if j:
                D[i][j] = max(H[i][j - 1] - gap_open - gap_extend, D[i][j - 1] - gap_extend)
            if i:
                I[i][j] = max(H[i - 1][j] - gap_open - gap_extend, I[i - 1][j] - gap_extend)
            H[i][j] = max(h, D[i][j], I[i][j])
            best = max(best, H[i][j] - (clip3 if i < m else 0))
    return best



def floor_alignments(q: str, t: str, d_lo: int, d_hi: int, match: int, mismatch: int, ambiguous: int, gap_open: int,
                     gap_extend: int, clip: int):
    """The best score with clip penalties among: the read's bases [a, b) laid without gaps
    from window position d + a, d in (d_lo, d_hi), clip paid at a > 0 and at b < len(q); and
    (d_hi > d_lo) the read's first s bases on d_lo and the rest on d_hi after a deletion of
    d_hi - d_lo, or its first s on d_hi, the next d_hi - d_lo inserted and the rest on d_lo
    (0 < s, and at least one base after the gap). None where the whole read does not fit the
    window on both diagonals."""
    m, gap = len(q), d_hi - d_lo
    if m == 0 or d_lo < 0 or d_hi + m > len(t):
        return None

    def s(i, d):
        a, b = q[i], t[d + i]
        return -ambiguous if a not in "ACGT" or b not in "ACGT" else (match if a == b else -mismatch)

    scores = []
    for d in {d_lo, d_hi}:
        for a in range(m):
            for b in range(a + 1, m + 1):
                scores.append(sum(s(i, d) for i in range(a, b)) - (clip if a else 0) - (clip if b < m else 0))
    if gap:
        cost = gap_open + gap * gap_extend
        for split in range(1, m):
            scores.append(sum(s(i, d_lo) for i in range(split)) + sum(s(i, d_hi) for i in range(split, m)) - cost)
            if split + gap < m:
                scores.append(sum(s(i, d_hi) for i in range(split)) + sum(s(i, d_lo) for i in range(split + gap, m))
                              - cost)
    return max(scores)

def cigar_tags(read: str, ref: str, pos: int, cigar: str, match: int, mismatch: int, ambiguous: int, gap_open: int,
               gap_extend: int) -> tuple[int, str, int]:
    """(NM, MD, score) of a SAM alignment recomputed from its SEQ, the reference record, its
    0-based POS and CIGAR, the way samtools calmd does (N never matches)."""
    import re

    nm, md, run, score = 0, "", 0, 0
    i, j = 0, pos
    for n, op in re.findall(r"(\d+)([MIDSH=X])", cigar):
        n = int(n)
        if op == "S":
            i += n
        elif op == "M":
            for k in range(n):
                a, b = read[i + k], ref[j + k]
                if a == b and a in "ACGT":
                    run += 1
                    score += match
                else:
                    md += f"{run}{b}"
                    run = 0
                    nm += 1
                    score -= ambiguous if a not in "ACGT" or b not in "ACGT" else mismatch
            i += n
            j += n
        elif op == "I":
            nm += n
            i += n
            score -= gap_open + n * gap_extend
        elif op == "D":
            md += f"{run}^{ref[j : j + n]}"
            run = 0
            nm += n
            j += n
            score -= gap_open + n * gap_extend
    return nm, md + str(run), score


# -- signature scanning: a ClamAV hex signature as a Python regular expression ------------------
def signature_regex(body: str) -> bytes:
    """The regex of a hex signature body: every byte a character class of the values its mask
    allows, gaps as .{n,m}, * as .*?, alternatives as (?:...|...)."""
    import re

    def byte(pair: str) -> bytes:
        hi, lo = pair
        values = [v for v in range(256) if (hi == "?" or v >> 4 == int(hi, 16)) and (lo == "?" or v & 15 == int(lo, 16))]
        return b"[" + b"".join(re.escape(bytes([v])) for v in values) + b"]"

    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "*":
            out.append(b".*?")
            i += 1
        elif c == "{":
            j = body.index("}", i)
            lo, dash, hi = body[i + 1 : j].partition("-")
            out.append(b".{%d,%s}" % (int(lo or 0), (hi if dash else lo or "0").encode()))
            i = j + 1
        elif c == "(":
            j = body.index(")", i)
            options = [b"".join(byte(o[k : k + 2]) for k in range(0, len(o), 2)) for o in body[i + 1 : j].split("|")]
            out.append(b"(?:" + b"|".join(options) + b")")
            i = j + 1
        else:
            out.append(byte(body[i : i + 2]))
            i += 2
    return b"".join(out)


def signature_starts(data: bytes, body: str) -> list[int]:
    """Every start offset where the signature matches: a zero-width lookahead of its regex,
    which the regex engine tries at every position."""
    import re

    rx = re.compile(b"(?=" + signature_regex(body) + b")", re.DOTALL)
    return [m.start() for m in rx.finditer(data)]


def signature_matches(data: bytes, body: str, offset: str = "*") -> bool:
    """Whether the signature matches data with its first byte where the offset rule allows."""
    starts = signature_starts(data, body)
    if offset == "*":
        return bool(starts)
    eof = offset.startswith("EOF-")
    n, _, m = offset[4 if eof else 0 :].partition(",")
    lo = len(data) - int(n) if eof else int(n)
    return any(lo <= s <= lo + int(m or 0) for s in starts)


def edit_distance_from(read: str, seq: str, start: int, longest: int) -> int:
    """The fewest edits aligning all of read to some seq[start:end] with end - start <= longest,
    start fixed, end free: the textbook dynamic program, one row of read per step. N matches
    nothing."""
    text = seq[start : start + longest]
    row = list(range(len(text) + 1))  # read's first 0 bases against text[:j]: j deletions
    for i, c in enumerate(read, 1):
        new = [i]
        for j, t in enumerate(text, 1):
            same = c == t and c in "ACGT"
            new.append(min(row[j - 1] + (0 if same else 1), row[j] + 1, new[j - 1] + 1))
        row = new
    return min(row)


def seeded_starts(seq: str, pattern: str, errors: int) -> list[int]:
    """The starts of seq that pigeonhole allows for pattern within `errors`: pattern cut into
    errors + 1 pieces, each found by bytes.find; a piece at p, o bases into the pattern, allows
    starts p - o - errors .. p - o + errors."""
    m, pieces = len(pattern), errors + 1
    starts = set()
    for i in range(pieces):
        lo, hi = i * m // pieces, (i + 1) * m // pieces
        piece = pattern[lo:hi]
        if set(piece) - set("ACGT"):
            continue
        for p in find_all_fast(seq.encode(), piece.encode()):
            starts.update(range(max(0, p - lo - errors), min(len(seq), p - lo + errors + 1)))
    return sorted(starts)


def approx_hits(records, read: str, errors: int, distance: str, seeded: bool = False) -> list[tuple[str, int, str, int]]:
    """What `seqsift search --errors E --distance D` must report for a read, by comparing at
    every start of every record on both strands: (record, position, strand, differences),
    sorted by differences, record order, position, strand.

    hamming: every start whose window of len(read) bases has at most E mismatches. edit: every
    start whose fewest edits over all ends is at most E, then starts within E of each other
    (chained, same record and strand) are one place, reported at the start with the fewest
    edits, the leftmost on ties. N, in the read or the record, matches nothing."""
    read = read.upper()
    hits = []
    for k, (name, seq) in enumerate(records):
        for strand, pattern in (("+", read), ("-", reverse_complement(read))):
            m = len(pattern)
            found = []
            for s in seeded_starts(seq, pattern, errors) if seeded else range(len(seq)):
                if distance == "hamming":
                    if s + m > len(seq):
                        break
                    d = sum(1 for a, b in zip(pattern, seq[s : s + m]) if a != b or a not in "ACGT")
                else:
                    d = edit_distance_from(pattern, seq, s, m + errors)  # longer stretches cost more than E
                if d <= errors:
                    found.append((s, d))
            if distance == "edit":  # clusters of starts within E of each other
                clusters = []
                for s, d in found:
                    if clusters and s - clusters[-1][-1][0] <= errors:
                        clusters[-1].append((s, d))
                    else:
                        clusters.append([(s, d)])
                found = [min(c, key=lambda sd: (sd[1], sd[0])) for c in clusters]
            hits += [(k, name, s, strand, d) for s, d in found]
    hits.sort(key=lambda h: (h[4], h[0], h[2], h[3]))
    return [(name, s, strand, d) for _, name, s, strand, d in hits]


def seed_chains(piece_read, piece, strand, text_pos, diag, counts, max_occurrences: int, band: int, chain_gap: int,
                reads: int) -> list[list[tuple[int, int, int, int, int]]]:
    """The read mapper's chains (map/seeding.py's rules), read by read, strongest first, as
    (strand, lowest diagonal, highest diagonal, anchor text position, weight): hits of pieces
    occurring at most max_occurrences times, sorted by (strand, diagonal, listed order), cut where
    the strand changes or the diagonal steps by more than chain_gap; a group holding one piece
    twice is cut again where it steps by more than band; weight = distinct pieces."""
    per_read: list[list[tuple[int, int, int]]] = [[] for _ in range(reads)]
    for i in range(len(piece)):
        if counts[piece[i]] <= max_occurrences:
            per_read[piece_read[piece[i]]].append((int(strand[i]), int(diag[i]), i))
    result = []
    for hits in per_read:
        hits.sort()
        groups: list[list[tuple[int, int, int]]] = []
        for h in hits:
            if groups and groups[-1][-1][0] == h[0] and h[1] - groups[-1][-1][1] <= chain_gap:
                groups[-1].append(h)
            else:
                groups.append([h])
        chains = []
        for group in groups:
            if len({piece[i] for _, _, i in group}) < len(group):
                parts = [[group[0]]]
                for h in group[1:]:
                    if h[1] - parts[-1][-1][1] > band:
                        parts.append([h])
                    else:
                        parts[-1].append(h)
            else:
                parts = [group]
            for part in parts:
                chains.append((part[0][0], part[0][1], part[-1][1], int(text_pos[part[0][2]]),
                               len({piece[i] for _, _, i in part})))
        result.append(sorted(chains, key=lambda c: -c[4]))
    return result


def clip_alignment_runner_up(q: str, t: str, diag: int, diagonals: tuple[int, int], match: int, mismatch: int, ambiguous: int,
                             gap_open: int, gap_extend: int, clip: int) -> float:
    """The best score (clip_alignment_score's objective, clip penalty `clip` at either end, cells
    on diagonals j - i in diagonals = (dlo, dhi)) of any alignment other than the whole read laid
    without gaps from window position diag: each cell carries the best score of paths still
    equal to that one (flag 0: started at (0, diag), diagonal steps only) and of those that left
    it (flag 1)."""
    NEG = float("-inf")
    m, n = len(q), len(t)

    def s(a, b):
        if a not in "ACGT" or b not in "ACGT":
            return -ambiguous
        return match if a == b else -mismatch

    H = {}
    D = {}
    Ins = {}
    best = NEG
    for i in range(m + 1):
        for j in range(max(0, i + diagonals[0]), min(n, i + diagonals[1]) + 1):
            for f in (0, 1):
                h = NEG
                if i == 0:
                    h = 0 if (f == 0) == (j == diag) else NEG
                elif f == 1:
                    h = -clip
                if i and j:
                    h = max(h, H.get((i - 1, j - 1, f), NEG) + s(q[i - 1], t[j - 1]))
                d = i_ = NEG
                if f == 1:
                    if j:
                        d = max(max(H.get((i, j - 1, 0), NEG), H.get((i, j - 1, 1), NEG)) - gap_open - gap_extend,
                                D.get((i, j - 1, 1), NEG) - gap_extend)
                    if i:
                        i_ = max(max(H.get((i - 1, j, 0), NEG), H.get((i - 1, j, 1), NEG)) - gap_open - gap_extend,
                                 Ins.get((i - 1, j, 1), NEG) - gap_extend)
                D[i, j, f], Ins[i, j, f] = d, i_
                H[i, j, f] = max(h, d, i_)
                if f == 1 or (i, j) != (m, diag + m):  # an end anywhere else is a clip: the other alignment
                    best = max(best, H[i, j, f] - (clip if i < m else 0))
    return best
