# Config validation, wildcard constraints and the named input/param functions the rules share.
# Nothing here runs a job; it only decides what the rules need.

from pathlib import Path

try:
    from gold_textgen import config as gold_config
except ImportError as error:
    raise WorkflowError(
        "the gold_textgen package is not importable; install the project first (`make setup`, "
        f"or `pip install -e .` in this environment): {error}"
    )

try:
    gold_config.validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except gold_config.ConfigError as error:
    raise WorkflowError(f"invalid configuration: {error}")

EXPERIMENT = config["experiment"]
SPLITS = ["train", "valid", "test"]
REPO_DIR = workflow.basedir


wildcard_constraints:
    task="[A-Za-z0-9_-]+",
    objective="mle|gold_[a-z0-9_]+",
    seed=r"\d+",
    split="train|valid|test",
    decoder="[A-Za-z0-9_-]+",


# Param functions return key-sorted settings (gold_config.canonical): Snakemake reruns a job when the
# text of its params changes, and the key order of a config file must not count as a change.


def task_settings(wildcards):
    return gold_config.canonical(gold_config.task_config(config, wildcards.task))


def source_settings(wildcards):
    return task_settings(wildcards)["source"]


def tokenizer_settings(wildcards):
    task = task_settings(wildcards)
    return {"source": task["source"], "tokenizer": task["tokenizer"]}


def training_settings(wildcards):
    objective = wildcards.get("objective", "mle")
    return gold_config.canonical(gold_config.training_view(task_settings(wildcards), objective))


def decoding_settings(wildcards):
    return gold_config.canonical(gold_config.decoding_view(task_settings(wildcards)))


def teacher_forcing_settings(wildcards):
    return gold_config.canonical(gold_config.teacher_forcing_view(task_settings(wildcards)))


def decoder_settings(wildcards):
    return gold_config.canonical(config["decoders"][wildcards.decoder])


def local_source_files(wildcards):
    """The user's files of a `local` task, so that editing them rebuilds the dataset."""
    return gold_config.local_source_files(source_settings(wildcards))


def tokenizer_input(wildcards):
    """Models built from scratch need the task's trained tokenizer; pretrained ones bring their own."""
    if gold_config.uses_trained_tokenizer(task_settings(wildcards)):
        return f"results/tokenizers/{wildcards.task}"
    return []


def reward_cache_input(wildcards):
    """GOLD-p/s with cached rewards read the MLE model's reward cache; GOLD-delta and online rewards don't."""
    task = task_settings(wildcards)
    reward = task["objectives"][wildcards.objective]["reward"]
    if reward != "delta" and task["gold"]["rewards"] == "cached":
        return f"results/rewards/{wildcards.task}/seed{wildcards.seed}/train.parquet"
    return []


def main_table_scores(wildcards):
    return expand(
        "results/scores/{task}/{objective}/seed{seed}/{split}/{decoder}.json",
        task=EXPERIMENT["tasks"],
        objective=EXPERIMENT["objectives"],
        seed=EXPERIMENT["seeds"],
        split=EXPERIMENT["eval_split"],
        decoder=EXPERIMENT["decoders"],
    )


def task_metrics(wildcards):
    return {task: config["tasks"][task]["metric"] for task in EXPERIMENT["tasks"]}
