# Inputs and requests of the training stage: the model a run starts from, the reward cache, the objectives
# of each task, and the threads, GPUs and other resources a stage asks for.


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
    if gold_views.uses_mle_rewards(objective) and task["fine_tune"]["rewards"] == "cached":
        return path(REWARDS, task=wildcards.task, seed=wildcards.seed)
    return []


def fine_tune_priority(wildcards):
    """The longest fine-tuning runs first (gold_textgen/cost/work.py: start_order)."""
    return gold_cost_work.start_order(task_settings(wildcards), wildcards.objective)


def trained_models(wildcards):
    """Every model the task trains, keyed "objective/seed" (the training-curves figure reads their logs)."""
    return {
        f"{objective}/{seed}": path(MODEL, task=wildcards.task, objective=objective, seed=seed)
        for objective in task_objectives(wildcards.task)
        for seed in EXPERIMENT["seeds"]
    }


def task_objectives(task):
    """The objectives trained for `task`: experiment.objectives, then its experiment.task_objectives, but
    the models it imports."""
    return gold_views.task_objectives(config, task)


def evaluated_objectives(task):
    """Every model of `task` that is evaluated and tabled: the trained objectives and the imported models."""
    return gold_views.evaluated_objectives(config, task)


def imported_models(task):
    """The task's imported models by name (config tasks.<task>.imported_models)."""
    return config["tasks"][task]["imported_models"]


def imported_by_task():
    """Each task's imported models' names: the tables mark their rows (a param: an import added or removed
    remakes the tables)."""
    return {task: sorted(imported_models(task)) for task in EXPERIMENT["tasks"]}


def imported_names():
    """The names of the models any task imports."""
    return [name for task in config["tasks"] for name in imported_models(task)]


def names_pattern(names):
    """A wildcard constraint matching exactly `names` (none: a regex that matches nothing)."""
    names = sorted(set(names))
    return "|".join(re.escape(name) for name in names) if names else "(?!)"


def mle_trained_tasks():
    """A constraint on train_mle's task: every task that does not import its `mle`."""
    imports = [task for task in config["tasks"] if "mle" in imported_models(task)]
    return rf"(?!(?:{names_pattern(imports)})(?![A-Za-z0-9_-]))[A-Za-z0-9_-]+"


def trained_objective_pattern():
    """A constraint on fine_tune's objective: any name but `mle` and the imported models' names."""
    return rf"(?!(?:{names_pattern(['mle', *imported_names()])})\b)[a-z][a-z0-9_]*"


def imported_objective_pattern():
    """A constraint on import_model's objective: the names of the imported models."""
    return names_pattern(imported_names())


def imported_checkpoint(wildcards):
    """The import_model job's checkpoint: its folder for the seed, the LoRA base, the config key that named
    it and the folder's identity (a param: rewriting the checkpoint reruns the import and what reads it).
    """
    entry = imported_models(wildcards.task).get(wildcards.objective)
    if entry is None:
        raise WorkflowError(
            f"task '{wildcards.task}' imports no model named '{wildcards.objective}' "
            f"(tasks.{wildcards.task}.imported_models: {', '.join(imported_models(wildcards.task)) or 'none'})"
        )
    folder = gold_imported.checkpoint_of(entry["path"], int(wildcards.seed))
    return {
        "path": str(folder),
        "base": entry["base"],
        "key": f"tasks.{wildcards.task}.imported_models.{wildcards.objective}.path",
        "identity": gold_imported.folder_identity(folder),
    }


def per_task(pattern):
    """One output per task of the experiment, e.g. per_task(rules.nll_histogram.output.figure)."""
    return expand(pattern, task=EXPERIMENT["tasks"])


@functools.cache
def stage_request(task, stage):
    """GPUs, memory and runtime of a stage for a task (gold_textgen.bookkeeping.resources), worked out once per run."""
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


@functools.cache
def device_profile():
    """The device profile named by cost.device_profile (None: runtimes by size class)."""
    name = config["cost"]["device_profile"]
    return gold_cost_profile.DeviceProfile.load(Path(workflow.basedir) / name) if name else None


def requested_runtime(rule):
    """A model job's SLURM time limit in minutes: with a device profile, its expected time there (the
    updates past runs made, else the step cap) times cost.safety_factor; else, or where the profile has
    nothing to scale from, the stage's size-class runtime. Either way times the attempt (a retried job
    resumes from its checkpoint)."""

    def value(wildcards, attempt):
        profile = device_profile()
        estimate = profile and gold_cost_estimates.job_estimate(
            config, profile, rule, dict(wildcards.items()), gold_cost_work.Folders.of(config)
        )
        if estimate is None:
            stage = gold_cost_estimates.stage_of(rule)
            return stage_request(wildcards.task, stage)["runtime"] * attempt
        cost = config["cost"]
        return (
            gold_cost_estimates.runtime_minutes(
                estimate, cost["safety_factor"], cost["minimum_minutes"]
            )
            * attempt
        )

    return value


def experiment_request(stage, key):
    """A resource for a job over every task (the paper comparison): the largest of the tasks' requests.
    Scoring all test outputs of a large grid with bootstrap takes minutes, so it is a cluster job.
    """
    return max(stage_request(task, stage)[key] for task in EXPERIMENT["tasks"])


def on_policy_objectives(task=None):
    """The objectives that sample from the policy (the catalog's `sampling` need: the policy gradient) in
    `task`, or in any task of the experiment."""
    tasks = EXPERIMENT["tasks"] if task is None else [task]
    return list(
        dict.fromkeys(
            name
            for each in tasks
            for name in task_objectives(each)
            if name != "mle"
            and "sampling" in gold_catalog.needs(config["tasks"][each]["objectives"][name])
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
