"""The one streaming layer every engine reads through and writes with."""

from seqsift.io.chunks import ArrayStream, ChunkReader, iter_chunks
from seqsift.io.fastx import SequenceBatch, read_batches
from seqsift.io.openers import open_binary, open_decompressed
from seqsift.io.writers import atomic_output

__all__ = [
    "ArrayStream",
    "ChunkReader",
    "SequenceBatch",
    "atomic_output",
    "iter_chunks",
    "open_binary",
    "open_decompressed",
    "read_batches",
]
