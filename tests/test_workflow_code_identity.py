"""The code in a result's identity (bookkeeping/code_identity.py): an edit to the code a job runs makes it
out of date, an edit to a comment or docstring does not; and the digest itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import REPO, job_counts, run_snakemake
from package_copies import edited_package, package_copy

from gold_textgen.bookkeeping import code_identity
from gold_textgen.bookkeeping.code_identity import behaviour_text, module_closure, package_root, script_code_version

SMOKE = ("--configfile", str(REPO / "configs" / "smoke.yaml"))
FINE_TUNED = 4  # mle_continued, gold_delta, gold_p, gold_s of configs/smoke.yaml


def test_comments_docstrings_and_blank_lines_do_not_count():
    before = textwrap.dedent('''
        """Module doc."""
        def f(x):  # why
            """Doc
            of f."""

            return x + 1
    ''')
    reworded = before.replace("Module doc.", "Another doc.").replace("# why", "# because").replace("of f.", "of the function f.")
    assert behaviour_text(reworded) == behaviour_text(before)
    assert behaviour_text(before.replace("x + 1", "x + 2")) != behaviour_text(before)
    assert behaviour_text(before) == "def f(x):\n    return x + 1"


def test_a_string_that_is_not_a_docstring_counts():
    source = 'def f():\n    x = 1\n    "not a docstring"\n    return x\n'
    assert "not a docstring" in behaviour_text(source)


def test_each_training_stage_holds_its_own_code_only():
    root = package_root()
    mle = module_closure({"gold_textgen.training.mle", "gold_textgen.training.launch"}, root)
    fine_tune = module_closure({"gold_textgen.training.fine_tune", "gold_textgen.training.launch"}, root)
    assert "gold_textgen.objectives.gold" in fine_tune and "gold_textgen.objectives.gold" not in mle
    assert "gold_textgen.training.training_job" in mle and "gold_textgen.config" in mle  # parents packages count too
    prepare = module_closure({"gold_textgen.data.prepare"}, root)
    assert not any(name.startswith("gold_textgen.training") for name in prepare)


def test_the_losses_the_table_imports_by_name_are_part_of_fine_tuning():
    fine_tune = module_closure({"gold_textgen.training.fine_tune"}, package_root())
    assert {"gold_textgen.objectives.anchored", "gold_textgen.objectives.gem", "gold_textgen.objectives.proximal"} <= set(fine_tune)


@pytest.mark.slow
def test_the_digest_does_not_depend_on_where_the_package_lies(tmp_path):
    copy = tmp_path / "elsewhere" / "gold_textgen"
    shutil.copytree(package_root(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    script, named = REPO / "workflow_scripts" / "fine_tune.py", ("gold_textgen.training.fine_tune",)  # as rule fine_tune names it
    assert script_code_version(script, copy, named) == script_code_version(script, package_root(), named)
    edited = tmp_path / "edited" / "gold_textgen"
    shutil.copytree(copy, edited)
    gold = edited / "objectives" / "gold.py"
    gold.write_text(gold.read_text() + "\nEXTRA = 1\n")
    assert script_code_version(script, edited, named) != script_code_version(script, package_root(), named)


def split_dropout_state(root: Path) -> Path:
    """training/dropout_state.py split at a seam, as a refactor would: the two helpers that switch the
    modules' flags moved to a module of their own (with the import they need), imported back where used.
    Returns the new module."""
    state = root / "training" / "dropout_state.py"
    source = state.read_text()
    start = source.index("def _switch_off")
    moved = source[start:]
    head = source[:start].replace("import torch\n", "import torch\n\nfrom .dropout_switches import _restore, _switch_off\n", 1)
    state.write_text(head.rstrip() + "\n")
    switches = root / "training" / "dropout_switches.py"
    switches.write_text(f'"""Each module\'s train flag, off and back."""\n\nimport torch\n\n\n{moved}')
    return switches


def test_a_module_split_at_a_seam_keeps_every_digest_and_an_edit_of_the_moved_code_still_counts(tmp_path):
    root = package_copy(tmp_path, "training/dropout_state.py", "", "")
    switches = split_dropout_state(root)
    for script, named in (FINE_TUNE, MLE):
        assert script_code_version(script, root, named) == script_code_version(script, package_root(), named), script.name
    switches.write_text(switches.read_text().replace("module.training = training", "module.training = not training"))
    code_identity._file_facts.cache_clear()  # digests are read once per process
    script_code_version.cache_clear()
    assert script_code_version(FINE_TUNE[0], root, FINE_TUNE[1]) != script_code_version(FINE_TUNE[0], package_root(), FINE_TUNE[1])


