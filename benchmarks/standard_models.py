"""The paper's standard models at paper size beside the paper-sized transformer: MLE step time and decoding
throughput, measured side by side in one run on the same batch shapes.

    python -m benchmarks.standard_models [--steps 5] [--warmup 2] [--threads 2] [--shapes nqg nqg_real cnndm]
                                         [--before REV [--rounds 3]]

Models: NQG++ (20,000 words, the four NQG features: 10,372,565 parameters), the pointer-generator (50,000
words, coverage: 19,965,705) and the IWSLT14 transformer (`transformer_iwslt_de_en`: 6+6 layers, d 512,
FFN 1024, a 10,000-word joint vocabulary), each on its own task's batch shape: NQG (32 sentences of 30
words, questions of 12) for NQG++, CNN/DM (16 articles of 400 words, summaries of 60) for the
pointer-generator, and both shapes for the transformer. Words are drawn at random (the timing depends on
the shapes, not on the words). A step is forward, backward, the token statistics of the training log and an
Adam update, as the MLE job runs them; decoding is greedy, every
output forced to its full length (min length = max length), so that every model emits the same tokens.
`nqg_real`: configs/nqg_real.yaml's scaled NQG++ (10,000 words) on NQG's batch shape; `nqg_real_lengths`: the
same model on batches whose lengths vary as NQG's do (sources of 10-60 words and questions of 4-21, drawn
uniformly: NQG's means, 34 and 12, and about the longest of a batch of 32), so that each is padded to its
longest, as training pads it. Each model's line also gives the matrix products' share of its step (torch's
profiler) and, on a CPU, their rate beside that of one 1024x1024 product on the same threads: the share
no rewrite of the code around them removes, and how far they are from this machine's best.

`--before REV` also times the recurrent models' MLE step with the package as it was at commit REV (its
`src/`, taken with `git archive`) against the working tree's, in child processes that alternate (REV, now
with malloc as it is, now as the model jobs run) for `--rounds` rounds, so that every side sees the same
machine load; it prints the median of each side and its speed-up over REV.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import torch
from transformers import DataCollatorForSeq2Seq

from gold_textgen.config.schema import defaults
from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.data.token_features import FEATURE_TAGS, feature_sizes
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.evaluation.decoding import generation_config
from gold_textgen.models.transformer import count_parameters, initial_model
from gold_textgen.runtime.model_process import pick_device, set_threads

try:
    from gold_textgen.training.token_statistics import TokenStatistics
except ImportError:  # a --before revision's package, from before the training log had token statistics
    TokenStatistics = None
try:
    from gold_textgen.runtime.allocator import reuse_freed_memory
except ImportError:  # a --before revision's package, from before the model jobs set it
    reuse_freed_memory = None
try:
    from gold_textgen.models.input_contract import WITHOUT_TABLE, reads_labels_cheaply
except ImportError:  # a --before revision's package, whose MLE step built the [B, T, V] table
    WITHOUT_TABLE, reads_labels_cheaply = {}, lambda model: False

SHAPES = {"nqg": (32, 30, 12), "cnndm": (16, 400, 60)}  # batch, source words, target words (or a range of them)
SHAPES["nqg_real"] = SHAPES["nqg"]  # configs/nqg_real.yaml's scaled NQG++ on NQG's batches
SHAPES["nqg_real_lengths"] = (32, (10, 60), (4, 21))  # the same on lengths that vary as NQG's do
FEATURES = ["answer", "case", "pos", "ner"]
RECURRENT = {
    "nqg": ("NQG++", dict(architecture="nqg_pp", features=FEATURES, dropout=0.5), 20000, 100),
    "cnndm": ("pointer-generator", dict(architecture="pointer_generator", coverage=True, coverage_loss_weight=1.0), 50000, 400),
    "nqg_real": (
        "NQG++ (nqg_real size)",
        dict(
            architecture="nqg_pp",
            features=FEATURES,
            dropout=0.3,
            embedding_dim=128,
            encoder_hidden=256,
            decoder_hidden=256,
            attention_dim=256,
        ),
        10000,
        100,
    ),
}
RECURRENT["nqg_real_lengths"] = RECURRENT["nqg_real"]
TRANSFORMER = dict(architecture="transformer", d_model=512, encoder_layers=6, decoder_layers=6, attention_heads=4, ffn_dim=1024)


def word_tokenizer(words: int, copy_slots: int):
    """A word-level tokenizer of exactly `words` ids (4 specials + words w0, w1, ...) plus `copy_slots`."""
    return train_tokenizer([" ".join(f"w{i}" for i in range(words - 4))], vocab_size=words, copy_slots=copy_slots)


def longest(words: int | tuple[int, int]) -> int:
    return words[1] if isinstance(words, tuple) else words


def random_batch(tokenizer, shape: str, vocabulary: int, features: list[str], model, seed: int) -> dict:
    batch_size, source_words, target_words = SHAPES[shape]
    generator = torch.Generator().manual_seed(seed)

    def length(words: int | tuple[int, int]) -> int:
        return int(torch.randint(words[0], words[1] + 1, (1,), generator=generator)) if isinstance(words, tuple) else words

    def text(length: int) -> str:
        return " ".join(f"w{i}" for i in torch.randint(0, vocabulary - 4, (length,), generator=generator).tolist())

    records = []
    for index in range(batch_size):
        source = text(length(source_words))
        tags = {name: [FEATURE_TAGS[name][0]] * len(source.split()) for name in features}
        records.append({"id": index, "source": source, "target": text(length(target_words)), "token_features": tags})
    dataset = tokenize_records(records, tokenizer, longest(source_words) + 1, longest(target_words) + 1, features)
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))(list(dataset))
    return {key: value.to(pick_device()) for key, value in batch.items()}


def synchronise() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def median_seconds(action, steps: int, warmup: int) -> float:
    times = []
    for step in range(warmup + steps):
        synchronise()
        start = time.perf_counter()
        action()
        synchronise()
        if step >= warmup:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


MATRIX_PRODUCTS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


@dataclass(frozen=True)
class MatrixProducts:
    """What matrix_products measures of a step."""

    share: float  # of the step's CPU time (torch's profiler)
    flops: float  # per step: 2 m k n for each [m, k] x [k, n] product, batched ones counted per batch
    rate: float  # FLOP/s of the step's products
    square_rate: float  # FLOP/s of one [size, size] x [size, size] product, beside them
    size: int


def matrix_products(action, steps: int = 3, size: int = 1024) -> MatrixProducts:
    """The matrix products of `action` under torch's profiler: the arithmetic that no rewrite of the
    surrounding code removes, how fast it runs, and what this machine's matrix library reaches on a float32
    product large enough to run at its best. The large product runs before each profiled step, so that both
    rates see the same moment of a shared machine."""
    left, right = torch.randn(size, size, device=pick_device()), torch.randn(size, size, device=pick_device())
    square_seconds, product_seconds, all_seconds, flops = [], 0.0, 0.0, 0.0
    for _ in range(steps):
        square_seconds.append(median_seconds(lambda: left @ right, steps=3, warmup=1))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_flops=True) as profiler:
            action()
        events = profiler.key_averages()
        products = [event for event in events if event.key in MATRIX_PRODUCTS]
        product_seconds += sum(event.self_cpu_time_total for event in products) / 1e6
        all_seconds += sum(event.self_cpu_time_total for event in events) / 1e6
        flops += sum(event.flops for event in products)
    square_rate = 2 * size**3 / statistics.median(square_seconds)
    return MatrixProducts(product_seconds / all_seconds, flops / steps, flops / product_seconds, square_rate, size)


def measure(name: str, model, batch: dict, target_words: int, steps: int, warmup: int, step_only: bool = False) -> dict:
    """The MLE step's median seconds; unless `step_only`, also greedy decoding's tokens a second and the
    matrix products' share of the step."""
    model.to(pick_device())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    # As MleTrainer.compute_loss calls the model: a recurrent copy model without the [B, T, V] table where
    # the package has that path, the token statistics of the log from what the forward gives.
    forward_inputs = {**batch, **WITHOUT_TABLE} if reads_labels_cheaply(model) else batch
    statistics = TokenStatistics() if TokenStatistics is not None else None

    def mle_step() -> None:
        model.train()
        outputs = model(**forward_inputs)
        outputs.loss.backward()
        if hasattr(statistics, "record_outputs"):
            statistics.record_outputs(outputs, batch["labels"])
        elif statistics is not None:
            statistics.record_tokens(outputs.logits, batch["labels"], normalise=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    lengths = {"max_new_tokens": target_words, "min_new_tokens": target_words + 1, "no_repeat_ngram_size": 0}
    config = generation_config(model, lengths, {"num_beams": 1})
    encoder_inputs = {key: value for key, value in batch.items() if key not in ("labels", "decoder_input_ids")}

    def decode() -> None:
        model.eval()
        with torch.no_grad():
            model.generate(**encoder_inputs, generation_config=config)

    step = median_seconds(mle_step, steps, warmup)
    decoding = None if step_only else median_seconds(decode, steps, warmup)
    tokens = batch["labels"].shape[0] * (target_words + 1)
    return {
        "model": name,
        "parameters": count_parameters(model),
        "step_s": step,
        "matrix_products": None if step_only else matrix_products(mle_step),
        "decode_tokens_per_s": None if step_only else tokens / decoding,
    }


def recurrent_model(shape: str):
    """(label, model, batch, target words) of the shape's recurrent model, initialised with seed 0."""
    label, settings, words, slots = RECURRENT[shape]
    torch.manual_seed(0)
    tokenizer = word_tokenizer(words, slots)
    features = settings.get("features", [])
    model = initial_model(defaults("model", kind="scratch", **settings), tokenizer, feature_sizes(features))
    return label, model, random_batch(tokenizer, shape, words, features, model, 0), longest(SHAPES[shape][2])


def transformer_model(shape: str):
    torch.manual_seed(0)
    tokenizer = word_tokenizer(10000, 0)
    model = initial_model(defaults("model", kind="scratch", **TRANSFORMER), tokenizer)
    return "transformer (IWSLT14 size)", model, random_batch(tokenizer, shape, 10000, [], model, 0), longest(SHAPES[shape][2])


def package_at(revision: str, folder: Path) -> Path:
    """The `src/` folder of the repository at `revision`, unpacked under `folder`."""
    archive = subprocess.run(["git", "archive", revision, "src"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def child_step_seconds(source: Path, shape: str, args, system_allocator: bool = False) -> float:
    """The median MLE step of the shape's recurrent model in a fresh interpreter importing `source`."""
    command = [sys.executable, "-m", "benchmarks.standard_models", "--mle-step-only", shape]
    command += ["--system-allocator"] if system_allocator else []
    command += ["--steps", str(args.steps), "--warmup", str(args.warmup)] + (["--threads", str(args.threads)] if args.threads else [])
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(Path.cwd())])}
    output = subprocess.run(command, check=True, capture_output=True, text=True, env=environment).stdout
    return json.loads(output.strip().splitlines()[-1])["step_s"]


