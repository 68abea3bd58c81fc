"""The cost plan (gold_textgen.cost): jobs read from a dry run, the work each does, seconds on a
device profile (measured or scaled), the wall time of a schedule, and the SLURM runtime made from it."""

import copy
import re
from dataclasses import replace

import pandas as pd
import pytest
import yaml
from conftest import REPO, shipped_layers

from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.config.views import task_config
from gold_textgen.cost.device_profile import DeviceProfile, shape_key
from gold_textgen.cost.dry_run import PlannedJob, parse_jobs
from gold_textgen.cost.estimates import Estimate, job_estimate, runtime_minutes, work_seconds
from gold_textgen.cost.plan import JobCost, ancestors, report, rows_by_table, wall_seconds
from gold_textgen.cost.work import Folders, job_work, split_examples, start_order
from gold_textgen.runtime.errors import ConfigError

DRY_RUN = """Building DAG of jobs...
[Sat Nov 28 23:35:55 2026]
rule prepare_dataset:
    output: results/demo/data/demo/train.jsonl, results/demo/data/demo/valid.jsonl
    jobid: 4
    wildcards: task=demo
    resources: tmpdir=/tmp, runtime=30
[Sat Nov 28 23:35:55 2026]
rule train_mle:
    input: results/demo/data/demo/train.jsonl, results/demo/data/demo/valid.jsonl
    output: results/demo/models/demo/mle/seed1
    jobid: 3
    wildcards: task=demo, seed=1
    threads: 2
    resources: tmpdir=/tmp, runtime=120
[Sat Nov 28 23:35:55 2026]
localrule table1:
    input: results/demo/models/demo/mle/seed1, results/elsewhere.json
    output: results/demo/tables/table1.csv
    jobid: 1
Job stats:
"""


def demo_config(**changes) -> dict:
    config = validate_config(merged_config(REPO / "config.yaml"))
    config["experiment"].update(changes)
    return config


def unit_profile(task: dict) -> DeviceProfile:
    """A profile whose every unit costs one second per example (known answers are then counts)."""
    entry = {"task": task["name"], "architecture": "transformer", "size": 1000, "tokens": 64, "threads": 1}
    entry |= {"update_s": 1.0, "forward_s": 1.0, "decode_s": {1: 1.0, 5: 5.0}}
    return DeviceProfile("cpu: test", 2, {"commit": "x", "date": "today"}, 10.0, 2.0, {shape_key(task): entry})


def test_jobs_and_their_dependencies_are_read_from_a_dry_run():
    jobs = {job.jobid: job for job in parse_jobs(DRY_RUN)}
    assert sorted(jobs) == [1, 3, 4]
    assert jobs[3].rule == "train_mle" and jobs[3].wildcards == {"task": "demo", "seed": "1"} and jobs[3].threads == 2
    assert jobs[3].after == {4} and jobs[1].after == {3} and jobs[4].after == set()
    assert ancestors(list(jobs.values()), 1) == {1, 3, 4}


def test_the_work_of_each_job_is_counted_from_the_config():
    config = demo_config()
    mle = job_work(config, "train_mle", {"task": "demo", "seed": "1"}, expected=True)
    recorded, every = config["cost"]["expected_updates"]["demo"]["mle"], config["tasks"]["demo"]["mle"]["eval_steps"]
    assert (mle.updates, mle.batch_size, mle.updates_bound) == (recorded, 128, "recorded")  # cost.expected_updates
    assert mle.dev_decoded == recorded // every * 500 and mle.helper_forwards == 0
    config["cost"]["expected_updates"] = {}
    mle = job_work(config, "train_mle", {"task": "demo", "seed": "1"}, expected=True)
    assert (mle.updates, mle.updates_bound) == (4000, "cap")  # nothing recorded: the step cap, an upper bound
    gold = job_work(config, "fine_tune", {"task": "demo", "objective": "gold_s", "seed": "1"})
    assert gold.updates == 100 and gold.helper_forwards == 1  # the fixed budget; the lagged policy; cached rewards
    control = job_work(config, "fine_tune", {"task": "demo", "objective": "mle_continued", "seed": "1"})
    assert control.helper_forwards == 0
    test = job_work(config, "evaluate_test", {"task": "demo", "objective": "mle", "seed": "1"})
    assert test.scored == 500 and test.decoded == {1: 500}  # greedy on the test set
    valid = job_work(config, "evaluate_valid", {"task": "demo", "objective": "mle", "seed": "1"})
    assert valid.decoded == {1: 500 * (1 + 3), 5: 500}  # greedy, 3 top-k 20 sampling runs, beam 5
    assert job_work(config, "cache_rewards", {"task": "demo", "seed": "1"}).scored == 20000


