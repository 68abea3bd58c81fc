"""Measure this machine's speed on an experiment's tasks and write a device profile, which `gold-textgen
plan` and the workflow's SLURM runtime requests (config `cost.device_profile`) read.

    python -m benchmarks.device_profile [--configfile configs/<name>.yaml ...] [--output benchmarks/devices/<device>.yaml]
        [--tasks NAME ...] [--steps 20] [--warmup 3] [--workdir .]

Run it once on the machine the jobs will run on (on a cluster: one GPU node, e.g. in an `srun --gres=gpu:1`
session); the profile is written under benchmarks/devices/, named after the device (`nvidia-h200.yaml`),
with the commit and the command that measured it.

For each task of the experiment, on its own prepared data and tokenizer (the workflow makes them first:
seconds) and its model as the config builds it (untrained weights: the arithmetic is the same), it times
at the threads the task's jobs get here (resources.py, at most this machine's cores):

- an update as the training jobs make it (the MLE trainer's step, and the fine-tuning trainer's with the
  control's loss: forward, loss, token statistics, backward; then gradient clipping and Adam) on training
  batches of the MLE batch size, drawn as training draws them (length-grouped where the task says so), as
  seconds per example;
- a no-grad forward on the same batches (helper models, the reward cache, token NLL), per example;
- decoding dev examples at the generation batch size with each beam count the experiment's decoders and dev
  decoder use (sampling costs as greedy), per example;

- the MLE training job's own loop, from two short runs of it (`--loop-updates`, 20 and 120 updates) whose
  difference is the cost of the updates alone: it sets the MLE rate, and scales the fine-tuning rate by the
  same ratio to the bare step (`loop_overhead` in the profile);

and, once, a job's start: a fresh interpreter importing the training code, and one importing the analysis
code (all of a job that runs no model, whose own work is seconds); Snakemake's job start, data loading and
saving come on top and are not measured. Mean seconds over `--steps` batches after
`--warmup` untimed ones; an existing profile file gains or replaces the tasks measured, keeping the rest.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import torch
from transformers import DataCollatorForSeq2Seq

from benchmarks.job_starts import start_figures
from benchmarks.step_time import training_arguments
from benchmarks.this_machine import commit
from gold_textgen.bookkeeping.resources import stage_request
from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import defaults, validate_config
from gold_textgen.config.views import analysis_settings, evaluated_runs, is_causal, task_config
from gold_textgen.cost.device_profile import DeviceProfile, architecture, model_size, shape_key, tokens_per_example
from gold_textgen.cost.work import Folders
from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, length_sorted_batches, tokenize_records
from gold_textgen.data.token_features import feature_sizes, input_features
from gold_textgen.data.tokenization import load_tokenizer
from gold_textgen.evaluation.decoding import generation_config
from gold_textgen.models.transformer import initial_model
from gold_textgen.runtime.files import read_jsonl, write_text
from gold_textgen.runtime.model_process import pick_device, prepare_model_process, set_threads
from gold_textgen.training.fine_tune_trainer import FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels
from gold_textgen.training.mle import MleTrainer, train_mle
from gold_textgen.training.objective_settings import ObjectiveSettings
from gold_textgen.training.training_job import TrainingJob

REPO = Path(__file__).resolve().parents[1]


def device_name(cores: int) -> str:
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    processor = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), ""
    )
    return f"cpu: {processor or platform.processor()}, {cores} cores"


def profile_file(device: str) -> Path:
    """benchmarks/devices/<the device's name, lowercased, words joined by dashes>.yaml"""
    words = re.findall(r"[a-z0-9]+", device.lower().removeprefix("cpu: "))
    return REPO / "benchmarks" / "devices" / ("-".join(["cpu", *words] if device.startswith("cpu: ") else words) + ".yaml")


def synchronise() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def mean_seconds(action, batches: list[dict], warmup: int) -> float:
    """Mean seconds per example of `action` over `batches` (the first `warmup` untimed)."""
    for batch in batches[:warmup]:
        action(batch)
    seconds = examples = 0.0
    for batch in batches[warmup:]:
        synchronise()
        start = time.perf_counter()
        action(batch)
        synchronise()
        seconds += time.perf_counter() - start
        examples += next(iter(batch.values())).shape[0]
    if not examples:
        raise SystemExit(f"no batch left to time after {warmup} untimed one(s): raise --steps above --warmup")
    return seconds / examples


