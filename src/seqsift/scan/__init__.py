"""Signature scanning: filter, then verify (ClamAV .ndb or hex lists).

The package holds the defaults the command line shows, so `seqsift scan --help` reads them without
importing the engine."""

FILTERS = ("stride", "table")  # the CPU filters (engine.py)
DEFAULT_STRIDE = 8  # the stride filter's step (table.build_stride_filter)
DEFAULT_BUFFER = 8 << 20  # bytes a buffer files are packed into (pipeline.py)
MIN_BUFFERS = 3  # rotating buffers: one filling, one filtered, one verified
