"""Checks that a model the workflow saved leaves it (`gold-textgen export`, model_exchange/export.py) as every
Hugging Face tool reads it: `AutoTokenizer` encodes the run's own prompts with the workflow's ids,
AutoModelForCausalLM (and peft over the exported base, for a LoRA model) gives the trained logits, and
lm-eval's HFLM, given the folder alone (no tokenizer object), generates what the workflow's decoder
generated and scores each reference with the workflow's token NLL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from gold_textgen.cli.main import main
from gold_textgen.evaluation.token_nll import load_evaluated_model, token_nll_table
from gold_textgen.models.input_contract import token_features
from gold_textgen.models.transformer import load_pretrained_model


def export(model_dir: Path, out: Path) -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["export", str(model_dir), str(out)])
    assert result.exit_code == 0, result.output


def run_records(generations: Path, items: int) -> list[dict]:
    """The first `items` test examples of a generations file: its prompts and references."""
    rows = [json.loads(line) for line in generations.read_text().splitlines()[:items]]
    return [{"id": row["id"], "source": row["source"], "target": row["reference"]} for row in rows]


def check_export(model_dir: Path, out: Path, generations: Path, max_new_tokens: int, lora: bool, items: int = 5) -> None:
    """`model_dir` exported to `out`: the tokenizer `AutoTokenizer` reads there encodes the run's prompts as
    the workflow did, without its trailing EOS (and with it, from the EOS token's text or the chat
    template); the trained model's logits through AutoModelForCausalLM (and PeftModel over the exported
    base, found from the adapter's config, for a LoRA model); lm-eval as `scored_by_lm_eval` says."""
    export(model_dir, out)
    _, workflow_tokenizer = load_evaluated_model(model_dir)
    exported = AutoTokenizer.from_pretrained(out)
    for record in run_records(generations, 30):
        prompt = workflow_tokenizer(record["source"])["input_ids"]
        assert prompt[-1] == workflow_tokenizer.eos_token_id
        assert exported(record["source"])["input_ids"] == prompt[:-1]
        assert exported(record["source"] + exported.eos_token)["input_ids"] == prompt
        message = [{"role": "user", "content": record["source"]}]
        assert exported.apply_chat_template(message, add_generation_prompt=True, tokenize=True)["input_ids"] == prompt
    trained = load_pretrained_model(model_dir).eval()
    ids = torch.tensor([workflow_tokenizer(run_records(generations, 1)[0]["source"])["input_ids"]])
    with torch.no_grad():
        expected = trained.language_model(input_ids=ids).logits
        assert torch.allclose(AutoModelForCausalLM.from_pretrained(out)(input_ids=ids).logits, expected, atol=1e-5)
        if lora:
            from peft import AutoPeftModelForCausalLM

            assert json.loads((out / "adapter" / "adapter_config.json").read_text())["base_model_name_or_path"] == str(
                (out / "base").resolve()
            )
            adapted = AutoPeftModelForCausalLM.from_pretrained(out / "adapter")
            assert torch.allclose(adapted(input_ids=ids).logits, expected, atol=1e-5)
    scored_by_lm_eval(out, model_dir, generations, max_new_tokens, items)


def scored_by_lm_eval(out: Path, model_dir: Path, generations: Path, max_new_tokens: int, items: int) -> None:
    """lm-eval's HFLM on the export folder alone generates greedily what the workflow's decoder generates
    from the trained model on the first test prompts, one prompt at a time (batches pad, and padding moves a
    tiny model's near-ties), and its loglikelihood of each reference (with its EOS) after the prompt is the
    negative sum of the workflow's token NLL of that reference, to 1e-4."""
    huggingface = pytest.importorskip("lm_eval.models.huggingface", reason="lm-eval (make setup installs it) loads the export")
    from lm_eval.api.instance import Instance

    from gold_textgen.evaluation.decoding import generate_texts, generation_config

    records = run_records(generations, items)
    trained, tokenizer = load_evaluated_model(model_dir)
    generation = {"max_new_tokens": max_new_tokens, "min_new_tokens": 1, "no_repeat_ngram_size": 0}
    expected = generate_texts(trained, tokenizer, records, generation_config(trained, generation, {}), 1, 64)
    lm = huggingface.HFLM(pretrained=str(out), backend="causal", device="cpu", batch_size=1)
    eos = lm.tokenizer.eos_token
    requests = []
    for index, record in enumerate(records):
        # the workflow's max_new_tokens counts the tokens before EOS (as fairseq's max_len_b), lm-eval's all of them
        arguments = {"until": [eos], "do_sample": False, "max_gen_toks": max_new_tokens + 1, "min_new_tokens": 1}
        requests.append(Instance("generate_until", {}, (record["source"] + eos, arguments), index))
    produced = [output.strip() for output in lm.generate_until(requests)]
    assert produced == expected, (produced, expected)
    generated_by_pipeline(out, records, expected, max_new_tokens)

    table = token_nll_table(trained, tokenizer, records, 64, 64, 1, 0, token_features(trained), causal=True)
    workflow = table.groupby("example")["nll"].sum().sort_index().tolist()
    scored = [Instance("loglikelihood", {}, (record["source"] + eos, " " + record["target"] + eos), i) for i, record in enumerate(records)]
    by_lm_eval = [-loglikelihood for loglikelihood, _ in lm.loglikelihood(scored)]
    assert by_lm_eval == pytest.approx(workflow, abs=1e-4), (by_lm_eval, workflow)


def generated_by_pipeline(out: Path, records: list[dict], expected: list[str], max_new_tokens: int) -> None:
    """transformers' text-generation `pipeline` on the export folder, greedy: from the prompt's text with the
    EOS token's text after it, and from a chat message through the export's chat template, the workflow's
    outputs."""
    from transformers import pipeline

    generate = pipeline("text-generation", model=str(out), device="cpu")
    options = {"max_new_tokens": max_new_tokens + 1, "min_new_tokens": 1, "do_sample": False}
    eos = generate.tokenizer.eos_token
    for record, want in zip(records, expected, strict=True):
        assert generate(record["source"] + eos, return_full_text=False, **options)[0]["generated_text"].strip() == want
        chat = generate([{"role": "user", "content": record["source"]}], **options)[0]["generated_text"]
        assert chat[-1]["content"].strip() == want
