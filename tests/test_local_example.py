"""configs/local_example.yaml, the template for a researcher's own corpus, run end to end on parallel
files that the test writes (sentence pairs of the synthetic demo language), with test-sized steps."""

from __future__ import annotations

import json
import os
import re
import time

import pandas as pd
import pytest
import yaml
from conftest import REPO, job_counts, planned_wall, run_snakemake
from settings import demo_spec

from gold_textgen.data.demo_task import build_lexicon, generate_split

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
SIZES = {"train": 300, "valid": 30, "test": 30}
# The data checks' tests: only sizes change; the example's data source, tokenizer kind, objectives and
# decoders are used as written.
TEST_SIZED = {
    # The base's name kept (an unnamed overlay gets a folder of its own); a few updates: MLE cannot finish.
    "experiment": {"name": "local_example", "seeds": [1], "allow_unconverged_mle": True},
    "analysis": {"num_examples": 3, "human_eval_items": 10, "bootstrap_resamples": 200},
    "tasks": {
        "my_corpus": {
            "max_source_length": 24,
            "max_target_length": 24,
            "tokenizer": {"vocab_size": 400, "min_frequency": 1},
            "model": {
                "d_model": 32,
                "encoder_layers": 1,
                "decoder_layers": 1,
                "attention_heads": 2,
                "ffn_dim": 64,
                "max_position_embeddings": 64,
            },
            "mle": {"max_steps": 20, "eval_steps": 10, "warmup_steps": 5, "batch_size": 32, "eval_max_examples": 30},
            "fine_tune": {"max_steps": 10, "eval_steps": 5, "warmup_steps": 2, "batch_size": 32, "eval_max_examples": 30, "sync_every": 4},
            "generation": {"max_new_tokens": 24},
        }
    },
}


def write_corpus(directory, sizes: dict[str, int] = SIZES) -> None:
    """data/my_corpus/{split}.src/.tgt, line-aligned, as a user would have them."""
    spec = demo_spec(seed=3, num_train=sizes["train"], num_valid=sizes["valid"], num_test=sizes["test"], max_length=10)
    lexicon = build_lexicon(spec)
    directory.mkdir(parents=True)
    for split in sizes:
        records = generate_split(spec, split, lexicon)
        (directory / f"{split}.src").write_text("".join(r["source"] + "\n" for r in records), encoding="utf-8")
        (directory / f"{split}.tgt").write_text("".join(r["target"] + "\n" for r in records), encoding="utf-8")


# The quick check of docs/guide/your-own-config.md, as a newcomer runs it on a 200-line corpus.
FULL, QUICK_OVERLAY = REPO / "configs" / "local_example.yaml", REPO / "configs" / "local_example_quick.yaml"
QUICK = ("--configfile", str(FULL), str(QUICK_OVERLAY))
QUICK_SIZES = {"train": 200, "valid": 40, "test": 40}
GUIDE = REPO / "docs" / "guide" / "your-own-config.md"
# The guide's plan of both recipes on that corpus: "... the quick check at N min and the full recipe at up to M h".
# The guide's words for the two plans (it types no figure: docs/benchmarks.md holds the measured ones).
GUIDE_PLAN = re.compile(r"the\s+quick\s+check\s+under\s+a\s+minute\s+and\s+the\s+full\s+recipe\s+at\s+days")