def before_and_after(shape: str, revision: str, args) -> None:
    """Alternating child processes: the MLE step with the package at `revision`, then with the working
    tree's, once with malloc left as it is and once as the model jobs set it (allocator.reuse_freed_memory)."""
    with tempfile.TemporaryDirectory() as folder:
        sides = {
            f"at {revision}": (package_at(revision, Path(folder)), False),
            "now, malloc as it is": (Path.cwd() / "src", True),
            "now": (Path.cwd() / "src", False),
        }
        times = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, (source, system_allocator) in sides.items():
                times[side].append(child_step_seconds(source, shape, args, system_allocator))
    medians = {side: statistics.median(values) for side, values in times.items()}
    before = medians[f"at {revision}"]
    print(f"{RECURRENT[shape][0]} MLE step, medians of {args.rounds} alternating processes (each the median of its steps):")
    for side, values in times.items():
        each = ", ".join(f"{value * 1000:.1f}" for value in values)
        print(f"  {side:24s} {medians[side] * 1000:8.1f} ms  ({before / medians[side]:.2f}x; rounds: {each} ms)")


def report(results: list[dict]) -> None:
    """One line per model; on a CPU, where the profiler's times are the arithmetic's, the step's matrix
    products at their rate beside a large product's (matrix_products)."""
    reference = results[-1]
    for row in results:
        products, rate = row["matrix_products"], ""
        if pick_device().type == "cpu":
            large = f"a {products.size}x{products.size} product's {products.square_rate / 1e9:.1f}"
            rate = f" at {products.rate / 1e9:.1f} GFLOP/s ({products.rate / products.square_rate:.2f} of {large})"
        print(
            f"{row['model']:28s} {row['parameters']:>11,} parameters  MLE step {row['step_s'] * 1000:8.1f} ms "
            f"({row['step_s'] / reference['step_s']:.2f} x transformer)  greedy decoding {row['decode_tokens_per_s']:9.1f} tokens/s "
            f"({row['decode_tokens_per_s'] / reference['decode_tokens_per_s']:.2f} x)  "
            f"matrix products {products.share:.0%} of the step{rate}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=sorted(SHAPES, reverse=True))
    parser.add_argument("--before", metavar="REV", help="also time the recurrent MLE step at this commit, alternating")
    parser.add_argument("--rounds", type=int, default=3, help="alternating processes per side with --before")
    parser.add_argument("--system-allocator", action="store_true", help="leave malloc as it is (see allocator.reuse_freed_memory)")
    parser.add_argument("--mle-step-only", metavar="SHAPE", help=argparse.SUPPRESS)  # a child of --before
    args = parser.parse_args()
    if args.threads:
        set_threads(args.threads)
    if not args.system_allocator and reuse_freed_memory is not None:
        reuse_freed_memory()  # as the model jobs run
    if args.mle_step_only:
        label, model, batch, target_words = recurrent_model(args.mle_step_only)
        print(json.dumps(measure(label, model, batch, target_words, args.steps, args.warmup, step_only=True)))
        return
    print(f"device {pick_device()}, torch threads {torch.get_num_threads()}; median of {args.steps} after {args.warmup} warm-up")
    for shape in args.shapes:
        batch_size, source_words, target_words = SHAPES[shape]
        source, target = ("-".join(map(str, w)) if isinstance(w, tuple) else w for w in (source_words, target_words))
        print(f"\n{shape} shape: batch {batch_size}, sources of {source} words, targets of {target} (+ EOS)")
        results = []
        for build in (recurrent_model, transformer_model):
            label, model, batch, target_words = build(shape)
            results.append(measure(label, model, batch, target_words, args.steps, args.warmup))
            del model
        report(results)
        if args.before:
            before_and_after(shape, args.before, args)


if __name__ == "__main__":
    main()
