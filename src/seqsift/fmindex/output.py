"""Search results as bytes: TSV lines and SAM records, written by compiled formatters
(_output_cpu.py, called precompiled: TSV is a hot path).

TSV: read_id<TAB>count<TAB>hits, hits = record:position:strand joined by ',' ('-' when none
are listed). SAM: one primary record per matched read, further hits as secondary records,
unmatched reads as unmapped records; NM:i:0 and MD:Z:<length> on every mapped record.
"""

from __future__ import annotations

import numpy as np

from seqsift.fmindex.query import BatchHits
from seqsift.io.reads import ReadBatch
from seqsift.precompiled import Kernel

# Strands as int8 (the exact search's BatchHits) or int64 (the approximate search's ApproxHits).
_FORMAT_TSV = Kernel("seqsift.fmindex._output_cpu", "format_tsv",
                     "uint8[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] int8[:] int64[:] uint8[:] int64[:] "
                     "uint8[:]",
                     "uint8[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] uint8[:] int64[:] "
                     "uint8[:]", results=1)
_FORMAT_SAM = Kernel("seqsift.fmindex._output_cpu", "format_sam",
                     "uint8[:] int64[:] int64[:] uint8[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] int64[:] "
                     "int8[:] uint8[:] int64[:] uint8[:] uint8[:]", results=1)
_NAME_HASHES = Kernel("seqsift.fmindex._output_cpu", "name_hashes", "uint8[:] int64[:] int64[:] uint64[:]")


def name_table(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Record names as one byte array plus offsets, for the compiled formatter."""
    encoded = [n.encode() for n in names]
    return np.frombuffer(b"".join(encoded) or b"\0", np.uint8), np.concatenate(([0], np.cumsum([len(e) for e in encoded]))).astype(np.int64)


_NO_DIFFERENCES = np.empty(0, np.int64)


def tsv(batch: ReadBatch, found: BatchHits, record: np.ndarray, position: np.ndarray,
        names: tuple[np.ndarray, np.ndarray], differences: np.ndarray = _NO_DIFFERENCES) -> bytes:
    """differences: per hit, written after its strand (the approximate search's TSV,
    approx_output.tsv); none by default."""
    longest = int(np.diff(names[1]).max())
    per_hit = longest + (48 if differences.size else 24)
    size = int((batch.name_hi - batch.name_lo).sum()) + 24 * len(batch) + found.text_pos.size * per_hit
    out = np.empty(size, np.uint8)
    used = _FORMAT_TSV(batch.raw, batch.name_lo, batch.name_hi, found.counts, found.offsets, record, position,
                       found.strand, differences, names[0], names[1], out)
    return out[:used].tobytes()


_COMP = np.arange(256, dtype=np.uint8)
for _a, _b in (b"AT", b"TA", b"CG", b"GC"):
    _COMP[_a] = _b


def primary_seeds(batch: ReadBatch) -> np.ndarray:
    """Per read, the number whose remainder by its count of equally good sites picks its SAM
    primary among all of them (query.Searcher.hits; with --errors, among all the places with the
    fewest differences: approx.ApproxSearcher.hits): FNV-1a of its name from a seeded basis, so
    the pick is the same at any -t and batch size."""
    seeds = np.empty(len(batch), np.uint64)
    _NAME_HASHES(batch.raw, batch.name_lo, batch.name_hi, seeds)
    return seeds


def mapping_qualities(counts: np.ndarray) -> np.ndarray:
    """MAPQ of a read with `count` places, as bwa gives it: 60 for a unique read, 0 for a read with
    several (so `samtools view -q 1` keeps the unique ones)."""
    return np.where(counts == 1, 60, 0).astype(np.int64)


def sam(batch: ReadBatch, found: BatchHits, record: np.ndarray, position: np.ndarray,
        names: tuple[np.ndarray, np.ndarray]) -> bytes:
    """MAPQ as bwa gives it: 60 for a read with one site, 0 for a read with several equally good
    ones (so `samtools view -q 1` keeps unique reads only). found must come from a search with
    primary_seeds: a read's first listed site is its primary, picked among all its sites by a
    hash of its name (a fixed seed: the same at any -t), the others secondary."""
    counts = found.counts
    mapqs = mapping_qualities(counts)
    longest = int(np.diff(names[1]).max())
    lengths = np.diff(batch.bounds)
    records = np.maximum(np.diff(found.offsets), 1)
    size = int(((batch.name_hi - batch.name_lo + 2 * lengths + longest + 160) * records).sum())
    out = np.empty(size, np.uint8)
    used = _FORMAT_SAM(batch.raw, batch.name_lo, batch.name_hi, batch.seq, batch.bounds, batch.qual_lo, counts, mapqs,
                       found.offsets, record, position, found.strand, names[0], names[1], _COMP, out)
    return out[:used].tobytes()
