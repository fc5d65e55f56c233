"""Smith-Waterman alignment: pairwise alignment with traceback (`seqsift.align`) and
database search (`search_database`), local, global or semi-global, linear or affine gaps."""

from seqsift.alignment.database import Database, DatabaseHit, search_database
from seqsift.alignment.pairwise import Alignment, align, align_pairs, rescore
from seqsift.alignment.scoring import MATRICES, Scoring, dna, matrix

__all__ = ["MATRICES", "Alignment", "Database", "DatabaseHit", "Scoring", "align", "align_pairs", "dna", "matrix", "rescore",
           "search_database"]
