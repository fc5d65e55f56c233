"""`seqsift align` against hostile values (issue items 8 and 9): a matrix header letter that upper-cases
to several, scores and gap penalties past what the score lanes hold: named errors, exit 2, each run
in a child bounded in memory and CPU (tests/bounded.py)."""

import pytest

from tests.bounded import run_bounded, text

MATRIX = "   A  R  N\nA  4 -1 -2\nR -1  5  0\nN -2  0  6\n"


@pytest.fixture
def pair(tmp_path):
    q, db = tmp_path / "q.fa", tmp_path / "db.fa"
    q.write_text(">q\nARNARNARN\n")
    db.write_text(">t\nARNAARNARN\n")
    return q, db


@pytest.mark.parametrize("matrix,message", [
    (MATRIX.replace("   A", "   \ufb03", 1), "single-letter column names, found '\ufb03'"),  # 'ffi' -> 'FFI'
    (MATRIX.replace("R -1  5", "R -1  99999999999", 1), "m.txt:3: score 99999999999 is beyond +-1000"),
    (MATRIX.replace("   A  R", "   A  A", 1), "named twice"),
])
def test_a_hostile_matrix_file_is_a_named_error(pair, tmp_path, matrix, message):
    q, db = pair
    path = tmp_path / "m.txt"
    path.write_text(matrix, encoding="utf-8")
    run = run_bounded(["align", str(q), str(db), "--matrix", str(path), "-q"])
    out, err = text(run)
    assert run.returncode == 2, err
    assert message in err and "internal error" not in err and str(path) in err


@pytest.mark.parametrize("option,value", [("--gap-open", 2147483647), ("--gap-open", 32767), ("--gap-extend", 10**12)])
def test_gap_penalties_past_the_lanes_are_refused(pair, tmp_path, option, value):
    q, db = pair
    run = run_bounded(["align", str(q), str(db), option, str(value), "-q"])
    out, err = text(run)
    assert run.returncode == 2, err
    assert f"{option} {value}: give" in err and "internal error" not in err


def test_the_largest_penalty_still_aligns(pair, tmp_path):
    q, db = pair
    run = run_bounded(["align", str(q), str(db), "--gap-open", "1000", "--gap-extend", "1000", "-q"])
    out, err = text(run)
    assert run.returncode == 0, err
    assert out.startswith("q\tt\t")
