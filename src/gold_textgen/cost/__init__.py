"""What an experiment costs before it runs: the work of each job (work), a device's measured speed
(device_profile), the seconds they make (estimates), the jobs Snakemake would run (dry_run), the plan
over them (plan) and the report `gold-textgen plan --device` prints (planned_cost). Torch-free, so the
Snakefile's runtime requests and `gold-textgen plan` share them."""
