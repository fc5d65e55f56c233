"""SAM records as bwa mem writes them (the header is io.provenance's, with the @RG line): each
read's records, the primary first (flag 4 when unmapped), then supplementary ones (0x800) with SA tags linking
the parts. SEQ and QUAL are the input's, reverse-complemented on the reverse strand; a
supplementary record keeps the whole read with soft clips (bwa mem -Y); XA lists a record's
alternative hits (choose.py) as bwa mem writes them."""

from __future__ import annotations

from dataclasses import dataclass

from seqsift.errors import UsageError

_COMPLEMENT = bytes.maketrans(b"ACGTNacgtn", b"TGCANtgcan")
REVERSE, UNMAPPED, SECONDARY, SUPPLEMENTARY = 0x10, 0x4, 0x100, 0x800


def parse_read_group(text: str | None) -> tuple[str | None, str | None]:
    """(the @RG header line, its ID) from bwa's -R form '@RG\\tID:x\\tSM:y' (tabs written as
    \\t or real); (None, None) without one."""
    if not text:
        return None, None
    line = text.replace("\\t", "\t")
    fields = line.split("\t")
    if fields[0] != "@RG":
        raise UsageError(f"-R {text!r}: a read group line starts with @RG, e.g. '@RG\\tID:sample1\\tSM:sample1'")
    ids = [f[3:] for f in fields[1:] if f.startswith("ID:")]
    if len(ids) != 1 or not ids[0]:
        raise UsageError(f"-R {text!r}: give exactly one non-empty ID:, e.g. '@RG\\tID:sample1\\tSM:sample1'")
    if "\n" in line:
        raise UsageError(f"-R {text!r}: a read group is one line")
    return line, ids[0]


@dataclass(frozen=True)
class Pairing:
    """What a paired read's records say of its mate: which end it is, the mate's report, and
    whether the two form a proper pair (orientation and distance as the library's)."""

    first: bool
    mate: object  # api.Mapped
    proper: bool


def _where(m) -> tuple[int, int, bool, str] | None:
    """(record, 1-based POS, reverse, CIGAR) of a read's primary, None when unmapped."""
    if not m.alignments:
        return None
    p = m.alignments[0].placement
    return p.record, p.position + 1, bool(p.strand), p.cigar()


def _five_prime(p) -> int:
    return p.end - 1 if p.strand else p.position


def records(m, names: list[str], rg_id: str | None, pairing: Pairing | None = None) -> str:
    """The SAM lines of one read (api.Mapped): its primary, then its supplementary alignments.
    With pairing, the pair flags, RNEXT, PNEXT and TLEN (bwa's: between the 5' ends) and MC;
    an unmapped read with a mapped mate takes the mate's RNAME and POS, as the SAM
    specification recommends."""
    rg = f"\tRG:Z:{rg_id}" if rg_id else ""
    seq = m.seq.decode() or "*"
    qual = (m.qual or b"*").decode() or "*"
    me = _where(m)
    base_flag, mate_fields, mate_tag = 0, "*\t0\t0", ""
    if pairing is not None:
        mate = _where(pairing.mate)
        base_flag = 0x1 | (0x40 if pairing.first else 0x80) | (0x2 if pairing.proper else 0)
        if mate is None:
            base_flag |= 0x8
        elif mate[2]:
            base_flag |= 0x20
        anchor = me or mate
        if anchor is not None:
            mate_at = mate or me
            rnext = "=" if mate_at[0] == anchor[0] else names[mate_at[0]]
            tlen = 0
            if me and mate and me[0] == mate[0]:
                p0, p1 = _five_prime(m.alignments[0].placement), _five_prime(pairing.mate.alignments[0].placement)
                tlen = -(p0 - p1 + (1 if p0 > p1 else -1 if p0 < p1 else 0))
            mate_fields = f"{rnext}\t{mate_at[1]}\t{tlen}"
            if mate:
                mate_tag = f"\tMC:Z:{mate[3]}"
    if me is None:
        where = f"{names[mate[0]]}\t{mate[1]}" if pairing is not None and mate is not None else "*\t0"
        return f"{m.name}\t{base_flag | UNMAPPED}\t{where}\t0\t*\t{mate_fields}\t{seq}\t{qual}{mate_tag}{rg}\n"
    reverse_seq = m.seq.translate(_COMPLEMENT)[::-1].decode()
    reverse_qual = qual[::-1] if m.qual else "*"
    aligned = list(zip(m.alignments, m.nm, m.md))
    cigars = [me[3]] + [c.placement.cigar() for c in m.alignments[1:]]
    parts = [(names[c.placement.record], c.placement.position + 1, "+-"[c.placement.strand], cigars[k], c.mapq, nm)
             if not c.secondary else None for k, (c, nm, _) in enumerate(aligned)]
    chimeric = sum(part is not None for part in parts) > 1
    lines = []
    for k, (c, nm, md) in enumerate(aligned):
        p = c.placement
        flag = base_flag | (REVERSE if p.strand else 0) | (SUPPLEMENTARY if c.supplementary else 0) \
            | (SECONDARY if c.secondary else 0)
        s, q = (reverse_seq, reverse_qual) if p.strand else (seq, qual)
        sa = ""
        if chimeric and not c.secondary:  # SA: the other parts of a chimeric read, not its secondaries
            sa = "\tSA:Z:" + "".join(f"{r},{pos},{st},{cig},{mq},{n};" for j, (r, pos, st, cig, mq, n) in
                                     ((j, part) for j, part in enumerate(parts) if part is not None) if j != k)
        xa = ""
        if c.alternatives:  # bwa's XA: alternative hits of these read bases, as chr,+-pos,CIGAR,NM;
            xa = "\tXA:Z:" + "".join(f"{names[a.record]},{'+-'[a.strand]}{a.position + 1},{a.cigar()},{n};"
                                      for a, n in zip(c.alternatives, m.alternative_nm[k]))
        fields = mate_fields
        if pairing is not None and k > 0 and p.record != me[0] and fields.startswith("="):
            fields = names[me[0]] + fields[1:]
        lines.append(f"{m.name}\t{flag}\t{names[p.record]}\t{p.position + 1}\t{c.mapq}\t{cigars[k]}\t{fields}\t{s}\t{q}"
                     f"\tNM:i:{nm}\tMD:Z:{md}\tAS:i:{p.score}\tXS:i:{c.sub}{sa}{xa}{mate_tag}{rg}\n")
    return "".join(lines)
