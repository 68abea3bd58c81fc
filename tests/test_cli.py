"""The gold-textgen command: --set overrides (parsed as YAML, checked with the config, a bad key named
with its path), each subcommand's help, and a dry run of the default experiment with one seed."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import OFFLINE, REPO, driver_environment

import gold_textgen
from gold_textgen.cli.main import job_counts, main
from gold_textgen.config.set_overrides import checked_config, overrides_layer, parse_override
from gold_textgen.runtime.errors import ConfigError


def test_an_override_is_a_key_path_and_a_yaml_value():
    assert parse_override("experiment.seeds=[1, 2, 3]") == (["experiment", "seeds"], [1, 2, 3])
    assert parse_override("tasks.demo.fine_tune.learning_rate=3.0e-4") == (["tasks", "demo", "fine_tune", "learning_rate"], 3.0e-4)
    layer = overrides_layer(["a.b=[[1, 2], [3]]", "a.c=null", "a.b=[[4]]"])
    assert layer == {"a": {"b": [[4]], "c": None}}  # a nested list of integers; the later item wins
    assert all(isinstance(x, int) for x in layer["a"]["b"][0])
    for bad in ("experiment.seeds", "=1", "experiment..seeds=1", "a b=1"):
        with pytest.raises(ConfigError, match="write a dotted key"):
            parse_override(bad)
    with pytest.raises(ConfigError, match=r"not a mapping"):
        overrides_layer(["a=1", "a.b=2"])
    # as strictly as a config file: YAML 1.1 would read 010 as octal 8, and keep the last of two keys
    with pytest.raises(ConfigError, match=r"--set experiment\.seeds:1: '010' has a leading zero"):
        parse_override("experiment.seeds=[010]")
    with pytest.raises(ConfigError, match=r"key 'r' is written twice"):
        parse_override("tasks.demo.model.lora={r: 4, r: 8}")


def test_two_calls_with_other_overrides_write_two_files(monkeypatch, tmp_path):
    """Concurrent gold-textgen calls (a seed sweep launched in parallel) never share an overrides file."""
    from gold_textgen.cli.main import experiment_arguments

    for name in ("Snakefile", "config.yaml"):
        (tmp_path / name).write_text((REPO / name).read_text())
    monkeypatch.chdir(tmp_path)
    one = experiment_arguments((), ("experiment.seeds=[1]",))[1]
    two = experiment_arguments((), ("experiment.seeds=[2]",))[1]
    assert one[-1] != two[-1] and "seeds:\n  - 1" in (tmp_path / one[-1]).read_text() and "- 2" in (tmp_path / two[-1]).read_text()
    assert experiment_arguments((), ("experiment.seeds=[1]",))[1] == one  # the same overrides: the same file


def test_overrides_are_checked_with_the_config_and_a_bad_key_is_named_with_its_path(monkeypatch):
    monkeypatch.chdir(REPO)
    config, layer = checked_config(REPO / "config.yaml", [], ["experiment.seeds=[1]", "tasks.demo.fine_tune.sync_every=7"])
    assert config["experiment"]["seeds"] == [1] and config["tasks"]["demo"]["fine_tune"]["sync_every"] == 7
    assert config["experiment"]["name"] == "demo" and "name" not in layer["experiment"]  # the overrides keep the name
    with pytest.raises(ConfigError, match=r"unknown config key experiment\.seedz .*\(set in --set\)"):
        checked_config(REPO / "config.yaml", [], ["experiment.seedz=[1]"])
    with pytest.raises(ConfigError, match=r"config key tasks\.demo\.fine_tune\.learning_rate: -1 .*\(set in --set\)"):
        checked_config(REPO / "config.yaml", [], ["tasks.demo.fine_tune.learning_rate=-1"])
    objectives = REPO / "configs" / "objectives.yaml"
    config, layer = checked_config(REPO / "config.yaml", [objectives], ["experiment.seeds=[2]"])
    # The overrides change settings, not the name: the files' experiment keeps its folder.
    assert config["experiment"]["name"] == "objectives" and layer == {"experiment": {"seeds": [2]}}


def test_every_subcommand_has_help():
    runner = CliRunner()
    assert runner.invoke(main, ["--help"]).exit_code == 0
    for command in ("run", "plan", "status"):
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "--set" in result.output


def test_job_counts_read_snakemakes_table():
    output = "Job stats:\njob          count\n---------  -------\nall              1\ntrain_mle        3\ntotal            4\n"
    assert job_counts(output) == {"all": 1, "train_mle": 3}


@pytest.mark.workflow
def test_a_dry_run_with_an_override(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, ["run", "config.yaml", "--set", "experiment.seeds=[1]", "-n"])
    assert result.exit_code == 0, result.output


@pytest.mark.workflow
@pytest.mark.slow
def test_the_plan_gives_each_job_the_threads_a_run_on_its_cores_gives(monkeypatch):
    """The IWSLT14 transformer's model jobs ask for four threads: on two cores they get two and run one at a
    time, each two threads' worth of CPU hours (a dry run without --cores gave every job one thread, and the
    plan ran two at once)."""
    monkeypatch.chdir(REPO)
    arguments = ["plan", "configs/paper.yaml", "--set", "experiment.tasks=[iwslt14]", "--device", "benchmarks/devices/cpu-epyc-2core.yaml"]
    arguments += ["--all", "--slots", "2"]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    row = re.search(r"^train_mle\s+3\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", result.output, re.M)
    assert row and float(row.group(2)) == pytest.approx(2 * float(row.group(1)), abs=0.002), result.output


def test_run_puts_the_targets_before_the_config_files_and_replace_names_the_experiment(monkeypatch):
    """Snakemake reads every word after --configfile as one more config file; --replace is the explicit
    way to retrain in place what another config made under the name (bookkeeping/experiment_index.py)."""
    monkeypatch.chdir(REPO)
    calls = []
    monkeypatch.setattr("gold_textgen.cli.main.subprocess.call", lambda command, env: calls.append((command, env)) or 0)
    target = "results/smoke/tables/main.csv"
    result = CliRunner().invoke(main, ["run", "configs/smoke.yaml", "--target", target, "--replace", "--cores", "1"])
    assert result.exit_code == 0, result.output
    command, env = calls[0]
    assert command.index(target) < command.index("--configfile") and command[-1] == "configs/smoke.yaml"
    assert env["GOLD_TEXTGEN_REPLACE"] == "smoke"
    # other Snakemake options pass through, before the config files; an option given as a target is refused
    passed = CliRunner().invoke(main, ["run", "configs/smoke.yaml", "--snakemake", "--keep-going --set-threads train_mle=2"])
    assert passed.exit_code == 0, passed.output
    command, _ = calls[1]
    assert command.index("--keep-going") < command.index("--configfile") and "train_mle=2" in command
    refused = CliRunner().invoke(main, ["run", "configs/smoke.yaml", "--target", "--forceall"])
    assert refused.exit_code == 2 and "--forceall is an option, not an output" in refused.output and len(calls) == 2


@pytest.mark.workflow
@pytest.mark.slow
def test_run_with_a_target_builds_it_for_real(tmp_path):
    """`gold-textgen run CONFIG --target T` as the docs give it (not a dry run), in a folder of its own
    through the passed-through `--directory`: the target is built and nothing else."""
    target = "results/smoke/data/demo/train.jsonl"
    gold_textgen = Path(sys.executable).with_name("gold-textgen")
    command = [str(gold_textgen), "run", "configs/smoke.yaml", "--target", target, "--cores", "1", "--snakemake", f"--directory {tmp_path}"]
    # the drivers' environment: its step forks from the session's warm-start server, as a user's runs share theirs
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, env=driver_environment(OFFLINE))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert len((tmp_path / target).read_text().splitlines()) == 400  # configs/smoke.yaml's num_train
    assert sorted(path.name for path in (tmp_path / "results" / "smoke").iterdir() if path.is_dir()) == ["data"]


@pytest.mark.workflow
@pytest.mark.slow
def test_status_says_snakemakes_reason_and_exits_non_zero_with_jobs_pending(monkeypatch):
    """Snakemake writes why a plan fails (missing input files) to stdout: the CLI shows it, not a bare
    'snakemake failed'; and a status with jobs to run exits 1, as a check in a script expects."""
    monkeypatch.chdir(REPO)
    failed = CliRunner().invoke(main, ["status", "configs/local_example.yaml"])
    assert failed.exit_code == 1 and "snakemake failed" in failed.output
    assert "data/my_corpus/train.src" in failed.output, failed.output[-2000:]
    pending = CliRunner().invoke(main, ["status", "configs/smoke.yaml", "--set", "experiment.seeds=[91]"])
    assert pending.exit_code == 1 and "smoke: " in pending.output and "jobs to run" in pending.output


@pytest.mark.parametrize(
    ("arguments", "files", "said"),
    [
        (["run", "config.yaml", "--set", "experiment=null", "-n"], {}, "config key experiment: a mapping of settings"),
        (["plan", "{tmp}/list.yaml"], {"list.yaml": "- a\n- b\n"}, "list.yaml: a config file holds a mapping of settings"),
        (["plan", "config.yaml", "--device", "{tmp}/empty.yaml"], {"empty.yaml": ""}, "empty.yaml: not a device profile"),
        (["plan", "config.yaml", "--device", "{tmp}/bad.yaml"], {"bad.yaml": "rates: [1\n"}, "bad.yaml: not YAML"),
        (["plan", "config.yaml", "--slots", "-1"], {}, "Invalid value for '--slots'"),
        (["plan", "configs/smoke.yaml", "--set", "tasks=null"], {}, "config key tasks: None is not of type 'object'"),
        (["plan", "configs/smoke.yaml", "--set", "tasks.demo=3"], {}, "config key tasks.demo: 3 is not of type 'object'"),
        (
            ["plan", "config.yaml", "--device", "{tmp}/types.yaml"],
            {"types.yaml": "device: cpu\nthreads: two\nmeasured: {}\njob_start_s: 1\ncpu_job_s: 1\ntasks: {}\n"},
            "types.yaml: not a device profile: threads: 'two' is not of type 'integer'",
        ),
        (
            ["plan", "config.yaml", "--device", "{tmp}/rates.yaml"],
            {"rates.yaml": "device: cpu\nthreads: 2\nmeasured: {}\njob_start_s: 1\ncpu_job_s: 1\ntasks: {k: {update_s: fast}}\n"},
            "rates.yaml: not a device profile: tasks.k",
        ),
        (["signatures", "--results", "{tmp}/nope"], {}, "no trained models of task demo under"),
        (["plan", "{tmp}/tabs.yaml"], {"tabs.yaml": "experiment:\n\tname: x\n"}, "tabs.yaml:2:1: not valid YAML: found character '\\t'"),
        (
            ["plan", "{tmp}/open.yaml"],
            {"open.yaml": "experiment:\n  seeds: [1,\n"},
            "open.yaml:3:1: not valid YAML: expected the node content",
        ),
        (["plan", "{tmp}/bytes.yaml"], {"bytes.yaml": b"\xe7\x00experiment"}, "bytes.yaml: not UTF-8 text (byte 0)"),
        (["status", "{tmp}/empty.yaml"], {"empty.yaml": ""}, "empty.yaml: empty; a config file holds a mapping"),
    ],
)
def test_bad_input_is_a_message_not_a_traceback(monkeypatch, tmp_path, capsys, arguments, files, said):
    monkeypatch.chdir(REPO)
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    result = CliRunner().invoke(main, [argument.format(tmp=tmp_path) for argument in arguments])
    output = result.output + capsys.readouterr().err
    assert result.exit_code != 0 and said in output, output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception


def test_the_version_is_the_packages_and_the_changelog_and_citation_name_it():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output.strip().endswith(version)
    assert gold_textgen.__version__ == version
    assert f"## {version} " in (REPO / "CHANGELOG.md").read_text()
    assert re.search(rf"^version: {re.escape(version)}$", (REPO / "CITATION.cff").read_text(), re.M), "CITATION.cff's version"


def test_export_of_a_model_not_yet_trained_says_which_experiment_to_run_first(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, ["export", "results/causal_demo/models/demo/gold_s/seed1", str(tmp_path / "out")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "has not trained it yet" in result.output
    assert "snakemake --cores all --configfile configs/causal_demo.yaml results/causal_demo/models/demo/gold_s/seed1" in result.output


def test_report_before_the_experiment_ran_says_to_run_it_first(tmp_path, monkeypatch):
    """`gold-textgen report` of an experiment with no tables yet: one line naming the command that runs it."""
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, ["report", "configs/smoke.yaml", "--set", "experiment.name=never_run_here"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "results/never_run_here/ holds no tables yet: run the experiment first (gold-textgen run configs/smoke.yaml)" in result.output
