# Config validation, wildcard constraints and the named input/param functions the rules share.
# Nothing here runs a job; it only decides what the rules need.

import functools
import re
import sys
from pathlib import Path

import yaml

try:
    from gold_textgen.data import sources as gold_sources
    from gold_textgen.data.sources import download as gold_download
    from gold_textgen.data.records import SPLITS
    from gold_textgen.models import description as gold_model_description
    from gold_textgen.workflow import cluster as gold_cluster
    from gold_textgen.workflow import code_identity as gold_code_identity
    from gold_textgen.workflow import experiment_index as gold_experiment_index
    from gold_textgen.workflow import layers as gold_layers
    from gold_textgen.workflow import overlays as gold_overlays
    from gold_textgen.workflow import references as gold_references
    from gold_textgen.workflow import report_status as gold_report_status
    from gold_textgen.workflow import resources as gold_resources
    from gold_textgen.workflow import schema as gold_schema
    from gold_textgen.workflow import views as gold_views
    from gold_textgen.workflow.errors import ConfigError
except ImportError as error:
    raise WorkflowError(
        "the gold_textgen package is not importable; install the project first (`make setup`, "
        f"or `pip install -e .` in this environment): {error}"
    )

# The layers Snakemake merged (config.yaml, each --configfile, --config): a source whose kind an overlay
# changes is taken whole from that overlay, and an error names the file that set the bad key.
try:
    CONFIG_LAYERS = gold_layers.config_layers(
        Path(workflow.basedir) / "config.yaml",
        workflow.config_settings.configfiles,
        workflow.config_settings.config,
    )
except ConfigError as error:
    raise WorkflowError(f"invalid configuration file: {error}")
gold_layers.take_switched_sources(config, CONFIG_LAYERS)
config.setdefault("experiment", {})["name"] = gold_layers.experiment_name(CONFIG_LAYERS)
try:
    gold_schema.validate_config(config)
except ConfigError as error:
    origin = gold_layers.where_set(CONFIG_LAYERS, error.key_path) or "the schema's defaults"
    raise WorkflowError(f"invalid configuration (set in {origin}): {error}")

EXPERIMENT = config["experiment"]
if EXPERIMENT["extends"]:
    try:
        BASE_CONFIG = gold_layers.merge_layers(
            gold_overlays.base_layers(CONFIG_LAYERS, EXPERIMENT["extends"])
        )
        gold_overlays.check_extension(gold_schema.validate_config(BASE_CONFIG), config)
    except ConfigError as error:
        origin = gold_layers.where_set(CONFIG_LAYERS, error.key_path) or "the schema's defaults"
        raise WorkflowError(f"invalid configuration (set in {origin}): {error}")
# One experiment, one folder: its tables, figures and analyses in results/<name>/, its logs in
# logs/<name>/; its data, models, generations and scores in the folder of the experiment it extends (an
# overlay's base), or its own. Running one experiment never rewrites a file of another.
RESULTS = f"results/{EXPERIMENT['name']}"
STORE = f"results/{EXPERIMENT['extends'] or EXPERIMENT['name']}"
LOGS = f"logs/{EXPERIMENT['name']}"


def experiment_path(relative):
    """An output of this experiment's own (tables, figures, analyses): results/<name>/`relative`."""
    return f"{RESULTS}/{relative}"


def store_path(relative):
    """A data set, model, generation or score file: results/<name, or the experiment extended>/`relative`."""
    return f"{STORE}/{relative}"


def log_path(relative):
    return f"{LOGS}/{relative}"


def benchmark_path(relative):
    return f"{LOGS}/benchmarks/{relative}"


TRAINING_SPLITS = (
    "train",
    "valid",
)  # rule prepare_dataset; the test split is rule verify_dataset's

