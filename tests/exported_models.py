"""Checks that a model the workflow saved leaves it (`gold-textgen export`, models/export.py): the export
loads with transformers' AutoModelForCausalLM (and peft, for a LoRA model) to the same outputs, and
lm-eval's own HFLM generates from it what the workflow's decoder generated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

from gold_textgen.cli.main import main
from gold_textgen.models.transformer import load_pretrained_model


def export(model_dir: Path, out: Path) -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["export", str(model_dir), str(out)])
    assert result.exit_code == 0, result.output


def check_export(model_dir: Path, out: Path, generations: Path, max_new_tokens: int, lora: bool) -> None:
    """`model_dir` exported to `out` gives the trained model's logits, through AutoModelForCausalLM (and
    PeftModel over the exported base for a LoRA model), and lm-eval's HFLM greedy outputs on the first test
    prompts of `generations` (a generations file of the run) equal the workflow decoder's."""
    export(model_dir, out)
    trained = load_pretrained_model(model_dir).eval()
    # the project's own tokenizer by its class: AutoTokenizer maps a qwen2 config to Qwen's BPE tokenizer
    tokenizer = PreTrainedTokenizerFast.from_pretrained(out)
    ids = torch.tensor([tokenizer("w1 w2 w3")["input_ids"]])
    with torch.no_grad():
        expected = trained.language_model(input_ids=ids).logits
        assert torch.allclose(AutoModelForCausalLM.from_pretrained(out)(input_ids=ids).logits, expected, atol=1e-5)
        if lora:
            from peft import PeftModel

            adapted = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(out / "base"), out / "adapter")
            assert torch.allclose(adapted(input_ids=ids).logits, expected, atol=1e-5)
    scored_by_lm_eval(out, tokenizer, model_dir, generations, max_new_tokens)


def scored_by_lm_eval(out: Path, tokenizer, model_dir: Path, generations: Path, max_new_tokens: int, items: int = 5) -> None:
    """lm-eval's HFLM on the export generates greedily what the workflow's decoder generates from the
    trained model on the first test prompts, one prompt at a time (batches pad, and padding moves a tiny
    model's near-ties)."""
    huggingface = pytest.importorskip("lm_eval.models.huggingface", reason="lm-eval (make setup installs it) loads the export")
    from lm_eval.api.instance import Instance

    from gold_textgen.evaluation.decoding import generate_texts, generation_config

    records = [json.loads(line) for line in generations.read_text().splitlines()[:items]]
    trained = load_pretrained_model(model_dir).eval()
    generation = {"max_new_tokens": max_new_tokens, "min_new_tokens": 1, "no_repeat_ngram_size": 0}
    expected = generate_texts(trained, tokenizer, records, generation_config(trained, generation, {}), 1, 64)
    lm = huggingface.HFLM(pretrained=str(out), tokenizer=tokenizer, backend="causal", device="cpu", batch_size=1)
    requests = []
    for index, record in enumerate(records):
        context = record["source"]  # lm-eval encodes it as the workflow does, the tokenizer's own EOS after it
        # the workflow's max_new_tokens counts the tokens before EOS (as fairseq's max_len_b), lm-eval's all of them
        arguments = {"until": [tokenizer.eos_token], "do_sample": False, "max_gen_toks": max_new_tokens + 1, "min_new_tokens": 1}
        requests.append(Instance("generate_until", {}, (context, arguments), index))
        assert lm.tok_encode(context) == tokenizer(context)["input_ids"]
    produced = [output.strip() for output in lm.generate_until(requests)]
    assert produced == expected, (produced, expected)
