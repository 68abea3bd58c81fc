"""Reading a token table back (evaluation/token_nll.py writes them: one row per reference token, with its
NLL): its digest checked, and every NLL a number no smaller than 0 beyond float rounding (an NLL below 0
is a probability above 1), the first bad row named. Torch-free: the tables and analyses read it too."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..runtime.checked_parquet import DamagedTableError, read_checked_parquet

# float32 rounding of log-probabilities near 0 (p_MLE = 1) gives NLLs a few ulp below 0, never more.
NLL_ROUNDING = 1e-5


def read_token_table(path: str | os.PathLike, rebuild: str) -> pd.DataFrame:
    """The token table at `path`, checked (see the module); `rebuild`: what remakes it, for the message."""
    table = read_checked_parquet(path, rebuild)
    nll = table["nll"].to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(nll) | (nll < -NLL_ROUNDING))
    if bad.size:
        example, position = (table[column].iloc[bad[0]] for column in ("example", "position"))
        raise DamagedTableError(
            f"{path}: {bad.size} token(s) with an NLL that is not a number or below 0 (first: row {bad[0]}, example "
            f"{example}, position {position}, nll {nll[bad[0]]:.6g}): the model it was computed with is broken, "
            f"or the file was changed; rebuild it ({rebuild}) after checking the model"
        )
    return table
