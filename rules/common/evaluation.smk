# The decoding runs of the evaluation stage: one record per model and run (`model_runs`) is the single
# place that lists them, for the evaluate rules and for every table and analysis that reads their files.


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


def model_runs(split, decoders, tasks=None, objectives=None, seeds=None, samples=None):
    """One record per decoding run of a trained model: task, objective, seed, split, decoder, sample and its
    generation and score files; every task, objective and seed of the experiment unless narrowed, and every
    sampling run of each decoder unless `samples` names some (in that order: the tables read the first
    decoder first)."""
    records = []
    for task in tasks or EXPERIMENT["tasks"]:
        for objective in objectives or evaluated_objectives(task):
            for seed in seeds or EXPERIMENT["seeds"]:
                for decoder in decoders:
                    for sample in samples or gold_views.sample_ids(config["decoders"][decoder]):
                        run = dict(
                            task=task,
                            objective=objective,
                            seed=seed,
                            split=split,
                            decoder=decoder,
                            sample=sample,
                        )
                        records.append(
                            {
                                **run,
                                "generations": path(GENERATIONS, **run),
                                "scores": path(SCORES, **run),
                            }
                        )
    return records


def score_files(split, decoders):
    """Score files of every task x objective x seed x decoder x sampling run (one run per deterministic decoder)."""
    return [run["scores"] for run in model_runs(split, decoders)]


# The splits that have an evaluate rule (rules/evaluate.smk).
EVALUATED_SPLITS = [split for split in SPLITS if evaluated_runs(split)]
