"""configs/local_example.yaml, the template for a researcher's own corpus, run end to end on parallel
files that the test writes (sentence pairs of the synthetic demo language), with test-sized steps."""

from __future__ import annotations

import json
import os
import time

import pandas as pd
import pytest
import yaml
from conftest import REPO, job_counts, run_snakemake
from settings import demo_spec

from gold_textgen.data.demo_task import build_lexicon, generate_split

pytestmark = pytest.mark.workflow
SIZES = {"train": 300, "valid": 30, "test": 30}
# Only sizes change: the example's data source, tokenizer kind, objectives and decoders are used as written
# (the real run below trains two of the objectives; a dry run plans all of them).
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


def write_corpus(directory) -> None:
    """data/my_corpus/{split}.src/.tgt, line-aligned, as a user would have them."""
    spec = demo_spec(seed=3, num_train=SIZES["train"], num_valid=SIZES["valid"], num_test=SIZES["test"], max_length=10)
    lexicon = build_lexicon(spec)
    directory.mkdir(parents=True)
    for split in SIZES:
        records = generate_split(spec, split, lexicon)
        (directory / f"{split}.src").write_text("".join(r["source"] + "\n" for r in records), encoding="utf-8")
        (directory / f"{split}.tgt").write_text("".join(r["target"] + "\n" for r in records), encoding="utf-8")


def test_the_local_example_runs_end_to_end_on_a_users_files(tmp_path):
    """The example as written plans MLE, the control and the three GOLD objectives; run for real with MLE
    and GOLD-s (every rule the others use, on the same files), it goes from the user's files to every
    table and figure."""
    write_corpus(tmp_path / "data" / "my_corpus")
    overlay = tmp_path / "test_sized.yaml"
    overlay.write_text(yaml.safe_dump(TEST_SIZED))
    configs = ("--configfile", str(REPO / "configs" / "local_example.yaml"), str(overlay))
    planned = job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules", *configs).stdout)
    assert planned["train_mle"] == 1 and planned["fine_tune"] == 4  # the control and GOLD-delta, -p, -s
    two_objectives = tmp_path / "two_objectives.yaml"
    two_objectives.write_text(yaml.safe_dump({"experiment": {"name": "local_example", "objectives": ["mle", "gold_s"]}}))
    run_snakemake(tmp_path, "--cores", "2", *configs, str(two_objectives))

    for split, size in SIZES.items():
        rows = [json.loads(line) for line in (tmp_path / f"results/local_example/data/my_corpus/{split}.jsonl").read_text().splitlines()]
        source_lines = (tmp_path / f"data/my_corpus/{split}.src").read_text().splitlines()
        assert [r["source"] for r in rows] == source_lines and len(rows) == size
    tokenizer = json.loads((tmp_path / "results/local_example/tokenizers/my_corpus/tokenizer.json").read_text())
    assert tokenizer["model"]["type"] == "BPE"
    table = pd.read_csv(tmp_path / "results/local_example/tables/table1_main.csv", dtype={"seed": str})
    assert set(table["task"]) == {"my_corpus"}
    assert list(dict.fromkeys(table["objective"])) == ["mle", "gold_s"]
    for figure in ("nll_histogram", "nll_by_time_step", "exposure_bias"):
        assert (tmp_path / f"results/local_example/figures/my_corpus/{figure}.png").stat().st_size > 0
    assert not (tmp_path / "results/local_example/tables/table2_decoding.csv").exists()  # the example leaves the sweep off


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
