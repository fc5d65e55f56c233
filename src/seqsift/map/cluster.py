"""The mapper on threads or on Dask: the work of each batch of single reads (SAM records out),
made here from the mapper or on each worker from the reference's path (an .ssx file
memory-mapped, or a FASTA file indexed there) or, without one, from the index sent in memory;
runner.ordered decides where it runs."""

from __future__ import annotations

import os

from seqsift import distributed
from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import RawBlock, parse_block
from seqsift.map.mapper import Mapper, SamBatches, load_index
from seqsift.map.scoring import MapOptions
from seqsift.runner import Work


def run_part(job, part):
    """A mapping job (Mapper, SamBatches, PairBatches) on one part: runner.ordered's call."""
    return job(part)


def load(paths: tuple[str, ...], options: MapOptions, rg_id: str | None) -> SamBatches:
    """A worker's job over the reference at paths[0]."""
    return SamBatches(Mapper(load_index(paths[0]), options), rg_id)


def from_index(index, options: MapOptions, rg_id: str | None) -> SamBatches:
    """A worker's job over an FMIndex sent in memory."""
    return SamBatches(Mapper(index, options), rg_id)


def run_batch(job: SamBatches, batch) -> tuple[bytes, int, int]:
    """A batch parsed here, or a raw block of a reads file parsed on the worker."""
    if isinstance(batch, RawBlock):
        batch = parse_block(batch, READ_CODE)
    return job(batch)


def work_of(mapper: Mapper, rg_id: str | None, path: str | os.PathLike | None = None) -> Work:
    args = (mapper.options, rg_id)
    if path is not None:
        share = lambda client: distributed.share_files(client, load, [os.fspath(path)], args)  # noqa: E731
    else:
        share = lambda client: distributed.share_object(client, mapper.index, from_index, args)  # noqa: E731
    return Work(run_batch, lambda: SamBatches(mapper, rg_id), share)
