"""`python -m seqsift` runs the command line."""

from seqsift.cli import entry

entry()
