"""SAM as bwa mem writes it: the header (@HD, @SQ, @RG, @PG) and each read's records, the
primary first (flag 4 when unmapped), then supplementary ones (0x800) with SA tags linking
the parts. SEQ and QUAL are the input's, reverse-complemented on the reverse strand; a
supplementary record keeps the whole read with soft clips (bwa mem -Y)."""

from __future__ import annotations

from seqsift import __version__
from seqsift.errors import UsageError

_COMPLEMENT = bytes.maketrans(b"ACGTNacgtn", b"TGCANtgcan")
REVERSE, UNMAPPED, SUPPLEMENTARY = 0x10, 0x4, 0x800


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


def header(names: list[str], lengths, command_line: str, read_group: str | None = None) -> bytes:
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{n}\tLN:{int(length)}" for n, length in zip(names, lengths)]
    if read_group:
        lines.append(read_group)
    cl = command_line.replace("\t", "\\t").replace("\n", " ")  # one header field: no tab, no line break
    lines.append(f"@PG\tID:seqsift\tPN:seqsift\tVN:{__version__}\tCL:{cl}")
    return ("\n".join(lines) + "\n").encode()


def records(name: str, seq: bytes, qual: bytes | None, aligned: list, names: list[str], rg_id: str | None) -> str:
    """The SAM lines of one read. aligned: (Chosen, nm, md) per reported alignment, primary first."""
    rg = f"\tRG:Z:{rg_id}" if rg_id else ""
    if not aligned:
        return f"{name}\t{UNMAPPED}\t*\t0\t0\t*\t*\t0\t0\t{seq.decode() or '*'}\t{(qual or b'*').decode() or '*'}{rg}\n"
    forward_qual = (qual or b"*").decode() or "*"
    reverse_seq = seq.translate(_COMPLEMENT)[::-1].decode()
    reverse_qual = forward_qual[::-1] if qual else "*"
    parts = [(names[c.placement.record], c.placement.position + 1, "+-"[c.placement.strand], c.placement.cigar(),
              c.mapq, nm) for c, nm, _ in aligned]
    lines = []
    for k, (c, nm, md) in enumerate(aligned):
        p = c.placement
        flag = (REVERSE if p.strand else 0) | (SUPPLEMENTARY if c.supplementary else 0)
        s, q = (reverse_seq, reverse_qual) if p.strand else (seq.decode(), forward_qual)
        sa = ""
        if len(parts) > 1:
            sa = "\tSA:Z:" + "".join(f"{r},{pos},{st},{cig},{mq},{n};" for j, (r, pos, st, cig, mq, n) in enumerate(parts)
                                     if j != k)
        lines.append(f"{name}\t{flag}\t{names[p.record]}\t{p.position + 1}\t{c.mapq}\t{p.cigar()}\t*\t0\t0\t{s}\t{q}"
                     f"\tNM:i:{nm}\tMD:Z:{md}\tAS:i:{p.score}\tXS:i:{c.sub}{sa}{rg}\n")
    return "".join(lines)
