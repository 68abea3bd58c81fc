# Data: every task becomes results/data/{task}/{split}.jsonl, then a tokenizer for models built from scratch.
# Archives (NQG, IWSLT14) are downloaded by a rule of their own, on the submitting host: cluster compute
# nodes often have no internet, and a failed preparation then does not fetch the archive again.


localrules:
    download_source,
    fetch,


# Everything that needs the internet, for a login node before the cluster run: the archives of the
# downloaded sources and the prepared data of the hub datasets (read through the `datasets` cache).
# snakemake --cores 2 fetch --configfile configs/paper.yaml
rule fetch:
    input:
        fetch_inputs,


# snakemake --cores 1 results/downloads/iwslt14/source_archive
rule download_source:
    output:
        ARCHIVE,
    log:
        "logs/download_source/{task}.log",
    benchmark:
        "logs/benchmarks/download_source/{task}.tsv"
    conda:
        "../envs/gold.yaml"
    params:
        url=source_url,
        checksum=source_checksum,
    script:
        "../workflow_scripts/download_source.py"


# snakemake --cores 1 results/data/demo/train.jsonl
rule prepare_dataset:
    input:
        files=local_source_files,
        archive=source_archive,
    output:
        expand(DATA, split=SPLITS, allow_missing=True),
    log:
        "logs/prepare_dataset/{task}.log",
    benchmark:
        "logs/benchmarks/prepare_dataset/{task}.tsv"
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        source=source_settings,
        contents=source_contents,
        splits=SPLITS,
        archive=source_archive_or_none,
    script:
        "../workflow_scripts/prepare_dataset.py"


# snakemake --cores 1 results/tokenizers/demo
rule train_tokenizer:
    input:
        path(DATA, split="train"),
    output:
        directory(TOKENIZER),
    log:
        "logs/train_tokenizer/{task}.log",
    benchmark:
        "logs/benchmarks/train_tokenizer/{task}.tsv"
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        settings=tokenizer_settings,
    script:
        "../workflow_scripts/train_tokenizer.py"
