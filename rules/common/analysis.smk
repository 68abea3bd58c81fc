# Inputs of the tables, figures and analyses, and the final outputs of `snakemake` without a target.


def main_table_scores(wildcards):
    return score_files(EXPERIMENT["eval_split"], EXPERIMENT["decoders"])


def sweep_scores(wildcards):
    return score_files(EXPERIMENT["sweep_split"], EXPERIMENT["sweep_decoders"])


def significance_runs(wildcards):
    """The outputs each objective is compared on (comparisons/significance.py): every model's generations of
    the evaluation split with the first table decoder (its first sampling run)."""
    decoder = EXPERIMENT["decoders"][0]
    first = gold_views.sample_ids(config["decoders"][decoder])[:1]
    return [
        {k: v for k, v in run.items() if k != "scores"}
        for run in model_runs(EXPERIMENT["eval_split"], [decoder], samples=first)
    ]


def significance_generations(wildcards):
    return [run["generations"] for run in significance_runs(wildcards)]


def claim_tests(wildcards=None):
    """The paper's registered claims the experiment's grid covers (claims/paper_claims.py), chosen from
    the grid alone, one record per test."""
    return [vars(test) for test in gold_paper_claims.experiment_claims(config)]


def claim_runs(wildcards):
    """Every model output the claims read, all seeds and sampling runs, with the split's token NLL table
    where a claim reads it."""
    tests = [gold_paper_claims.ClaimTest(**test) for test in claim_tests()]
    runs = []
    for task, objective, split, decoder, nll in gold_paper_claims.outputs_read(tests):
        for run in model_runs(split, [decoder], [task], [objective]):
            table = path(TOKEN_NLL, task=task, objective=objective, seed=run["seed"], split=split)
            runs.append(
                {k: v for k, v in run.items() if k != "scores"} | {"nll": table if nll else None}
            )
    return runs


def claim_inputs(wildcards):
    runs = claim_runs(wildcards)
    return {
        "generations": [run["generations"] for run in runs],
        "nll": sorted({run["nll"] for run in runs if run["nll"]}),
    }


def analysed_generations(task, objective, seed, samples):
    """Generation files of the analysed split and decoder for one model, one per sampling run in `samples`."""
    runs = model_runs(
        ANALYSIS["split"], [ANALYSIS["decoder"]], [task], [objective], [seed], samples
    )
    return [run["generations"] for run in runs]


def analysis_generations(wildcards):
    """The analysed decoder's outputs on the analysis split, one file per objective (analysis seed, first run)."""
    first_run = gold_views.sample_ids(config["decoders"][ANALYSIS["decoder"]])[:1]
    return {
        objective: analysed_generations(wildcards.task, objective, ANALYSIS["seed"], first_run)[0]
        for objective in evaluated_objectives(wildcards.task)
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
        for objective in evaluated_objectives(wildcards.task)
    }


def diversity_runs(wildcards):
    """The analysed decoder's runs for every objective, seed and sampling run, each with its labels."""
    runs = model_runs(ANALYSIS["split"], [ANALYSIS["decoder"]], tasks=[wildcards.task])
    return [
        {key: run[key] for key in ("objective", "seed", "sample", "generations")} for run in runs
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
                {key: value for key, value in run.items() if key != "scores"}
                | {
                    "nll": path(
                        TOKEN_NLL,
                        **{key: run[key] for key in ("task", "objective", "seed", "split")},
                    )
                }
                for run in model_runs(split, [decoder], [task])
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
    if claim_tests():
        outputs.append(rules.claims.output.csv)
    outputs += [
        path(LEAD3_SCORES, task=task, split=EXPERIMENT["eval_split"])
        for task in lead3_tasks(EXPERIMENT["tasks"])
    ]
    if "mle" in EXPERIMENT["objectives"] and ANALYSIS["gold_objective"] is not None:
        outputs += per_task(rules.examples.output.markdown)
        outputs += per_task(rules.human_eval_sheet.output.sheet)
    return outputs
