"""configs/paper.yaml: the full grid of the paper's transformer experiments, and where each setting comes from."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from conftest import REPO, job_counts, run_snakemake
from transformers import GenerationConfig

from gold_textgen.bookkeeping.resources import size_class, stage_request
from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.config.views import decoder_view, decoding_view, task_config
from gold_textgen.evaluation.decoding import generation_config
from gold_textgen.models.description import model_family
from gold_textgen.training.training_job import accumulation_steps

PAPER = REPO / "configs" / "paper.yaml"
# NQG and CNN/DM with standard models (Tables 1-2), then the four of Table 3; MLE, the control, GOLD-delta/p/s
TASKS, OBJECTIVES, SEEDS = 6, 5, 3
ON_POLICY = 2 * 2 * SEEDS  # [A] Table 4: MLE+PG and GOLD+PG on NQG++ and the pointer-generator
MODELS = TASKS * OBJECTIVES * SEEDS + ON_POLICY
# Per model one evaluation job per split: the test split (the task's own decoder), the dev split (the
# Table 2 sweep and the task decoder for the figures), each with its token NLL and scores.
EXPECTED_JOBS = {
    "download_source": 3,  # NQG (twice: NQG++ reads the word features, BART marked text) and IWSLT14 archives
    "prepare_dataset": TASKS,  # train and valid
    "prepare_test_split": TASKS,
    "verify_dataset": TASKS,  # the checks of each data set (checksum, shared pairs, sizes)
    "lead3": 2,  # CNN/DM and XSum
    "train_tokenizer": 3,  # NQG++'s and the pointer-generator's words, IWSLT14's joint BPE; BART brings its own
    "train_mle": TASKS * SEEDS,
    "cache_rewards": TASKS * SEEDS,
    "fine_tune": TASKS * (OBJECTIVES - 1) * SEEDS + ON_POLICY,
    "evaluate_test": MODELS,
    "evaluate_valid": MODELS,
    "main_table": 1,
    "table1": 1,
    "table2": 1,
    "objectives_table": 1,
    "significance": 1,  # each objective against MLE, for Table 1, the main table and the objectives table
    "claims": 1,  # the paper's registered claims the grid covers
    "table4": 1,  # on-policy fine-tuning of the standard models
    "paper_comparison": 1,
    **{rule: TASKS for rule in ("nll_histogram", "nll_by_time_step", "exposure_bias", "diversity", "examples", "human_eval_sheet")},
    "training_curves": TASKS,
    "all": 1,
}


@pytest.mark.workflow
def test_dry_run_lists_the_whole_paper_grid(tmp_path):
    result = run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(PAPER))
    counts = job_counts(result.stdout)
    assert counts == EXPECTED_JOBS
    # A few cluster jobs per trained model, none of them minutes-short GPU jobs
    assert sum(counts.values()) <= 4.5 * MODELS


@pytest.fixture(scope="module")
def paper() -> dict:
    return validate_config(merged_config(REPO / "config.yaml", [PAPER]))  # merged as the workflow merges them


def test_splits_models_and_seeds_are_the_papers(paper):
    expected = {
        "nqg": (86229, 8913, 8919),
        "cnndm": (287227, 13368, 11490),
        "xsum": (204045, 11332, 11334),
        "iwslt14": (160239, 7283, 6750),
    }
    for task, sizes in expected.items():
        assert tuple(paper["tasks"][task]["source"]["expected_sizes"][s] for s in ("train", "valid", "test")) == sizes
    assert paper["experiment"]["seeds"] == [1, 12, 123]
    assert {paper["tasks"][t]["model"].get("name_or_path") for t in ("nqg", "cnndm", "xsum")} == {"facebook/bart-large"}
    iwslt = paper["tasks"]["iwslt14"]["model"]
    shape = tuple(iwslt[key] for key in ("encoder_layers", "decoder_layers", "d_model", "attention_heads", "ffn_dim"))
    assert shape == (6, 6, 512, 4, 1024)
    assert {t: paper["tasks"][t]["metric"] for t in expected} == {"nqg": "bleu", "cnndm": "rouge2", "xsum": "rouge2", "iwslt14": "bleu"}


SOURCE_TAG = re.compile(r"#.*\[(A|A-std|script|focus|fairseq-bart|fairseq-mt|choice)\]")


def test_every_training_and_decoding_setting_names_its_source():
    """In each task: every setting of the mle and fine_tune blocks carries a comment, every setting of an
    objective (other than its `reward` kind) a comment, and the generation block a comment citing its
    source ([A], [A-std], [script], [focus], [fairseq-bart], [fairseq-mt] or [choice])."""
    block, missing = None, []
    for number, line in enumerate(PAPER.read_text().splitlines(), start=1):
        key = re.match(r"^    (\w+):", line)
        if key:
            block = key.group(1)
            if block == "generation" and not SOURCE_TAG.search(line):
                missing.append(f"paper.yaml:{number}: {line.strip()} (no source cited)")
        setting = re.match(r"^ {6,}(\w+): \S", line)
        commented = "#" in line
        if block in ("mle", "fine_tune") and setting and not commented:
            missing.append(f"paper.yaml:{number}: {line.strip()}")
        if block == "objectives" and setting and setting.group(1) != "reward" and not commented:
            missing.append(f"paper.yaml:{number}: {line.strip()}")
    assert not missing, "settings without a source comment:\n" + "\n".join(missing)


# fairseq's recipes: GPUs x max-tokens x update-freq (MLE: examples/bart on 8 GPUs; GOLD: the authors' 4-GPU scripts).
RECIPE_TOKENS_PER_UPDATE = {("cnndm", "mle"): 8 * 2048 * 4, ("xsum", "mle"): 8 * 2048 * 2, ("cnndm", "fine_tune"): 4 * 1024 * 2}
RECIPE_TOKENS_PER_UPDATE |= {("xsum", "fine_tune"): 4 * 1024 * 1, ("nqg", "mle"): 4 * 512, ("nqg", "fine_tune"): 4 * 512}


@pytest.mark.parametrize("gpus", [1, 4, 8])
@pytest.mark.parametrize(("task", "stage"), sorted(RECIPE_TOKENS_PER_UPDATE))
def test_tokens_per_update_equal_the_recipe_for_any_gpu_count(paper, task, stage, gpus):
    settings = paper["tasks"][task][stage]
    recipe = RECIPE_TOKENS_PER_UPDATE[(task, stage)]
    if recipe % (settings["max_tokens"] * gpus):
        with pytest.raises(ValueError, match="not a multiple"):  # e.g. XSum GOLD's 4,096 tokens on 8 GPUs x 1,024
            accumulation_steps(settings, gpus)
        return
    assert gpus * settings["max_tokens"] * accumulation_steps(settings, gpus) == recipe


def test_dev_selection_and_scoring_follow_the_papers_evaluation(paper):
    tasks = paper["tasks"]
    run = paper["experiment"]["tasks"]
    assert {t: tasks[t]["dev_decoder"] for t in run} == dict.fromkeys(run, "paper")
    assert {t: tasks[t]["rouge"] for t in ("cnndm", "xsum")} == {"cnndm": "files2rouge", "xsum": "files2rouge"}
    assert {t: tasks[t]["bleu_tokenize"] for t in ("nqg", "iwslt14")} == {"nqg": "none", "iwslt14": "none"}
    families = {(t, entry["table"]): entry["family"] for t in run for entry in tasks[t]["paper_results"]}
    assert families[("nqg_standard", "1")] == families[("cnndm_standard", "1")] == families[("nqg_standard", "2")] == "recurrent"
    assert families[("nqg", "3")] == "transformer"
    assert {model_family(tasks[t]["model"]) for t in ("nqg_standard", "cnndm_standard")} == {"recurrent"}
    assert {model_family(tasks[t]["model"]) for t in ("nqg", "cnndm", "xsum", "iwslt14")} == {"transformer"}


def test_each_task_decodes_with_the_papers_beam_and_lengths(paper):
    """The `paper` decoder resolved per task (decoder_view): NQG greedy [script], CNN/DM beam 4, XSum beam 6
    [fairseq-bart], IWSLT14 beam 5 [fairseq-mt]; the sweep decoders are not overridden."""
    beams = {task: decoder_view(paper, task, "paper")["num_beams"] for task in paper["experiment"]["tasks"]}
    assert beams == {"nqg_standard": 1, "cnndm_standard": 1, "nqg": 1, "cnndm": 4, "xsum": 6, "iwslt14": 5}
    assert {task: decoder_view(paper, task, "beam5")["num_beams"] for task in beams} == dict.fromkeys(beams, 5)
    lengths = {
        task: (paper["tasks"][task]["generation"]["max_new_tokens"], paper["tasks"][task]["generation"]["min_new_tokens"]) for task in beams
    }
    assert lengths == {
        "nqg_standard": (30, 0),
        "cnndm_standard": (120, 0),
        "nqg": (35, 5),
        "cnndm": (140, 55),
        "xsum": (60, 10),
        "iwslt14": (200, 1),
    }
    assert decoding_view(task_config(paper, "cnndm"))["generation"]["length_penalty"] == 2.0


@pytest.mark.parametrize("task", ["nqg_standard", "cnndm_standard"])
def test_the_standard_models_decode_with_focusseq2seqs_lengths_per_decoder(paper, task):
    """layers/decoder.py: CNN/DM's minimum of 35 tokens inside beam search only, none for greedy and sampling;
    beam_search.py: raw sums of log-probabilities, a beam ends once K hypotheses have ended."""
    model = SimpleNamespace(generation_config=GenerationConfig())
    generation = decoding_view(task_config(paper, task))["generation"]
    sweep = paper["experiment"]["sweep_decoders"]
    configs = {name: generation_config(model, generation, decoder_view(paper, task, name)) for name in sweep}
    minimum = 35 if task == "cnndm_standard" else 0
    assert {name: config.min_length - 1 for name, config in configs.items()} == {
        "greedy": 0,
        "beam3": minimum,
        "beam5": minimum,
        "topk5": 0,
        "topk20": 0,
    }
    assert all(configs[name].length_penalty == 0.0 and configs[name].early_stopping is True for name in ("beam3", "beam5"))


def test_the_papers_tasks_get_the_resources_of_their_size(paper):
    """BART-large fine-tuning: 4 GPUs and a day or two; the IWSLT14 transformer from scratch and the standard
    models: one GPU (the pointer-generator's MLE two days: the paper's 15 epochs of 2 hours)."""
    classes = {task: size_class(task_config(paper, task)) for task in paper["experiment"]["tasks"]}
    assert classes == {
        "nqg_standard": "recurrent",
        "cnndm_standard": "recurrent",
        "nqg": "large",
        "cnndm": "large",
        "xsum": "large",
        "iwslt14": "medium",
    }
    assert stage_request(task_config(paper, "cnndm_standard"), "train_mle") == {"gpu": 1, "threads": 1, "mem_mb": 32000, "runtime": 2880}
    assert stage_request(task_config(paper, "cnndm"), "train_mle")["gpu"] == 4
    assert stage_request(task_config(paper, "iwslt14"), "train_mle")["gpu"] == 1
    assert stage_request(task_config(paper, "iwslt14"), "table1") == stage_request(task_config(paper, "iwslt14"), "cpu")


@pytest.mark.workflow
def test_the_on_policy_overlay_plans_table4_on_the_bart_models(tmp_path):
    overlay = REPO / "configs" / "paper_on_policy.yaml"
    counts = job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(PAPER), str(overlay)).stdout)
    # per task and seed: the control, gold_s, mle_pg and gold_pg
    assert counts["train_mle"] == 2 * 3 and counts["fine_tune"] == 2 * 3 * 4
    assert counts["table4"] == 1 and counts["paper_comparison"] == 1


def test_table4_runs_on_the_standard_models_as_the_paper_did(paper):
    """[A] Table 4's MLE+PG and GOLD+PG rows are NQG++ and the pointer-generator, compared with the paper's."""
    from gold_textgen.config.views import task_objectives

    for task in paper["experiment"]["tasks"]:
        defined = paper["tasks"][task]["objectives"]
        on_policy = [o for o in task_objectives(paper, task) if defined.get(o, {}).get("loss") == "policy_gradient"]
        assert on_policy == (["mle_pg", "gold_pg"] if task.endswith("_standard") else []), task
    for task, metric in (("nqg_standard", "bleu"), ("cnndm_standard", "rouge2")):
        table4 = [entry for entry in paper["tasks"][task]["paper_results"] if entry["table"] == "4"]
        assert len(table4) == 1 and set(table4[0]["results"]) == {"mle_pg", "gold_pg"} and table4[0]["family"] == "recurrent"
        assert paper["tasks"][task]["objectives"]["gold_pg"]["start_from"] == "gold_s"
        assert all(metric in values for values in table4[0]["results"].values())