def test_the_quick_recipe_runs_a_users_200_line_corpus_into_a_folder_of_its_own(tmp_path):
    """The shipped quick check (MLE, the control and GOLD-s, one seed, a small model) over the template, from the user's
    files to every table and figure, in results/local_example_quick/; the guide's plan of it and of the
    full recipe (three seeds, MLE, the control and the three GOLD objectives) is the plan's."""
    write_corpus(tmp_path / "data" / "my_corpus", QUICK_SIZES)
    full = job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules", *QUICK[:2]).stdout)
    assert full["train_mle"] == 3 and full["fine_tune"] == 12  # three seeds of the control and GOLD-delta, -p, -s
    assert GUIDE_PLAN.search(GUIDE.read_text()), "the guide's words for the plans"
    assert planned_wall(tmp_path, [FULL, QUICK_OVERLAY]) < 60, "the quick check: under a minute, as the guide says"
    assert 24 * 3600 <= planned_wall(tmp_path, [FULL]) < 30 * 24 * 3600, "the full recipe: days, as the guide says"
    run_snakemake(tmp_path, "--cores", "2", *QUICK)

    results = tmp_path / "results" / "local_example_quick"
    assert sorted(path.name for path in (tmp_path / "results").iterdir() if path.is_dir()) == ["local_example_quick"]
    for split, size in QUICK_SIZES.items():
        rows = [json.loads(line) for line in (results / f"data/my_corpus/{split}.jsonl").read_text().splitlines()]
        source_lines = (tmp_path / f"data/my_corpus/{split}.src").read_text().splitlines()
        assert [r["source"] for r in rows] == source_lines and len(rows) == size
    tokenizer = json.loads((results / "tokenizers/my_corpus/tokenizer.json").read_text())
    assert tokenizer["model"]["type"] == "BPE"
    table = pd.read_csv(results / "tables/table1_main.csv", dtype={"seed": str})
    assert set(table["task"]) == {"my_corpus"}
    assert list(dict.fromkeys(table["objective"])) == ["mle", "gold_s", "mle_continued"]
    for figure in ("nll_histogram", "nll_by_time_step", "exposure_bias"):
        assert (results / f"figures/my_corpus/{figure}.png").stat().st_size > 0
    assert not (results / "tables/table2_decoding.csv").exists()  # the example leaves the sweep off


def test_a_touched_corpus_keeps_its_data_and_an_edited_one_rebuilds_it(tmp_path):
    """New file times alone (a copy, a restore, a re-mounted share) must not rebuild the data and retrain
    every model after it; a changed word must, in the split it belongs to."""
    corpus = tmp_path / "data" / "my_corpus"
    write_corpus(corpus)
    overlay = tmp_path / "test_sized.yaml"
    overlay.write_text(yaml.safe_dump(TEST_SIZED))
    target = "results/local_example/data/my_corpus/train.jsonl"
    configs = ("--configfile", str(REPO / "configs" / "local_example.yaml"), str(overlay))
    run_snakemake(tmp_path, "--cores", "1", target, *configs)

    later = time.time() + 3600
    for source in corpus.iterdir():
        os.utime(source, (later, later))
    # Snakemake compares checksums instead of times only for files under 1 MB; a real corpus is larger.
    touched = run_snakemake(tmp_path, "-n", "--max-checksum-file-size", "1", target, *configs)
    assert "prepare_dataset" not in touched.stdout and "Nothing to be done" in touched.stdout + touched.stderr

    # An edit to the test file re-makes the test split only; the training splits (and every model) stand.
    test_targets = corpus / "test.tgt"
    test_targets.write_text(test_targets.read_text().replace("\n", " .\n", 1), encoding="utf-8")
    edited_test = run_snakemake(
        tmp_path, "-n", "--max-checksum-file-size", "1", target, "results/local_example/data/my_corpus/test.jsonl", *configs
    )
    assert "prepare_test_split" in edited_test.stdout and "rule prepare_dataset" not in edited_test.stdout
    train_targets = corpus / "train.tgt"
    train_targets.write_text(train_targets.read_text().replace("\n", " .\n", 1), encoding="utf-8")
    edited = run_snakemake(tmp_path, "-n", "--max-checksum-file-size", "1", target, *configs)
    assert "rule prepare_dataset" in edited.stdout


def test_a_table_of_a_test_split_that_is_the_training_data_is_refused_before_anything_trains(tmp_path):
    """A local test file that is a copy of the training file: asking for Table 1 alone (not `all`) runs
    the data checks, which stop at the overlap, and no table is built."""
    write_corpus(tmp_path / "data" / "my_corpus")
    for suffix in (".src", ".tgt"):
        (tmp_path / "data" / "my_corpus" / f"test{suffix}").write_bytes((tmp_path / "data" / "my_corpus" / f"train{suffix}").read_bytes())
    overlay = tmp_path / "test_sized.yaml"
    overlay.write_text(yaml.safe_dump(TEST_SIZED))
    target = "results/local_example/tables/table1_main.md"
    configs = ("--configfile", str(REPO / "configs" / "local_example.yaml"), str(overlay))
    result = run_snakemake(tmp_path, "--cores", "1", target, *configs, check=False)
    assert result.returncode != 0
    log = (tmp_path / "logs" / "local_example" / "verify_dataset" / "my_corpus.log").read_text()
    assert "300 of the 300 test pairs (100.0%) also occur in the train split" in log, log[-2000:]
    assert not (tmp_path / target).exists()
