"""Outputs end where lm-evaluation-harness ends them (evaluation/stop_sequences.py): generation stops at the
token that completes one of the task's stop sequences (lm-eval's `until`, as configs/causal.yaml copies
them from lm-eval's gsm8k.yaml), and the text is cut there before special tokens are stripped, so a
`<|im_end|>` that is not the tokenizer's EOS (Qwen's base models) still ends the output. lm-eval's rule is
written out here from its HF model's generate_until: stop at the first token whose decoding (special
tokens kept, as its MultiTokenEOSCriteria decodes) holds a stop string, then decode without special
tokens and split at each stop string."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO
from tokenizers import ByteLevelBPETokenizer
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

from gold_textgen.evaluation.decoding import generate_texts, generation_config
from gold_textgen.evaluation.final_answer import flexible_extract
from gold_textgen.evaluation.stop_sequences import text_before_stop, with_stop_strings
from gold_textgen.models.prompt_completion import wrap_language_model

UNTIL = yaml.safe_load((REPO / "configs" / "causal.yaml").read_text())["tasks"]["gsm8k"]["generation"]["stop_sequences"]
PROMPT = "Question: Tom has 2 apples and buys 1 more. How many apples?\nAnswer:"
RUN_ON = " He has 2 + 1 = 3.\n#### 3\n\nQuestion: Ann has 4 pens and loses 1. How many pens?\nAnswer: #### 3 + 2 = 5"
IM_END_RUN_ON = " He has 2 + 1 = 3.\n#### 3<|im_end|> Then Ann has 4 + 1 = 5"
GENERATION = {"max_new_tokens": 60, "min_new_tokens": 0, "no_repeat_ngram_size": 0}


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer as Qwen's base models have: EOS `<|endoftext|>` (also the padding), and
    `<|im_end|>` a special token that is not EOS."""
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([PROMPT, RUN_ON, IM_END_RUN_ON] * 20, vocab_size=400, special_tokens=["<|endoftext|>", "<|im_end|>"])
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>", additional_special_tokens=["<|im_end|>"]
    )


def lm_eval_output(tokenizer, ids: list[int], until: list[str]) -> tuple[int, str]:
    """lm-eval's continuation: the number of tokens generated before its stopping criterion fires, and
    the text it scores."""
    stop = next((k for k in range(1, len(ids) + 1) if any(term in tokenizer.decode(ids[:k]) for term in until)), len(ids))
    text = tokenizer.decode(ids[:stop], skip_special_tokens=True)
    for term in until:
        text = text.split(term)[0]
    return stop, text


class ScriptedLM(Qwen2ForCausalLM):
    """A causal LM whose search emits `script` after a prompt of `prompt_width` tokens, whatever the
    prompt: each step's logits put all mass on the script's next token (then on EOS)."""

    script: tuple[int, ...] = ()
    prompt_width = 0

    def forward(self, *args, labels=None, **kwargs):  # labels: what a Trainer's generate() passes along, unread
        output = super().forward(*args, **kwargs)
        width = (kwargs.get("attention_mask") if kwargs.get("attention_mask") is not None else kwargs["input_ids"]).shape[1]
        step = width - self.prompt_width  # tokens after the prompt so far
        token = self.script[step] if step < len(self.script) else self.config.eos_token_id
        output.logits[:, -1] = -1e4
        output.logits[:, -1, token] = 1e4
        return output


def scripted_model(tokenizer, script: list[int]):
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    language_model = ScriptedLM(config).eval()
    language_model.script = tuple(script)
    language_model.prompt_width = len(tokenizer(PROMPT)["input_ids"])
    return wrap_language_model(language_model, tokenizer)


