"""Per-rule views of the validated config: each rule's params hold only the settings that can change its
output, so Snakemake reruns a job when (and only when) one of them changes."""

from __future__ import annotations

from ..catalog import DEFAULT_LOSS, loss_of, needs
from ..runtime.errors import ConfigError

# The task metrics (config key tasks.<name>.metric) that score final answers after ####, not text
# (evaluation.metrics.ANSWER_METRICS computes them).
ANSWER_METRIC_NAMES = ("strict_match", "flexible_extract", "exact_match")


def sample_ids(decoder: dict) -> list[int]:
    """The runs of one decoder: sample seeds 1..samples for a sampling decoder, the single run 0 otherwise."""
    return list(range(1, decoder["samples"] + 1)) if decoder["do_sample"] else [0]


def listed_objectives(config: dict, task: str) -> list[str]:
    """The objectives the experiment names for `task`: experiment.objectives, then the task's own under
    experiment.task_objectives (the paper's Table 4 objectives on its standard models only)."""
    experiment = config["experiment"]
    extra = [name for name in experiment["task_objectives"].get(task, []) if name not in experiment["objectives"]]
    return [*experiment["objectives"], *extra]


def task_objectives(config: dict, task: str) -> list[str]:
    """The objectives trained for `task`: those listed (listed_objectives) but the task's imported models."""
    imported = config["tasks"][task]["imported_models"]
    return [name for name in listed_objectives(config, task) if name not in imported]


def evaluated_objectives(config: dict, task: str) -> list[str]:
    """Every model name of `task` that is decoded, scored and tabled: the listed objectives (trained or
    imported in their place), then the task's other imported models."""
    listed = listed_objectives(config, task)
    return [*listed, *(name for name in config["tasks"][task]["imported_models"] if name not in listed)]


def evaluated_runs(config: dict, analysis: dict, split: str) -> list[tuple[str, int]]:
    """(decoder, sampling run) of every decoding run on `split`: the table decoders on the evaluation split,
    the sweep on the sweep split, the analysed decoder (`analysis`: analysis_settings) on the analysis
    split; each decoder once."""
    experiment = config["experiment"]
    decoders = []
    if split == experiment["eval_split"]:
        decoders += experiment["decoders"]
    if split == experiment["sweep_split"]:
        decoders += experiment["sweep_decoders"]
    if split == analysis["split"]:
        decoders.append(analysis["decoder"])
    return [(decoder, sample) for decoder in dict.fromkeys(decoders) for sample in sample_ids(config["decoders"][decoder])]


def analysis_settings(config: dict) -> dict:
    """The `analysis` section with its defaults resolved: the seed (first training seed) and the GOLD
    objective compared with MLE (the last GOLD objective of the experiment, or None if it has none)."""
    analysis = dict(config["analysis"])
    experiment = config["experiment"]
    if analysis["seed"] is None:
        analysis["seed"] = experiment["seeds"][0]
    if analysis["gold_objective"] is None:
        tuned = [o for o in experiment["objectives"] if o != "mle"]
        gold = [o for o in tuned if all(_trained_with(config, t, o) == DEFAULT_LOSS for t in experiment["tasks"])]
        analysis["gold_objective"] = (gold or tuned)[-1] if tuned else None
    return analysis


def _trained_with(config: dict, task: str, objective: str) -> str | None:
    """The loss `objective` trains with in `task`, or None where it is not trained there (imported)."""
    settings = config["tasks"][task]
    if objective in settings["imported_models"] or objective not in settings["objectives"]:
        return None
    return loss_of(settings["objectives"][objective]).name


# The `analysis` settings each analysis rule reads (besides the split, decoder and seed its input files
# already name): a rule's params hold only these, so changing `num_examples` reruns the examples alone.
ANALYSIS_READS = {
    "nll_by_time_step": ("bootstrap_resamples", "confidence", "draw_seed"),
    "exposure_bias": ("bootstrap_resamples", "confidence", "draw_seed"),
    "paper_comparison": ("bootstrap_resamples", "confidence", "draw_seed"),
    "significance": ("bootstrap_resamples", "randomization_trials", "confidence", "draw_seed"),
    "examples": ("num_examples", "draw_seed"),
    "human_eval_sheet": ("gold_objective", "human_eval_items", "draw_seed"),
    "diversity": ("max_ngram",),
}


