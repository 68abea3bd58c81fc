# Data: every task becomes results/data/{task}/{split}.jsonl, then a tokenizer for models built from scratch.


# snakemake --cores 1 results/data/demo/train.jsonl
rule prepare_dataset:
    input:
        local_source_files,
    output:
        expand("results/data/{{task}}/{split}.jsonl", split=SPLITS),
    log:
        "logs/prepare_dataset/{task}.log",
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        source=source_settings,
        splits=SPLITS,
    script:
        "../workflow_scripts/prepare_dataset.py"


# snakemake --cores 1 results/tokenizers/demo
rule train_tokenizer:
    input:
        "results/data/{task}/train.jsonl",
    output:
        directory("results/tokenizers/{task}"),
    log:
        "logs/train_tokenizer/{task}.log",
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        settings=tokenizer_settings,
    script:
        "../workflow_scripts/train_tokenizer.py"
