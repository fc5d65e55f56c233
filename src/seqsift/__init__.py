"""seqsift: find patterns in large data fast, on CPUs, NVIDIA GPUs and Dask clusters.

Importing this package never touches CUDA; GPU code is imported only when a
cuda backend is asked for.
"""

__version__ = "0.1.0"

from seqsift.alignment.pairwise import Alignment, align
from seqsift.errors import BackendUnavailable, FormatError, InputError, SeqsiftError
from seqsift.find.api import RecordHits, find, find_count, find_records
from seqsift.fmindex.api import FMIndex
from seqsift.scan.api import scan

__all__ = [
    "__version__",
    "Alignment",
    "BackendUnavailable",
    "FMIndex",
    "FormatError",
    "InputError",
    "RecordHits",
    "SeqsiftError",
    "align",
    "find",
    "find_count",
    "find_records",
    "scan",
]
