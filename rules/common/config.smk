# The experiment's config (validated, with the folder it writes to), the path template of every result,
# the code versions that rerun a job when its code changes, and the wildcard constraints.

import functools
import re
import sys
from pathlib import Path

import yaml

try:
    from gold_textgen import catalog as gold_catalog
    from gold_textgen.config import cross_references as gold_cross_references
    from gold_textgen.config import layers as gold_layers
    from gold_textgen.config import overlays as gold_overlays
    from gold_textgen.claims import paper_claims as gold_paper_claims
    from gold_textgen.config import schema as gold_schema
    from gold_textgen.config import views as gold_views
    from gold_textgen.cost import device_profile as gold_cost_profile
    from gold_textgen.cost import estimates as gold_cost_estimates
    from gold_textgen.cost import work as gold_cost_work
    from gold_textgen.data import sources as gold_sources
    from gold_textgen.data.records import SPLITS
    from gold_textgen.data.sources import download as gold_download
    from gold_textgen.models import description as gold_model_description
    from gold_textgen.model_exchange import import_record as gold_imported
    from gold_textgen.runtime import cluster as gold_cluster
    from gold_textgen.runtime import file_times as gold_file_times
    from gold_textgen.runtime.errors import ConfigError
    from gold_textgen.bookkeeping import code_identity as gold_code_identity
    from gold_textgen.bookkeeping import experiment_index as gold_experiment_index
    from gold_textgen.bookkeeping import report_status as gold_report_status
    from gold_textgen.bookkeeping import resources as gold_resources
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
EXPERIMENT_NAME, EXPERIMENT_SOURCES = gold_layers.name_sources(CONFIG_LAYERS)
# The config files this experiment's folder belongs to, as its record names them (experiment_index).
EXPERIMENT_SOURCE_LABELS = gold_experiment_index.source_labels(
    EXPERIMENT_SOURCES, Path(workflow.basedir)
)
config.setdefault("experiment", {})["name"] = EXPERIMENT_NAME
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

# One folder, one experiment: once it holds models, a run under other settings than those it was made with
# is refused before it plans anything, whatever its target (bookkeeping/experiment_index.py). Only the process
# that plans: a job's own Snakemake runs under the settings its run was allowed with.
OWNED_SETTINGS = gold_experiment_index.owned_settings(gold_layers.merge_layers(CONFIG_LAYERS))
# A damaged record is named as such (ConfigError), not taken for a folder without one.
if workflow.is_main_process and not gold_experiment_index.only_reads(sys.argv):
    try:
        OWNERSHIP_PROBLEM = gold_experiment_index.ownership_problem(
            RESULTS,
            EXPERIMENT["name"],
            EXPERIMENT_SOURCE_LABELS,
            OWNED_SETTINGS,
            holds_models=any(path.is_file() for path in Path(RESULTS, "models").rglob("*")),
        )
        # An extension writes its models into its base's folder: the layers that rebuild the base here must be
        # the settings that folder's models were made with.
        BASE_PROBLEM = EXPERIMENT["extends"] and gold_experiment_index.base_ownership_problem(
            STORE,
            EXPERIMENT["extends"],
            gold_overlays.base_layers(CONFIG_LAYERS, EXPERIMENT["extends"]),
            Path(workflow.basedir),
        )
    except ConfigError as error:
        raise WorkflowError(str(error))
    if OWNERSHIP_PROBLEM or BASE_PROBLEM:
        raise WorkflowError(OWNERSHIP_PROBLEM or BASE_PROBLEM)

# Imported checkpoints are folders on this machine before anything is planned (model_exchange/import_record.py).
if workflow.is_main_process:
    MISSING_CHECKPOINT = gold_imported.missing_checkpoint(config)
    if MISSING_CHECKPOINT:
        raise WorkflowError(MISSING_CHECKPOINT)

# Results copied without their file times (`cp -r`) get the times of the run that wrote them back where
# their contents are unchanged, before Snakemake compares any (runtime/file_times.py). Only the process
# that plans: a job's own Snakemake (a SLURM step, a local subprocess) plans nothing.
if workflow.is_main_process:
    # What each job recorded of its outputs as it finished (runtime/output_records.py) joins the run's record
    # first: an output edited after its job wrote it counts as changed in place.
    CHANGED_AFTER_JOB = gold_file_times.fold_job_records(Path.cwd())
    RESTORED_TIMES = gold_file_times.restore(Path.cwd())
    if RESTORED_TIMES:
        logger.info(
            f"{RESTORED_TIMES} outputs copied without their file times got the recorded times back "
            "(contents unchanged)"
        )
    # An output whose contents changed with its time kept (a file swapped inside a model folder) is
    # treated as an edited file: what reads it reruns, and the run says so.
    CHANGED_IN_PLACE = CHANGED_AFTER_JOB + gold_file_times.changed_in_place(Path.cwd())
    if CHANGED_IN_PLACE:
        logger.warning(
            f"WARNING: {len(CHANGED_IN_PLACE)} outputs changed since their jobs wrote them, their times kept: "
            f"{', '.join(CHANGED_IN_PLACE[:5])}{' ...' if len(CHANGED_IN_PLACE) > 5 else ''}. What reads them "
            "reruns on their new contents; to remake one from its inputs instead, delete it and run again"
        )


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
# them in (`path`); the jobs get labels, never paths to parse. The package's readers of a finished
# experiment folder (comparisons/demo_signatures.py, bookkeeping/experiment_index.py) name the few files they
# read, relative to that folder.
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
CLAIMS = experiment_path("tables/claims.csv")


