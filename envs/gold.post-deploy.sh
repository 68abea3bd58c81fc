#!/usr/bin/env bash
# Installs the project into the rules' conda environment (gold.yaml): the same package and extras as
# `make setup`. pip picks the torch build for the machine (CUDA wheels on a Linux GPU node); to pin
# another build, install it here first, as the Makefile's TORCH_SPEC does for .venv.
set -euo pipefail
python -m pip install --quiet -e ".[slurm]"
