"""The one streaming layer every engine reads through and writes with.

The names below load their module on first use (PEP 562), so importing one module of the
package (io.openers, io.mapped) does not import the others, nor numpy with them: `seqsift find`
over files runs without numpy (docs/benchmarks.md, "Start-up")."""

from seqsift.lazy import lend

_HOMES = {
    "STDIN": "seqsift.io.openers",
    "ArrayStream": "seqsift.io.chunks",
    "ChunkReader": "seqsift.io.chunks",
    "SequenceBatch": "seqsift.io.fastx",
    "atomic_output": "seqsift.io.writers",
    "iter_chunks": "seqsift.io.chunks",
    "open_binary": "seqsift.io.openers",
    "open_decompressed": "seqsift.io.openers",
    "open_output": "seqsift.io.writers",
    "read_batches": "seqsift.io.fastx",
    "record_batches": "seqsift.io.fastx",
    "spooled_stdin": "seqsift.io.openers",
}
__all__ = sorted(_HOMES)
__getattr__, __dir__ = lend(__name__, _HOMES)
