"""This project's NQG++ beside the implementation the paper's Table 1 numbers come from (clovaai/FocusSeq2Seq's
`Seq2Seq(model="NQG")`), side by side in one run: the MLE training step on the same batches, per batch shape
and thread count.

    git clone https://github.com/clovaai/FocusSeq2Seq /path/to/FocusSeq2Seq
    python -m benchmarks.reference_nqg --reference /path/to/FocusSeq2Seq [--shapes nqg nqg_real nqg_real_lengths]
        [--threads 1 2] [--steps 5] [--warmup 2] [--record docs/benchmarks.md]

With `--record` the table, with the commit and the machine it was measured on, replaces the one in the page's
reference-nqg block; without, it is printed only.

The reference is imported from its checkout as it is (nothing of it is copied here). Both models are built
at the same sizes: the paper's (20,000 words, embeddings 300, a bidirectional GRU encoder of 2 x 256, a
decoder of 512, attention 700, the four word features, the output layer tied to the embeddings) and
configs/nqg_real.yaml's (10,000 words, 128, 2 x 128, 256, attention 256; FocusSeq2Seq's `Seq2Seq` fixes the
attention at 700, so its decoder is built again with 256, as its own constructor builds it): the table
prints both parameter counts. The batches are benchmarks/standard_models.py's (random words: the time
depends on the shapes), each given to the reference in its own ids (PAD 0, EOS 3; the words keep theirs).

A step is each implementation's training step: forward, the loss, backward, gradients clipped to norm 5
and an Adam update; the reference's also clamps every weight to [-15, 15], as its train.py does after each
update. Its loss is train.py's (each question's mean token NLL, averaged over the batch); this project's
NQG++ loss is the token-mean cross-entropy of the Trainer. The losses are printed, not compared: the two
copy mechanisms differ (FocusSeq2Seq gives every source position an output slot of its own and its
targets copy only words outside the vocabulary; this project's copy mass goes to the word at each
position over the source-extended vocabulary: docs/results/standard-models.md), and so do the
initialisations' random draws, so equal weights would need a mapping of every parameter that this
benchmark does not make.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch

from benchmarks.page_blocks import markers, rewrite_block
from benchmarks.standard_models import RECURRENT, SHAPES, median_seconds, recurrent_model
from benchmarks.this_machine import commit, machine
from gold_textgen.models.transformer import count_parameters
from gold_textgen.runtime.model_process import set_threads

# The reference's sizes for each shape's model (its constructor's arguments; `attention` its decoder's).
REFERENCE_SIZES = {
    "nqg": dict(vocab_size=20000, word_embed_size=300, enc_hidden_size=512, dec_hidden_size=512, dropout_p=0.5, attention=700),
    "nqg_real": dict(vocab_size=10000, word_embed_size=128, enc_hidden_size=256, dec_hidden_size=256, dropout_p=0.3, attention=256),
}
REFERENCE_SIZES["nqg_real_lengths"] = REFERENCE_SIZES["nqg_real"]
CLIP_NORM = 5.0  # FocusSeq2Seq's configs.py `--clip`
PAD, EOS = 0, 3  # FocusSeq2Seq's ids ([PAD, UNK, SOS, EOS]); words keep theirs, both vocabularies put 4 specials first
BEGIN, END = markers("reference-nqg", "python -m benchmarks.reference_nqg")
HEADER = ["model (shape: batch x source words -> question words)", "parameters (this project / FocusSeq2Seq)", "threads"]
HEADER += ["FocusSeq2Seq step", "this project's step", "speed-up", "first loss (FocusSeq2Seq / this project)"]


def reference_model(checkout: Path, shape: str) -> torch.nn.Module:
    """FocusSeq2Seq's NQG++ at the shape's sizes, imported from `checkout`."""
    sys.path.insert(0, str(checkout))
    from layers.decoder import NQGDecoder  # the reference's own modules
    from models import Seq2Seq

    sizes = dict(REFERENCE_SIZES[shape])
    attention = sizes.pop("attention")
    torch.manual_seed(0)
    model = Seq2Seq(**sizes, rnn="GRU", model="NQG", feature_rich=True, tie=True, task="QG")
    if attention != 700:  # its constructor fixes 700: the decoder as that constructor builds it, at this size
        model.decoder = NQGDecoder(
            sizes["word_embed_size"],
            enc_hidden_size=sizes["enc_hidden_size"],
            dec_hidden_size=sizes["dec_hidden_size"],
            attention_size=attention,
            vocab_size=sizes["vocab_size"],
            dropout_p=sizes["dropout_p"],
            rnn="GRU",
            tie=True,
        )
        model.decoder.word_embed = model.word_embed
        model.decoder.readout.Wo.weight = model.word_embed.weight
    for parameter in model.parameters():  # its train.py's initialisation of NQG++ (this project's follows it)
        if parameter.dim() == 1:
            parameter.data.normal_(0, math.sqrt(6 / (1 + parameter.size(0))))
        else:
            torch.nn.init.xavier_normal_(parameter, math.sqrt(3))
    return model


def reference_batch(batch: dict, tokenizer_ids: dict[str, int]) -> dict:
    """The same batch in FocusSeq2Seq's inputs: its ids for padding and EOS, its feature vocabularies."""
    source = batch["input_ids"].clone()
    source[batch["attention_mask"] == 0] = PAD
    source[source == tokenizer_ids["eos"]] = EOS
    target = batch["labels"].clone()
    target[target == -100] = PAD
    target[target == tokenizer_ids["eos"]] = EOS
    features = {"answer_position_BIO_encoding": ("answer_tags", 4), "ner_encoding": ("ner_tags", 13)}
    features |= {"pos_encoding": ("pos_tags", 46), "case_encoding": ("case_tags", 3)}
    inputs = {name: batch[ours] % size for name, (ours, size) in features.items()}
    return {"source_WORD_encoding": source, "target_WORD_encoding": target, **inputs}


