"""benchmarks/gpu_check.py, the one script a lent GPU runs, run whole at toy sizes under the CUDA
simulator: every section must run and report the GPU's results equal to the CPU's, so a device
short GPU run is not spent finding a broken script."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cuda

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"


def test_every_section_runs_and_agrees_with_the_cpu(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    gpu_check = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gpu_check", gpu_check)  # its dataclass looks its module up there
    spec.loader.exec_module(gpu_check)
    report = gpu_check.main(["--smoke", "--out", str(tmp_path)])
    assert not [key for key in report if key.endswith("_error")], report
    assert report["smoke"] and report["correct"] and report["checks"] == 13
    assert report["fmindex_correct"]
    assert [row["portable_correct"] for row in report["align_rows"]] == [True]
    assert [(row["candidates_equal"], row["hits_equal"]) for row in report["scan_rows"]] == [(True, True)] * 2
    assert report["scan_rows"][1]["candidates"] > 0 and report["scan_rows"][1]["cuda_pairs"] > 0  # not vacuous
    assert len(report["rows"]) == 3  # find's timings, one launch shape per pattern length
    assert json.loads((tmp_path / "gpu_check.json").read_text())["checks"] == 13