# Where every result lies. Rules declare their outputs with these templates and the input functions fill
# them in (`path`); no other place spells a result path, and the package gets labels, never paths to parse.
DATA = store_path("data/{task}/{split}.jsonl")
DATA_CHECKS = store_path("data/{task}/checks.json")
ARCHIVE = store_path("downloads/{task}/source_archive")
TOKENIZER = store_path("tokenizers/{task}")
MODEL = store_path("models/{task}/{objective}/seed{seed}")
CHECKPOINTS = store_path("checkpoints/{task}/{objective}/seed{seed}")
TRAINING_LOG = store_path("runs/{task}/{objective}/seed{seed}")
REWARDS = store_path("rewards/{task}/seed{seed}/train.parquet")
TOKEN_NLL = store_path("token_nll/{task}/{objective}/seed{seed}/{split}.parquet")
GENERATIONS = store_path(
    "generations/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.jsonl"
)
SCORES = store_path("scores/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.json")
LEAD3_GENERATIONS = store_path("baselines/{task}/lead3/{split}.jsonl")
LEAD3_SCORES = store_path("baselines/{task}/lead3/{split}.json")
TRAINING_SUMMARY = experiment_path("analysis/{task}/training_summary.csv")
SIGNIFICANCE = experiment_path("tables/significance.csv")


class _KeepWildcards(dict):
    def __missing__(self, key):
        return f"{{{key}}}"


def path(template, **values):
    """`template` with the given wildcards filled in and the others kept as wildcards."""
    return template.format_map(_KeepWildcards(values))


gold_code_identity.use_cache(gold_code_identity.default_cache_file())


def code_version(script, *modules):
    """The code identity of the step that runs workflow_scripts/`script`.py (and the package `modules` it
    reaches by name), as a param: an edit to the code a job runs reruns it (workflow/code_identity.py).
    """
    adapter = Path(workflow.basedir) / "workflow_scripts" / f"{script}.py"
    return gold_code_identity.script_code_version(adapter, None, modules)


def workflow_code():
    """One digest of every step's code, for the experiment's record."""
    return gold_code_identity.workflow_code_version(Path(workflow.basedir) / "workflow_scripts")


def training_code_version(stage):
    """The code version of a training rule: `stage` mle (train_mle) or fine_tune (training.launch imports
    each stage's module by name, so the rule names it)."""
    return code_version(
        "train_mle" if stage == "mle" else "fine_tune", f"gold_textgen.training.{stage}"
    )


def current_model_code():
    """Every model folder of the experiment -> the code version its training rule runs now."""
    return {
        path(MODEL, task=task, objective=objective, seed=seed): training_code_version(
            "mle" if objective == "mle" else "fine_tune"
        )
        for task in EXPERIMENT["tasks"]
        for objective in gold_views.task_objectives(config, task)
        for seed in EXPERIMENT["seeds"]
    }


def scores_written(task):
    """The score files of `task` that exist now (any model, split and run)."""
    pattern = path(SCORES, task=task).format(
        objective="*", seed="*", split="*", decoder="*", sample="*"
    )
    return sorted(Path().glob(pattern))


onsuccess:
    # Runs the step cap stopped while they still improved, and references the tokenizer mostly cannot
    # represent (a flattering perplexity), said once more where the user looks last. Imported here, not
    # at the top: pandas and matplotlib would cost every start of the workflow half a second.
    from gold_textgen.analysis import training_curves as gold_training_curves
    from gold_textgen.evaluation.scoring import unk_warnings_from_scores

    for message in gold_training_curves.warnings_from_summaries(
        [(task, path(TRAINING_SUMMARY, task=task)) for task in EXPERIMENT["tasks"]]
    ):
        logger.warning(f"WARNING: {message}")
    for message in unk_warnings_from_scores(
        score for task in EXPERIMENT["tasks"] for score in scores_written(task)
    ):
        logger.warning(f"WARNING: {message}")
    # This experiment's record, and the index of every experiment in results/ (workflow/experiment_index.py).
    code = workflow_code()
    gold_experiment_index.record_run(
        RESULTS,
        EXPERIMENT["name"],
        EXPERIMENT["extends"],
        [Path(workflow.basedir) / "config.yaml", *workflow.config_settings.configfiles],
        code,
        complete=all(Path(output).exists() for output in final_outputs(None)),
    )
    gold_experiment_index.write_index("results", code)


