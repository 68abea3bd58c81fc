# Training: maximum likelihood from scratch or from a pretrained checkpoint.
# Trainer checkpoints go to results/checkpoints/ (outside the declared output) so a restarted job resumes.


# snakemake --cores 2 results/models/demo/mle/seed1
rule train_mle:
    input:
        train="results/data/{task}/train.jsonl",
        valid="results/data/{task}/valid.jsonl",
        tokenizer=tokenizer_input,
    output:
        directory("results/models/{task}/mle/seed{seed}"),
    log:
        "logs/train_mle/{task}/seed{seed}.log",
    benchmark:
        "logs/benchmarks/train_mle/{task}/seed{seed}.tsv"
    threads: config["threads"]["train"]
    resources:
        gpu=requested("train_mle", "gpu"),
        mem_mb=requested("train_mle", "mem_mb"),
        runtime=requested("train_mle", "runtime"),
    params:
        task=training_settings,
        checkpoint_dir="results/checkpoints/{task}/mle/seed{seed}",
        run_dir="results/runs/{task}/mle/seed{seed}",
    script:
        "../workflow_scripts/train_mle.py"


# snakemake --cores 2 results/rewards/demo/seed1/train.parquet
rule cache_rewards:
    input:
        model="results/models/{task}/mle/seed{seed}",
        data="results/data/{task}/train.jsonl",
    output:
        "results/rewards/{task}/seed{seed}/train.parquet",
    log:
        "logs/cache_rewards/{task}/seed{seed}.log",
    benchmark:
        "logs/benchmarks/cache_rewards/{task}/seed{seed}.tsv"
    threads: config["threads"]["decode"]
    resources:
        gpu=requested("cache_rewards", "gpu"),
        mem_mb=requested("cache_rewards", "mem_mb"),
        runtime=requested("cache_rewards", "runtime"),
    params:
        task=teacher_forcing_settings,
        positions="labels",  # every label position the Trainer trains on
    script:
        "../workflow_scripts/token_nll.py"


# snakemake --cores 2 results/models/demo/gold_s/seed1
rule train_gold:
    input:
        train="results/data/{task}/train.jsonl",
        valid="results/data/{task}/valid.jsonl",
        mle="results/models/{task}/mle/seed{seed}",
        rewards=reward_cache_input,
    output:
        directory("results/models/{task}/{objective}/seed{seed}"),
    log:
        "logs/train_gold/{task}/{objective}/seed{seed}.log",
    benchmark:
        "logs/benchmarks/train_gold/{task}/{objective}/seed{seed}.tsv"
    wildcard_constraints:
        objective="gold_[a-z0-9_]+",
    threads: config["threads"]["train"]
    resources:
        gpu=requested("train_gold", "gpu"),
        mem_mb=requested("train_gold", "mem_mb"),
        runtime=requested("train_gold", "runtime"),
    params:
        task=training_settings,
        checkpoint_dir="results/checkpoints/{task}/{objective}/seed{seed}",
        run_dir="results/runs/{task}/{objective}/seed{seed}",
    script:
        "../workflow_scripts/train_gold.py"
