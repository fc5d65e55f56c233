"""The GPU alignment kernel under NUMBA_ENABLE_CUDASIM=1 (in `make test`): the packed 16-bit pair
arithmetic gives the 32-bit reference scores (the database search on every backend is in
test_alignment.py). Launches are tiny: the simulator runs threads in Python."""

import pytest

from seqsift.alignment import Database, dna, matrix
from seqsift.alignment import reference as ref
from seqsift.alignment._gpu import GpuAligner
from seqsift.alignment.database import score_pair

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("scoring", [matrix("BLOSUM62", 11, 1), dna(2, -3, 5, 2)], ids=["protein", "dna"])
def test_packed_gpu_scores_equal_the_reference(rng, scoring):
    alphabet = list("ACGT") if scoring.is_dna else list("ARNDCQEGHILKMFPSTWYV")
    seqs = ["".join(rng.choice(alphabet, int(rng.integers(0, 14)))) for _ in range(7)]
    db = Database([str(i) for i in range(7)], seqs, scoring)
    query = scoring.encode("".join(rng.choice(alphabet, 9)))
    gpu = GpuAligner(db.codes, scoring.matrix, scoring.gap_open, scoring.gap_extend, dpx=False, threads_per_block=2)
    got, too_long = gpu.scores(query)
    assert too_long.size == 0
    assert got.tolist() == [score_pair(query, t, scoring, ref.LOCAL) for t in db.codes]

