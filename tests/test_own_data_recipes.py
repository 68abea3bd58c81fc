"""The own-data recipes beyond the template (docs/guide/your-own-config.md): the example corpus command
writes configs/local_example.yaml's layout, the middle recipe's plan on that corpus fits its budget on the
reference CPU profile, and the pretrained recipe runs end to end from a checkpoint in a local folder (a
tiny BART saved with its tokenizer: no hub), its claims tested."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from conftest import REPO, planned_wall, run_snakemake
from settings import TINY_MODEL

from gold_textgen.cli.main import main
from gold_textgen.data.example_corpus import write_example_corpus
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.models.transformer import build_scratch_model

pytestmark = pytest.mark.workflow
TEMPLATE = REPO / "configs" / "local_example.yaml"
MIDDLE, PRETRAINED = REPO / "configs" / "local_example_middle.yaml", REPO / "configs" / "local_example_pretrained.yaml"
# The middle recipe's budget on 2 cores (the issue it answers: at most 30 minutes), as the plan sees it.
MIDDLE_BUDGET_S = 30 * 60


def test_the_example_corpus_command_writes_the_templates_layout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["example-corpus", "--train", "50", "--valid", "5", "--test", "6"])
    assert result.exit_code == 0, result.output
    corpus = tmp_path / "data" / "my_corpus"
    for split, size in {"train": 50, "valid": 5, "test": 6}.items():
        sources, targets = (corpus / f"{split}.src").read_text().splitlines(), (corpus / f"{split}.tgt").read_text().splitlines()
        assert len(sources) == len(targets) == size and all(sources) and all(targets)
    assert yaml.safe_load(TEMPLATE.read_text())["tasks"]["my_corpus"]["source"]["train"] == "data/my_corpus/train"


def test_the_middle_recipe_fits_its_budget_on_the_example_corpus(tmp_path):
    """Its plan on the reference CPU profile, every MLE run at its step cap (an upper bound), within the
    budget; three seeds and the claims rule in the grid."""
    write_example_corpus(tmp_path / "data" / "my_corpus", 2000, 200, 200)
    assert planned_wall(tmp_path, [TEMPLATE, MIDDLE]) <= MIDDLE_BUDGET_S
    middle = yaml.safe_load(MIDDLE.read_text())
    assert "seeds" not in middle["experiment"] and len(yaml.safe_load(TEMPLATE.read_text())["experiment"]["seeds"]) == 3


@pytest.mark.slow
def test_the_pretrained_recipe_runs_from_a_local_checkpoint(tmp_path):
    corpus = tmp_path / "data" / "my_corpus"
    write_example_corpus(corpus, 120, 16, 16)
    tokenizer = train_tokenizer((corpus / "train.src").read_text().splitlines() + (corpus / "train.tgt").read_text().splitlines())
    checkpoint = tmp_path / "checkpoints" / "tiny-bart"
    build_scratch_model({**TINY_MODEL, "architecture": "bart"}, tokenizer).save_pretrained(checkpoint)
    tokenizer.save_pretrained(checkpoint)
    steps = {"warmup_steps": 2, "batch_size": 16, "eval_max_examples": 16}
    overlay = tmp_path / "test_sized.yaml"
    overlay.write_text(
        yaml.safe_dump(
            {
                "experiment": {"name": "local_example_pretrained", "seeds": [1, 2], "allow_unconverged_mle": True},
                "analysis": {"num_examples": 3, "human_eval_items": 10, "bootstrap_resamples": 200},
                "tasks": {
                    "my_corpus": {
                        "max_source_length": 24,
                        "max_target_length": 24,
                        "model": {"name_or_path": str(checkpoint)},
                        "mle": {**steps, "max_steps": 12, "eval_steps": 6},
                        "fine_tune": {**steps, "max_steps": 4, "eval_steps": 2, "sync_every": 2},
                        "generation": {"max_new_tokens": 20},
                    }
                },
            }
        )
    )
    run_snakemake(tmp_path, "--cores", "2", "--configfile", str(TEMPLATE), str(PRETRAINED), str(overlay))
    results = tmp_path / "results" / "local_example_pretrained"
    assert not (results / "tokenizers").exists()  # the checkpoint's own tokenizer, none trained
    table = pd.read_csv(results / "tables" / "table1_main.csv")
    assert set(table["objective"]) == {"mle", "mle_continued", "gold_s"}
    claims = pd.read_csv(results / "tables" / "claims.csv")
    assert {"quality_gold_s: gold_s vs mle", "quality_gold_s: gold_s vs mle_continued"} <= set(claims["name"])
