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