def analysis_view(analysis: dict, rule: str) -> dict:
    """The resolved `analysis` settings (analysis_settings) that `rule` reads."""
    return {key: analysis[key] for key in ANALYSIS_READS[rule]}


def uses_mle_rewards(objective: dict) -> bool:
    """Whether a fine-tuning objective (an entry of a task's `objectives`) reads p_MLE of the frozen MLE
    model's reference tokens (the reward cache): the catalog's `mle_rewards` need (GOLD-p and GOLD-s,
    iw-SFT's reference policy)."""
    return "mle_rewards" in needs(objective)


def label_smoothing_by_objective(config: dict) -> dict[str, dict[str, float]]:
    """Per task of the experiment, the label smoothing each of its objectives trains with: MLE the `mle`
    block's; a fine-tuning objective its own `label_smoothing`, else (its loss's default is the block's)
    the fine-tuning block's."""
    smoothing = {}
    for task in config["experiment"]["tasks"]:
        settings = config["tasks"][task]
        block = settings["fine_tune"]["label_smoothing"]
        values = {"mle": settings["mle"]["label_smoothing"]}
        for objective in task_objectives(config, task):
            if objective != "mle":
                own = settings["objectives"][objective].get("label_smoothing")
                values[objective] = block if own is None else own
        smoothing[task] = values
    return smoothing


def task_config(config: dict, task: str) -> dict:
    """The settings of one task, with its name and `dev_search`, the resolved search of its `dev_decoder`
    (see dev_search); raises a ConfigError naming an unknown task."""
    if task not in config["tasks"]:
        raise ConfigError(f"unknown task '{task}' (defined: {', '.join(sorted(config['tasks']))})")
    settings = {"name": task, **config["tasks"][task]}
    settings["dev_search"] = dev_search(config, task)
    return settings


def dev_search(config: dict, task: str) -> dict:
    """How dev outputs are decoded while training selects checkpoints: the task's `dev_decoder` with its
    overrides, and the length penalty where a beam reads it. Part of the training view, so changing it
    retrains, while the decoders of the sweep stay decoding-only settings."""
    search = {key: value for key, value in decoder_view(config, task, config["tasks"][task]["dev_decoder"]).items() if key != "do_sample"}
    if search.get("num_beams", 1) > 1:
        search["length_penalty"] = config["tasks"][task]["generation"]["length_penalty"]
    return search


def entry_run(entry: dict, default_run: tuple[str, str]) -> tuple[str, str]:
    """(split, decoder) a `paper_results` entry was scored with: its own, or the experiment's defaults
    (`default_run`: the evaluation split and the first decoder)."""
    return entry.get("split") or default_run[0], entry.get("decoder") or default_run[1]


RECURRENT_ARCHITECTURES = ("nqg_pp", "pointer_generator")  # the paper's standard models (models/recurrent.py)


def is_recurrent(model: dict) -> bool:
    """Whether a task's `model` settings build one of the recurrent copy models."""
    return model["kind"] == "scratch" and model.get("architecture") in RECURRENT_ARCHITECTURES


def is_causal(model: dict) -> bool:
    """Whether a task's `model` settings are a decoder-only language model (prompt -> completion)."""
    return model.get("architecture") == "causal"


def uses_trained_tokenizer(task: dict) -> bool:
    """Models built from scratch need a tokenizer trained on the task's data; pretrained ones bring theirs."""
    return task["model"]["kind"] == "scratch"


DECODING_ONLY = ("length_penalty", "batch_size")
# Task keys that only decoding and reporting read: changing them must not retrain anything.
NOT_TRAINING = ("decoder_overrides", "baselines", "paper_results", "perplexity_units")