# `snakemake --report`: the report's front page (and the terminal) say whether every result it shows is
# current, as `snakemake --summary` sees it (data edited, a model removed, settings changed).
if gold_report_status.is_report_run(sys.argv):
    REPORT_STATUS = Path(".snakemake/report_status.rst").resolve()
    REPORT_STATUS.parent.mkdir(exist_ok=True)
    REPORT_CONFIGFILES = list(workflow.config_settings.configfiles)
    if workflow.config_settings.config:  # --config values, applied last as they were
        REPORT_CONFIGFILES.append(REPORT_STATUS.with_name("report_config.yaml"))
        REPORT_CONFIGFILES[-1].write_text(yaml.safe_dump(dict(workflow.config_settings.config)))
    STALE_RESULTS = gold_report_status.stale_results(
        workflow.main_snakefile, Path.cwd(), REPORT_CONFIGFILES
    )
    if STALE_RESULTS:
        logger.warning(f"WARNING: {gold_report_status.warning(STALE_RESULTS)}")
    OLDER_CODE = gold_report_status.built_by_older_code(current_model_code())
    REPORT_STATUS.write_text(gold_report_status.description(STALE_RESULTS, older_code=OLDER_CODE))
    workflow.report(str(REPORT_STATUS))


onstart:
    # Before the first submission: a SLURM run on a host without SLURM's commands would otherwise retry
    # every job and end with "No such file or directory: 'sbatch'".
    problem = gold_cluster.slurm_client_problem(getattr(workflow.executor_plugin, "name", None))
    if problem:
        raise WorkflowError(problem)


ANALYSIS = gold_views.analysis_settings(config)


def analysis_view(rule):
    """The analysis settings `rule` reads, as its params (key-sorted)."""
    return gold_views.canonical(gold_views.analysis_view(ANALYSIS, rule))


wildcard_constraints:
    task="[A-Za-z0-9_-]+",
    objective="[a-z][a-z0-9_]*",
    seed=r"\d+",
    split="|".join(SPLITS),
    decoder="[A-Za-z0-9_-]+",
    sample=r"\d+",


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
        gold_references.check_target(config, wildcards)
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


def local_source_files(wildcards):
    """The files a task reads in place. Their times are ignored (ancient): a copy or a re-mounted share
    touches them without changing a word, and a rerun here would retrain every model downstream. Their
    contents count instead, through source_contents."""
    return [ancient(name) for name in gold_sources.local_source_files(source_settings(wildcards))]


def source_contents(wildcards):
    """A digest of the files a task reads in place, as a param: editing them rebuilds the dataset."""
    files = gold_sources.local_source_files(source_settings(wildcards))
    return gold_sources.source_files_digest(files) if files else None


def evaluation_source_settings(wildcards):
    """The source settings the test split reads (the verification keys left out)."""
    return gold_views.canonical(gold_views.evaluation_source_view(source_settings(wildcards)))


def verification_settings(wildcards):
    """The source settings the data checks read (rule verify_dataset)."""
    return gold_views.canonical(gold_views.verification_view(source_settings(wildcards)))


def training_source_settings(wildcards):
    """The source settings the training splits read (test-only and verification keys left out)."""
    return gold_views.canonical(gold_views.training_source_view(source_settings(wildcards)))


def training_source_files(wildcards):
    """The files the training splits read in place (a local source's test file is not one of them)."""
    files = gold_sources.local_source_files(source_settings(wildcards), TRAINING_SPLITS)
    return [ancient(name) for name in files]


def training_source_contents(wildcards):
    files = gold_sources.local_source_files(source_settings(wildcards), TRAINING_SPLITS)
    return gold_sources.source_files_digest(files) if files else None


def check_downloaded_archives():
    """An archive on disk that no longer matches its task's url or checksum stops the run here: neither
    setting is a job's param (rules/data.smk), so nothing would rerun to notice."""
    for task in EXPERIMENT["tasks"]:
        source = config["tasks"][task]["source"]
        if gold_sources.needs_download(source):
            problem = gold_download.archive_problem(
                path(ARCHIVE, task=task), source.get("url"), source.get("checksum")
            )
            if problem:
                raise WorkflowError(f"task {task}: {problem}")


