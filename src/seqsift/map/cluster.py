"""The mapper on threads or on Dask: the work of each batch of single reads (SAM records out),
made here from the mapper or on each worker from the reference's path (an .ssx file
memory-mapped, or a FASTA file indexed there) or, without one, from the index sent in memory;
runner.ordered decides where it runs."""

from __future__ import annotations

import os

from seqsift.fmindex.reference import READ_CODE
from seqsift.io.reads import RawBlock, parse_block
from seqsift.map.mapper import Mapper, SamBatches, load_index
from seqsift.map.scoring import MapOptions
from seqsift.runner import Work


def run_part(job, part):
    """A mapping job (Mapper) on one part: runner.ordered's call."""
    return job(part)


def _job(mapper: Mapper, rg_id: str | None, paired: bool):
    if paired:
        from seqsift.map.pairs import PairBatches

        return PairBatches(mapper, rg_id)
    return SamBatches(mapper, rg_id)


def load(paths: tuple[str, ...], options: MapOptions, rg_id: str | None, paired: bool = False):
    """A worker's job over the reference at paths[0]."""
    return _job(Mapper(load_index(paths[0]), options), rg_id, paired)


def from_index(index, options: MapOptions, rg_id: str | None, paired: bool = False):
    """A worker's job over an FMIndex sent in memory."""
    return _job(Mapper(index, options), rg_id, paired)


def run_batch(job, batch) -> tuple[bytes, int, int]:
    """A batch parsed here (a pair of batches for pairs), or a raw block of a reads file parsed
    on the worker."""
    if isinstance(batch, RawBlock):
        batch = parse_block(batch, READ_CODE)
    return job(batch)


def work_of(mapper: Mapper, rg_id: str | None, path: str | os.PathLike | None = None, paired: bool = False) -> Work:
    """The SAM records of each batch of single reads, or of each pair of batches when paired."""
    args = (mapper.options, rg_id, paired)

    def share(client):  # seqsift.distributed (and its logging) imported only where Dask runs
        from seqsift import distributed

        if path is not None:
            return distributed.share_files(client, load, [os.fspath(path)], args)
        return distributed.share_object(client, mapper.index, from_index, args)
    return Work(run_batch, lambda: _job(mapper, rg_id, paired), share)
