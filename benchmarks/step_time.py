"""Step-time benchmark: one MLE training step against GOLD steps (cached and online rewards), DFT steps
and policy-gradient updates (1 and 4 samples per input), on the same batches and the same model, measured
side by side in one run.

    python -m benchmarks.step_time [--configfile configs/<overlay>.yaml ...] [--task demo] [--steps 30]
        [--batch-size 64] [--only mle,gold_cached,dft] [--bf16]

The task's model is built from scratch as the config says (overlays merge over config.yaml as
Snakemake merges them): `--configfile configs/causal_demo.yaml` times the decoder-only path, and
`--configfile benchmarks/causal_100m.yaml` after it a causal model of about 100M parameters.

Each round runs every kind of step on one batch, in rotating order, from identical weights; the
reported figure is the median over rounds, after warm-up rounds. A GOLD step adds one forward pass of the
lagged policy (cached rewards) or two (online rewards: the frozen MLE model too, as in the authors' code);
a policy-gradient update samples outputs with generate() (no gradient), scores them with the task metric,
then runs one teacher-forced pass with gradient over the samples.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from pathlib import Path

import torch
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import defaults, validate_config
from gold_textgen.config.views import task_config
from gold_textgen.data.demo_task import DemoTaskSpec, build_lexicon, generate_split
from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, length_sorted_batches, tokenize_records
from gold_textgen.data.tokenization import train_tokenizer, training_texts
from gold_textgen.evaluation.token_nll import token_nll_table
from gold_textgen.models.transformer import count_parameters, initial_model
from gold_textgen.runtime.model_process import prepare_model_process, seed_everything
from gold_textgen.training.fine_tune import on_policy_sampling
from gold_textgen.training.fine_tune_trainer import REWARD_FIELD, FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels, model_from_weights
from gold_textgen.training.objective_settings import ObjectiveSettings
from gold_textgen.training.reward_cache import attach_cached_rewards

REPO = Path(__file__).resolve().parents[1]


def training_arguments(label_smoothing: float, bf16: bool = False) -> Seq2SeqTrainingArguments:
    """Trainer arguments for timing steps outside train() (no logging, CPU unless a GPU is there)."""
    return Seq2SeqTrainingArguments(
        output_dir="/tmp/gold-bench",
        report_to="none",
        use_cpu=not torch.cuda.is_available(),
        remove_unused_columns=False,
        label_smoothing_factor=label_smoothing,
        bf16=bf16,  # mixed precision (autocast), as a GPU run of a large model would use
    )


def _timed_step(trainer, model, optimizer, batch) -> float:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    trainer.training_step(model, batch)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


def demo_model(task: dict, examples: int) -> tuple[list[dict], object, torch.nn.Module]:
    """(`examples` training records of the task's demo language, a tokenizer trained on them, the task's
    model built from scratch, on the GPU when there is one), seeded: what a timed or measured step runs on."""
    if task["source"]["kind"] != "synthetic" or task["model"]["kind"] != "scratch":
        raise SystemExit("the benchmark builds the demo task and a model from scratch: pick a synthetic task")
    seed_everything(0)
    spec = DemoTaskSpec.from_config({**task["source"], "num_train": examples})
    records = generate_split(spec, "train", build_lexicon(spec))
    tokenizer = train_tokenizer(training_texts(records), task["tokenizer"]["kind"], task["tokenizer"]["vocab_size"])
    policy = initial_model(task["model"], tokenizer)
    if torch.cuda.is_available():
        policy.cuda()  # the reward cache and the trainers run on the device the model is on
    return records, tokenizer, policy


CONTENDERS = ("mle", "gold_cached", "gold_online", "dft", "pg_1_samples", "pg_4_samples")


def run(
    config: dict, task_name: str, steps: int, warmup: int, batch_size: int, examples: int, bf16: bool = False, only=CONTENDERS
) -> dict[str, float]:
    task = task_config(validate_config(config), task_name)
    records, tokenizer, policy = demo_model(task, examples)
    lengths = (task["max_source_length"], task["max_target_length"])
    cache = token_nll_table(policy, tokenizer, records, *lengths, batch_size)
    dataset = attach_cached_rewards(tokenize_records(records, tokenizer, *lengths), cache)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=policy), label_fields=(REWARD_FIELD,))
    order = list(length_sorted_batches([len(x) for x in dataset["labels"]], batch_size))
    batches = [collate([dataset[i] for i in order[k % len(order)]]) for k in range(steps + warmup)]
    objective = task["objectives"].get("gold_s") or defaults("objective", reward="s", floor=0.1, min_weight=0.1)
    smoothing = task["fine_tune"]["label_smoothing"]

    def gold(rewards: str):
        settings = ObjectiveSettings.from_config({**task["fine_tune"], **objective, "rewards": rewards})
        model = copy.deepcopy(policy)
        frozen_model = model_from_weights(policy) if rewards == "online" else None
        trainer = FineTuneTrainer(
            model=model,
            args=training_arguments(0.0, bf16),
            data_collator=collate,
            processing_class=tokenizer,
            helpers=HelperModels(settings, lagged=model_from_weights(policy), frozen=frozen_model),
        )
        return trainer, model

    def token_weighted(loss: str):
        """A loss of the objectives table with no helper model (DFT: each token weighted by its own p)."""
        settings = ObjectiveSettings.from_config({**task["fine_tune"], **defaults("objective", loss=loss)})
        model = copy.deepcopy(policy)
        trainer = FineTuneTrainer(
            model=model,
            args=training_arguments(0.0, bf16),
            data_collator=collate,
            processing_class=tokenizer,
            helpers=HelperModels(settings),
        )
        return trainer, model

    def policy_gradient(samples_per_input: int):
        """An on-policy update every step (the odd updates of the interleaved schedule)."""
        objective = defaults("objective", loss="policy_gradient", baseline=0.05, samples_per_input=samples_per_input)
        settings = ObjectiveSettings.from_config({**task["fine_tune"], **objective})
        model = copy.deepcopy(policy)
        sampling = on_policy_sampling(task, settings, model, tokenizer)
        trainer = FineTuneTrainer(
            model=model,
            args=training_arguments(0.0, bf16),
            data_collator=collate,
            processing_class=tokenizer,
            helpers=HelperModels(settings, sampling=sampling),
        )
        trainer.state.global_step = 1
        return trainer, model

    def mle():
        model = copy.deepcopy(policy)
        return Seq2SeqTrainer(
            model=model, args=training_arguments(smoothing, bf16), data_collator=collate, processing_class=tokenizer
        ), model

    builders = {
        "mle": mle,
        "gold_cached": lambda: gold("cached"),
        "gold_online": lambda: gold("online"),
        "dft": lambda: token_weighted("dft"),
        "pg_1_samples": lambda: policy_gradient(1),
        "pg_4_samples": lambda: policy_gradient(4),
    }
    contenders = {name: builders[name]() for name in CONTENDERS if name in only or name == "mle"}  # MLE: the yardstick
    for name, (trainer, model) in contenders.items():
        trainer.current_gradient_accumulation_steps = 1  # set by train(); training_step reads it
        # What train() does first: accelerate places the policy and wraps its forward in the mixed-precision
        # autocast (without it --bf16 would time fp32 steps).
        contenders[name] = (trainer, trainer.accelerator.prepare_model(model))
    optimizers = {name: torch.optim.AdamW(model.parameters(), lr=1e-4) for name, (_, model) in contenders.items()}
    times: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for round_index, batch in enumerate(batches):
        first = round_index % len(names)
        for name in names[first:] + names[:first]:  # rotate who goes first
            trainer, model = contenders[name]
            model.train()
            inputs = {k: v for k, v in batch.items() if name != "mle" or k != REWARD_FIELD}
            elapsed = _timed_step(trainer, model, optimizers[name], inputs)
            if round_index >= warmup:
                times[name].append(elapsed)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"model: {count_parameters(policy):,} parameters; batch size {batch_size}; {steps} timed rounds, {warmup} warm-up rounds")
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    print(f"device: {device}, torch threads {torch.get_num_threads()}, bf16 {bf16}, architecture {task['model']['architecture']}")
    for name, value in medians.items():
        print(f"{name:14s} median step {1000 * value:8.2f} ms")
    for name, value in medians.items():
        if name != "mle":
            print(f"ratio {name} / mle = {value / medians['mle']:.3f}")
    return medians


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "config.yaml", help="the base config")
    parser.add_argument("--configfile", action="append", default=[], help="an overlay merged over it (repeatable)")
    parser.add_argument("--task", default="demo")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--examples", type=int, default=2000, help="training examples generated to draw batches from")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", action="store_true", help="bf16 mixed precision (GPU)")
    parser.add_argument("--only", default=",".join(CONTENDERS), help=f"the steps to time, comma-separated, of {', '.join(CONTENDERS)}")
    args = parser.parse_args(argv)
    prepare_model_process(args.threads)  # as the training jobs run
    only = tuple(name.strip() for name in args.only.split(","))
    unknown = sorted(set(only) - set(CONTENDERS))
    if unknown:
        parser.error(f"--only: unknown step(s) {', '.join(unknown)} (known: {', '.join(CONTENDERS)})")
    config = merged_config(args.config, args.configfile)
    run(config, args.task, args.steps, args.warmup, args.batch_size, args.examples, args.bf16, only)


if __name__ == "__main__":
    main()
