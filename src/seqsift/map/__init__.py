"""Read mapping (`seqsift map`, `seqsift.map_reads`): exact seeds from the FM-index, chained by
diagonal, each chain extended by one banded affine-gap alignment with end-clipping penalties,
best and second-best alignments scored into a MAPQ, SAM records as bwa mem writes them."""
