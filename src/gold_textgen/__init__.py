"""GOLD: off-policy learning from demonstrations for text generation (Pang & He, ICLR 2021).

Everything the Snakemake workflow runs lives in this package; the workflow scripts only adapt
Snakemake's inputs and outputs to these functions.
"""

__version__ = "0.1.0"