@pytest.mark.parametrize("run_on", [RUN_ON, IM_END_RUN_ON])
def test_a_run_on_stops_at_the_token_and_text_lm_evals_until_stops_at(tokenizer, run_on):
    script = tokenizer(run_on)["input_ids"]
    stop, expected = lm_eval_output(tokenizer, script, UNTIL)
    assert stop < len(script)  # the script runs on past a stop
    model = scripted_model(tokenizer, script)
    config = generation_config(model, GENERATION, {"num_beams": 1})
    prompt = tokenizer([PROMPT], return_tensors="pt")
    unstopped = model.generate(**prompt, generation_config=config)
    assert unstopped.shape[1] - 1 > stop  # without the stop strings generation runs on (start token counted)
    stopped = model.generate(**prompt, generation_config=with_stop_strings(config, UNTIL), tokenizer=tokenizer)
    assert stopped.shape[1] - 1 == stop  # it ends at the very token lm-eval's criterion stops at
    output = generate_texts(model, tokenizer, [{"id": "0", "source": PROMPT, "target": ""}], config, 1, 64, stop_sequences=UNTIL)[0]
    assert output == expected.strip()
    assert flexible_extract(output, "#### 3")  # the run-on's numbers (5) are never scored


def test_a_special_token_stop_is_cut_before_special_tokens_are_stripped(tokenizer):
    ids = tokenizer(IM_END_RUN_ON)["input_ids"]
    assert "<|im_end|>" in tokenizer.all_special_tokens and tokenizer.eos_token != "<|im_end|>"
    stripped_first = tokenizer.decode(ids, skip_special_tokens=True)  # the old order: strip, then cut
    assert "5" in stripped_first.split("Question:")[0] and not flexible_extract(stripped_first, "#### 3")
    text = text_before_stop(tokenizer, ids, ["<|im_end|>"])
    assert text == lm_eval_output(tokenizer, ids, ["<|im_end|>"])[1] == " He has 2 + 1 = 3.\n#### 3"
    assert text_before_stop(tokenizer, ids, []) == stripped_first  # no stop sequences: the whole text
    assert text_before_stop(tokenizer, tokenizer(" no stop here")["input_ids"], UNTIL) == " no stop here"


def test_dev_selection_stops_where_the_evaluation_stops_without_a_deprecation_warning(tokenizer, tmp_path):
    """The Trainer's own evaluation generates up to the stop token (counted), as the evaluation's decoding
    does; the Seq2SeqTrainer without the mixin generates to the length limit."""
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments
    from transformers.testing_utils import CaptureLogger
    from transformers.utils import logging

    from gold_textgen.training.dev_generation import StopsInDevGeneration
    from gold_textgen.training.training_job import configure_generation

    script = tokenizer(RUN_ON)["input_ids"]
    stop, _ = lm_eval_output(tokenizer, script, UNTIL)
    model = scripted_model(tokenizer, script)
    prompt = tokenizer(PROMPT)["input_ids"]
    task = {"generation": {**GENERATION, "stop_sequences": UNTIL}, "dev_search": {}, "max_source_length": len(prompt)}
    configure_generation(model, task | {"max_target_length": len(script)})
    generated = []
    original = model.generate
    model.generate = lambda *args, **kwargs: generated.append(original(*args, **kwargs)) or generated[-1]

    class DevTrainer(StopsInDevGeneration, Seq2SeqTrainer):
        pass

    for trainer_class in (DevTrainer, Seq2SeqTrainer):
        arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), predict_with_generate=True, report_to="none", use_cpu=True)
        trainer = trainer_class(
            model=model,
            args=arguments,
            eval_dataset=[{"input_ids": prompt, "labels": script[:stop]}],
            data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
            processing_class=tokenizer,
            compute_metrics=lambda prediction: {},  # without one the Trainer computes the loss alone
        )
        with CaptureLogger(logging.get_logger("transformers.generation.utils")) as captured:
            try:
                trainer.evaluate()
            except ValueError as error:  # the plain Trainer: stop strings in the config, no tokenizer to find them
                assert trainer_class is Seq2SeqTrainer and "tokenizer" in str(error)
                continue
        assert "deprecated" not in captured.out
    assert generated[0].shape[1] - 1 == stop  # new tokens (the start token aside) up to the stop token