def test_past_runs_give_the_expected_updates(tmp_path):
    config = demo_config()
    summary = tmp_path / "results" / "demo" / "analysis" / "demo" / "training_summary.csv"
    summary.parent.mkdir(parents=True)
    summary.write_text("objective,seed,global_step\nmle,1,900\nmle,2,1300\ngold_s,1,60\n")
    folders = Folders.of(config, tmp_path)
    mle = job_work(config, "train_mle", {"task": "demo", "seed": "3"}, expected=True, results=folders)
    assert (mle.updates, mle.updates_bound) == (1100, "past run")  # before cost.expected_updates
    assert job_work(config, "train_mle", {"task": "demo", "seed": "3"}, expected=False, results=folders).updates == 4000
    gold = job_work(config, "fine_tune", {"task": "demo", "objective": "gold_s", "seed": "1"}, results=folders)
    assert (gold.updates, gold.updates_bound) == (100, "fixed budget")  # no early stopping: max_steps, whatever ran before


def test_recorded_updates_name_a_task_and_objective_that_exist():
    for counts, key in (({"dmeo": {"mle": 10}}, "cost.expected_updates.dmeo"), ({"demo": {"gold": 10}}, "cost.expected_updates.demo.gold")):
        config = merged_config(REPO / "config.yaml")
        config["cost"] = {"expected_updates": counts}
        with pytest.raises(ConfigError, match=re.escape(key)):
            validate_config(config)


def test_recorded_examples_stand_in_for_a_split_nothing_can_count_before_the_download(tmp_path):
    """nqg_real's release is downloaded by the run: its training pairs come from cost.expected_examples
    (the source alone would count the whole-corpus fallback), and a prepared file's lines come first."""
    config = validate_config(merged_config(REPO / "config.yaml", [REPO / "configs" / "nqg_real.yaml"]))
    folders = Folders.of(config, tmp_path)
    assert split_examples(config, "nqg_real", "train", folders) == 7874
    assert "7,874 train pairs" in (REPO / "configs" / "nqg_real.yaml").read_text()  # the split the comment documents
    assert job_work(config, "cache_rewards", {"task": "nqg_real", "seed": "1"}, results=folders).scored == 7874
    prepared = folders.store / "data" / "nqg_real" / "train.jsonl"
    prepared.parent.mkdir(parents=True)
    prepared.write_text("{}\n" * 12)
    assert split_examples(config, "nqg_real", "train", folders) == 12
    config["cost"]["expected_examples"] = {}
    assert split_examples(config, "nqg_real", "train") == 100_000  # sized as a whole public corpus
    config["cost"]["expected_examples"] = {"nqg_rael": {"train": 10}}
    with pytest.raises(ConfigError, match=re.escape("cost.expected_examples.nqg_rael")):
        validate_config(config)


def test_the_recorded_updates_are_those_of_the_documented_runs():
    """The updates a fresh clone's plan expects lie within those of the runs the results pages quote (their
    recorded training summaries, docs/runs/): the demo's MLE, and nqg_real's every objective (their mean)."""
    demo = pd.read_csv(REPO / "docs" / "runs" / "demo" / "one_thread-training_summary.csv")
    mle = demo[demo["objective"] == "mle"]["global_step"]
    assert mle.min() <= demo_config()["cost"]["expected_updates"]["demo"]["mle"] <= mle.max()
    nqg = pd.read_csv(REPO / "docs" / "runs" / "nqg_real" / "one_thread-training_summary.csv")
    expected = validate_config(merged_config(REPO / "config.yaml", [REPO / "configs" / "nqg_real.yaml"]))["cost"]["expected_updates"]
    assert expected["nqg_real"] == {objective: round(steps.mean()) for objective, steps in nqg.groupby("objective")["global_step"]}


