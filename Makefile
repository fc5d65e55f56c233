# make demo | make test | make bench: each creates .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint test-cpu test-gpu browser bench bench-peers clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# An editable install leaves our modules uncompiled; where PYTHONDONTWRITEBYTECODE is set every
# process then compiles them again (0.3 s of each command's start-up here). compileall writes
# the bytecode a regular pip install would.
$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	$(BIN)/python -m compileall -q src > /dev/null
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	$(BIN)/python -m compileall -q src > /dev/null
	touch $@

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	$(BIN)/python -m compileall -q src benchmarks > /dev/null
	touch $@

# Numba's on-disk cache keys a kernel on its own file only, so a kernel that inlines a helper from
# another module (intrinsics.py, fmindex/steps.py, find/kmp.py, alignment/_pair_row.py, ...) would
# keep running the helper's old code after the helper changed. Whenever any source is newer than
# the last build, every cached kernel is dropped, and every engine's precompiled kernels are built
# (precompiled.py: their cache keys on every source), so no command compiles on first use.
$(VENV)/.kernels: $(shell find src -name '*.py') | $(BIN)/python
	find src -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete
	PYTHONPATH=src $(BIN)/python -m seqsift.precompiled
	touch $@

demo: $(VENV)/.installed-base $(VENV)/.kernels
	$(BIN)/seqsift demo

# The linter, the whole suite with the JIT on, then the GPU kernels under the CUDA simulator.
test: lint test-cpu test-gpu

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks

test-cpu: $(VENV)/.installed-test $(VENV)/.kernels browser
	$(BIN)/python -m pytest -m "not cuda"

# The Filter Lab's end-to-end test drives Debian's Chromium: installed here when missing, as root
# with apt-get; elsewhere the test is skipped, and says how to run it.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y -q chromium chromium-driver || \
		(apt-get update -q && apt-get install -y -q chromium chromium-driver); \
	else \
		echo "make browser: chromium and chromedriver are missing and this is not root with apt-get:"; \
		echo "  the Filter Lab's browser test will be skipped (run 'make browser' as root, or install chromium and chromium-driver)"; \
	fi

test-gpu: $(VENV)/.installed-test $(VENV)/.kernels
	NUMBA_ENABLE_CUDASIM=1 $(BIN)/python -m pytest -m cuda

# The peers the benchmarks compare against, from Debian (run as root, once).
bench-peers:
	apt-get install -y ripgrep grep bwa bowtie2 minimap2 samtools parasail ssw-align clamav ncbi-blast+

bench: $(VENV)/.installed-bench $(VENV)/.kernels
	$(BIN)/python benchmarks/bench_find.py
	$(BIN)/python benchmarks/bench_fmindex.py
	$(BIN)/python benchmarks/bench_align.py
	$(BIN)/python benchmarks/bench_map.py
	$(BIN)/python benchmarks/bench_scan.py
	$(BIN)/python benchmarks/bench_dask.py
	$(BIN)/python benchmarks/blast_statistics.py

clean:
	rm -rf $(VENV) build src/*.egg-info bench-data