check_downloaded_archives()


def source_archive_or_none(wildcards):
    """The archive path handed to prepare_dataset, None for sources without one."""
    return source_archive(wildcards) or None


def source_archive(wildcards):
    """The downloaded archive of an NQG or IWSLT14 task (download_source); other sources need none."""
    if gold_sources.needs_download(source_settings(wildcards)):
        return path(ARCHIVE, task=wildcards.task)
    return []


def fetch_inputs(wildcards):
    """Per task of the experiment: its downloaded archive, or its prepared data where a hub dataset is read."""
    inputs = []
    for task in EXPERIMENT["tasks"]:
        source = canonical_task(task)["source"]
        if gold_sources.needs_download(source):
            inputs.append(path(ARCHIVE, task=task))
        elif gold_sources.reads_hub(source):
            inputs.append(path(DATA, task=task, split="train"))
    return inputs


def tokenizer_input(wildcards):
    """Models built from scratch need the task's trained tokenizer; pretrained ones bring their own."""
    if gold_views.uses_trained_tokenizer(task_settings(wildcards)):
        return path(TOKENIZER, task=wildcards.task)
    return []


def starting_model(wildcards):
    """The model a fine-tuning objective starts from: the MLE model of its seed, or the objective named by
    its `start_from` (GOLD+PG starts from GOLD-s)."""
    start = task_settings(wildcards)["objectives"][wildcards.objective]["start_from"]
    return path(MODEL, task=wildcards.task, objective=start, seed=wildcards.seed)


def reward_cache_input(wildcards):
    """GOLD-p/s with cached rewards read the MLE model's reward cache; GOLD-delta, online rewards and the
    peer objectives don't."""
    task = task_settings(wildcards)
    objective = task["objectives"][wildcards.objective]
    if gold_views.uses_mle_rewards(objective) and task["gold"]["rewards"] == "cached":
        return path(REWARDS, task=wildcards.task, seed=wildcards.seed)
    return []


def evaluated_runs(split):
    """(decoder, sampling run) of every decoding run on `split` (gold_views.evaluated_runs)."""
    return gold_views.evaluated_runs(config, ANALYSIS, split)


def run_files(split, kind):
    """The generation or score file of each run of `split`, as output patterns of its evaluate rule."""
    template = {"generations": GENERATIONS, "scores": SCORES}[kind]
    return [
        path(template, split=split, decoder=decoder, sample=sample)
        for decoder, sample in evaluated_runs(split)
    ]


def run_settings(split):
    """A param function: each run of `split` with its decoder's search settings for the job's task."""

    def runs(wildcards):
        checked(wildcards)
        return [
            {
                "decoder": decoder,
                "sample": sample,
                "settings": task_decoder(wildcards.task, decoder),
            }
            for decoder, sample in evaluated_runs(split)
        ]

    return runs


def unknown_run_pattern():
    """A regex for `{split}/{decoder}/sample{n}` that no evaluation job writes (rule unknown_run)."""
    known = "|".join(
        re.escape(f"{split}/{decoder}/sample{sample}")
        for split in SPLITS
        for decoder, sample in evaluated_runs(split)
    )
    # The run is followed by ".{ext}" in the path: a known run is one followed by the dot.
    return rf"(?!(?:{known})\.)[^/]+/[^/]+/sample\d+" if known else r"[^/]+/[^/]+/sample\d+"


def explain_unknown_run(wildcards):
    split, decoder, sample = wildcards.run.split("/")
    checked({**wildcards, "decoder": decoder, "sample": sample.removeprefix("sample")})
    raise WorkflowError(
        f"cannot build the requested output: decoder '{decoder}' is not run on the {split} split "
        f"(experiment.decoders run on {EXPERIMENT['eval_split']}, experiment.sweep_decoders on "
        f"{EXPERIMENT['sweep_split']}, analysis.decoder on {ANALYSIS['split']})"
    )