def test_an_own_import_under_another_name_counts_and_one_under_its_own_name_does_not():
    plain = "from .a import f\n\nX = f(1)\n"
    assert behaviour_text(plain) == behaviour_text(plain.replace(".a", "..b.c")) == "X = f(1)"
    assert behaviour_text("from .a import f as g\n\nX = g(1)\n") == "X = g(1)\nimport f as g"


# A made-up row, added to the recent objectives' module as a user adding an objective would (docs/guide/add-an-objective.md).
NEW_ROW = """    Loss(
        "made_up",
        "made_up: weight 1, a row of this test",
        "none",
        "Made up",
        "tab:olive",
        ("made_up:made_up_batch_weights", None),
    ),
    Loss(
        "asft","""
# Its loss, in a file of its own (the guide's first step): weight sqrt(p) on each reference token, detached.
NEW_LOSS = """import torch


def made_up_batch_weights(batch, settings, state) -> torch.Tensor:
    return batch.own.exp().sqrt()
"""
CATALOG = "catalog/recent.py"  # where the row is added
FINE_TUNE = REPO / "workflow_scripts" / "fine_tune.py", ("gold_textgen.training.fine_tune",)
MLE = REPO / "workflow_scripts" / "train_mle.py", ("gold_textgen.training.mle",)


@pytest.mark.parametrize(
    ("edit", "module", "old", "new"),
    [
        ("add a row", CATALOG, '    Loss(\n        "asft",', NEW_ROW),
        ("edit another row", CATALOG, "psft: PPO's clipped surrogate", "psft: (edited) PPO's clipped surrogate"),
        ("edit another loss's file", "objectives/entropy_weighting.py", "\ndef ", "\nEDITED = True\n\n\ndef "),
        ("edit its own row", CATALOG, "gem: cross-entropy against", "gem: (edited) cross-entropy against"),
        ("edit its own loss's file", "objectives/gem.py", "\ndef ", "\nEDITED = True\n\n\ndef "),
        ("edit shared training code", "training/fine_tune_trainer.py", "\nclass ", "\nEDITED = True\n\n\nclass "),
    ],
)
def test_a_fine_tuning_jobs_identity_holds_its_own_losss_row_and_file_and_the_shared_code(tmp_path, edit, module, old, new):
    """A GEM objective's fine-tuning job against each edit an objective's author makes; the MLE job holds no
    row and no loss's file."""
    edited = package_copy(tmp_path, module, old, new)
    gem = {root: script_code_version(FINE_TUNE[0], root, FINE_TUNE[1], ("gem",)) for root in (package_root(), edited)}
    mle = {root: script_code_version(MLE[0], root, MLE[1], ()) for root in (package_root(), edited)}
    reruns = edit in ("edit its own row", "edit its own loss's file", "edit shared training code")
    assert (gem[edited] != gem[package_root()]) == reruns, edit
    assert mle[edited] == mle[package_root()], edit  # MLE runs none of it


@pytest.mark.workflow
@pytest.mark.slow
def test_an_objective_added_by_the_guides_steps_runs_only_its_own_jobs(tiny_run, tmp_path):
    """docs/guide/add-an-objective.md followed in a copy of the package: a loss file and a catalog row. The
    generation command then lists it in the objectives reference and the schema accepts it; the finished
    smoke experiment has nothing to redo; with the new objective in it, its fine-tuning, its evaluations and
    the tables that read them run, and no MLE or other objective's job."""
    env = edited_package(tmp_path, CATALOG, '    Loss(\n        "asft",', NEW_ROW)
    (Path(env["PYTHONPATH"]) / "gold_textgen" / "objectives" / "made_up.py").write_text(NEW_LOSS)
    pages = tmp_path / "pages"
    (pages / "docs" / "reference").mkdir(parents=True)
    shutil.copy(REPO / "docs" / "development.md", pages / "docs")  # its code map is generated too
    generate = [sys.executable, "-m", "gold_textgen.docs_pages.generated_pages", str(pages)]
    subprocess.run(generate, env={**os.environ, **env}, check=True, capture_output=True, timeout=120)
    assert "| `made_up` | Made up | weight 1, a row of this test |" in (pages / "docs" / "reference" / "objectives.md").read_text()
    assert '`"made_up"`' in (pages / "docs" / "reference" / "config.md").read_text()  # the schema's loss enum
    result = run_snakemake(tiny_run, "-n", *SMOKE, env=env)
    assert "Nothing to be done" in result.stdout + result.stderr, result.stdout[-3000:]
    with_it = tmp_path / "with_made_up.overrides.yaml"  # settings only: the smoke experiment itself, changed
    objectives = [*yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())["experiment"]["objectives"], "made_up"]
    made_up = {"tasks": {"demo": {"objectives": {"made_up": {"loss": "made_up"}}}}}
    with_it.write_text(yaml.safe_dump({"experiment": {"objectives": objectives}, **made_up}))
    changed = {**env, "GOLD_TEXTGEN_REPLACE": "smoke"}  # the smoke folder's settings changed on purpose
    counts = job_counts(run_snakemake(tiny_run, "-n", "--quiet", "rules", *SMOKE, str(with_it), env=changed).stdout)
    assert counts["fine_tune"] == 1 and counts["evaluate_test"] == counts["evaluate_valid"] == 1, counts
    assert not {"train_mle", "cache_rewards", "prepare_dataset", "train_tokenizer"} & set(counts), counts
    assert {"table1", "objectives_table", "significance"} <= set(counts), counts


