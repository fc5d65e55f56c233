"""FM-index DNA search (seed 002, GEM): backward search, locate by sampled suffix array."""
