# Each rule's settings as params (views of the validated config): a job reruns when, and only when, a
# setting it reads changes.

# Param functions return key-sorted settings (gold_views.canonical): Snakemake reruns a job when the
# text of its params changes, and the key order of a config file must not count as a change.


@functools.cache
def canonical_task(task):
    """A task's settings in canonical key order, worked out once per task (thousands of jobs ask)."""
    return gold_views.canonical(gold_views.task_config(config, task))


def task_settings(wildcards):
    checked(wildcards)
    return canonical_task(wildcards.task)


def checked(wildcards):
    """Stop at once when a requested output names something the config does not define."""
    try:
        gold_cross_references.check_target(config, wildcards)
    except ConfigError as error:
        raise WorkflowError(f"cannot build the requested output: {error}")


def source_settings(wildcards):
    return task_settings(wildcards)["source"]


def tokenizer_settings(wildcards):
    task = task_settings(wildcards)
    return {
        "source": gold_views.training_source_view(task["source"]),
        "tokenizer": task["tokenizer"],
    }


def training_settings(wildcards):
    objective = wildcards.get("objective", "mle")
    return gold_views.canonical(gold_views.training_view(task_settings(wildcards), objective))


@functools.cache
def view_of_task(view, task):
    """One of gold_views' views of a task (decoding, teacher forcing), once per task."""
    return gold_views.canonical(getattr(gold_views, view)(canonical_task(task)))


def decoding_settings(wildcards):
    checked(wildcards)
    return view_of_task("decoding_view", wildcards.task)


def teacher_forcing_settings(wildcards):
    checked(wildcards)
    return view_of_task("teacher_forcing_view", wildcards.task)


@functools.cache
def task_decoder(task, decoder):
    return gold_views.canonical(gold_views.decoder_view(config, task, decoder))


def decoder_settings(wildcards):
    """The decoder's search settings with the task's overrides (e.g. its beam size); its number of runs is
    not one (adding runs leaves the others alone)."""
    checked(wildcards)
    return task_decoder(wildcards.task, wildcards.decoder)


def scoring_settings(wildcards):
    """How the task's outputs are scored (metrics.Scoring): BLEU tokenisation and ROUGE variant."""
    checked(wildcards)
    return task_scoring(wildcards.task)


def task_scoring(task):
    """metrics.Scoring's fields for a task: chrF++ and TER beside BLEU where BLEU is the task metric."""
    settings = {key: config["tasks"][task][key] for key in ("bleu_tokenize", "rouge")}
    return {**settings, "translation_metrics": config["tasks"][task]["metric"] == "bleu"}