@pytest.mark.workflow
def test_editing_the_gold_loss_reruns_fine_tuning_and_what_follows_only(tiny_run, tmp_path):
    env = edited_package(tmp_path, "objectives/gold.py", "def windowed_returns(", "GOLD_EDITED = True\n\n\ndef windowed_returns(")
    counts = job_counts(run_snakemake(tiny_run, "-n", "--quiet", "rules", *SMOKE, env=env).stdout)
    assert counts["fine_tune"] == FINE_TUNED
    assert not {"prepare_dataset", "verify_dataset", "train_tokenizer", "train_mle", "cache_rewards"} & set(counts)
    assert counts["evaluate_test"] == counts["evaluate_valid"] == FINE_TUNED  # the MLE model's evaluation stands
    assert counts["main_table"] == counts["all"] == 1


@pytest.mark.workflow
@pytest.mark.slow
def test_editing_a_docstring_reruns_nothing(tiny_run, tmp_path):
    env = edited_package(tmp_path, "objectives/gold.py", '"""', '"""Reworded for this test. ')
    result = run_snakemake(tiny_run, "-n", *SMOKE, env=env)
    assert "Nothing to be done" in result.stdout + result.stderr


@pytest.mark.workflow
@pytest.mark.slow
def test_moving_a_module_and_editing_how_a_step_starts_rerun_nothing(tiny_run, tmp_path):
    """A refactor: training/dropout_state.py split at a seam, both parts moved into a sub-package of its own
    (an `__init__.py` of only a docstring) and one renamed, its importers' import lines with it, and a line of code added to the warm-start
    server (start-up code, STARTUP_MODULES): the finished smoke run plans nothing. A real edit beside them
    still reruns (the tests above)."""
    root = package_copy(tmp_path, "runtime/warm_start.py", "\ndef ", "\nSTARTUP_EDITED = True\n\n\ndef ")
    split_dropout_state(root)
    (root / "training" / "switches").mkdir()
    (root / "training" / "switches" / "__init__.py").write_text('"""Switches of a model\'s training state."""\n')
    (root / "training" / "dropout_state.py").rename(root / "training" / "switches" / "dropout_switch.py")
    (root / "training" / "dropout_switches.py").rename(root / "training" / "switches" / "dropout_switches.py")
    importers = [path for path in root.rglob("*.py") if ".dropout_state import" in path.read_text()]
    assert importers
    for path in importers:
        path.write_text(path.read_text().replace(".dropout_state import", ".switches.dropout_switch import"))
    result = run_snakemake(tiny_run, "-n", *SMOKE, env={"PYTHONPATH": str(root.parent)})
    assert "Nothing to be done" in result.stdout + result.stderr, result.stdout[-3000:]