def training_view(task: dict, objective: str) -> dict:
    """The task settings that can change the model trained with `objective`.

    Decoding-only settings (beam length penalty, decoding batch size, per-task decoder overrides), the
    reporting keys (baselines, the paper's numbers) and the source's test-only and verification keys
    (training_source_view) are left out, so changing them
    reruns decoding but never training; MLE ignores the GOLD settings, and a GOLD objective sees only
    its own entry of `objectives` (its MLE starting point is an input file, tracked by Snakemake).
    """
    view = {key: value for key, value in task.items() if key not in ("generation", "mle", "fine_tune", "objectives", *NOT_TRAINING)}
    view["source"] = training_source_view(task["source"])
    view["generation"] = {k: v for k, v in task["generation"].items() if k not in DECODING_ONLY}
    if objective == "mle":
        view["mle"] = task["mle"]
    else:
        if objective not in task.get("objectives", {}):
            raise ConfigError(f"objective '{objective}' is not defined under tasks.{task.get('name', '?')}.objectives")
        view["fine_tune"] = task["fine_tune"]
        view["objectives"] = {objective: task["objectives"][objective]}
    return view


# Settings that check a source or say where to fetch it, but never change a record: the data checks
# (rule verify_dataset) read them; no split, model or score depends on them.
VERIFICATION_KEYS = ("checksum", "url", "expected_sizes", "max_split_overlap")


def verification_view(source: dict) -> dict:
    """The source settings that rule verify_dataset reads (checksum and url, expected sizes, max_split_overlap)."""
    return {key: source.get(key) for key in VERIFICATION_KEYS}


def evaluation_source_view(source: dict) -> dict:
    """The source settings the test split reads: all but the verification keys."""
    return {key: value for key, value in source.items() if key not in VERIFICATION_KEYS}


def training_source_view(source: dict) -> dict:
    """The source settings that can change the train and valid splits: without the verification keys and
    the test-only ones (the demo's `num_test`, a local source's `test` file, the hub's test split and its
    files, the NQG release's test prefix and line range), so changing those re-makes and re-scores the
    test split but retrains nothing. NQG's `sentence_split.test` stays: the test groups are carved first."""
    kept = evaluation_source_view(source)
    kind = source["kind"]
    if kind == "synthetic":
        kept.pop("num_test", None)
    elif kind == "local":
        kept.pop("test", None)
    elif kind in ("huggingface", "gsm8k"):
        test_split = source.get("splits", {}).get("test", "test")
        if kind == "huggingface":
            kept["splits"] = {split: name for split, name in source.get("splits", {}).items() if split != "test"}
        if source.get("data_files"):
            kept["data_files"] = {split: files for split, files in source["data_files"].items() if split != test_split}
    elif kind == "nqg_zhou2017":
        for key in ("prefixes", "line_ranges"):
            if key in source:
                kept[key] = {split: value for split, value in source[key].items() if split != "test"}
    return kept


def decoder_view(config: dict, task: str, decoder: str) -> dict:
    """A decoder's search settings for one task: the shared entry under `decoders`, updated with the task's
    `decoder_overrides` for that name (the paper decodes each task with its own beam size)."""
    settings = {key: value for key, value in config["decoders"][decoder].items() if key != "samples"}
    settings.update(config["tasks"][task]["decoder_overrides"].get(decoder, {}))
    return settings


def decoding_view(task: dict) -> dict:
    """The task settings that decoding reads: lengths, generation and the token features the model reads."""
    return {**{key: task[key] for key in ("name", "max_source_length", "max_target_length", "generation")}, "model": model_inputs(task)}


def model_inputs(task: dict) -> dict:
    """The part of a task's `model` settings that encoding its inputs reads (the recurrent models' token
    features), for the views of rules that encode but do not build models."""
    return {"features": task["model"]["features"]}


def teacher_forcing_view(task: dict) -> dict:
    """The task settings that teacher-forced passes (token NLL, reward cache) read: lengths and batch size,
    so changing a search setting such as the length penalty leaves them alone."""
    return {
        **{key: task[key] for key in ("name", "max_source_length", "max_target_length")},
        "generation": {"batch_size": task["generation"]["batch_size"]},
        "model": model_inputs(task),
    }


def canonical(value):
    """`value` with every mapping's keys sorted, recursively.

    Snakemake compares a job's params with the last run by their text, so the same settings written in
    another key order (a config file saved by another tool, say) would otherwise rerun the job.
    """
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value
