"""Exact search: every occurrence of one pattern, by data-parallel KMP.

The package holds the defaults the command line shows, so `seqsift find --help` reads them without
importing the engine."""

DEFAULT_CHUNK_SIZE = 64 << 20  # bytes read at a time