def trained_models(wildcards):
    """Every model of the task, keyed "objective/seed" (the training-curves figure reads their logs)."""
    return {
        f"{objective}/{seed}": path(MODEL, task=wildcards.task, objective=objective, seed=seed)
        for objective in task_objectives(wildcards.task)
        for seed in EXPERIMENT["seeds"]
    }


def score_files(split, decoders):
    """Score files of every task x objective x seed x decoder x sampling run (one run per deterministic decoder)."""
    return [
        path(
            SCORES,
            task=task,
            objective=objective,
            seed=seed,
            split=split,
            decoder=decoder,
            sample=sample,
        )
        for task in EXPERIMENT["tasks"]
        for objective in task_objectives(task)
        for seed in EXPERIMENT["seeds"]
        for decoder in decoders
        for sample in gold_views.sample_ids(config["decoders"][decoder])
    ]


def main_table_scores(wildcards):
    return score_files(EXPERIMENT["eval_split"], EXPERIMENT["decoders"])


def sweep_scores(wildcards):
    return score_files(EXPERIMENT["sweep_split"], EXPERIMENT["sweep_decoders"])


def significance_runs(wildcards):
    """The outputs each objective is compared on (analysis/significance.py): every model's generations of
    the evaluation split with the first table decoder (its first sampling run)."""
    split, decoder = EXPERIMENT["eval_split"], EXPERIMENT["decoders"][0]
    sample = gold_views.sample_ids(config["decoders"][decoder])[0]
    return [
        {
            "task": task,
            "objective": objective,
            "seed": seed,
            "split": split,
            "decoder": decoder,
            "sample": sample,
            "generations": path(
                GENERATIONS,
                task=task,
                objective=objective,
                seed=seed,
                split=split,
                decoder=decoder,
                sample=sample,
            ),
        }
        for task in EXPERIMENT["tasks"]
        for objective in task_objectives(task)
        for seed in EXPERIMENT["seeds"]
    ]


def significance_generations(wildcards):
    return [run["generations"] for run in significance_runs(wildcards)]


def analysed_generations(task, objective, seed, samples):
    """Generation files of the analysed split and decoder for one model, one per sampling run in `samples`."""
    return [
        path(
            GENERATIONS,
            task=task,
            objective=objective,
            seed=seed,
            split=ANALYSIS["split"],
            decoder=ANALYSIS["decoder"],
            sample=sample,
        )
        for sample in samples
    ]


def analysis_generations(wildcards):
    """The analysed decoder's outputs on the analysis split, one file per objective (analysis seed, first run)."""
    first_run = gold_views.sample_ids(config["decoders"][ANALYSIS["decoder"]])[:1]
    return {
        objective: analysed_generations(wildcards.task, objective, ANALYSIS["seed"], first_run)[0]
        for objective in task_objectives(wildcards.task)
    }


def analysis_token_nll(wildcards):
    """Teacher-forced token NLL on the analysis split, one file per objective (analysis seed)."""
    return {
        objective: path(
            TOKEN_NLL,
            task=wildcards.task,
            objective=objective,
            seed=ANALYSIS["seed"],
            split=ANALYSIS["split"],
        )
        for objective in task_objectives(wildcards.task)
    }


def diversity_runs(wildcards):
    """The analysed decoder's runs for every objective, seed and sampling run, each with its labels."""
    return [
        {
            "objective": objective,
            "seed": seed,
            "sample": sample,
            "generations": analysed_generations(wildcards.task, objective, seed, [sample])[0],
        }
        for objective in task_objectives(wildcards.task)
        for seed in EXPERIMENT["seeds"]
        for sample in gold_views.sample_ids(config["decoders"][ANALYSIS["decoder"]])
    ]


def diversity_generations(wildcards):
    return [run["generations"] for run in diversity_runs(wildcards)]