def reference_loss(model, inputs: dict) -> torch.Tensor:
    """FocusSeq2Seq's train.py loss: each question's mean token NLL, averaged over the batch."""
    log_p = model(inputs["source_WORD_encoding"], **{k: v for k, v in inputs.items() if k != "source_WORD_encoding"}, train=True)
    target = inputs["target_WORD_encoding"]
    nll = -log_p.gather(2, target.unsqueeze(2)).squeeze(2)
    nll = nll.masked_fill(target == PAD, 0)
    return (nll.sum(dim=1) / (target != PAD).float().sum(dim=1)).mean()


def training_step(model, loss, clamp: bool):
    """One update as each implementation's training loop makes it; returns the step and the loss it saw."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    seen = []

    def step() -> None:
        model.train()
        value = loss()
        value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if clamp:
            with torch.no_grad():
                for parameter in model.parameters():
                    parameter.clamp_(-15, 15)
        seen.append(value.item())

    return step, seen


def row(shape: str, threads: int, args) -> str:
    """The table row of one shape at one thread count: both steps timed alternately (twice each, the
    faster median kept), so that both see the same machine load."""
    set_threads(threads)
    _, ours, batch, _ = recurrent_model(shape)
    theirs = reference_model(args.reference, shape)
    inputs = reference_batch(batch, {"eos": ours.config.eos_token_id})
    our_step, our_losses = training_step(ours, lambda: ours(**batch).loss, clamp=False)
    their_step, their_losses = training_step(theirs, lambda: reference_loss(theirs, inputs), clamp=True)
    our_times, their_times = [], []
    for _ in range(2):
        our_times.append(median_seconds(our_step, args.steps, args.warmup))
        their_times.append(median_seconds(their_step, args.steps, args.warmup))
    ours_s, theirs_s = min(our_times), min(their_times)
    batch_size, sources, targets = SHAPES[shape]
    words = lambda count: f"{count[0]}-{count[1]}" if isinstance(count, tuple) else str(count)  # noqa: E731
    text = (
        f"| {RECURRENT[shape][0]} ({shape}: {batch_size} x {words(sources)} words -> {words(targets)}) | "
        f"{count_parameters(ours):,} / {count_parameters(theirs):,} | {threads} | {1000 * theirs_s:.1f} ms | "
        f"{1000 * ours_s:.1f} ms | {theirs_s / ours_s:.2f}x | {their_losses[0]:.3f} / {our_losses[0]:.3f} |"
    )
    print(text, file=sys.stderr, flush=True)
    return text


def recorded_text(rows: list[str], args, at_commit: str, on_machine: str) -> str:
    """The table under a line that says where, at which commit and with which command it was measured."""
    command = f"python -m benchmarks.reference_nqg --reference <FocusSeq2Seq checkout> --shapes {' '.join(args.shapes)}"
    command += f" --threads {' '.join(map(str, args.threads))} --steps {args.steps} --warmup {args.warmup}"
    where = f"Commit {at_commit}, {on_machine}, `{command}`: "
    where += f"the median of {args.steps} steps after {args.warmup}, the faster of two rounds."
    return "\n".join([where, "", "| " + " | ".join(HEADER) + " |", "|---" * len(HEADER) + "|", *rows])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="a checkout of clovaai/FocusSeq2Seq")
    parser.add_argument("--shapes", nargs="+", default=["nqg", "nqg_real", "nqg_real_lengths"], choices=sorted(REFERENCE_SIZES))
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--record", type=Path, help="the page whose reference-nqg block to rewrite (docs/benchmarks.md)")
    args = parser.parse_args(argv)
    if not (args.reference / "models.py").is_file() or not (args.reference / "layers" / "decoder.py").is_file():
        parser.error(f"--reference {args.reference}: not a FocusSeq2Seq checkout (no models.py and layers/decoder.py)")
    rows = [row(shape, threads, args) for shape in args.shapes for threads in args.threads]
    text = recorded_text(rows, args, commit(), machine())
    print(text)
    if args.record:
        rewrite_block(args.record, BEGIN, END, text)


if __name__ == "__main__":
    main()
