# The paper's analyses of MLE against GOLD: token NLL figures, exposure bias, diversity, examples and the
# human-evaluation sheet. They read the analysis seed's models on the analysis split (config `analysis`).
# Seconds of CPU each: on a cluster they run on the submitting host instead of waiting in the queue.


localrules:
    nll_histogram,
    nll_by_time_step,
    exposure_bias,
    diversity,
    examples,
    human_eval_sheet,
    training_curves,


# snakemake --cores 1 results/demo/figures/demo/nll_histogram.png
rule nll_histogram:
    input:
        unpack(analysis_token_nll),
    output:
        figure=report(
            experiment_path("figures/{task}/nll_histogram.png"),
            caption="../report/nll_histogram.rst",
            category="Figures",
            subcategory="{task}",
        ),
        summary=experiment_path("analysis/{task}/nll_summary.csv"),
    log:
        log_path("nll_histogram/{task}.log"),
    benchmark:
        benchmark_path("nll_histogram/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("nll_histogram"),
    script:
        "../workflow_scripts/nll_histogram.py"


# snakemake --cores 1 results/demo/figures/demo/nll_by_time_step.png
rule nll_by_time_step:
    input:
        unpack(analysis_token_nll),
    output:
        figure=report(
            experiment_path("figures/{task}/nll_by_time_step.png"),
            caption="../report/nll_by_time_step.rst",
            category="Figures",
            subcategory="{task}",
        ),
        stats=experiment_path("analysis/{task}/nll_by_time_step.csv"),
    log:
        log_path("nll_by_time_step/{task}.log"),
    benchmark:
        benchmark_path("nll_by_time_step/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("nll_by_time_step"),
        analysis=analysis_view("nll_by_time_step"),
    script:
        "../workflow_scripts/nll_by_time_step.py"


# snakemake --cores 1 results/demo/figures/demo/exposure_bias.png
rule exposure_bias:
    input:
        unpack(analysis_generations),
    output:
        figure=report(
            experiment_path("figures/{task}/exposure_bias.png"),
            caption="../report/exposure_bias.rst",
            category="Figures",
            subcategory="{task}",
        ),
        stats=experiment_path("analysis/{task}/exposure_bias.csv"),
    log:
        log_path("exposure_bias/{task}.log"),
    benchmark:
        benchmark_path("exposure_bias/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("exposure_bias"),
        analysis=analysis_view("exposure_bias"),
    script:
        "../workflow_scripts/exposure_bias.py"


# snakemake --cores 1 results/demo/tables/demo/diversity.csv
rule diversity:
    input:
        generations=diversity_generations,
        data=path(DATA, split=ANALYSIS["split"]),
    output:
        csv=experiment_path("tables/{task}/diversity.csv"),
        html=report(
            experiment_path("tables/{task}/diversity.html"),
            caption="../report/diversity.rst",
            category="Tables",
            subcategory="{task}",
        ),
    log:
        log_path("diversity/{task}.log"),
    benchmark:
        benchmark_path("diversity/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("diversity"),
        analysis=analysis_view("diversity"),
        runs=diversity_runs,
    script:
        "../workflow_scripts/diversity.py"


# snakemake --cores 1 results/demo/tables/demo/examples.md
rule examples:
    input:
        unpack(analysis_generations),
    output:
        csv=experiment_path("tables/{task}/examples.csv"),
        markdown=experiment_path("tables/{task}/examples.md"),
        html=report(
            experiment_path("tables/{task}/examples.html"),
            caption="../report/examples.rst",
            category="Tables",
            subcategory="{task}",
        ),
    log:
        log_path("examples/{task}.log"),
    benchmark:
        benchmark_path("examples/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("examples"),
        analysis=analysis_view("examples"),
    script:
        "../workflow_scripts/examples.py"


# snakemake --cores 1 results/demo/human_eval/demo/sheet.csv
rule human_eval_sheet:
    input:
        unpack(pairwise_generations),
    output:
        sheet=experiment_path("human_eval/{task}/sheet.csv"),
        key=experiment_path("human_eval/{task}/key.csv"),
    log:
        log_path("human_eval_sheet/{task}.log"),
    benchmark:
        benchmark_path("human_eval_sheet/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("human_eval_sheet"),
        analysis=analysis_view("human_eval_sheet"),
    script:
        "../workflow_scripts/human_eval_sheet.py"


# snakemake --cores 1 results/demo/figures/demo/training_curves.png
rule training_curves:
    input:
        unpack(trained_models),
    output:
        figure=report(
            experiment_path("figures/{task}/training_curves.png"),
            caption="../report/training_curves.rst",
            category="Figures",
            subcategory="{task}",
        ),
        curves=experiment_path("analysis/{task}/training_curves.csv"),
        summary=TRAINING_SUMMARY,
    log:
        log_path("training_curves/{task}.log"),
    benchmark:
        benchmark_path("training_curves/{task}.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        code=code_version("training_curves"),
    script:
        "../workflow_scripts/training_curves.py"