def pairwise_generations(wildcards):
    """MLE's and the compared GOLD objective's outputs, for the examples and the human-evaluation sheet."""
    generations = analysis_generations(wildcards)
    if "mle" not in generations or ANALYSIS["gold_objective"] is None:
        raise WorkflowError(
            "the examples and the human-evaluation sheet need `mle` and a GOLD objective in experiment.objectives"
        )
    return {"mle": generations["mle"], "gold": generations[ANALYSIS["gold_objective"]]}


def task_objectives(task):
    """The objectives trained for `task`: experiment.objectives, then its experiment.task_objectives."""
    return gold_views.task_objectives(config, task)


def per_task(pattern):
    """One output per task of the experiment, e.g. per_task(rules.nll_histogram.output.figure)."""
    return expand(pattern, task=EXPERIMENT["tasks"])


@functools.cache
def stage_request(task, stage):
    """GPUs, memory and runtime of a stage for a task (gold_textgen.workflow.resources), worked out once per run."""
    return gold_resources.stage_request(gold_views.task_config(config, task), stage)


def requested_threads(stage):
    """A stage's CPU threads for the job's task (torch intra-op threads; beside GPUs, data loading)."""

    def threads(wildcards):
        return stage_request(wildcards.task, stage)["threads"]

    return threads


def requested(stage, key):
    """One resource of a stage for the job's task. A retried job (profile `retries`) gets its runtime times
    the attempt; training resumes anyway."""

    def value(wildcards, attempt):
        request = stage_request(wildcards.task, stage)[key]
        return request * attempt if key == "runtime" else request

    return value


def experiment_request(stage, key):
    """A resource for a job over every task (the paper comparison): the largest of the tasks' requests.
    Scoring all test outputs of a large grid with bootstrap takes minutes, so it is a cluster job.
    """
    return max(stage_request(task, stage)[key] for task in EXPERIMENT["tasks"])


def task_metrics(wildcards):
    return {task: config["tasks"][task]["metric"] for task in EXPERIMENT["tasks"]}


def task_families(wildcards):
    """Per task, its model's family as the paper's tables group them (recurrent: Tables 1-2; transformer: Table 3)."""
    return {
        task: gold_model_description.model_family(config["tasks"][task]["model"])
        for task in EXPERIMENT["tasks"]
    }


def compared_models(wildcards):
    """Per task, what the paper comparison needs to know about our model (paper_comparison.OurModel)."""
    return {
        task: {
            "label": gold_model_description.model_label(config["tasks"][task]["model"]),
            "family": gold_model_description.model_family(config["tasks"][task]["model"]),
            "perplexity_units": config["tasks"][task]["perplexity_units"],
        }
        for task in EXPERIMENT["tasks"]
    }


def experiment_scoring(wildcards):
    return {task: task_scoring(task) for task in EXPERIMENT["tasks"]}


def compared_tasks():
    """Tasks of the experiment for which the config lists the paper's numbers."""
    return [task for task in EXPERIMENT["tasks"] if config["tasks"][task]["paper_results"]]


def paper_results(wildcards):
    return gold_views.canonical(
        {task: config["tasks"][task]["paper_results"] for task in compared_tasks()}
    )


def lead3_tasks(tasks):
    """The tasks among `tasks` that list the lead-3 baseline."""
    return [task for task in tasks if "lead3" in config["tasks"][task]["baselines"]]


def default_compared_run(wildcards):
    """The (split, decoder) of a paper_results entry that names neither: the tables' own."""
    return [EXPERIMENT["eval_split"], EXPERIMENT["decoders"][0]]


def produced_runs():
    """(split, decoder) pairs whose outputs the experiment makes: its decoders on the evaluation split and
    the sweep's on the sweep split."""
    pairs = {(EXPERIMENT["eval_split"], decoder) for decoder in EXPERIMENT["decoders"]}
    return pairs | {
        (EXPERIMENT["sweep_split"], decoder) for decoder in EXPERIMENT["sweep_decoders"]
    }


