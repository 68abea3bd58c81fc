# Evaluation: teacher-forced token NLL once per model and split, then scores per generation file.


# snakemake --cores 2 results/token_nll/demo/mle/seed1/test.parquet
rule token_nll:
    input:
        model="results/models/{task}/{objective}/seed{seed}",
        data="results/data/{task}/{split}.jsonl",
    output:
        "results/token_nll/{task}/{objective}/seed{seed}/{split}.parquet",
    log:
        "logs/token_nll/{task}/{objective}/seed{seed}/{split}.log",
    benchmark:
        "benchmarks/token_nll/{task}/{objective}/seed{seed}/{split}.tsv"
    threads: config["threads"]["decode"]
    resources:
        gpu=requested("token_nll", "gpu"),
        mem_mb=requested("token_nll", "mem_mb"),
        runtime=requested("token_nll", "runtime"),
    params:
        task=teacher_forcing_settings,
        positions="scored",  # the positions the paper's perplexity averages over
    script:
        "../workflow_scripts/token_nll.py"


# snakemake --cores 1 results/scores/demo/mle/seed1/test/greedy/sample0.json
rule score:
    input:
        generations="results/generations/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.jsonl",
        nll="results/token_nll/{task}/{objective}/seed{seed}/{split}.parquet",
    output:
        "results/scores/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.json",
    log:
        "logs/score/{task}/{objective}/seed{seed}/{split}/{decoder}/sample{sample}.log",
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        scoring=scoring_settings,
    script:
        "../workflow_scripts/score.py"


# snakemake --cores 1 results/baselines/cnndm/lead3/test.json
rule lead3:
    input:
        "results/data/{task}/{split}.jsonl",
    output:
        generations="results/baselines/{task}/lead3/{split}.jsonl",
        scores="results/baselines/{task}/lead3/{split}.json",
    log:
        "logs/lead3/{task}/{split}.log",
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        scoring=scoring_settings,
    script:
        "../workflow_scripts/lead3.py"
