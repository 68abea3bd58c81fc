# Evaluation: one job per model and split loads the model once, writes the teacher-forced token NLL of
# the references, then decodes with every decoder and sampling run the split needs (evaluated_runs) and
# scores each run. One rule per evaluated split, since each split has its own list of runs.
# snakemake --cores 2 results/demo/scores/demo/mle/seed1/test/greedy/sample0.json  (builds its model's job)


for split in EVALUATED_SPLITS:

    rule:
        name:
            f"evaluate_{split}"
        input:
            model=MODEL,
            data=path(DATA, split=split),
        output:
            nll=path(TOKEN_NLL, split=split),
            generations=run_files(split, "generations"),
            scores=run_files(split, "scores"),
        log:
            log_path(f"evaluate/{{task}}/{{objective}}/seed{{seed}}/{split}.log"),
        benchmark:
            benchmark_path(f"evaluate/{{task}}/{{objective}}/seed{{seed}}/{split}.tsv")
        conda:
            "../envs/gold.yaml"
        threads: requested_threads("evaluate")
        resources:
            gpu=requested("evaluate", "gpu"),
            mem_mb=requested("evaluate", "mem_mb"),
            runtime=requested_runtime(f"evaluate_{split}"),
        params:
            code=code_version("evaluate", rows=NO_ROWS),
            split=split,
            task=decoding_settings,
            runs=run_settings(split),
            scoring=scoring_settings,
        script:
            "../workflow_scripts/evaluate.py"


# A generation or score file that no evaluation job writes (an undefined decoder, a sampling run the
# decoder does not have, a decoder not run on that split): say why, instead of "no rule to produce it".
rule unknown_run:
    input:
        explain_unknown_run,
    output:
        store_path("{kind}/{task}/{objective}/seed{seed}/{run}.{ext}"),
    wildcard_constraints:
        kind="generations|scores",
        run=unknown_run_pattern(),
        ext="jsonl|json",


# snakemake --cores 1 results/paper/baselines/cnndm/lead3/test.json --configfile configs/paper.yaml
rule lead3:
    input:
        data=DATA,
    output:
        generations=LEAD3_GENERATIONS,
        scores=LEAD3_SCORES,
    log:
        log_path("lead3/{task}/{split}.log"),
    benchmark:
        benchmark_path("lead3/{task}/{split}.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        code=code_version("lead3", rows=NO_ROWS),
        scoring=scoring_settings,
    script:
        "../workflow_scripts/lead3.py"
