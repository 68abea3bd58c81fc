# The two entry points (see README): `make demo` runs the default experiment, `make test` the checks.
# Both set up .venv first. torch is pinned to the CPU build this project is tested with; on a GPU
# machine install your CUDA build of torch into .venv first and `make setup` keeps it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0
CORES ?= all

.PHONY: help setup demo test test-fast lint format clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:[^#]*## /\t/' | expand -t 14

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,slurm]"
	touch $@

setup: $(VENV)/.installed  ## create .venv with the project and its tools

demo: setup  ## run the default experiment (config.yaml: the demo task, CPU, minutes)
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

test: setup lint  ## lint, then every test (what CI runs)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The edit loop: unit tests only, no Snakemake runs or TRL trainings (`workflow`, `slurm`, `trl` markers), on two pytest workers
# (each test runs torch on one thread, so two workers keep two cores busy).
test-fast: setup lint  ## lint, then the unit tests only (about a minute)
	$(BIN)/pytest -m "not workflow and not trl" -n 2

lint: setup  ## ruff, snakefmt and snakemake --lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint --quiet

format: setup  ## reformat the code in place
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile rules/

clean:  ## delete results/, logs/ and .snakemake/ (every trained model of every experiment): asks first; YES=1 skips the question
	@echo "This deletes results/ (every experiment's data, models, scores, tables), logs/ and .snakemake/."
	@if [ "$(YES)" != 1 ]; then read -p "Delete them? [y/N] " answer && [ "$$answer" = y ] || { echo "Nothing deleted."; exit 1; }; fi
	rm -rf results logs .snakemake
