"""GOLD-s in TRL's SFTTrainer, outside the workflow: SFT a small causal LM, save it, then fine-tune it with
GOLD-s whose rewards come from the saved SFT model, loaded a second time as the frozen reference. Runs on a
CPU in a minute with a tiny randomly initialised model on the project's synthetic demo language (no
download):

    python examples/trl_sft_gold.py --output-dir runs/trl_gold

With your own model and data, replace `demo_data` and `tiny_model` by your prompt/completion dataset and
`AutoModelForCausalLM.from_pretrained(...)` (and its tokenizer); everything else stays. Any other objective
is one line: ObjectiveLoss("dft"), ObjectiveLoss("asft", reference_model=sft_model), ... with the settings
of config.schema.yaml (docs/guide/objectives.md). ObjectiveSFTTrainer is SFTTrainer with the objective as
its loss (one forward pass a step); TRL's own data handling, logging and checkpoints are unchanged.
"""

from __future__ import annotations

import argparse

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM
from trl import SFTConfig, SFTTrainer

from gold_textgen.config.schema import defaults
from gold_textgen.data.demo_task import DemoTaskSpec, generate_split
from gold_textgen.data.seq2seq_batches import encode_records
from gold_textgen.data.tokenization import train_tokenizer, training_texts
from gold_textgen.models.prompt_completion import build_causal_model
from gold_textgen.sft import ObjectiveLoss, ObjectiveSFTTrainer


def demo_data(examples: int) -> tuple[Dataset, object]:
    """Prompt/completion pairs of the demo language and a tokenizer trained on them, tokenized as the
    workflow tokenizes them (the prompt ends with EOS, which marks where the completion starts). With a
    hub tokenizer, {"prompt": ..., "completion": ...} rows are all SFTTrainer needs."""
    spec = DemoTaskSpec.from_config(defaults("synthetic_source", kind="synthetic", num_train=examples, max_length=10))
    records = generate_split(spec, "train")
    tokenizer = train_tokenizer(training_texts(records))
    rows = [
        {"input_ids": pair["input_ids"] + pair["labels"], "completion_mask": [0] * len(pair["input_ids"]) + [1] * len(pair["labels"])}
        for pair in encode_records(records, tokenizer, max_source_length=32, max_target_length=32, causal=True)
    ]
    return Dataset.from_list(rows), tokenizer


def tiny_model(tokenizer):
    """A 2-layer Qwen2-style causal LM sized for a CPU (the workflow builds the same from config sizes)."""
    sizes = {"d_model": 64, "ffn_dim": 128, "decoder_layers": 2, "attention_heads": 2, "max_position_embeddings": 64, "dropout": 0.0}
    return build_causal_model(sizes, tokenizer).language_model


def train(model, tokenizer, data: Dataset, output_dir: str, steps: int, learning_rate: float, objective=None) -> SFTTrainer:
    """`steps` updates of SFTTrainer: plain SFT, or with `objective` (an ObjectiveLoss) as its loss."""
    config = SFTConfig(
        output_dir=output_dir,
        max_steps=steps,
        per_device_train_batch_size=32,
        learning_rate=learning_rate,
        logging_steps=max(1, steps // 5),
        save_strategy="no",
        report_to="none",
        completion_only_loss=True,
        max_length=None,
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),  # TRL's default needs a GPU
        use_cpu=not torch.cuda.is_available(),
        # named, so that TRL's default (gradient_checkpointing=True) does not raise transformers 5's rename warning;
        # recomputing activations saves memory a tiny model does not need
        activation_checkpointing=False,
    )
    if objective is None:
        trainer = SFTTrainer(model=model, args=config, train_dataset=data, processing_class=tokenizer)
    else:
        trainer = ObjectiveSFTTrainer(model=model, args=config, train_dataset=data, processing_class=tokenizer, objective=objective)
    trainer.train()
    return trainer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", default="runs/trl_gold")
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--sft-steps", type=int, default=150)
    parser.add_argument("--gold-steps", type=int, default=50)
    args = parser.parse_args()

    data, tokenizer = demo_data(args.examples)
    sft_dir = f"{args.output_dir}/sft"
    train(tiny_model(tokenizer), tokenizer, data, sft_dir, args.sft_steps, 3e-3).save_model(sft_dir)
    # GOLD-s as the paper sets it: rewards p_MLE of the SFT model floored at c = 0.1, importance weights
    # max(u = 0.1, pi_tilde), pi_tilde re-synced every k = 10 updates. The policy and the frozen SFT model
    # are two loads of the saved SFT model: nothing of the policy object is shared with the reference.
    policy, sft_model = AutoModelForCausalLM.from_pretrained(sft_dir), AutoModelForCausalLM.from_pretrained(sft_dir)
    gold_s = ObjectiveLoss("gold", reward="s", floor=0.1, min_weight=0.1, sync_every=10, reference_model=sft_model)
    trainer = train(policy, tokenizer, data, f"{args.output_dir}/gold_s", args.gold_steps, 3e-4, objective=gold_s)
    for entry in trainer.state.log_history:
        if "loss" in entry:
            print(f"GOLD-s update {entry['step']}: loss {entry['loss']:.4f}, token accuracy {entry['mean_token_accuracy']:.3f}")


if __name__ == "__main__":
    main()
