"""The mapper's worker function, the same on a thread here and on a Dask worker: one block of
raw reads in, its SAM records out."""

from __future__ import annotations

from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import RawBlock, parse_block
from seqsift.map.api import Mapper, SamBatches, load_index
from seqsift.map.scoring import MapOptions


def load(paths: list[str], options: MapOptions, rg_id: str | None) -> SamBatches:
    """What each worker builds once: the index (an .ssx file mapped, or a FASTA indexed) and the
    mapper around it."""
    return SamBatches(Mapper(load_index(paths[0]), options), rg_id)


def run_block(job: SamBatches, block: RawBlock) -> tuple[bytes, int, int]:
    return job(parse_block(block, READ_CODE))
