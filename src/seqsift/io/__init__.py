"""The one streaming layer every engine reads through and writes with."""

from seqsift.io.chunks import ArrayStream, ChunkReader, iter_chunks
from seqsift.io.fastx import SequenceBatch, read_batches, record_batches
from seqsift.io.openers import STDIN, open_binary, open_decompressed, spooled_stdin
from seqsift.io.writers import atomic_output, open_output

__all__ = [
    "STDIN",
    "ArrayStream",
    "ChunkReader",
    "SequenceBatch",
    "atomic_output",
    "iter_chunks",
    "open_binary",
    "open_decompressed",
    "open_output",
    "read_batches",
    "record_batches",
    "spooled_stdin",
]