@pytest.mark.workflow
@pytest.mark.slow
def test_a_step_started_cold_writes_what_the_warm_started_one_wrote(tiny_run, tmp_path):
    """Why start-up code is not part of a result's identity: the smoke run's steps were forked warm; one
    model step run again cold (GOLD_WARM_START=0) writes the same token NLL and scores."""
    import pandas as pd

    copy = tmp_path / "run"
    shutil.copytree(tiny_run, copy, symlinks=True)
    target = "results/smoke/token_nll/demo/mle/seed1/valid.parquet"
    scores = "results/smoke/scores/demo/mle/seed1/valid"
    cold = {"GOLD_WARM_START": "0"}
    run_snakemake(copy, "--cores", "1", "--forcerun", "evaluate_valid", "--allowed-rules", "evaluate_valid", target, *SMOKE, env=cold)
    pd.testing.assert_frame_equal(pd.read_parquet(copy / target), pd.read_parquet(tiny_run / target))
    for warm in sorted((tiny_run / scores).rglob("*.json")):
        assert json.loads((copy / warm.relative_to(tiny_run)).read_text()) == json.loads(warm.read_text()), warm


@pytest.mark.workflow
@pytest.mark.slow
def test_editing_the_table_code_rebuilds_the_tables_only(tiny_run, tmp_path):
    env = edited_package(tmp_path, "analysis/tables.py", "\ndef ", "\nTABLES_EDITED = True\n\n\ndef ")
    counts = job_counts(run_snakemake(tiny_run, "-n", "--quiet", "rules", *SMOKE, env=env).stdout)
    assert set(counts) == {"main_table", "table1", "table2", "objectives_table", "all"}


def test_a_same_size_edit_with_its_time_put_back_is_not_hidden_by_the_digest_cache(tmp_path, monkeypatch):
    from gold_textgen.bookkeeping import code_identity

    monkeypatch.setattr(code_identity, "_cache", None)  # the test's own cache, dropped after it
    monkeypatch.setattr(code_identity, "_cache_path", None)
    script = tmp_path / "step.py"
    script.write_text("x = 1\n")
    code_identity.use_cache(tmp_path / "digests.json")
    before = code_identity.script_code_version(script)
    times = script.stat()
    script.write_text("x = 2\n")  # the same size
    os.utime(script, ns=(times.st_atime_ns, times.st_mtime_ns))  # and the same modification time
    in_process = (code_identity._file_facts, code_identity.script_code_version)
    for cached in in_process:  # a new process: only the cache file remembers
        cached.cache_clear()
    try:
        assert code_identity.script_code_version(script) != before
    finally:
        for cached in in_process:
            cached.cache_clear()


def test_the_digest_cache_is_written_once_at_exit_and_forgets_deleted_files(tmp_path, monkeypatch):
    """Planning digests every step's code: the cache file is written once, when the process ends (it was
    rewritten for every module read, a hundred times per plan), and holds only files that still exist (a
    deleted copy of the package leaves nothing behind)."""
    from gold_textgen.bookkeeping import code_identity

    monkeypatch.setattr(code_identity, "_cache", None)
    monkeypatch.setattr(code_identity, "_cache_path", None)
    monkeypatch.setattr(code_identity.atexit, "register", lambda function: None)  # this process's exit is pytest's
    cache = tmp_path / "digests.json"
    code_identity.use_cache(cache)
    copy = package_copy(tmp_path, "objectives/gold.py", "\ndef ", "\nCOPIED = True\n\n\ndef ")
    writes = []
    replace = os.replace
    monkeypatch.setattr(code_identity.os, "replace", lambda source, target: (writes.append(target), replace(source, target)))
    for cached in (code_identity._file_facts, code_identity.script_code_version):
        cached.cache_clear()
    try:
        code_identity.script_code_version(FINE_TUNE[0], copy, FINE_TUNE[1])
        code_identity.script_code_version(MLE[0], copy, MLE[1])
        assert writes == []
        code_identity._save_cache()  # what the process runs at its exit
        assert writes == [cache] and any(key.startswith(str(copy)) for key in json.loads(cache.read_text()))
        code_identity._save_cache()  # nothing new: not written again
        assert writes == [cache]
        shutil.rmtree(copy)
        code_identity.script_code_version(MLE[0], package_root(), MLE[1])
        code_identity._save_cache()
        assert len(writes) == 2 and not any(key.startswith(str(copy)) for key in json.loads(cache.read_text()))
    finally:
        for cached in (code_identity._file_facts, code_identity.script_code_version):
            cached.cache_clear()


def test_a_process_that_digests_code_leaves_the_cache_file_at_its_exit(tmp_path):
    cache = tmp_path / "digests.json"
    script = f"""
from pathlib import Path
from gold_textgen.bookkeeping import code_identity
code_identity.use_cache({str(cache)!r})
code_identity.script_code_version(Path({str(MLE[0])!r}), None, {MLE[1]!r})
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert any("training/mle.py" in key for key in json.loads(cache.read_text()))
