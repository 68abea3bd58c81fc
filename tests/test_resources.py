"""The resource table: a task's size class follows from its model and data, and every stage of every
class asks for what its jobs need."""

import pytest

from gold_textgen.bookkeeping.resources import GPU_STAGES, REQUESTS, size_class, stage_request, training_examples

SMALL_MODEL = {"kind": "scratch", "architecture": "transformer", "d_model": 64, "ffn_dim": 128, "encoder_layers": 2, "decoder_layers": 2}
SYNTHETIC = {"kind": "synthetic", "num_train": 20000}


def task(model=SMALL_MODEL, source=SYNTHETIC) -> dict:
    return {"model": model, "source": source}


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (task(), "small"),  # the demo
        (task(source={**SYNTHETIC, "num_train": 100_000}), "medium"),  # a real corpus' size
        (task(model={**SMALL_MODEL, "d_model": 512, "ffn_dim": 1024, "encoder_layers": 6, "decoder_layers": 6}), "medium"),
        (task(model={**SMALL_MODEL, "d_model": 1024, "ffn_dim": 4096, "encoder_layers": 24, "decoder_layers": 24}), "large"),
        (task(model={"kind": "pretrained", "name_or_path": "facebook/bart-large"}), "large"),
        (task(model={"kind": "pretrained", "name_or_path": "facebook/bart-base"}), "medium"),
        (task(source={"kind": "nqg_zhou2017"}), "medium"),  # public corpora count as large data sets
        # ... unless line_ranges keeps a few thousand of their lines
        (task(source={"kind": "nqg_zhou2017", "line_ranges": {"train": [1, 7965]}}), "small"),
        (task(source={"kind": "nqg_zhou2017", "line_ranges": {"valid": [7966, 8465]}}), "medium"),
        (task(model={"kind": "scratch", "architecture": "nqg_pp"}), "recurrent"),  # the paper's standard models
        (task(model={"kind": "scratch", "architecture": "pointer_generator"}), "recurrent"),
        # decoder-only: by the size the name states (one GPU below 3B parameters), from scratch by its sizes
        (task(model={"kind": "pretrained", "architecture": "causal", "name_or_path": "Qwen/Qwen3-0.6B"}), "medium"),
        (task(model={"kind": "pretrained", "architecture": "causal", "name_or_path": "HuggingFaceTB/SmolLM2-360M-Instruct"}), "medium"),
        (task(model={"kind": "pretrained", "architecture": "causal", "name_or_path": "meta-llama/Llama-3.1-8B"}), "large"),
        (task(model={**SMALL_MODEL, "architecture": "causal"}), "small"),
    ],
)
def test_size_classes(settings, expected):
    assert size_class(settings) == expected


def test_a_sentence_split_counts_the_file_less_its_dev_and_test_pairs(tmp_path):
    """configs/nqg_real.yaml: 8,965 pairs of the release's dev file less 1,000 held out, a small task; the
    same source without its folder at hand is sized as a whole corpus."""
    (tmp_path / "dev.source.txt").write_text("a sentence .\n" * 8965)
    held_out = {"valid": 500, "test": 500, "seed": 0}
    source = {"kind": "nqg_zhou2017", "directory": str(tmp_path), "prefixes": {"train": "dev"}, "sentence_split": held_out}
    assert training_examples(source) == 7965
    assert size_class(task(source=source)) == "small"
    assert size_class(task(source={**source, "directory": str(tmp_path / "absent")})) == "medium"


def test_a_local_corpus_is_counted_up_to_the_medium_threshold(tmp_path):
    corpus = tmp_path / "train.src"
    corpus.write_text("a\n" * 10)
    local = {"kind": "local", "format": "parallel", "train": str(tmp_path / "train"), "suffixes": [".src", ".tgt"]}
    assert size_class(task(source=local)) == "small"
    corpus.write_text("a\n" * 100_000)
    assert size_class(task(source=local)) == "medium"


@pytest.mark.parametrize("size", sorted(REQUESTS))
def test_model_stages_get_a_gpu_and_cpu_stages_none(size):
    for stage in GPU_STAGES:
        request = (
            stage_request(task(), stage)
            if size == "small"
            else dict(zip(("gpu", "threads", "mem_mb", "runtime"), REQUESTS[size][stage], strict=True))
        )
        assert request["gpu"] >= 1 and request["threads"] >= 1 and request["mem_mb"] >= 4000 and request["runtime"] >= 30
    assert REQUESTS[size]["cpu"][0] == 0
    assert (
        stage_request(task(), "main_table")
        == stage_request(task(), "cpu")
        == dict(zip(("gpu", "threads", "mem_mb", "runtime"), REQUESTS["small"]["cpu"], strict=True))
    )


def test_the_recurrent_models_train_on_one_gpu_for_at_least_as_long_as_a_medium_model():
    """The paper trained them on one GTX 1080 Ti: NQG++ ~20 epochs of 10 minutes, the pointer-generator up
    to 15 epochs of 2 hours."""
    for stage in GPU_STAGES:
        recurrent, medium = REQUESTS["recurrent"][stage], REQUESTS["medium"][stage]
        assert recurrent[0] == 1 and recurrent[3] >= medium[3]
    assert REQUESTS["recurrent"]["train_mle"][3] >= 15 * 2 * 60


def test_bigger_classes_never_ask_for_less():
    for stage in [*GPU_STAGES, "cpu"]:
        small, medium, large = (REQUESTS[size][stage] for size in ("small", "medium", "large"))
        assert all(s <= m <= big for s, m, big in zip(small, medium, large, strict=True))
