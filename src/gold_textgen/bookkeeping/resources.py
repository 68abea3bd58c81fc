"""Default compute requests per workflow stage and task size: the `resources:` of each rule.

These are runtime facts, not experiment facts, so they are not config keys: a task's size class follows
from its model and data, and a run overrides any of them on the command line or in its profile
(`--set-threads train_mle=2`, `set-resources:`, where partition, account and GPU model belong too).
Local runs ignore what they don't limit (`--resources gpu=N` caps concurrent GPU jobs on a workstation).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..config.views import is_causal, is_recurrent

# Stages that run a model; everything else (data, tokenizer, scoring, tables, figures) is CPU-only.
GPU_STAGES = ("train_mle", "fine_tune", "cache_rewards", "evaluate")

# size class -> stage -> (GPUs, CPU threads, memory in MB, runtime in minutes). `small` is the demo (a
# 0.5M-parameter model on 20k pairs: minutes; one thread per job, since two such jobs side by side finish
# sooner than one on two threads), `medium` a from-scratch transformer on a real corpus (the IWSLT14 model:
# ~40M parameters on 160k pairs), `large` a pretrained model of BART-large's size (400M parameters; the
# paper trained it on 4 GPUs for CNN/DM and XSum), `recurrent` the paper's standard models (NQG++, the
# pointer-generator: 10-20M parameters on one GPU, whose step-by-step decoder makes them slower per token
# than their size suggests: the paper's CNN/DM epoch took 2 hours on a GTX 1080 Ti, best within 15 epochs).
# Beside GPUs the threads collate and tokenise batches. The recurrent models take one thread: their step is
# many small operations, one at a time, so on a CPU two such jobs side by side train 1.8 times as fast as one
# job on two threads (docs/benchmarks.md), and on a GPU one thread launches the kernels.
REQUESTS = {
    "small": {
        "train_mle": (1, 1, 4000, 120),
        "fine_tune": (1, 1, 4000, 60),
        "cache_rewards": (1, 1, 4000, 30),
        "evaluate": (1, 1, 4000, 60),
        "cpu": (0, 1, 2000, 30),
    },
    "medium": {
        "train_mle": (1, 4, 32000, 1440),
        "fine_tune": (1, 4, 32000, 720),
        "cache_rewards": (1, 2, 16000, 120),
        "evaluate": (1, 4, 16000, 480),
        "cpu": (0, 1, 8000, 120),
    },
    "recurrent": {
        "train_mle": (1, 1, 32000, 2880),
        "fine_tune": (1, 1, 32000, 1440),
        "cache_rewards": (1, 1, 16000, 120),
        "evaluate": (1, 1, 16000, 720),
        "cpu": (0, 1, 8000, 120),
    },
    "large": {
        "train_mle": (4, 8, 128000, 2880),
        "fine_tune": (4, 8, 128000, 1440),
        "cache_rewards": (1, 4, 64000, 240),
        "evaluate": (1, 4, 64000, 960),
        "cpu": (0, 1, 16000, 240),
    },
}
LARGE_PARAMETERS = 200_000_000
LARGE_CAUSAL_PARAMETERS = 3_000_000_000  # a pretrained causal LM below this fine-tunes on one GPU in bf16
MEDIUM_PARAMETERS = 5_000_000
MEDIUM_EXAMPLES = 100_000


def scratch_parameters(model: dict) -> int:
    """Rough parameter count of a transformer built from the config sizes (embeddings left out)."""
    d, ffn = model["d_model"], model["ffn_dim"]
    per_layer = 4 * d * d + 2 * d * ffn
    if model.get("architecture") == "causal":  # decoder layers alone, no cross-attention (SwiGLU: 3 FFN matrices)
        return model["decoder_layers"] * (4 * d * d + 3 * d * ffn)
    return model["encoder_layers"] * per_layer + model["decoder_layers"] * (per_layer + 4 * d * d)


def training_examples(source: dict, cap: int = MEDIUM_EXAMPLES) -> int:
    """Training pairs of a source, counted up to `cap` (a local file's lines; a public corpus's training lines
    where `line_ranges` keeps some, or the file `sentence_split` divides less its dev and test pairs; a missing
    file or a whole public corpus counts as `cap`)."""
    if source["kind"] == "synthetic":
        return source["num_train"]
    if "train" in (source.get("line_ranges") or {}):  # e.g. 7,965 pairs of NQG's dev file
        first, last = source["line_ranges"]["train"]
        return min(cap, last - first + 1)
    if source.get("sentence_split") and "directory" in source:  # configs/nqg_real.yaml: the dev file less dev and test
        held_out = source["sentence_split"]["valid"] + source["sentence_split"]["test"]
        return max(0, release_lines(Path(source["directory"]), source["prefixes"]["train"] + ".source.txt", cap + held_out) - held_out)
    if source["kind"] != "local":
        return cap  # the public corpora (NQG, CNN/DM, XSum, IWSLT14) all have 86k or more training pairs
    return counted_lines(Path(source["train"] + (source["suffixes"][0] if source.get("format") == "parallel" else "")), cap)


def release_lines(folder: Path, basename: str, cap: int) -> int:
    """Lines of the file called `basename` in a release folder, up to `cap` (`cap` when it is missing)."""
    found = sorted(folder.rglob(basename)) if folder.is_dir() else []
    return counted_lines(found[0], cap) if found else cap


def counted_lines(path: Path, cap: int) -> int:
    """Lines of a file counted up to `cap`; a missing file counts as `cap` (sized as a whole corpus)."""
    if not path.exists():
        return cap
    with open(path, "rb") as handle:
        return sum(1 for _, _ in zip(range(cap), handle, strict=False))


def named_parameters(name: str) -> int | None:
    """The parameter count a model's name states (`qwen3-0.6b` -> 600M, `smollm2-360m` -> 360M), or None."""
    match = re.search(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)([bm])(?![a-z])", name.lower())
    if match is None:
        return None
    return int(float(match.group(1)) * (1e9 if match.group(2) == "b" else 1e6))


def size_class(task: dict) -> str:
    """`small`, `medium`, `large` or `recurrent`, from the task's model and (where known) its training-set size."""
    model = task["model"]
    if is_recurrent(model):
        return "recurrent"
    if model["kind"] == "pretrained":
        name = str(model.get("name_or_path", "")).lower()
        if is_causal(model):  # hub names state the size: Qwen3-0.6B, SmolLM2-360M-Instruct
            return "large" if (named_parameters(name) or 0) >= LARGE_CAUSAL_PARAMETERS else "medium"
        return "large" if "large" in name else "medium"
    examples = training_examples(task["source"])
    if scratch_parameters(model) >= LARGE_PARAMETERS:
        return "large"
    if scratch_parameters(model) >= MEDIUM_PARAMETERS or examples >= MEDIUM_EXAMPLES:
        return "medium"
    return "small"


def stage_request(task: dict, stage: str) -> dict:
    """`{"gpu": n, "threads": t, "mem_mb": m, "runtime": minutes}` for one stage of one task (`cpu` for
    CPU-only rules)."""
    gpus, threads, mem_mb, runtime = REQUESTS[size_class(task)][stage if stage in GPU_STAGES else "cpu"]
    return {"gpu": gpus, "threads": threads, "mem_mb": mem_mb, "runtime": runtime}
