"""One experiment, one folder: experiments run in one folder never rewrite each other's files; overlays
extend their base on purpose; results/index lists them; the real-language configs download their data."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import CPU_PROFILE, README_EXPERIMENTS, REPO, job_counts, run_snakemake, shipped_layers
from source_fixtures import release_zip_of_folder

from gold_textgen.bookkeeping.experiment_index import read_record
from gold_textgen.config.layers import config_layers, merge_layers
from gold_textgen.config.schema import validate_config
from gold_textgen.cost.planned_cost import cost_report
from gold_textgen.data.sources import load_source_splits
from gold_textgen.runtime.errors import ConfigError

REAL_NQG_DEV = REPO.parent / "shared" / "real" / "nqg_zhou2017_dev"
SMOKE = REPO / "configs" / "smoke.yaml"


def digests(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.rglob("*")) if path.is_file()
    }


@pytest.mark.workflow
def test_a_second_experiment_leaves_the_first_ones_files_alone(tiny_run, tmp_path):
    """The smoke experiment (the session's run), then a second small one in the same folder, then the first
    again: its files are byte for byte what they were, and nothing runs."""
    workdir = tmp_path / "folder"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    before = {part: digests(workdir / part / "smoke") for part in ("results", "logs")}
    second = yaml.safe_load(SMOKE.read_text())
    second["experiment"].update(name="second", objectives=["mle"], sweep_decoders=[])
    second["analysis"] = {"gold_objective": None}
    second["tasks"]["demo"]["mle"].update(max_steps=10, eval_steps=10)
    second["tasks"]["demo"].pop("gold", None)
    config = tmp_path / "second.yaml"
    config.write_text(yaml.safe_dump(second))
    # Its MLE model, and what that needs: its data (and their checks) and tokenizer.
    targets = ("results/second/models/demo/mle/seed1", "results/second/data/demo/checks.json")
    run_snakemake(workdir, "--cores", "2", *targets, "--configfile", str(config))
    assert (workdir / "results" / "second" / "models" / "demo" / "mle" / "seed1" / "model.safetensors").is_file()
    assert {part: digests(workdir / part / "smoke") for part in ("results", "logs")} == before
    again = run_snakemake(workdir, "--cores", "2", "--configfile", str(SMOKE))
    assert "Nothing to be done" in again.stdout + again.stderr
    index = (workdir / "results" / "index.md").read_text()
    assert re.search(r"\| smoke \| config\.yaml, smoke\.yaml \(\w+\) \| [\d: -]+ \| current \| .*\(smoke/tables/main\.md\)", index)
    assert re.search(r"\| second \| config\.yaml, second\.yaml \(\w+\) \| [\d: -]+ \| partial \(only some targets were built\) \|", index)
    assert "<td>second</td>" in (workdir / "results" / "index.html").read_text()
    record = json.loads((workdir / "results" / "second" / "experiment.json").read_text())
    assert record["name"] == "second" and not record["complete"] and record["config_files"][-1] == str(config)


@pytest.mark.workflow
def test_another_config_under_an_existing_name_is_refused_and_an_unnamed_overlay_gets_its_own_folder(tiny_run, tmp_path):
    """A copy of the smoke config with another learning rate, still named smoke: any target of it is refused
    before it plans anything (a data check that retrains nothing included), naming the key that differs and
    the way out, and the folder's record keeps its owner, so a model target of it is still refused. An
    unnamed overlay before the named file is refused too; the same settings in any file order are the
    folder's own. The same change as an unnamed overlay after the named file plans its models in a folder
    of its own."""
    workdir = tmp_path / "folder"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    models = workdir / "results" / "smoke" / "models"
    before, record = digests(models), (workdir / "results" / "smoke" / "experiment.json").read_text()
    other = yaml.safe_load(SMOKE.read_text())
    other["tasks"]["demo"]["mle"]["learning_rate"] = 1e-3
    copy = tmp_path / "my_smoke.yaml"
    copy.write_text(yaml.safe_dump(other))
    checks = ("results/smoke/data/demo/checks.json", "--forcerun", "verify_dataset")
    for target in (checks, ("results/smoke/models/demo/mle/seed1",)):
        result = run_snakemake(workdir, "--cores", "1", *target, "--configfile", str(copy), check=False)
        said = result.stdout + result.stderr
        assert result.returncode != 0
        assert "results/smoke/ belongs to the experiment made by configs/smoke.yaml; this run" in said, said[-3000:]
        assert "tasks.demo.mle.learning_rate" in said and "GOLD_TEXTGEN_REPLACE=smoke" in said
        assert (workdir / "results" / "smoke" / "experiment.json").read_text() == record
    assert digests(models) == before
    overlay = tmp_path / "faster.yaml"
    overlay.write_text(yaml.safe_dump({"tasks": {"demo": {"mle": {"learning_rate": 1e-3}}}}))
    before_named = run_snakemake(workdir, "-n", "--configfile", str(overlay), str(SMOKE), check=False)
    assert before_named.returncode != 0 and "tasks.demo.mle.learning_rate" in before_named.stdout + before_named.stderr
    same = tmp_path / "same.yaml"  # a value smoke.yaml already sets, under its name
    same.write_text(yaml.safe_dump({"experiment": {"name": "smoke", "seeds": [1]}}))
    for order in ((str(SMOKE), str(same)), (str(same), str(SMOKE))):
        assert "Nothing to be done" in run_snakemake(workdir, "-n", "--configfile", *order).stdout
    replaced = run_snakemake(workdir, "-n", "--configfile", str(copy), env={"GOLD_TEXTGEN_REPLACE": "smoke"}).stdout
    assert "results/smoke/models/demo/mle/seed1" in replaced
    planned = run_snakemake(workdir, "-n", "--configfile", str(SMOKE), str(overlay)).stdout
    assert "results/smoke.faster/models/demo/mle/seed1" in planned and "results/smoke/models/" not in planned


@pytest.mark.workflow
def test_an_extension_whose_layers_rebuild_its_base_otherwise_is_refused(tiny_run, tmp_path):
    """An experiment that `extends` smoke writes its models into results/smoke: with an unnamed overlay before
    smoke.yaml (another fine-tuning rate), or a second file naming smoke between smoke.yaml and the
    extension, the base would be retrained in place; both are refused naming the base's folder and the key,
    and nothing of results/smoke changes. After smoke.yaml alone the extension plans nothing of the base."""
    workdir = tmp_path / "folder"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    models = workdir / "results" / "smoke" / "models"
    before = digests(models)
    faster = tmp_path / "faster.yaml"
    faster.write_text(yaml.safe_dump({"tasks": {"demo": {"fine_tune": {"learning_rate": 0.005}}}}))
    renamed = tmp_path / "smoke_again.yaml"
    renamed.write_text(yaml.safe_dump({"experiment": {"name": "smoke"}, "tasks": {"demo": {"fine_tune": {"learning_rate": 0.005}}}}))
    extension = tmp_path / "ext.yaml"
    extension.write_text(yaml.safe_dump({"experiment": {"name": "ext", "extends": "smoke"}}))
    for layers in ((faster, SMOKE, extension), (SMOKE, renamed, extension)):
        result = run_snakemake(workdir, "--cores", "1", "--configfile", *map(str, layers), check=False)
        said = result.stdout + result.stderr
        assert result.returncode != 0, said[-3000:]
        assert "this run extends the experiment 'smoke', whose models it writes in their folder" in said, said[-3000:]
        assert "results/smoke/ belongs to the experiment made by configs/smoke.yaml" in said
        assert "tasks.demo.fine_tune.learning_rate" in said
    assert digests(models) == before
    planned = run_snakemake(workdir, "-n", "--configfile", str(SMOKE), str(extension)).stdout
    outputs = [line for line in planned.splitlines() if line.strip().startswith("output:")]
    assert outputs and not any("results/smoke/" in line for line in outputs)


# Every shipped experiment: a config alone, or an overlay after its base.
SHIPPED = [["config.yaml"]] + [
    [path.relative_to(REPO).as_posix() for path in shipped_layers(name)]
    for name in sorted(p.name for p in (REPO / "configs").glob("*.yaml"))
]


def planned(configs: list[str], workdir: Path) -> tuple[set[str], int, str]:
    """The outputs (with logs and benchmark files), the number of jobs and the output of an experiment's dry
    run in a fresh folder; configs/local_example.yaml gets a few lines of the corpus it asks the reader for,
    configs/outside_models.yaml the model folders it imports."""
    if "local_example" in " ".join(configs):
        for split in ("train", "valid", "test"):
            for side in ("src", "tgt"):
                path = workdir / "data" / "my_corpus" / f"{split}.{side}"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("a b c\nd e f\n")
    if "outside_models" in " ".join(configs):  # the demo's models it imports, as `make demo` leaves them
        for objective in ("mle", "mle_continued", "gold_s"):
            for seed in (1, 2, 3):
                (workdir / f"results/demo/models/demo/{objective}/seed{seed}").mkdir(parents=True, exist_ok=True)
    files = [str(REPO / name) for name in configs if name != "config.yaml"]
    result = run_snakemake(workdir, "-n", *(["--configfile", *files] if files else []), check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    outputs = set()
    for line in result.stdout.splitlines():
        if line.strip().startswith(("output:", "log:", "benchmark:")):
            outputs.update(part.strip() for part in line.split(":", 1)[1].split(","))
    return outputs, sum(job_counts(result.stdout).values()), result.stdout


def experiment_of(configs: list[str]) -> dict:
    return _experiment_of(tuple(configs))


@functools.cache
def _experiment_of(configs: tuple[str, ...]) -> dict:
    overlays = [REPO / name for name in configs if name != "config.yaml"]
    return validate_config(merge_layers(config_layers(REPO / "config.yaml", overlays)))["experiment"]


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """Every shipped experiment's dry run, one after the other (in this process: conftest.run_snakemake)."""
    return {tuple(configs): planned(configs, tmp_path_factory.mktemp("plan")) for configs in SHIPPED}


@pytest.mark.workflow
@pytest.mark.slow
def test_no_shipped_experiment_plans_a_file_of_another(plans):
    """Outputs lie under results/<name>/ and logs/<name>/; an overlay adds models to its base's folder
    (experiment.extends) and may plan the base's own jobs there, unchanged (config/overlays.py checks)."""
    for configs, (outputs, _, _) in plans.items():
        experiment = experiment_of(list(configs))
        own = (f"results/{experiment['name']}/", f"logs/{experiment['name']}/")
        shared = (f"results/{experiment['extends']}/",) if experiment["extends"] else ()
        assert all(output.startswith(own + shared) for output in outputs), configs
        for other, (other_outputs, _, _) in plans.items():
            if other == configs:
                continue
            related = {experiment["name"], experiment["extends"]} & {experiment_of(list(other))[key] for key in ("name", "extends")}
            # An overlay and its base, or two overlays of one base, share the base's folder: nothing else.
            allowed = tuple(f"results/{name}/" for name in related if name)
            assert all(output.startswith(allowed) for output in outputs & other_outputs), (configs, other)


def readme_job_counts() -> dict[tuple[str, ...], tuple[str, int]]:
    """The README's experiments table: its config files -> (experiment, the jobs it states)."""
    table = README_EXPERIMENTS.search((REPO / "README.md").read_text())
    assert table, "the README has no experiments table between its markers"
    rows = {}
    for line in table.group(1).splitlines()[2:]:
        name, configs, jobs, _ = (cell.strip() for cell in line.strip("|").split("|"))
        rows[tuple(configs.strip("`").split())] = (name, int(jobs))
    return rows


def gpu_shaped(tmp_path: Path) -> Path:
    """The CPU profile under a GPU's name: model jobs then count as GPU-hours, slots are GPUs."""
    profile = yaml.safe_load(CPU_PROFILE.read_text())
    profile["device"] = "gpu: a test profile"
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


@pytest.mark.workflow
@pytest.mark.slow
def test_every_shipped_experiment_is_costed_on_a_cpu_and_a_gpu_profile(plans, tmp_path):
    profiles = (CPU_PROFILE, gpu_shaped(tmp_path))
    for configs, (_, _, output) in plans.items():
        overlays = [REPO / name for name in configs if name != "config.yaml"]
        config = validate_config(merge_layers(config_layers(REPO / "config.yaml", overlays)))
        for profile in profiles:
            text, wall = cost_report(config, str(profile), output, 2, 0.0, tmp_path)
            assert wall > 0 and re.search(r"wall time on 2 (cores|GPUs) \(upper bound\)", text), (configs, profile)
            if {"train_mle", "fine_tune"} & set(job_counts(output)):  # configs/outside_models.yaml trains nothing
                assert "expected from" in text, configs  # each training run's updates and where they come from


@pytest.mark.workflow
@pytest.mark.slow
def test_the_job_counts_the_readme_states_are_what_snakemake_plans(plans):
    """Every shipped experiment is in the README's table with the jobs its dry run in a fresh folder plans
    (changing a count by one fails this)."""
    stated = readme_job_counts()
    assert set(stated) == set(plans), f"the README's table and the shipped experiments differ: {set(stated) ^ set(plans)}"
    wrong = [
        f"{stated[configs][0]}: the README says {stated[configs][1]} jobs, Snakemake plans {jobs}"
        for configs, (_, jobs, _) in plans.items()
        if stated[configs][1] != jobs
    ]
    assert not wrong, "\n".join(wrong)


def test_an_overlay_that_changes_its_bases_models_is_refused(tmp_path):
    overlay = tmp_path / "bad_overlay.yaml"
    overlay.write_text(yaml.safe_dump({"experiment": {"name": "bad", "extends": "smoke"}, "tasks": {"demo": {"model": {"dropout": 0.3}}}}))
    result = run_snakemake(tmp_path, "-n", "--configfile", str(SMOKE), str(overlay), check=False)
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert "tasks.demo.model.dropout: changes a setting of the experiment 'smoke' this one extends" in said
    assert "bad_overlay.yaml" in said  # the file that set it
    lonely = tmp_path / "lonely.yaml"
    lonely.write_text(yaml.safe_dump({"experiment": {"name": "lonely", "extends": "nqg_real"}}))
    result = run_snakemake(tmp_path, "-n", "--configfile", str(lonely), check=False)
    assert "no config file given names the experiment 'nqg_real'" in result.stdout + result.stderr


@pytest.mark.parametrize("record", ["{broken", "[1, 2]", "\udcff"])
def test_a_damaged_record_of_a_folder_with_models_is_named_not_taken_for_none(tmp_path, record):
    """The owner guard reads results/<name>/experiment.json: a record no run wrote (a torn file, another
    kind of JSON, bytes that are no UTF-8) stops the plan with the file and the way out."""
    folder = tmp_path / "results" / "smoke"
    (folder / "models" / "demo" / "mle" / "seed1").mkdir(parents=True)
    (folder / "models" / "demo" / "mle" / "seed1" / "model.safetensors").write_bytes(b"weights")
    (folder / "experiment.json").write_bytes(record.encode("utf-8", "surrogateescape"))
    result = run_snakemake(tmp_path, "-n", "--configfile", str(SMOKE), check=False)
    said = "results/smoke/experiment.json: not the record a run of the workflow writes"
    assert result.returncode != 0 and said in result.stdout + result.stderr, result.stderr[-2000:]
    with pytest.raises(ConfigError, match=r"experiment\.json: not the record a run of the workflow writes"):
        read_record(folder)  # as the claims check reads it (comparisons/demo_signatures.py)


def test_a_config_without_a_name_is_named_after_its_file(tmp_path):
    mine = tmp_path / "my_run.yaml"
    mine.write_text(yaml.safe_dump({"experiment": {"seeds": [1]}}))
    assert experiment_of([str(mine)])["name"] == "my_run"
    assert experiment_of(["configs/smoke.yaml", str(mine)])["name"] == "smoke.my_run"  # never the base's folder
    assert experiment_of(["config.yaml"])["name"] == "demo"


@pytest.mark.workflow
def test_the_real_nqg_config_plans_the_download_without_the_shared_folder(tmp_path):
    counts = job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(REPO / "configs" / "nqg_real.yaml")).stdout)
    assert counts["download_source"] == 1 and counts["train_mle"] == 3
    assert "shared" not in (REPO / "configs" / "nqg_real.yaml").read_text().replace("sentence-disjoint", "")


@pytest.mark.skipif(not REAL_NQG_DEV.is_dir(), reason=f"the real NQG dev split is not at {REAL_NQG_DEV} (shared data folder)")
def test_the_downloaded_release_gives_the_same_splits_as_the_released_files_read_in_place(tmp_path):
    """configs/nqg_real.yaml now reads Zhou et al.'s zip; its splits are those its tables were measured on,
    when it read the dev files of the release in place (a folder, member_prefix "")."""
    source = validate_config(merge_layers(config_layers(REPO / "config.yaml", [REPO / "configs" / "nqg_real.yaml"])))["tasks"]["nqg_real"][
        "source"
    ]
    release = release_zip_of_folder(REAL_NQG_DEV, tmp_path / "redistribute.zip")
    downloaded = load_source_splits(source, ["train", "valid", "test"], archive=release)
    in_place = {key: value for key, value in source.items() if key not in ("url", "checksum")}
    in_place.update(directory=str(REAL_NQG_DEV), member_prefix="")
    before = load_source_splits(in_place, ["train", "valid", "test"])
    assert {split: len(records) for split, records in downloaded.items()} == {"train": 7874, "valid": 501, "test": 500}
    assert downloaded == before
