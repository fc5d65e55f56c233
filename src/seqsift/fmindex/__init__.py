"""FM-index DNA search (after the GEM paper): backward search, locate by sampled suffix array."""
