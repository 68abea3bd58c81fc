"""Which row of the paper's tables a task of an experiment reproduces: its data set and its model, read from
the task's settings, so that a claim's effect is carried from that row (NQG++ on NQG for nqg_real and its
copies, the pointer-generator on CNN/DM, BART on NQG, CNN/DM and XSum, the transformer on IWSLT14) and from
the median of the paper's rows only where the paper has no matching one (the demo language, a user's data).

A row label of paper_claims.py's tables names its data set first and, where the table has several models,
the model in parentheses ("NQG (NQG++, BLEU)", "CNN/DM (BART)"); Table 2's rows name the data set alone,
and the paper ran that table on the standard models (NQG++ and the pointer-generator).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# The data sets of the paper, by how a task's `source` names them.
DATASETS = {
    "nqg_zhou2017": "NQG",
    "abisee/cnn_dailymail": "CNN/DM",
    "EdinburghNLP/xsum": "XSum",
    "iwslt14_fairseq": "IWSLT14",
}
# The models of the paper, by a task's `model.architecture` (scratch) or its pretrained name.
ARCHITECTURES = {"nqg_pp": "NQG++", "pointer_generator": "pointer-generator", "transformer": "transformer"}
STANDARD_MODELS = ("NQG++", "pointer-generator")  # Table 2's models


def dataset_of(task: Mapping) -> str | None:
    """The paper's data set a task's source reads, or None (synthetic data, a user's files)."""
    source = task.get("source") or {}
    for key in (source.get("kind"), source.get("path")):
        if key in DATASETS:
            return DATASETS[key]
    return None


def model_of(task: Mapping) -> str | None:
    """The paper's model a task trains: its scratch architecture, or BART for a pretrained BART."""
    model = task.get("model") or {}
    if model.get("kind") == "pretrained":
        return "BART" if "bart" in str(model.get("name_or_path", "")).lower() else None
    return ARCHITECTURES.get(model.get("architecture"))


def matching_row(rows: Iterable[str], task: Mapping) -> str | None:
    """The label among `rows` (one claim's table rows) of the task's data set and model, or None. A row
    without a model in its label (Table 2) matches a standard model on its data set; a task whose data set
    or model the paper did not run matches nothing."""
    dataset, model = dataset_of(task), model_of(task)
    if dataset is None or model is None:
        return None
    for label in rows:
        named, _, inside = label.partition(" (")
        parts = [part.strip(" )") for part in inside.split(",")] if inside else []
        if named != dataset:
            continue
        if model in parts or (not any(part in (*ARCHITECTURES.values(), "BART") for part in parts) and model in STANDARD_MODELS):
            return label
    return None
