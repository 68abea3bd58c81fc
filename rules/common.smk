# What the rules share, by stage (nothing here runs a job; it only decides what the rules need):
#   common/config.smk      the validated config, the experiment's folders, every result's path template,
#                          code versions, wildcard constraints
#   common/settings.smk    each rule's settings as params
#   common/data.smk        data inputs: source files, downloads, tokenizer
#   common/training.smk    training inputs and resource requests
#   common/evaluation.smk  the decoding runs of every model (`model_runs`)
#   common/analysis.smk    inputs of tables, figures and analyses; the default targets


include: "common/config.smk"
include: "common/settings.smk"
include: "common/data.smk"
include: "common/training.smk"
include: "common/evaluation.smk"
include: "common/analysis.smk"
