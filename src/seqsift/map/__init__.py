"""Read mapping (`seqsift map`, `seqsift.map_reads`): exact seeds from the FM-index, chained by
diagonal, each chain extended by one banded affine-gap alignment with end-clipping penalties,
best and second-best alignments scored into a MAPQ, SAM records as bwa mem writes them.

The package holds the defaults the command line shows that are not MapOptions' (scoring.py,
which imports only the standard library), so `seqsift map --help` imports no engine."""

BATCH_READS = 1 << 12  # reads a batch; a pair's insert size is estimated per batch (README, "map")
