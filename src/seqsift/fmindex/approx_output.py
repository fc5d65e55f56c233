"""Approximate search results as bytes (docs/formats.md, "Approximate hits").

TSV: read_id<TAB>count<TAB>hits, each hit record:position:strand:differences, joined by ','
('-' when none are listed). SAM: the listed hits, the first primary (a seeded pick among all the
places with the fewest differences, as the exact search's: ApproxSearcher.hits with seeds), the
others secondary, each with its CIGAR (M, I, D), NM and MD; unmatched reads as unmapped records.
"""

from __future__ import annotations

import numpy as np

from seqsift.fmindex import output
from seqsift.fmindex.approx import ApproxHits
from seqsift.fmindex.verify import Reach, align
from seqsift.io.reads import ReadBatch

_COMP = bytes.maketrans(b"ACGTacgt", b"TGCAtgca")


def _name(batch: ReadBatch, i: int) -> bytes:
    return batch.raw[batch.name_lo[i] : batch.name_hi[i]].tobytes()


def tsv(batch: ReadBatch, found: ApproxHits, record: np.ndarray, position: np.ndarray,
        names: tuple[np.ndarray, np.ndarray]) -> bytes:
    """names: output.name_table's record names (bytes and offsets). The exact search's lines
    (output.tsv), each hit with its differences."""
    return output.tsv(batch, found, record, position, names, found.differences)


def sam(batch: ReadBatch, found: ApproxHits, record: np.ndarray, position: np.ndarray, names: list[bytes],
        reach: Reach, errors: int, distance: str) -> bytes:
    """MAPQ as bwa gives it: 60 when one place (listed or not) has the read's fewest differences,
    0 when several tie. found must come from a search with output.primary_seeds: a read's first
    listed place is its primary, picked among all its places with the fewest differences by a
    hash of its name (the same at any -t), the others follow as secondary records in their
    order. names: the record names as bytes."""
    o = found.offsets.tolist()
    best = found.best.tolist()
    out = []
    for i, count in enumerate(found.counts.tolist()):
        lo, hi = int(batch.bounds[i]), int(batch.bounds[i + 1])
        seq = batch.seq[lo:hi].tobytes()
        qual = batch.raw[batch.qual_lo[i] : batch.qual_lo[i] + hi - lo].tobytes() if batch.qual_lo[i] >= 0 else b"*"
        name = _name(batch, i)
        if o[i] == o[i + 1]:
            out.append(b"%s\t4\t*\t0\t0\t*\t*\t0\t0\t%s\t%s\tX0:i:%d\n" % (name, seq or b"*", qual or b"*", count))
            continue
        listed = o[i + 1] - o[i]
        mapq = 60 if best[i] == 1 else 0
        for k, h in enumerate(range(o[i], o[i + 1])):
            strand = int(found.strand[h])
            a = align(reach, batch.codes[lo:hi], strand, int(found.text_pos[h]), int(record[h]), errors, distance)
            flag = (16 if strand else 0) | (256 if k else 0)
            if k:
                body = b"*\t*"
            elif strand:
                body = b"%s\t%s" % (seq.translate(_COMP)[::-1], qual[::-1] if qual != b"*" else qual)
            else:
                body = b"%s\t%s" % (seq, qual)
            out.append(b"%s\t%d\t%s\t%d\t%d\t%s\t*\t0\t0\t%s\tNM:i:%d\tMD:Z:%s\tNH:i:%d\tHI:i:%d\tX0:i:%d\n"
                       % (name, flag, names[record[h]], position[h] + 1, mapq, a.cigar.encode(), body, a.nm,
                          a.md.encode(), listed, k + 1, count))
    return b"".join(out)
