"""Decoding benchmark: length-grouped batches against batches in input order, on the same model and
inputs, measured side by side in one run.

    python -m benchmarks.decoding --model results/demo/models/demo/mle/seed1 --data results/demo/data/demo/test.jsonl \
        [--config config.yaml --task demo --beams 1 --rounds 3]

Each round decodes the whole file once each way (alternating which goes first); the figure is the median
over rounds after one warm-up round. Throughput counts the tokens of the outputs (EOS included).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch
import yaml

from gold_textgen.config.schema import validate_config
from gold_textgen.config.views import decoding_view, task_config
from gold_textgen.data.token_features import input_features
from gold_textgen.data.tokenization import load_tokenizer
from gold_textgen.evaluation.decoding import generate_texts, generation_config
from gold_textgen.models.transformer import load_pretrained_model
from gold_textgen.runtime.files import read_jsonl
from gold_textgen.runtime.model_process import pick_device, prepare_model_process


def run(model_dir: Path, data_path: Path, task: dict, rounds: int, num_beams: int) -> dict[str, float]:
    """Decode with the task's generation settings (config `tasks.<task>.generation`)."""
    batch_size = task["generation"]["batch_size"]
    tokenizer = load_tokenizer(model_dir)
    model = load_pretrained_model(model_dir).to(pick_device())
    records = read_jsonl(data_path)
    config = generation_config(model, task["generation"], {"num_beams": num_beams})
    times: dict[str, list[float]] = {"grouped": [], "unsorted": []}
    outputs: dict[str, list[str]] = {}
    for round_index in range(rounds + 1):
        names = ["grouped", "unsorted"] if round_index % 2 == 0 else ["unsorted", "grouped"]
        for name in names:
            start = time.perf_counter()
            outputs[name] = generate_texts(
                model,
                tokenizer,
                records,
                config,
                batch_size,
                task["max_source_length"],
                group_by_length=name == "grouped",
                features=input_features(task["model"]),
            )
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            if round_index > 0:  # round 0 warms up
                times[name].append(time.perf_counter() - start)
    tokens = {name: sum(len(ids) for ids in tokenizer(texts)["input_ids"]) for name, texts in outputs.items()}
    same = sum(a == b for a, b in zip(outputs["grouped"], outputs["unsorted"], strict=True))
    medians = {name: statistics.median(values) for name, values in times.items()}
    throughput = {name: tokens[name] / medians[name] for name in medians}
    print(f"{len(records)} inputs from {data_path}; batch size {batch_size}; beams {num_beams}; {rounds} timed rounds")
    print(f"device: {next(model.parameters()).device}, torch threads {torch.get_num_threads()}")
    for name in medians:
        print(f"{name:9s} median {medians[name]:7.2f} s  {throughput[name]:9.1f} output tokens/s")
    print(f"identical outputs: {same}/{len(records)}")
    print(f"ratio grouped / unsorted tokens/s = {throughput['grouped'] / throughput['unsorted']:.3f}")
    return throughput


# The project's default experiment, found from the package's source checkout (an editable install).
DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a trained model directory (results/<experiment>/models/...)")
    parser.add_argument("--data", type=Path, required=True, help="a split in the jsonl contract")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="experiment config (default: the project's config.yaml)")
    parser.add_argument("--task", default="demo")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--beams", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    for option, path in (("--model", args.model), ("--data", args.data), ("--config", args.config)):
        if not path.exists():
            parser.error(f"{option} {path}: no such file or directory")
    prepare_model_process(args.threads)  # as the decoding jobs run
    task = decoding_view(task_config(validate_config(yaml.safe_load(args.config.read_text())), args.task))
    run(args.model, args.data, task, args.rounds, args.beams)


if __name__ == "__main__":
    main()
