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
        "benchmarks/train_mle/{task}/seed{seed}.tsv"
    threads: config["threads"]["train"]
    params:
        task=training_settings,
        checkpoint_dir="results/checkpoints/{task}/mle/seed{seed}",
        repo_dir=REPO_DIR,
    script:
        "../workflow_scripts/train_mle.py"
