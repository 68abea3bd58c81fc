"""GOLD: off-policy learning from demonstrations for text generation (Pang & He, ICLR 2021).

Everything the Snakemake workflow runs lives in this package; the workflow scripts only adapt
Snakemake's inputs and outputs to these functions.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gold-textgen")  # pyproject.toml's, as installed
except PackageNotFoundError:  # the source tree on the path without an install
    __version__ = "unknown"