def test_seconds_are_the_work_at_the_profiles_rates():
    config = demo_config()
    task = task_config(config, "demo")
    profile = unit_profile(task)
    estimate = job_estimate(config, profile, "evaluate_test", {"task": "demo", "objective": "mle", "seed": "1"})
    assert estimate.expected == estimate.upper == 10 + 500 + 500  # start, token NLL, greedy decoding
    assert estimate.origin == "measured"
    gold = job_work(config, "fine_tune", {"task": "demo", "objective": "gold_s", "seed": "1"})
    rates = profile.rates(task)
    assert work_seconds(gold, rates) == 10 + 100 * 128 * (1 + 1) + 100 // 50 * 500 * 1
    assert rates.decode_seconds(3) == 5.0 * 3 / 5  # an untimed beam count scales from the nearest timed one
    assert job_estimate(config, profile, "table1", {}).expected == 2.0  # a job that runs no model


def test_a_task_the_profile_did_not_time_is_scaled_from_the_nearest_of_its_architecture():
    config = demo_config()
    task = task_config(config, "demo")
    profile = unit_profile(task)
    bigger = copy.deepcopy(task)
    bigger["model"]["d_model"] *= 2
    rates = profile.rates(bigger)
    assert rates.origin.startswith("scaled from demo") and rates.update > 1.0
    recurrent = copy.deepcopy(task)
    recurrent["model"].update(architecture="nqg_pp", embedding_dim=8, encoder_hidden=8, decoder_hidden=8)
    assert profile.rates(recurrent) is None  # nothing of its architecture to scale from


def test_the_runtime_request_is_the_estimate_times_the_safety_factor_with_a_floor():
    assert runtime_minutes(Estimate("train_mle", 3600.0, 7200.0, "measured"), 2.0, 10) == 120
    assert runtime_minutes(Estimate("train_mle", 30.0, 60.0, "measured"), 2.0, 10) == 10


def test_the_wall_time_list_schedules_jobs_in_dependency_order():
    def cost(jobid, seconds, after=(), threads=1):
        return JobCost(PlannedJob(jobid, f"rule{jobid}", after=set(after)), Estimate("", seconds, seconds, ""), 0, threads)

    # 1 -> (2, 3, 4) -> 5: on two slots the three middle jobs take two rounds of the longest first.
    costs = [cost(1, 10), cost(2, 30, [1]), cost(3, 20, [1]), cost(4, 20, [1]), cost(5, 5, [2, 3, 4])]
    assert wall_seconds(costs, slots=2) == 10 + 40 + 5
    assert wall_seconds(costs, slots=3) == 10 + 30 + 5
    wide = [cost(1, 10, threads=2), cost(2, 10, threads=2)]  # a job takes its threads' worth of slots
    assert wall_seconds(wide, slots=2) == 20


def test_the_wall_time_starts_the_highest_priority_then_the_longest_chain_first():
    """nqg_real's shape: a short reward cache that a long GOLD run waits on goes before a longer control run
    and evaluation (the chain behind it is longer), and a rule's priority goes before either."""

    def cost(jobid, seconds, after=(), priority=0):
        job = PlannedJob(jobid, f"rule{jobid}", after=set(after), priority=priority)
        return JobCost(job, Estimate("", seconds, seconds, ""), 0, 1)

    cache, gold = cost(2, 1, [1]), cost(3, 30, [2])
    assert wall_seconds([cost(1, 10), cache, gold, cost(4, 20, [1]), cost(5, 20, [1])], slots=2) == 10 + 40
    # ordered by their own length the control and the evaluation would go first, and GOLD would start at 21
    assert wall_seconds([cost(1, 10), cache, gold, cost(4, 20, [1], priority=5), cost(5, 20, [1], priority=5)], slots=2) == 10 + 51
    (job,) = parse_jobs("rule cache_rewards:\n    output: r.parquet\n    jobid: 7\n    priority: 5\n")
    assert job.priority == 5


def test_fine_tuning_runs_that_also_run_other_models_start_first():
    """rules/train.smk's fine_tune priority: GOLD's runs (pi_tilde's forward in every update, and the MLE
    model's with online rewards) before the control, all below the reward cache's 5 and MLE's 10."""
    task = task_config(demo_config(), "demo")
    assert start_order(task, "mle_continued") == 0
    assert start_order(task, "gold_s") == start_order(task, "gold_delta") == 1
    task["fine_tune"]["rewards"] = "online"
    assert start_order(task, "gold_s") == 2 and start_order(task, "gold_delta") == 1  # GOLD-delta needs no rewards
    task["objectives"]["on_policy"] = {"loss": "policy_gradient"}
    assert 1 <= start_order(task, "on_policy") < 5