def training_loop_seconds(task: dict, train: Path, valid: Path, tokenizer: Path | None, updates: tuple[int, int]) -> float:
    """Seconds per update of the MLE training job's own loop (data loading, the Trainer's step, the schedule,
    logging), from two short runs of `train_mle` that differ only in their updates: their difference cancels
    what every run pays once (loading, the one dev evaluation at the end, saving)."""
    seconds = []
    for count in updates:
        settings = {**task["mle"], "max_steps": count, "eval_steps": count, "early_stopping_patience": None}
        with tempfile.TemporaryDirectory(prefix="gold-device-profile-") as folder:
            job = TrainingJob(
                task={**task, "mle": settings},
                objective="mle",
                seed=1,
                train_path=train,
                valid_path=valid,
                tokenizer_path=tokenizer,
                output_dir=Path(folder) / "model",
                checkpoint_dir=Path(folder) / "checkpoints",
                repo_dir=REPO,
            )
            start = time.perf_counter()
            train_mle(job)
            seconds.append(time.perf_counter() - start)
    return (seconds[1] - seconds[0]) / (updates[1] - updates[0])


def prepared_files(config: dict, configfiles: list[str], task: str, workdir: Path) -> tuple[Path, Path, Path | None]:
    """(train, valid, tokenizer) of the task as the workflow prepares them in `workdir`, made first if missing."""
    store = Folders.of(config, workdir).store
    train, valid = store / "data" / task / "train.jsonl", store / "data" / task / "valid.jsonl"
    tokenizer = store / "tokenizers" / task if task_config(config, task)["model"]["kind"] == "scratch" else None
    targets = [path for path in (train, valid, tokenizer) if path is not None and not path.exists()]
    if targets:
        subprocess.run(preparation_command(workdir, targets, configfiles), check=True)
    return train, valid, tokenizer


def preparation_command(workdir: Path, targets: list[Path], configfiles: list[str]) -> list[str]:
    """The Snakemake command that prepares `targets` in `workdir`: the targets first, since --configfile takes
    every word after it, and no --configfile at all without config files (config.yaml alone)."""
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [str(snakemake), "--snakefile", str(REPO / "Snakefile"), "--cores", "1", "--directory", str(workdir)]
    command += [str(path.relative_to(workdir)) for path in targets]
    return [*command, *(["--configfile", *configfiles] if configfiles else [])]


