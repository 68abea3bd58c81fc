"""Memory of GOLD-s, full fine-tuning against a LoRA adapter, on the same model, side by side in one run:
the weights the policy and its helpers hold (policy, pi_tilde, the frozen SFT model: distinct storages),
the trainable parameters, and the peak memory of two GOLD-s updates with online rewards (the case with
every helper) and AdamW. Each variant runs in a child process of its own, so that its peak is its own: on
a GPU CUDA's max_memory_allocated, on a CPU the process's peak resident memory above what it held before
the model was built.

    python -m benchmarks.lora_memory --configfile configs/causal_demo.yaml --configfile benchmarks/causal_100m.yaml [--rank 16]
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import subprocess
import sys
from pathlib import Path

import torch
from transformers import DataCollatorForSeq2Seq

from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import defaults, validate_config
from gold_textgen.config.views import task_config
from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.models.transformer import count_parameters
from gold_textgen.runtime.model_process import prepare_model_process
from gold_textgen.training.fine_tune_trainer import FineTuneTrainer
from gold_textgen.training.helper_models import AdapterHelper, HelperModels
from gold_textgen.training.objective_settings import ObjectiveSettings

from .step_time import demo_model, training_arguments

REPO = Path(__file__).resolve().parents[1]
MB = 2**20


def held_weight_bytes(policy: torch.nn.Module, helpers: HelperModels) -> int:
    """Bytes of the distinct storages that hold the weights of the policy and its helpers."""
    tensors = [*policy.parameters(), *policy.buffers()]
    for helper in (helpers.lagged, helpers.frozen):
        if isinstance(helper, AdapterHelper):
            tensors += list(helper.parameters())
        elif helper is not None:
            tensors += [*helper.parameters(), *helper.buffers()]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values())


def peak_bytes(baseline_kb: int) -> int:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline_kb) * 1024  # Linux: kilobytes


def measure(config: dict, task_name: str, lora_rank: int | None, batch_size: int) -> dict:
    """One variant in this process: build, take two GOLD-s updates, report its memory."""
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if lora_rank:  # the schema completes the adapter's settings
        config = copy.deepcopy(config)
        config["tasks"][task_name]["model"]["lora"] = {"r": lora_rank}
    task = task_config(validate_config(config), task_name)
    records, tokenizer, policy = demo_model(task, batch_size)
    gold_s = defaults("objective", loss="gold", reward="s", floor=0.1, min_weight=0.1)
    settings = ObjectiveSettings.from_config({**task["fine_tune"], **gold_s, "rewards": "online"})
    helpers = HelperModels.build(settings, policy)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=policy))
    batch = collate(list(tokenize_records(records, tokenizer, task["max_source_length"], task["max_target_length"])))
    arguments = training_arguments(0.0)
    trainer = FineTuneTrainer(model=policy, args=arguments, data_collator=collate, processing_class=tokenizer, helpers=helpers)
    trainer.current_gradient_accumulation_steps = 1  # set by train(); training_step reads it
    model = trainer.accelerator.prepare_model(policy)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    for _ in range(2):  # the second update holds AdamW's state
        model.train()
        trainer.training_step(model, {k: v.to(next(model.parameters()).device) for k, v in batch.items()})
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return {
        "parameters": count_parameters(policy),
        "trainable": sum(p.numel() for p in policy.parameters() if p.requires_grad),
        "held_weights_bytes": held_weight_bytes(policy, helpers),
        "peak_bytes": peak_bytes(baseline_kb),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "config.yaml", help="the base config")
    parser.add_argument("--configfile", action="append", default=[], help="an overlay merged over it (repeatable)")
    parser.add_argument("--task", default="demo")
    parser.add_argument("--rank", type=int, default=16, help="the LoRA adapter's rank")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--variant", choices=["full", "lora"], help=argparse.SUPPRESS)  # a child process's one variant
    args = parser.parse_args(argv)
    prepare_model_process(args.threads)
    if args.variant:
        config = merged_config(args.config, args.configfile)
        print(json.dumps(measure(config, args.task, args.rank if args.variant == "lora" else None, args.batch_size)))
        return
    results = {}
    for variant in ("full", "lora"):
        command = [sys.executable, "-m", "benchmarks.lora_memory", "--variant", variant, *(argv if argv is not None else sys.argv[1:])]
        output = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO).stdout
        results[variant] = json.loads(output.strip().splitlines()[-1])
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu (peak resident memory)"
    full, lora = results["full"], results["lora"]
    print(f"model: {full['parameters']:,} parameters; GOLD-s, online rewards; batch {args.batch_size}; LoRA rank {args.rank}; {device}")
    print("| | full fine-tuning | LoRA | LoRA / full |")
    print("|---|---|---|---|")
    print(f"| trainable parameters | {full['trainable']:,} | {lora['trainable']:,} | {lora['trainable'] / full['trainable']:.4f} |")
    for key, label in (("held_weights_bytes", "weights held (policy, pi_tilde, frozen SFT)"), ("peak_bytes", "peak memory, two updates")):
        print(f"| {label} | {full[key] / MB:,.1f} MB | {lora[key] / MB:,.1f} MB | {lora[key] / full[key]:.3f} |")


if __name__ == "__main__":
    main()
