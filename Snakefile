# GOLD: text generation by learning from demonstrations (Pang & He, ICLR 2021), as one Snakemake DAG.
#
#   snakemake --cores all                       the default experiment (config.yaml: the demo task)
#   snakemake --cores all results/demo/tables/main.csv   one target and only what it needs
#   snakemake --configfile configs/<name>.yaml  another experiment (configs/paper.yaml: the paper's grid)
#
# Stages: [download] -> data -> tokenizer -> MLE training -> [reward cache] -> GOLD fine-tuning per
#         objective and seed -> evaluation per model and split (token NLL, every decoding run, scores)
#         [+ lead-3]
#         -> tables (1, 2, comparison with the paper), figures, analyses.
#   snakemake --report results/demo/report.html   one self-contained report of every table and figure
#
# Results (templates in rules/common/config.smk): DATA, TOKENIZER, MODEL (+ CHECKPOINTS, TRAINING_LOG),
#         REWARDS, TOKEN_NLL, GENERATIONS, SCORES, LEAD3_*, then results/<experiment>/tables, figures,
#         analysis, human_eval; every job's log under logs/<experiment>/{rule}/, its timing under
#         logs/<experiment>/benchmarks/{rule}/.


from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# The default experiment sits next to this file, so `--directory elsewhere` still finds it.
configfile: Path(workflow.basedir) / "config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"
include: "rules/analyze.smk"
include: "rules/report.smk"


localrules:
    all,


rule all:
    input:
        final_outputs,
