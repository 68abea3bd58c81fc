# Tables, built from score files alone (seconds of CPU: run on the submitting host under a cluster), and
# the comparison with the paper, which rescores every test output with bootstrap (minutes: a cluster job).


localrules:
    main_table,
    table1,
    table2,
    objectives_table,
    table4,


# snakemake --cores 1 results/demo/tables/main.csv
rule main_table:
    input:
        scores=main_table_scores,
        significance=SIGNIFICANCE,
        training=per_task(rules.training_curves.output.summary),
        checks=per_task(DATA_CHECKS),  # no table of data that failed its checks
    output:
        csv=experiment_path("tables/main.csv"),
        html=report(
            experiment_path("tables/main.html"),
            caption="../report/main_table.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/main.md"),
    log:
        log_path("main_table/main_table.log"),
    benchmark:
        benchmark_path("main_table/main_table.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        imported=imported_by_task(),
        code=code_version("main_table"),
        tasks=EXPERIMENT["tasks"],
        families=task_families,
    script:
        "../workflow_scripts/main_table.py"


# snakemake --cores all results/demo/tables/table1_main.csv
rule table1:
    input:
        scores=main_table_scores,
        significance=SIGNIFICANCE,
        training=per_task(rules.training_curves.output.summary),
        checks=per_task(DATA_CHECKS),  # no table of data that failed its checks
    output:
        csv=experiment_path("tables/table1_main.csv"),
        html=report(
            experiment_path("tables/table1_main.html"),
            caption="../report/table1_main.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/table1_main.md"),
    log:
        log_path("table1/table1.log"),
    benchmark:
        benchmark_path("table1/table1.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        imported=imported_by_task(),
        code=code_version("table1"),
        tasks=EXPERIMENT["tasks"],
        task_metrics=task_metrics,
        families=task_families,
    script:
        "../workflow_scripts/table1.py"


# snakemake --cores all results/demo/tables/significance.csv   (each objective against MLE and the control)
rule significance:
    input:
        generations=significance_generations,
        training=per_task(rules.training_curves.output.summary),  # its rows marked as every table's
    output:
        csv=SIGNIFICANCE,
        html=report(
            experiment_path("tables/significance.html"),
            caption="../report/significance.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/significance.md"),
    log:
        log_path("significance/significance.log"),
    benchmark:
        benchmark_path("significance/significance.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=experiment_request("cpu", "mem_mb"),
        runtime=experiment_request("cpu", "runtime"),
    params:
        imported=imported_by_task(),
        code=code_version("significance"),
        tasks=EXPERIMENT["tasks"],
        runs=significance_runs,
        task_metrics=task_metrics,
        scoring=experiment_scoring,
        bootstrap=analysis_view("significance"),
    script:
        "../workflow_scripts/significance.py"


# snakemake --cores all results/demo/tables/claims.csv   (the paper's registered claims this grid covers)
rule claims:
    input:
        unpack(claim_inputs),
    output:
        csv=CLAIMS,
        html=report(
            experiment_path("tables/claims.html"),
            caption="../report/claims.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/claims.md"),
    log:
        log_path("claims/claims.log"),
    benchmark:
        benchmark_path("claims/claims.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=experiment_request("cpu", "mem_mb"),
        runtime=experiment_request("cpu", "runtime"),
    params:
        imported=imported_by_task(),
        code=code_version("claims"),
        tests=claim_tests,
        runs=claim_runs,
        seeds=EXPERIMENT["seeds"],
        task_metrics=task_metrics,
        scoring=experiment_scoring,
        bootstrap=gold_views.canonical(
            {key: ANALYSIS[key] for key in gold_paper_claims.ANALYSIS_READS}
        ),
    script:
        "../workflow_scripts/claims.py"


# snakemake --cores all results/demo/tables/table2_decoding.csv
rule table2:
    input:
        scores=sweep_scores,
        training=per_task(rules.training_curves.output.summary),
        checks=per_task(DATA_CHECKS),  # no table of data that failed its checks
    output:
        csv=experiment_path("tables/table2_decoding.csv"),
        html=report(
            experiment_path("tables/table2_decoding.html"),
            caption="../report/table2_decoding.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/table2_decoding.md"),
    log:
        log_path("table2/table2.log"),
    benchmark:
        benchmark_path("table2/table2.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        imported=imported_by_task(),
        code=code_version("table2"),
        tasks=EXPERIMENT["tasks"],
        task_metrics=task_metrics,
        families=task_families,
        decoders=EXPERIMENT["sweep_decoders"],
    script:
        "../workflow_scripts/table2.py"


# snakemake --cores all results/objectives/tables/objectives.csv --configfile configs/objectives.yaml   (GOLD beside its peers)
rule objectives_table:
    input:
        scores=main_table_scores,
        significance=SIGNIFICANCE,
        training=per_task(rules.training_curves.output.summary),
        checks=per_task(DATA_CHECKS),  # no table of data that failed its checks
        sweep=sweep_scores,
        diversity=per_task_diversity,
    output:
        csv=experiment_path("tables/objectives.csv"),
        html=report(
            experiment_path("tables/objectives.html"),
            caption="../report/objectives.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/objectives.md"),
        figure=report(
            experiment_path("figures/objectives.png"),
            caption="../report/objectives_figure.rst",
            category="Figures",
        ),
    log:
        log_path("objectives_table/objectives_table.log"),
    benchmark:
        benchmark_path("objectives_table/objectives_table.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        imported=imported_by_task(),
        code=code_version("objectives_table"),
        task_metrics=task_metrics,
        tasks=EXPERIMENT["tasks"],
        smoothing=gold_views.label_smoothing_by_objective(config),
    script:
        "../workflow_scripts/objectives_table.py"


# snakemake --cores all results/on_policy/tables/table4_on_policy.csv --configfile configs/on_policy.yaml
rule table4:
    input:
        scores=main_table_scores,
        training=per_task(rules.training_curves.output.summary),
        checks=per_task(DATA_CHECKS),  # no table of data that failed its checks
    output:
        csv=experiment_path("tables/table4_on_policy.csv"),
        html=report(
            experiment_path("tables/table4_on_policy.html"),
            caption="../report/table4_on_policy.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/table4_on_policy.md"),
    log:
        log_path("table4/table4.log"),
    benchmark:
        benchmark_path("table4/table4.tsv")
    conda:
        "../envs/gold.yaml"
    params:
        imported=imported_by_task(),
        code=code_version("table4"),
        tasks=EXPERIMENT["tasks"],
        task_metrics=task_metrics,
        starts=on_policy_setting("start_from"),
        reward_metrics=on_policy_setting("reward_metric"),
    script:
        "../workflow_scripts/table4.py"


# snakemake --cores all results/demo/tables/paper_comparison.csv
rule paper_comparison:
    input:
        unpack(paper_comparison_inputs),
    output:
        csv=experiment_path("tables/paper_comparison.csv"),
        html=report(
            experiment_path("tables/paper_comparison.html"),
            caption="../report/paper_comparison.rst",
            category="Tables",
        ),
        markdown=experiment_path("tables/paper_comparison.md"),
    log:
        log_path("paper_comparison/paper_comparison.log"),
    benchmark:
        benchmark_path("paper_comparison/paper_comparison.tsv")
    conda:
        "../envs/gold.yaml"
    resources:
        mem_mb=experiment_request("cpu", "mem_mb"),
        runtime=experiment_request("cpu", "runtime"),
    params:
        code=code_version("paper_comparison"),
        runs=paper_comparison_runs,
        paper_results=paper_results,
        default_run=default_compared_run,
        scoring=experiment_scoring,
        our_models=compared_models,
        bootstrap=analysis_view("paper_comparison"),
    script:
        "../workflow_scripts/paper_comparison.py"
