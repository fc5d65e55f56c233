"""The TSV that `seqsift search` writes, read back for `seqsift check`: one line a read,
read_id<TAB>count<TAB>hits, each hit record:position:strand (exact search) or
record:position:strand:differences (approximate search, docs/formats.md), '-' for none."""

from __future__ import annotations

from seqsift.errors import FormatError
from seqsift.io.openers import display_name, open_decompressed


def read_results(path, differences: bool = False) -> list[tuple[int, str, int, list[tuple]]]:
    """(line number, read id, count, hits) per line; hits as (record, position, strand[,
    differences]). A malformed line is a FormatError naming it."""
    name = display_name(path)
    form = "record:position:strand:differences" if differences else "record:position:strand"
    out = []
    with open_decompressed(path) as stream:
        for number, raw in enumerate(stream, 1):
            fields = raw.rstrip(b"\r\n").decode("utf-8", "replace").split("\t")
            try:
                rid, count, listed = fields
                hits = [] if listed == "-" else [_parse_hit(h, differences) for h in listed.split(",")]
                out.append((number, rid, int(count), hits))
            except ValueError:
                raise FormatError(name, number, f"expected read_id<TAB>count<TAB>hits (hits {form} joined by ',', "
                                  "or '-')") from None
    return out


def _parse_hit(text: str, differences: bool) -> tuple:
    parts = text.rsplit(":", 3 if differences else 2)
    strand = parts[2]
    if strand not in "+-" or len(strand) != 1:
        raise ValueError(text)
    return (parts[0], int(parts[1]), strand, *map(int, parts[3:]))