class _KeepWildcards(dict):
    def __missing__(self, key):
        return f"{{{key}}}"


def path(template, **values):
    """`template` with the given wildcards filled in and the others kept as wildcards."""
    return template.format_map(_KeepWildcards(values))


gold_code_identity.use_cache(gold_code_identity.default_cache_file())


def objective_loss(task, objective):
    """The loss (a catalog row) an objective of a task trains with."""
    return gold_catalog.loss_of(config["tasks"][task]["objectives"][objective]).name


# The catalog rows in a step's code identity (bookkeeping/code_identity.py): none for the steps that never
# read one (data, MLE, evaluation), the experiment's losses for the tables and figures that label them; a
# fine-tuning job reads its own objective's row (training_code_version).
NO_ROWS = ()
EXPERIMENT_LOSSES = tuple(
    sorted(
        {
            objective_loss(task, objective)
            for task in EXPERIMENT["tasks"]
            for objective in gold_views.task_objectives(config, task)
            if objective != "mle"
        }
    )
)


def code_version(script, *modules, rows=EXPERIMENT_LOSSES):
    """The code identity of the step that runs workflow_scripts/`script`.py (and the package `modules` it
    reaches by name) with the catalog `rows` it reads, as a param: an edit to the code a job runs reruns
    it (bookkeeping/code_identity.py).
    """
    adapter = Path(workflow.basedir) / "workflow_scripts" / f"{script}.py"
    return gold_code_identity.script_code_version(adapter, None, modules, tuple(rows))


def workflow_code():
    """One digest of every step's code, for the experiment's record."""
    return gold_code_identity.workflow_code_version(Path(workflow.basedir) / "workflow_scripts")


def training_code_version(task, objective):
    """The code version of a model's training: train_mle's, or fine_tune's with the row of the objective's
    loss (training.launch imports each stage's module by name, so the rule names it)."""
    if objective == "mle":
        return code_version("train_mle", "gold_textgen.training.mle", rows=NO_ROWS)
    rows = (objective_loss(task, objective),)
    return code_version("fine_tune", "gold_textgen.training.fine_tune", rows=rows)


def current_model_code():
    """Every model folder of the experiment -> the code version its training rule runs now."""
    return {
        path(MODEL, task=task, objective=objective, seed=seed): training_code_version(
            task, objective
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
    # This experiment's record, and the index of every experiment in results/ (bookkeeping/experiment_index.py):
    # complete when this run's jobs covered every default target (then nothing of `all` is pending).
    built = {str(output) for job in workflow.dag.jobs for output in job.output}
    record_experiment(complete=set(map(str, final_outputs(None))) <= built)
    # a job's benchmark file counts among its outputs when Snakemake orders jobs by time
    timed = {str(job.benchmark) for job in workflow.dag.jobs if job.benchmark}
    gold_file_times.record(Path.cwd(), built | timed)


# The config files as this run read them: a file edited while the run goes is named in its record.
RUN_CONFIG_FILES = [Path(workflow.basedir) / "config.yaml", *workflow.config_settings.configfiles]
CONFIG_AS_READ = gold_experiment_index.file_digests(RUN_CONFIG_FILES)


def record_experiment(complete):
    code = workflow_code()
    gold_experiment_index.record_run(
        RESULTS,
        EXPERIMENT["name"],
        EXPERIMENT["extends"],
        EXPERIMENT_SOURCE_LABELS,
        RUN_CONFIG_FILES,
        code,
        complete=complete,
        settings=OWNED_SETTINGS,
        read_as=CONFIG_AS_READ,
    )
    gold_experiment_index.write_index("results", code)


# `snakemake --report`: the report's front page (and the terminal) say whether every result it shows is
# current, as `snakemake --summary` sees it (data edited, a model removed, settings changed).
if gold_report_status.is_report_run(sys.argv):
    REPORT_STATUS = Path(".snakemake/report_status.rst").resolve()
    REPORT_STATUS.parent.mkdir(exist_ok=True)
    REPORT_CONFIGFILES = list(workflow.config_settings.configfiles)
    if workflow.config_settings.config:  # --config values, applied last as they were
        # named as --set's files are, so the layer changes settings, not the experiment's name
        REPORT_CONFIGFILES.append(REPORT_STATUS.with_name(f"report{gold_layers.OVERRIDES_SUFFIX}"))
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
    record_experiment(complete=None)


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
