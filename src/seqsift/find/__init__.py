"""Exact search: every occurrence of one pattern, by data-parallel KMP."""