def test_a_table_counts_every_job_it_needs():
    jobs = parse_jobs(DRY_RUN)
    costs = [JobCost(job, Estimate(job.rule, 60.0, 120.0, ""), 0, 1) for job in jobs]
    (row,) = rows_by_table(costs)
    assert row.name == "Table 1" and row.jobs == 3 and row.expected_hours == pytest.approx(3 / 60)


def test_the_shipped_profile_loads_and_a_bad_one_is_named(tmp_path):
    for path in (REPO / "benchmarks" / "devices").glob("*.yaml"):
        profile = DeviceProfile.load(path)
        assert profile.tasks and profile.measured["commit"]
    with pytest.raises(ConfigError, match="no device profile at"):
        DeviceProfile.load(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"device": "x"}))
    with pytest.raises(ConfigError, match=r"not a device profile \(missing threads"):
        DeviceProfile.load(tmp_path / "bad.yaml")


def test_on_a_gpu_profile_slots_are_gpus_and_jobs_without_a_model_run_beside():
    def cost(jobid, seconds, gpus, after=()):
        return JobCost(PlannedJob(jobid, f"rule{jobid}", after=set(after)), Estimate("", seconds, seconds, ""), gpus, 4)

    costs = [cost(1, 100, 1), cost(2, 100, 1), cost(3, 50, 0), cost(4, 10, 0, [1, 2, 3])]
    assert wall_seconds(costs, slots=1, gpus=True) == 210  # the two GPU jobs in turn, the CPU job beside them
    assert wall_seconds(costs, slots=2, gpus=True) == 110


def test_the_plan_report_names_the_device_the_rates_and_the_wall_time():
    config = demo_config()
    profile = unit_profile(task_config(config, "demo"))
    text, wall = report(config, profile, parse_jobs(DRY_RUN), None, slots=2, startup=5.0)
    assert "cpu: test" in text and "rates of demo: measured" in text
    assert re.search(r"^train_mle\s+1\s", text, re.M) and re.search(r"^Table 1\s+3\s", text, re.M)
    expected = 2.0 + job_estimate(config, profile, "train_mle", {"task": "demo", "seed": "1"}).expected + 2.0
    assert wall == pytest.approx(expected + 5.0)  # the three jobs in a chain, then the workflow's start


def test_a_local_plan_starts_its_steps_warm_and_a_cluster_plan_and_the_time_limits_cold(tmp_path):
    config = demo_config()
    cold = unit_profile(task_config(config, "demo"))
    warm = replace(cold, warm_job_start=1.0, warm_cpu_job=0.5)
    jobs = parse_jobs(DRY_RUN)
    walls = {name: report(config, profile, jobs, None, slots=2, startup=0.0)[1] for name, profile in (("cold", cold), ("warm", warm))}
    assert walls["cold"] - walls["warm"] == pytest.approx(2 * (2.0 - 0.5) + (10.0 - 1.0))  # two CPU steps, one model step, in a chain
    on_gpus = [replace(profile, device="NVIDIA test") for profile in (cold, warm)]
    assert report(config, on_gpus[0], jobs, None, 2, 0.0)[1] == report(config, on_gpus[1], jobs, None, 2, 0.0)[1]
    wildcards = {"task": "demo", "seed": "1"}  # a SLURM job starts cold wherever its profile was measured
    assert job_estimate(config, warm, "train_mle", wildcards) == job_estimate(config, cold, "train_mle", wildcards)
    (tmp_path / "profile.yaml").write_text(warm.to_yaml())
    assert replace(DeviceProfile.load(tmp_path / "profile.yaml"), path=None) == warm


@pytest.mark.parametrize("name", sorted(path.name for path in (REPO / "configs").glob("*.yaml")))
def test_every_split_of_every_shipped_config_is_counted(name):
    """The plan counts each split's examples from the source settings, whatever their form: a release read
    by prefixes (paper.yaml's NQG: no sentence_split, no line_ranges), a sentence split, a synthetic size."""
    config = validate_config(merged_config(REPO / "config.yaml", shipped_layers(name)))
    for task in config["tasks"]:
        for split in ("train", "valid", "test"):
            assert split_examples(config, task, split) > 0, (task, split)
