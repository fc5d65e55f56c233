"""FM-index DNA search (after the GEM paper): backward search, locate by sampled suffix array.

The package holds the defaults the command line shows, so `seqsift search --help` reads them
without importing the engine."""

SHORTCUTS = {"none": 0, "rank": 1, "verify": 2}  # what a search does once its interval is small (query.py)
DEFAULT_WIDTH = 32  # 32 beat 16 in most whole-process rounds (docs/benchmarks.md; commit 798cdfa, 2026-12-01)
DEFAULT_VERIFY_ROWS = 4  # docs/benchmarks.md: the verify shortcut's interval size, measured
