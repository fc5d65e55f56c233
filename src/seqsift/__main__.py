"""`python -m seqsift` runs the command line."""

from seqsift.cli import entry

if __name__ == "__main__":  # not when a worker process re-imports it (multiprocessing spawn)
    entry()
