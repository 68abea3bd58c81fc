# The two entry points (see README): `make demo` runs the default experiment, `make test` the checks.
# Both set up .venv first. torch is pinned to the CPU build this project is tested with; on a GPU
# machine install your CUDA build of torch into .venv first and `make setup` keeps it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0
CORES ?= all

.PHONY: setup demo test test-fast lint format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,slurm]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(BIN)/snakemake --cores $(CORES)
	@cat results/demo/tables/table1_main.md
	@cat results/demo/tables/table2_decoding.md
	@echo "The README's claims about the demo, checked on this run:"
	@-$(BIN)/python -m gold_textgen.analysis.demo_signatures
	@echo "All scores: results/demo/tables/main.md; figures: results/demo/figures/; every experiment: results/index.md"
	@echo "Report: .venv/bin/snakemake --report results/demo/report.html"

# The whole suite on pytest-xdist workers: each test file on one worker (its module fixtures built once),
# the longest files handed out first and the smoke run built once for all of them (tests/conftest.py).
# Three workers on two cores, because the SLURM tests spend most of their time waiting for the scheduler
# while the others compute.
TEST_WORKERS ?= 3

test: setup lint
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The edit loop: unit tests only, no Snakemake runs or TRL trainings (`workflow`, `slurm`, `trl` markers), on two pytest workers
# (each test runs torch on one thread, so two workers keep two cores busy).
test-fast: setup lint
	$(BIN)/pytest -m "not workflow and not trl" -n 2

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint --quiet

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile rules/

clean:
	rm -rf results logs .snakemake
