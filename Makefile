# The two entry points (README.md): `make demo` runs the default experiment, `make test` the checks.
# Both set up .venv first. torch is pinned to the version this project is tested with, from your pip index
# (on Linux, PyPI's wheel is the CUDA build; TORCH_INDEX=https://download.pytorch.org/whl/cpu takes the CPU
# build); a torch already in .venv (your CUDA build, say) is kept.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
# cffconvert (the CITATION.cff check) pins a jsonschema older than the project's: it gets a venv of its own.
CFF_VENV := .venv-cff
CORES ?= all

.PHONY: help setup demo test test-all suite suite-all test-fast lint citation format docs docs-serve clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:[^#]*## /\t/' | expand -t 14

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# pip would byte-compile every file it installs, most of which no step ever imports (torch and transformers
# ship thousands of modules). Instead two processes, one per core, import what the workflow runs and write
# the .pyc files of what they imported, even where PYTHONDONTWRITEBYTECODE is set, so that no job compiles
# them again: one every module of the package (which imports torch, transformers, TRL, PEFT, datasets and
# the rest), the other what the jobs and tools import as they run (ROUGE's NLTK, the TensorBoard logger,
# Snakemake's script and report machinery, lm-eval's HFLM, the SLURM plugin, pytest). A module imported by
# something else compiles on its first import, as usual.
define COMPILE_IMPORTS
import sys
sys.dont_write_bytecode = False
import importlib, pkgutil
if sys.argv[1] == "package":
    import gold_textgen
    modules = [module.name for module in pkgutil.walk_packages(gold_textgen.__path__, "gold_textgen.") if not module.name.endswith("__main__")]
else:
    modules = ["nltk", "torch.utils.tensorboard", "snakemake.cli", "snakemake.script", "snakemake.notebook", "snakemake.report"]
    modules += ["smart_open", "absl.flags", "fastjsonschema", "PIL.Image", "yte", "dpath", "docutils.core", "nbformat"]
    modules += ["lm_eval.models.huggingface", "snakemake_executor_plugin_slurm", "pytest", "xdist"]
for name in modules:
    try:
        importlib.import_module(name)
    except ImportError:  # a library that no longer has this module: it compiles when something imports it
        pass
endef
export COMPILE_IMPORTS

# The project and its dependencies go in through uv, whose resolver and parallel unpacking take seconds where
# pip takes most of a minute, with the torch installed first pinned (never replaced by another build). uv
# reads no pip configuration, so where it cannot reach its index (a mirror set in pip.conf only, say) pip
# installs the same requirements.
PROJECT := -e ".[dev,slurm]"
INSTALLED_TORCH = "torch==$$($(BIN)/python -c 'from importlib.metadata import version; print(version("torch"))')"
install = $(BIN)/uv pip install --quiet --python $(BIN)/python $(1) || { echo "uv failed (above): pip installs instead"; $(BIN)/pip install --quiet --no-compile $(1); }

$(BIN)/uv: | $(BIN)/python
	$(BIN)/pip install --quiet uv

$(VENV)/.installed: pyproject.toml | $(BIN)/python $(BIN)/uv
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install --quiet --no-compile "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(call install,$(PROJECT) $(INSTALLED_TORCH))
	# lm-eval for the test that loads an exported model with its HFLM class: that class imports with what the
	# project installs, so its wheel alone (not its task suites' many dependencies)
	$(call install,--no-deps "lm-eval==0.4.13")
	$(BIN)/python -c "$$COMPILE_IMPORTS" package & package=$$!; $(BIN)/python -c "$$COMPILE_IMPORTS" tools && wait $$package
	touch $@

setup: $(VENV)/.installed  ## create .venv with the project and its tools

demo: setup  ## run the default experiment (config.yaml: the demo task, CPU, minutes)
	$(BIN)/snakemake --cores $(CORES)
	@cat results/demo/tables/table1_main.md
	@cat results/demo/tables/table2_decoding.md
	@echo "All scores: results/demo/tables/main.md; figures: results/demo/figures/; every experiment: results/index.md"
	@echo "Report: .venv/bin/gold-textgen report   (results/demo/report.html)"
	@echo "The paper's registered claims this grid covers, tested on this run (supported / contradicted / inconclusive;"
	@echo "exit status 1 on a failed run check or a contradicted claim; results/demo/tables/claims.md has them as a table;"
	@echo "a claim's p can differ from Table 1's for the same contrast: Table 1 adjusts over the objectives compared with one"
	@echo "baseline on one metric, the claims over every registered claim of the task, each its own Holm family):"
	@$(BIN)/python -m gold_textgen.comparisons.demo_signatures

# The suite on pytest-xdist workers: each test file on one worker (its module fixtures built once), the
# longest files handed out first and the smoke run built once for all of them (tests/conftest.py). Three
# workers on two cores, because the SLURM tests spend most of their time waiting for the scheduler while
# the others compute. `make test` (what CI runs on every change) leaves out the tests marked `slow`: a
# user's story replayed with runs of its own (a job killed and resumed, a file edited or copied behind the
# workflow's back, a recipe of the guides, the report in a browser), and the further variants of a check
# whose first case it runs; `make test-all` runs them too.
TEST_WORKERS ?= 3
PYTEST_XDIST = $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test: setup  ## lint and the suite without the slow tests, side by side (what CI runs)
	$(MAKE) --no-print-directory -j2 lint suite

test-all: setup  ## lint and every test, the slow ones included
	$(MAKE) --no-print-directory -j2 lint suite-all

# Every test but the slow ones; `make test` runs it beside the lint, whose docs build and Snakemake start mostly wait on files.
suite: setup  ## the tests without the slow ones, without the lint
	$(PYTEST_XDIST) -m "not slow"

suite-all: setup  ## every test, without the lint
	$(PYTEST_XDIST)

# The edit loop: unit tests only, no Snakemake runs or TRL trainings (`workflow`, `slurm`, `trl` markers), on two pytest workers
# (each test runs torch on one thread, so two workers keep two cores busy).
test-fast: setup lint  ## lint, then the unit tests only
	$(BIN)/pytest -m "not workflow and not trl" -n 2

lint: setup  ## ruff, snakefmt, snakemake --lint, the docs site (warnings as errors)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint --quiet
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

citation: $(CFF_VENV)/bin/cffconvert  ## validate CITATION.cff against the Citation File Format schema (cffconvert)
	$(CFF_VENV)/bin/cffconvert --validate -i CITATION.cff

$(CFF_VENV)/bin/cffconvert:
	$(PYTHON) -m venv $(CFF_VENV)
	$(CFF_VENV)/bin/pip install --quiet "cffconvert>=2,<3"

docs: setup  ## regenerate the generated pages (configuration, objectives and claims references, the code map), then build the site into .site/
	$(BIN)/python -m gold_textgen.docs_pages.generated_pages
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

docs-serve: docs  ## build the docs, then serve the site at http://127.0.0.1:8000 (until Ctrl-C)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

format: setup  ## reformat the code in place
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile rules/

clean:  ## delete results/, logs/ and .snakemake/ (every trained model of every experiment): asks first; YES=1 skips the question
	@echo "This deletes results/ (every experiment's data, models, scores, tables), logs/ and .snakemake/."
	@if [ "$(YES)" != 1 ]; then read -p "Delete them? [y/N] " answer && [ "$$answer" = y ] || { echo "Nothing deleted."; exit 1; }; fi
	rm -rf results logs .snakemake
