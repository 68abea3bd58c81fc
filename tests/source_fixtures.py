"""Small files in the exact formats of the public sources, written by the tests (the hubs are unreachable
here): Zhou et al.'s redistribute.zip, fairseq's IWSLT14 de-en.tgz, and hub dataset repositories."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pandas as pd

NQG_SPLITS = {"train": ("train", "train.txt"), "valid": ("dev", "dev.txt.shuffle.dev"), "test": ("test", "dev.txt.shuffle.test")}
# (sentence, BIO tags, question) triples; tokenised as in the release.
NQG_EXAMPLES = [
    (
        "some members of this community emigrated to the united states in the 1890s .",
        "O O O O O O O O O O O O B O",
        "when did some members emigrate ?",
    ),
    ("the amazon was split by the purus arch .", "O O O O O O B I O", "what split the amazon ?"),
    ("competition drives down wages .", "B O O O O", "what drives down wages ?"),
]


def nqg_zip(path: Path, examples=NQG_EXAMPLES, overrides: dict[tuple[str, str], str] | None = None) -> Path:
    """redistribute.zip with QG/{train,dev,test}/<prefix>.{source.txt,bio,target.txt}; `overrides` replaces a
    member's text, keyed by (split, part)."""
    overrides = overrides or {}
    with zipfile.ZipFile(path, "w") as archive:
        for split, (folder, prefix) in NQG_SPLITS.items():
            parts = {
                "source.txt": "\n".join(e[0] for e in examples) + "\n",
                "bio": "\n".join(e[1] for e in examples) + "\n",
                "target.txt": "\n".join(e[2] for e in examples) + "\n",
                "pos": "\n".join(" ".join("NN" for _ in e[0].split()) for e in examples) + "\n",
            }
            for part, text in parts.items():
                archive.writestr(f"redistribute/QG/{folder}/{prefix}.{part}", overrides.get((split, part), text))
    return path


IWSLT_TRAIN = [
    # (German, English) talk lines, with the metadata lines of a train.tags file in between.
    ("<url>http://www.ted.com/talks/a.html</url>", "<url>http://www.ted.com/talks/a.html</url>"),
    ("<keywords>talks, science</keywords>", "<keywords>talks, science</keywords>"),
    ("<talkid>1</talkid>", "<talkid>1</talkid>"),
    ("<title>Ein Titel</title>", "<title>A Title</title>"),
    ("Das ist ein Test, sagte sie.", "That's a test, she said."),
    ("Danke!", "Thank you very much, everybody, for coming here tonight to this talk!"),  # ratio > 1.5: dropped
    ("Wir haben 3.000 Bäume gepflanzt.", "We planted 3,000 trees."),
]


def iwslt_train_pairs(count: int) -> list[tuple[str, str]]:
    pairs = list(IWSLT_TRAIN)
    pairs += [(f"Satz Nummer {i} ist hier.", f"Sentence number {i} is here.") for i in range(count)]
    return pairs


def iwslt_tgz(path: Path, train_pairs: int = 30, bad_segment: bool = False, drop_member: str | None = None) -> Path:
    """de-en.tgz with de-en/train.tags.de-en.{de,en} and the five IWSLT14 TED xml sets."""
    members: dict[str, str] = {}
    pairs = iwslt_train_pairs(train_pairs)
    for index, lang in enumerate(("de", "en")):
        members[f"de-en/train.tags.de-en.{lang}"] = "\n".join(pair[index] for pair in pairs) + "\n"
    test_sets = ("IWSLT14.TED.dev2010", "IWSLT14.TEDX.dev2012", "IWSLT14.TED.tst2010", "IWSLT14.TED.tst2011", "IWSLT14.TED.tst2012")
    for number, name in enumerate(test_sets):
        for lang, sentence in (("de", f"Das ist Satz {number} , ja."), ("en", f"It\u2019s sentence {number}, yes.")):
            close = "" if bad_segment and number == 2 and lang == "en" else "</seg>"
            members[f"de-en/{name}.de-en.{lang}.xml"] = (
                '<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<doc docid="1">\n'
                f'<seg id="1"> {sentence} {close}\n<seg id="2">Noch einer {number}.</seg>\n</doc>\n</mteval>\n'
            )
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            if name == drop_member:
                continue
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def cnn_dailymail_repo(root: Path, rows: int = 4, bad_row: int | None = None) -> Path:
    """A directory in abisee/cnn_dailymail's layout: README.md with the configs, 3.0.0/<split>-*.parquet."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: 3.0.0\n  data_files:\n"
        "  - split: train\n    path: 3.0.0/train-*\n  - split: validation\n    path: 3.0.0/validation-*\n"
        "  - split: test\n    path: 3.0.0/test-*\n---\n# CNN/DailyMail (test copy)\n",
        encoding="utf-8",
    )
    for split in ("train", "validation", "test"):
        frame = pd.DataFrame(
            {
                "article": [f"(CNN) Story {i} of {split}. It goes on. A third sentence! And a fourth one." for i in range(rows)],
                "highlights": [f"Story {i} summary .\nSecond highlight {i} ." for i in range(rows)],
                "id": [f"{split}{i:04x}" for i in range(rows)],
            }
        )
        if bad_row is not None and split == "validation":
            frame.loc[bad_row, "highlights"] = "  "
        (root / "3.0.0").mkdir(exist_ok=True)
        frame.to_parquet(root / "3.0.0" / f"{split}-00000-of-00001.parquet", index=False)
    return root


def xsum_repo(root: Path, rows: int = 3) -> Path:
    """A directory in the layout of EdinburghNLP/xsum's parquet branch: default/xsum-<split>.parquet."""
    (root / "default").mkdir(parents=True, exist_ok=True)
    for split in ("train", "validation", "test"):
        frame = pd.DataFrame(
            {
                "document": [f"First line {i}.\nSecond line {i}.\nThird {i}.\nFourth {i}." for i in range(rows)],
                "summary": [f"One sentence about {i}." for i in range(rows)],
                "id": [str(30000000 + i) for i in range(rows)],
            }
        )
        frame.to_parquet(root / "default" / f"xsum-{split}.parquet", index=False)
    return root


def release_zip_of_folder(folder: Path, path: Path, member_folder: str = "redistribute/QG/dev") -> Path:
    """A redistribute.zip holding the files of `folder` (e.g. the NQG dev split as released) where the release
    keeps them, so that a test feeds the download rule from a local copy (a file URL) instead of the network."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.iterdir()):
            archive.write(file, f"{member_folder}/{file.name}")
    return path
