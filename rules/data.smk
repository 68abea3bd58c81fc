# Data: every task becomes results/<experiment>/data/{task}/{split}.jsonl, then a tokenizer for models built
# from scratch. Archives (NQG, IWSLT14) are downloaded by a rule of their own, on the submitting host: cluster
# compute nodes often have no internet, and a failed preparation then does not fetch the archive again. The
# test split and the data checks are light (one split; reading the prepared files): they run there too,
# instead of waiting in a cluster's queue.


localrules:
    download_source,
    fetch,
    prepare_test_split,
    verify_dataset,


# Everything that needs the internet, for a login node before the cluster run: the archives of the
# downloaded sources and the prepared data of the hub datasets (read through the `datasets` cache).
# snakemake --cores 2 fetch --configfile configs/paper.yaml
rule fetch:
    input:
        fetch_inputs,


# snakemake --cores 1 results/paper/downloads/iwslt14/source_archive --configfile configs/paper.yaml
# The URL and checksum are read from the config, not params: the archive is identified by its bytes, so
# pinning the checksum after a first download (as its log suggests) fetches nothing and retrains nothing.
# The workflow checks an existing archive against them when it starts (check_downloaded_archives).
rule download_source:
    output:
        ARCHIVE,
    log:
        log_path("download_source/{task}.log"),
    benchmark:
        benchmark_path("download_source/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    script:
        "../workflow_scripts/download_source.py"


# The training splits; their params are the source settings they read (training_source_settings), so a
# test-only or verification setting never rewrites them, and so never retrains a model.
# snakemake --cores 1 results/demo/data/demo/train.jsonl
rule prepare_dataset:
    input:
        files=training_source_files,
        archive=source_archive,
    output:
        expand(DATA, split=TRAINING_SPLITS, allow_missing=True),
    log:
        log_path("prepare_dataset/{task}.log"),
    benchmark:
        benchmark_path("prepare_dataset/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        code=code_version("prepare_dataset"),
        source=training_source_settings,
        contents=training_source_contents,
        splits=TRAINING_SPLITS,
        archive=source_archive_or_none,
    script:
        "../workflow_scripts/prepare_dataset.py"


# The test split, from the source settings it reads (all but the checks'): a setting only the test split
# reads (the demo's num_test, a local test file) re-makes it and re-scores the models, and retrains nothing.
# snakemake --cores 1 results/demo/data/demo/test.jsonl
rule prepare_test_split:
    input:
        files=local_source_files,
        archive=source_archive,
    output:
        path(DATA, split="test"),
    log:
        log_path("prepare_test_split/{task}.log"),
    benchmark:
        benchmark_path("prepare_test_split/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        code=code_version("prepare_dataset"),
        source=evaluation_source_settings,
        contents=source_contents,
        splits=["test"],
        archive=source_archive_or_none,
    script:
        "../workflow_scripts/prepare_dataset.py"


# The checks of the whole data set: the archive against its checksum, pairs shared between splits
# (source.max_split_overlap), the sizes the config expects. Its params are those settings alone, so
# changing one reruns this job and nothing else.
# snakemake --cores 1 results/demo/data/demo/checks.json
rule verify_dataset:
    input:
        archive=source_archive,
        splits=expand(DATA, split=SPLITS, allow_missing=True),
    output:
        DATA_CHECKS,
    log:
        log_path("verify_dataset/{task}.log"),
    benchmark:
        benchmark_path("verify_dataset/{task}.tsv")
    # before any other ready job, to stop a run on failing data early; the tables wait for it (their `checks` input)
    priority: 50
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("verify_dataset"),
        checks=verification_settings,
        splits=SPLITS,
        archive=source_archive_or_none,
    script:
        "../workflow_scripts/verify_dataset.py"


# snakemake --cores 1 results/demo/tokenizers/demo
rule train_tokenizer:
    input:
        path(DATA, split="train"),
    output:
        directory(TOKENIZER),
    log:
        log_path("train_tokenizer/{task}.log"),
    benchmark:
        benchmark_path("train_tokenizer/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=requested("cpu", "mem_mb"),
        runtime=requested("cpu", "runtime"),
    params:
        code=code_version("train_tokenizer"),
        settings=tokenizer_settings,
    script:
        "../workflow_scripts/train_tokenizer.py"