def paper_comparison_runs(wildcards):
    """For every (split, decoder) a compared task's paper numbers name and the experiment produces: every
    model's outputs (all runs of a sampling decoder) and NLL table of that split, and the lead-3 outputs of
    tasks that list that baseline."""
    default = tuple(default_compared_run(wildcards))
    runs = []
    for task in compared_tasks():
        wanted = {
            gold_views.entry_run(entry, default) for entry in config["tasks"][task]["paper_results"]
        }
        for split, decoder in sorted(wanted & produced_runs()):
            runs += [
                {
                    "task": task,
                    "objective": objective,
                    "seed": seed,
                    "split": split,
                    "decoder": decoder,
                    "sample": sample,
                    "generations": path(
                        GENERATIONS,
                        task=task,
                        objective=objective,
                        seed=seed,
                        split=split,
                        decoder=decoder,
                        sample=sample,
                    ),
                    "nll": path(TOKEN_NLL, task=task, objective=objective, seed=seed, split=split),
                }
                for objective in task_objectives(task)
                for seed in EXPERIMENT["seeds"]
                for sample in gold_views.sample_ids(config["decoders"][decoder])
            ]
    split = EXPERIMENT["eval_split"]
    runs += [
        {
            "task": task,
            "objective": "lead3",
            "seed": 0,
            "split": split,
            "decoder": "lead3",
            "generations": path(LEAD3_GENERATIONS, task=task, split=split),
            "nll": None,
        }
        for task in lead3_tasks(compared_tasks())
    ]
    return runs


def paper_comparison_inputs(wildcards):
    runs = paper_comparison_runs(wildcards)
    return {
        "generations": [run["generations"] for run in runs],
        "nll": sorted({run["nll"] for run in runs if run["nll"]}),
    }


def on_policy_objectives(task=None):
    """The objectives trained with the policy gradient in `task` (or in any task of the experiment)."""
    tasks = EXPERIMENT["tasks"] if task is None else [task]
    return list(
        dict.fromkeys(
            name
            for each in tasks
            for name in task_objectives(each)
            if config["tasks"][each]["objectives"].get(name, {}).get("loss") == "policy_gradient"
        )
    )


def on_policy_setting(key):
    """A param function: per task, each of its on-policy objectives' `key` (start_from, reward_metric)."""

    def settings(wildcards):
        return {
            task: {
                name: config["tasks"][task]["objectives"][name][key]
                for name in on_policy_objectives(task)
            }
            for task in EXPERIMENT["tasks"]
        }

    return settings


def per_task_diversity(wildcards):
    """Each task's diversity table, in the order of experiment.tasks."""
    return per_task(rules.diversity.output.csv)


def final_outputs(wildcards):
    """Everything `snakemake` builds by default: the tables, and the analyses the experiment supports (each
    named by its rule's own output, so the path is written once)."""
    outputs = [rules.main_table.output.csv, rules.table1.output.csv, *per_task(DATA_CHECKS)]
    if EXPERIMENT["sweep_decoders"]:
        outputs.append(rules.table2.output.csv)
    outputs += per_task(rules.nll_histogram.output.figure)
    outputs += per_task(rules.nll_by_time_step.output.figure)
    outputs += per_task(rules.exposure_bias.output.figure)
    outputs += per_task(rules.diversity.output.csv)
    outputs += per_task(rules.training_curves.output.figure)
    outputs.append(rules.objectives_table.output.csv)
    if on_policy_objectives():
        outputs.append(rules.table4.output.csv)
    if compared_tasks():
        outputs.append(rules.paper_comparison.output.csv)
    outputs += [
        path(LEAD3_SCORES, task=task, split=EXPERIMENT["eval_split"])
        for task in lead3_tasks(EXPERIMENT["tasks"])
    ]
    if "mle" in EXPERIMENT["objectives"] and ANALYSIS["gold_objective"] is not None:
        outputs += per_task(rules.examples.output.markdown)
        outputs += per_task(rules.human_eval_sheet.output.sheet)
    return outputs


# The splits that have an evaluate rule (rules/evaluate.smk).
EVALUATED_SPLITS = [split for split in SPLITS if evaluated_runs(split)]
