# Tables and figures, built from score files alone.


# snakemake --cores 1 results/tables/main.csv
rule main_table:
    input:
        main_table_scores,
    output:
        csv=report(
            "results/tables/main.csv",
            caption="../report/main_table.rst",
            category="Tables",
        ),
        markdown="results/tables/main.md",
    log:
        "logs/main_table/main_table.log",
    script:
        "../workflow_scripts/main_table.py"


# snakemake --cores all results/tables/table1_main.csv
rule table1:
    input:
        main_table_scores,
    output:
        csv=report(
            "results/tables/table1_main.csv",
            caption="../report/table1_main.rst",
            category="Tables",
        ),
        markdown="results/tables/table1_main.md",
    log:
        "logs/table1/table1.log",
    params:
        task_metrics=task_metrics,
    script:
        "../workflow_scripts/table1.py"
