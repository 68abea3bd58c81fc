# Training: maximum likelihood from scratch or from a pretrained checkpoint, then fine-tuning from the MLE
# model of each seed with every other objective (GOLD and its peers, rule fine_tune). A model trained
# elsewhere takes a trained model's place through rule import_model (tasks.<task>.imported_models).
# Trainer checkpoints go to results/<experiment>/checkpoints/ (outside the declared output) so a restarted job resumes.


localrules:
    import_model,  # writes one small record: no cluster job


# snakemake --cores 2 results/demo/models/demo/mle/seed1
rule train_mle:
    input:
        train=path(DATA, split="train"),
        valid=path(DATA, split="valid"),
        tokenizer=tokenizer_input,
    output:
        directory(path(MODEL, objective="mle")),
    log:
        log_path("train_mle/{task}/seed{seed}.log"),
    benchmark:
        benchmark_path("train_mle/{task}/seed{seed}.tsv")
    wildcard_constraints:
        task=mle_trained_tasks(),  # a task that imports its `mle` has rule import_model make it
    # the longest jobs, and every later one waits on them: start them all before any job that needs one
    priority: 10
    conda:
        "../envs/gold.yaml"
    threads: requested_threads("train_mle")
    resources:
        gpu=requested("train_mle", "gpu"),
        mem_mb=requested("train_mle", "mem_mb"),
        runtime=requested_runtime("train_mle"),
    params:
        code=lambda wildcards: training_code_version(wildcards.task, "mle"),
        task=training_settings,
        checkpoint_dir=path(CHECKPOINTS, objective="mle"),
        run_dir=path(TRAINING_LOG, objective="mle"),
    script:
        "../workflow_scripts/train_mle.py"


# snakemake --cores 2 results/demo/rewards/demo/seed1/train.parquet
rule cache_rewards:
    input:
        model=path(MODEL, objective="mle"),
        data=path(DATA, split="train"),
    output:
        REWARDS,
    log:
        log_path("cache_rewards/{task}/seed{seed}.log"),
    benchmark:
        benchmark_path("cache_rewards/{task}/seed{seed}.tsv")
    # a short job that the longest fine-tuning runs (GOLD's) wait on: before any job that does not need it
    priority: 5
    conda:
        "../envs/gold.yaml"
    threads: requested_threads("cache_rewards")
    resources:
        gpu=requested("cache_rewards", "gpu"),
        mem_mb=requested("cache_rewards", "mem_mb"),
        runtime=requested_runtime("cache_rewards"),
    params:
        code=code_version("token_nll", rows=NO_ROWS),
        task=teacher_forcing_settings,
        positions="labels",  # every label position the Trainer trains on
    script:
        "../workflow_scripts/token_nll.py"


# snakemake --cores 2 results/demo/models/demo/gold_s/seed1   (GOLD-s; likewise dft, tailr, ... with configs/objectives.yaml)
rule fine_tune:
    input:
        train=path(DATA, split="train"),
        valid=path(DATA, split="valid"),
        start=starting_model,
        rewards=reward_cache_input,
    output:
        directory(MODEL),
    log:
        log_path("fine_tune/{task}/{objective}/seed{seed}.log"),
    benchmark:
        benchmark_path("fine_tune/{task}/{objective}/seed{seed}.tsv")
    wildcard_constraints:
        objective=trained_objective_pattern(),  # every objective but mle and the imported models
    # GOLD's runs (a helper model's forward in every update) before the controls: no long run left alone at the end
    priority: fine_tune_priority
    conda:
        "../envs/gold.yaml"
    threads: requested_threads("fine_tune")
    resources:
        gpu=requested("fine_tune", "gpu"),
        mem_mb=requested("fine_tune", "mem_mb"),
        runtime=requested_runtime("fine_tune"),
    params:
        code=lambda wildcards: training_code_version(wildcards.task, wildcards.objective),
        task=training_settings,
        checkpoint_dir=CHECKPOINTS,
        run_dir=TRAINING_LOG,
    script:
        "../workflow_scripts/fine_tune.py"


# snakemake --cores 1 results/outside_models/models/demo/gold_s/seed1 --configfile configs/outside_models.yaml
# The folder records where the checkpoint is (model_exchange/import_record.py); the weights are not copied.
rule import_model:
    input:
        data=path(DATA, split="test"),  # the texts its tokenizer is checked on
    output:
        directory(MODEL),
    log:
        log_path("import_model/{task}/{objective}/seed{seed}.log"),
    wildcard_constraints:
        objective=imported_objective_pattern(),
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("import_model", rows=NO_ROWS),
        checkpoint=imported_checkpoint,
    script:
        "../workflow_scripts/import_model.py"