def measure_task(
    config: dict, configfiles: list[str], name: str, steps: int, warmup: int, cores: int, loop_updates: tuple[int, int], workdir: Path
) -> dict:
    task = task_config(config, name)
    threads = min(cores, stage_request(task, "train_mle")["threads"])
    prepare_model_process(threads)  # as the training job does
    train, valid, tokenizer_path = prepared_files(config, configfiles, name, workdir)
    model_settings = task["model"]
    tokenizer = (
        load_tokenizer(tokenizer_path) if tokenizer_path else load_tokenizer(model_settings["name_or_path"], model_settings.get("revision"))
    )
    torch.manual_seed(0)
    model = initial_model(model_settings, tokenizer, feature_sizes(input_features(model_settings))).to(pick_device())
    lengths = (task["max_source_length"], task["max_target_length"])
    features, causal = input_features(model_settings), is_causal(model_settings)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    draw = random.Random(0)

    def batches(records: list[dict], size: int, grouped: bool) -> list[dict]:
        dataset = tokenize_records(records, tokenizer, *lengths, features, causal=causal)
        if grouped:
            groups = list(length_sorted_batches([len(labels) for labels in dataset["labels"]], size))
        else:
            order = list(range(len(dataset)))
            draw.shuffle(order)
            groups = [order[i : i + size] for i in range(0, len(order), size)]
        chosen = draw.sample(groups, min(len(groups), steps + warmup))
        return [{key: value.to(pick_device()) for key, value in collate([dataset[i] for i in group]).items()} for group in chosen]

    mle = task["mle"]
    training = batches(read_jsonl(train), mle["batch_size"], mle.get("group_by_length", False))
    control = ObjectiveSettings.from_config({**task["fine_tune"], **defaults("objective", loss="nll")})
    trainers = {
        "update_s": MleTrainer(
            model=model, args=training_arguments(mle["label_smoothing"]), data_collator=collate, processing_class=tokenizer
        ),
        "fine_tune_update_s": FineTuneTrainer(
            model=model, args=training_arguments(0.0), data_collator=collate, processing_class=tokenizer, helpers=HelperModels(control)
        ),
    }
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def trainer_update(trainer):
        """One update as the training jobs make it: the trainer's own step (its loss, its token statistics),
        gradient clipping, Adam."""
        trainer.current_gradient_accumulation_steps = 1  # set by train(); training_step reads it

        def update(batch: dict) -> None:
            model.train()
            trainer.training_step(model, batch)
            torch.nn.utils.clip_grad_norm_(model.parameters(), mle["max_grad_norm"])
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        return update

    def forward(batch: dict) -> None:
        model.eval()
        with torch.no_grad():
            model(**batch)

    generation = task["generation"]
    dev = batches(read_jsonl(valid), generation["batch_size"], False)
    beam_counts = {task["dev_search"].get("num_beams", 1)}
    for split in ("valid", "test"):
        for decoder, _ in evaluated_runs(config, analysis_settings(config), split):
            settings = config["decoders"][decoder]
            beam_counts.add(1 if settings["do_sample"] else settings.get("num_beams", 1))

    def decoder(beams: int):
        search = generation_config(model, generation, {"num_beams": beams})

        def decode(batch: dict) -> None:
            model.eval()
            with torch.no_grad():
                model.generate(**{k: v for k, v in batch.items() if k not in ("labels", "decoder_input_ids")}, generation_config=search)

        return decode

    entry = {
        "task": name,
        "architecture": architecture(task),
        "size": model_size(task),
        "tokens": tokens_per_example(task),
        "threads": threads,
        **{key: mean_seconds(trainer_update(trainer), training, warmup) for key, trainer in trainers.items()},
        "forward_s": mean_seconds(forward, training, warmup),
        # one untimed batch where the dev split has more than one (a small dev split may hold a single batch)
        "decode_s": {beams: mean_seconds(decoder(beams), dev, min(warmup, 1, len(dev) - 1)) for beams in sorted(beam_counts)},
    }
    # The training job's loop costs more per update than its step alone (batches collated on the fly, the
    # schedule, callbacks, logging): its own per-update time sets the MLE rate, and the fine-tuning rate is
    # scaled by the same ratio (its trainer shares that loop).
    batch = mle["batch_size"]
    loop = training_loop_seconds(task, train, valid, tokenizer_path, loop_updates) / batch
    if loop <= 0:
        raise SystemExit(f"task {name}: the longer training run took no longer than the shorter one (noise): raise --loop-updates")
    entry["loop_overhead"] = loop / entry["update_s"]
    entry["fine_tune_update_s"] *= entry["loop_overhead"]
    entry["update_s"] = loop
    if torch.cuda.is_available():
        entry["peak_memory_mb"] = round(torch.cuda.max_memory_allocated() / 2**20)
    print(
        f"{name}: update {entry['update_s'] * 1e3:.2f} ms/example, forward {entry['forward_s'] * 1e3:.2f} ms/example, "
        + ", ".join(f"beam {b} decode {s * 1e3:.2f} ms/example" for b, s in entry["decode_s"].items())
        + f" ({threads} threads)"
    )
    return {shape_key(task): {key: round(value, 7) if isinstance(value, float) else value for key, value in entry.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", action="append", default=[], help="an experiment's config, merged over config.yaml (repeatable)")
    parser.add_argument("--tasks", nargs="*", help="the tasks to measure (default: the experiment's)")
    parser.add_argument(
        "--output", type=Path, help="the profile file to write (or to add these tasks to; default: benchmarks/devices/<this device>.yaml)"
    )
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--loop-updates", type=int, nargs=2, default=(20, 120), help="updates of the two short training runs")
    parser.add_argument("--cores", type=int, default=None, help="the cores jobs get here (default: all of this machine's)")
    parser.add_argument("--start-repeats", type=int, default=3, help="starts timed for each of the four start figures (median)")
    parser.add_argument("--workdir", type=Path, default=Path.cwd(), help="where the workflow prepares the tasks' data (default: here)")
    args = parser.parse_args(argv)
    cores = args.cores or len(os.sched_getaffinity(0))
    config = validate_config(merged_config(REPO / "config.yaml", args.configfile))
    measured = {}
    for name in args.tasks or config["experiment"]["tasks"]:
        measured.update(measure_task(config, args.configfile, name, args.steps, args.warmup, cores, tuple(args.loop_updates), args.workdir))
    for entry in measured.values():
        entry["measured"] = f"{date.today().isoformat()} at commit {commit()}"
        entry["decode_s"] = {int(beams): round(seconds, 7) for beams, seconds in entry["decode_s"].items()}
    args.output = args.output or profile_file(device_name(cores))
    tasks = DeviceProfile.load(args.output).tasks if args.output.exists() else {}
    tasks.update(measured)
    set_threads(1)
    profile = DeviceProfile(
        device=device_name(cores),
        threads=cores,
        measured={
            "commit": commit(),
            "date": date.today().isoformat(),
            "command": "python -m benchmarks.device_profile " + " ".join(argv or sys.argv[1:]),
        },
        tasks=tasks,
        **start_figures(args.start_repeats),
    )
    write_text(args.output, profile.to_yaml())
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
