"""An example corpus in the layout configs/local_example.yaml reads: line-aligned `.src`/`.tgt` files per
split, written from the demo's synthetic translation language (gold_textgen.data.demo_task), so that the
own-data recipes can be tried, timed and tested on a fresh clone with no data of one's own and no network.

    gold-textgen example-corpus data/my_corpus [--train 2000 --valid 200 --test 200 --seed 0]

The language is the larger demo of configs/objectives.yaml (100 source words, 4-15 words a sentence; the
schema's defaults otherwise: a share of the training references from a sloppy annotator, clean dev and
test references), so it tests what GOLD is for.
"""

from __future__ import annotations

from pathlib import Path

from ..config.schema import defaults
from ..runtime.files import write_text
from .demo_task import DemoTaskSpec, build_lexicon, generate_split

SIDES = {"source": ".src", "target": ".tgt"}
LANGUAGE = {"vocab_size": 100, "min_length": 4, "max_length": 15}  # configs/objectives.yaml's demo language


def write_example_corpus(directory: Path, train: int, valid: int, test: int, seed: int = 0) -> dict[str, int]:
    """Write `directory`/{train,valid,test}.src/.tgt (each file whole or not at all); returns the pairs per
    split."""
    source = defaults("synthetic_source", kind="synthetic", seed=seed, num_train=train, num_valid=valid, num_test=test, **LANGUAGE)
    spec = DemoTaskSpec.from_config(source)
    lexicon = build_lexicon(spec)
    sizes = {}
    for split in ("train", "valid", "test"):
        records = generate_split(spec, split, lexicon)
        for field, suffix in SIDES.items():
            write_text(directory / f"{split}{suffix}", "".join(record[field] + "\n" for record in records))
        sizes[split] = len(records)
    return sizes
