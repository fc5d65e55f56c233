"""Smith-Waterman alignment: pairwise alignment with traceback (`seqsift.align`) and
database search (`search_database`), local, global or semi-global, linear or affine gaps.

The public names load their modules on first use, and the package holds the defaults the command
line shows, so `seqsift align --help` imports neither the kernels nor Numba."""

from seqsift.lazy import lend

MATRICES = ("BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90", "PAM30", "PAM70", "PAM250")  # shipped
DEFAULT_EVALUE = 10.0  # blastp's -evalue default
QUERIES_PER_PARTITION = 16  # queries a Dask task aligns (cluster.py)

_PUBLIC = {"Database": "database", "DatabaseHit": "database", "search_database": "database", "Alignment": "pairwise",
           "align": "pairwise", "align_pairs": "pairwise", "rescore": "pairwise", "Scoring": "scoring",
           "dna": "scoring", "matrix": "scoring"}
__all__ = ["MATRICES", *sorted(_PUBLIC)]
__getattr__, __dir__ = lend(__name__, {name: f"{__name__}.{home}" for name, home in _PUBLIC.items()})
