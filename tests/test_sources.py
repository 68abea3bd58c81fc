"""The public-source readers on small files in each source's exact format (made by source_fixtures.py)."""

import hashlib
import zipfile
from pathlib import Path

import pytest
from source_fixtures import NQG_EXAMPLES, cnn_dailymail_repo, iwslt_tgz, nqg_zip, xsum_repo

from gold_textgen.config.schema import load_schema, validate_config
from gold_textgen.data.prepare import prepare_dataset, size_warnings
from gold_textgen.data.records import SPLITS, DataFormatError
from gold_textgen.data.sources import ARCHIVE_KINDS, HUB_KINDS, iwslt14, load_source_splits
from gold_textgen.data.sources.download import DownloadError, archive_problem, fetch
from gold_textgen.data.sources.hub import HubLoadError
from gold_textgen.data.sources.nqg import mark_answer, release_tokens
from gold_textgen.data.token_features import FEATURE_TAGS


@pytest.fixture(autouse=True)
def private_datasets_cache(tmp_path, monkeypatch):
    """Each test gets its own datasets cache: fixture repositories written within the same second could
    otherwise share a cache entry."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf_cache")


def resolved(source: dict) -> dict:
    """The source with the schema's defaults filled in, as the workflow hands it over."""
    config = {
        "experiment": {"tasks": ["t"], "seeds": [1]},
        "tasks": {"t": {"source": source, "model": {"kind": "pretrained", "name_or_path": "x"}}},
        "decoders": {"greedy": {}},
    }
    return validate_config(config)["tasks"]["t"]["source"]


# --- NQG (Zhou et al. 2017, redistribute.zip) -------------------------------------------------------------


def nqg_source(**extra):
    return resolved({"kind": "nqg_zhou2017", "url": "file:///unused", **extra})


FIRST_TAGS = "O O O O O O O O O O O O B O"  # tags of the first fixture sentence


def test_answer_spans_are_marked():
    words = ["a", "b", "c", "d", "e"]
    assert mark_answer(words, ["O", "B", "I", "O", "O"], ("<hl>", "<hl>"), "f:1") == ("a <hl> b c <hl> d e", "b c")
    assert mark_answer(words, ["B", "O", "O", "B", "I"], ("[", "]"), "f:1") == ("[ a ] b c [ d e ]", "a d e")
    assert mark_answer(words, ["O", "I", "I", "O", "O"], ("[", "]"), "f:1")[0] == "a [ b c ] d e"  # I without B opens a span


def test_nqg_archive_gives_marked_sentences_and_questions(tmp_path):
    splits = load_source_splits(nqg_source(), SPLITS, archive=nqg_zip(tmp_path / "redistribute.zip"))
    assert [len(splits[s]) for s in SPLITS] == [3, 3, 3]
    first = splits["test"][0]
    assert first["source"].endswith("in the <hl> 1890s <hl> .")
    assert first["target"] == "when did some members emigrate ?"
    assert first["answer"] == "1890s" and first["id"] == "test-1"


def test_nqg_long_training_pairs_are_dropped_like_focusseq2seq(tmp_path):
    splits = load_source_splits(nqg_source(max_train_words=6), SPLITS, archive=nqg_zip(tmp_path / "r.zip"))
    assert [r["target"] for r in splits["train"]] == ["what drives down wages ?"]
    assert len(splits["test"]) == 3  # only training pairs are filtered


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ((("valid", "bio"), f"{FIRST_TAGS}\nO O B\nB O O O O\n"), r"QG/dev/dev\.txt\.shuffle\.dev\.bio:2: 9 words but 3 BIO tags"),
        ((("test", "bio"), f"{FIRST_TAGS}\nO O O O O O X I O\nB O O O O\n"), r"dev\.txt\.shuffle\.test\.bio:2: unknown BIO tag 'X'"),
        ((("train", "bio"), "O O O O O O O O O O O O O O\nO O O O O O B I O\nB O O O O\n"), r"train\.txt\.bio:1: no answer span"),
        ((("train", "target.txt"), "q1 ?\nq2 ?\n"), r"train\.txt\.target\.txt:3: 2 lines, but .*train\.txt\.source\.txt has 3"),
        ((("test", "target.txt"), "q1 ?\n\nq3 ?\n"), r"dev\.txt\.shuffle\.test\.target\.txt:2: empty target"),
        ((("train", "source.txt"), b"caf\xe9 .\n"), r"train\.txt\.source\.txt:1: not valid UTF-8"),
    ],
)
def test_nqg_malformed_records_name_archive_member_and_line(tmp_path, override, problem):
    archive = nqg_zip(tmp_path / "r.zip", overrides={override[0]: override[1]})
    with pytest.raises(DataFormatError, match=problem):
        load_source_splits(nqg_source(), SPLITS, archive=archive)


def test_a_file_that_is_no_archive_says_so(tmp_path):
    page = tmp_path / "r.zip"
    page.write_text("<html>rate limited</html>")
    with pytest.raises(DataFormatError, match="neither a zip nor a tar archive"):
        load_source_splits(nqg_source(), SPLITS, archive=page)


# --- IWSLT14 De-En (fairseq's prepare-iwslt14.sh) ---------------------------------------------------------


def iwslt_source():
    return resolved({"kind": "iwslt14_fairseq", "url": "file:///unused"})


def test_clean_corpus_rules():
    assert iwslt14.keep_pair("a b c", "x y", 1, 175, 1.5)
    assert not iwslt14.keep_pair("a b c d", "x y", 1, 175, 1.5)  # ratio 2 > 1.5
    assert not iwslt14.keep_pair(" ".join("a" * 176), " ".join("b" * 176), 1, 175, 1.5)  # too long
    assert not iwslt14.keep_pair("", "x", 1, 175, 1.5)
    assert not iwslt14.keep_pair("a" * 1001, "x", 1, 175, 1.5)  # a word longer than 1000 characters
    assert iwslt14.squeeze("  a   b | c ") == "a b c"


def test_iwslt_archive_is_prepared_like_fairseq(tmp_path):
    splits = load_source_splits(iwslt_source(), SPLITS, archive=iwslt_tgz(tmp_path / "de-en.tgz", train_pairs=60))
    train_and_valid = splits["train"] + splits["valid"]
    sources = {r["source"] for r in train_and_valid}
    # metadata lines dropped, <title> tags removed, Moses tokens with escaping, lowercased
    assert not any("<" in s or "url" in s for s in sources)
    assert "ein titel" in sources
    assert any(r["target"] == "that &apos;s a test , she said ." for r in train_and_valid)
    assert "wir haben 3.000 bäume gepflanzt ." in sources
    assert not any(r["source"] == "danke !" for r in train_and_valid)  # dropped by the length ratio
    # 3 kept talk lines + 60 numbered ones = 63 pairs: every 23rd (23rd, 46th) is a dev pair
    assert len(train_and_valid) == 63 and [r["id"] for r in splits["valid"]] == ["valid-23", "valid-46"]
    # test = 5 sets x 2 segments, in fairseq's order, with the curly apostrophe straightened
    assert len(splits["test"]) == 10
    assert splits["test"][0]["target"] == "it &apos;s sentence 0 , yes ."
    assert splits["test"][1]["source"] == "noch einer 0 ."


def test_iwslt_malformed_segment_names_member_and_line(tmp_path):
    with pytest.raises(DataFormatError, match=r"IWSLT14\.TED\.tst2010\.de-en\.en\.xml:4: <seg> without a closing </seg>"):
        load_source_splits(iwslt_source(), SPLITS, archive=iwslt_tgz(tmp_path / "d.tgz", bad_segment=True))


def test_iwslt_missing_member_is_named(tmp_path):
    archive = iwslt_tgz(tmp_path / "d.tgz", drop_member="de-en/IWSLT14.TED.tst2012.de-en.de.xml")
    with pytest.raises(DataFormatError, match=r"expected one member named IWSLT14\.TED\.tst2012\.de-en\.de\.xml \(found none\)"):
        load_source_splits(iwslt_source(), SPLITS, archive=archive)


# --- Hub datasets (CNN/DailyMail 3.0.0, XSum) -------------------------------------------------------------


def test_cnn_dailymail_layout_loads_through_datasets(tmp_path):
    repo = cnn_dailymail_repo(tmp_path / "cnn_dailymail")
    source = resolved({"kind": "huggingface", "path": str(repo), "name": "3.0.0", "source_field": "article", "target_field": "highlights"})
    splits = load_source_splits(source, SPLITS)
    assert [len(splits[s]) for s in SPLITS] == [4, 4, 4]
    record = splits["valid"][1]
    assert record["id"] == "validation0001" and record["target"] == "Story 1 summary .\nSecond highlight 1 ."
    assert record["source"].startswith("(CNN) Story 1 of validation.")


def test_xsum_parquet_files_load_through_datasets(tmp_path):
    repo = xsum_repo(tmp_path / "xsum")
    files = {"train": "default/xsum-train.parquet", "validation": "default/xsum-validation.parquet", "test": "default/xsum-test.parquet"}
    source = resolved(
        {"kind": "huggingface", "path": str(repo), "data_files": files, "source_field": "document", "target_field": "summary"}
    )
    splits = load_source_splits(source, SPLITS)
    document = "First line 2.\nSecond line 2.\nThird 2.\nFourth 2."
    assert splits["test"][2] == {"id": "30000002", "source": document, "target": "One sentence about 2."}


def test_hub_row_with_empty_summary_is_named(tmp_path):
    repo = cnn_dailymail_repo(tmp_path / "cnn_dailymail", bad_row=2)
    source = resolved({"kind": "huggingface", "path": str(repo), "name": "3.0.0", "source_field": "article", "target_field": "highlights"})
    with pytest.raises(DataFormatError, match=r"cnn_dailymail, config 3\.0\.0 split valid row 2 \(id validation0002\): empty target"):
        load_source_splits(source, SPLITS)


def test_unreachable_hub_dataset_says_what_to_check(tmp_path):
    source = resolved({"kind": "huggingface", "path": str(tmp_path / "nowhere"), "name": "3.0.0"})
    with pytest.raises(HubLoadError, match=r"could not load split 'train' of .*nowhere, config 3\.0\.0.*HF_DATASETS_OFFLINE"):
        load_source_splits(source, SPLITS)


# --- Download, checksums, split sizes ---------------------------------------------------------------------


def test_fetch_verifies_the_checksum_and_leaves_nothing_on_mismatch(tmp_path):
    original = nqg_zip(tmp_path / "redistribute.zip")
    sha256 = hashlib.sha256(original.read_bytes()).hexdigest()
    target = tmp_path / "downloads" / "source_archive"
    fetch(original.as_uri(), target, f"sha256:{sha256}")
    assert target.read_bytes() == original.read_bytes()
    bad = tmp_path / "downloads" / "bad"
    with pytest.raises(DownloadError, match=r"sha256 [0-9a-f]+ does not match the pinned 0000"):
        fetch(original.as_uri(), bad, "sha256:0000")
    # no partial file; the good one's origin is recorded beside it
    assert not bad.exists() and sorted(p.name for p in bad.parent.iterdir()) == ["source_archive", "source_archive.origin.json"]


def test_an_archive_on_disk_is_checked_against_the_configured_url_and_checksum(tmp_path):
    """Neither setting is in a job's identity (pinning the checksum must not retrain), so the workflow asks
    archive_problem when it starts."""
    original = nqg_zip(tmp_path / "redistribute.zip")
    sha256 = hashlib.sha256(original.read_bytes()).hexdigest()
    target = tmp_path / "downloads" / "source_archive"
    assert archive_problem(target, original.as_uri(), None) is None  # nothing downloaded yet
    fetch(original.as_uri(), target)
    assert archive_problem(target, original.as_uri(), None) is None
    assert archive_problem(target, original.as_uri(), f"sha256:{sha256}") is None  # pinned after the fact
    assert "not the pinned 00ff" in archive_problem(target, original.as_uri(), "sha256:00ff")
    moved = archive_problem(target, "https://example.org/other.zip", None)
    assert "was downloaded from file://" in moved and "config now names https://example.org/other.zip" in moved
    assert archive_problem(target, "https://example.org/mirror.zip", f"sha256:{sha256}") is None  # same bytes


def test_failed_download_says_what_to_do(tmp_path):
    with pytest.raises(DownloadError, match=r"could not download file:///.*missing\.zip .*place it at"):
        fetch((tmp_path / "missing.zip").as_uri(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_split_sizes_are_checked_against_the_paper(tmp_path, capsys):
    source = nqg_source(expected_sizes={"train": 86229, "valid": 3, "test": 8919})
    outputs = {split: tmp_path / f"{split}.jsonl" for split in SPLITS}
    sizes = prepare_dataset(source, outputs, archive=nqg_zip(tmp_path / "r.zip"), task="nqg")
    assert sizes == {"train": 3, "valid": 3, "test": 3}
    assert size_warnings("nqg", sizes, source["expected_sizes"]) == [
        "task nqg, split train: 3 examples, but the paper reports 86229 (-86226); results may not be comparable",
        "task nqg, split test: 3 examples, but the paper reports 8919 (-8916); results may not be comparable",
    ]


def test_the_schema_accepts_exactly_the_source_kinds_the_readers_know():
    source = load_schema()["$defs"]["task"]["properties"]["source"]
    kinds = {branch["if"]["properties"]["kind"]["const"] for branch in source["allOf"]}
    assert kinds == set(source["properties"]["kind"]["enum"]) == {"synthetic", "local", *HUB_KINDS, *ARCHIVE_KINDS}


REAL_NQG_DEV = Path(__file__).resolve().parents[2] / "shared" / "real" / "nqg_zhou2017_dev"


@pytest.mark.skipif(not REAL_NQG_DEV.is_dir(), reason=f"the real NQG dev split is not at {REAL_NQG_DEV} (shared data folder)")
def test_the_nqg_reader_reads_the_real_dev_split_as_released(tmp_path):
    """Zhou et al.'s dev files byte for byte (CRLF line ends, the target file LF) in the release's layout."""
    with zipfile.ZipFile(tmp_path / "redistribute.zip", "w") as archive:
        for path in sorted(REAL_NQG_DEV.iterdir()):
            archive.write(path, f"redistribute/QG/dev/{path.name}")
    records = load_source_splits(nqg_source(), ["valid"], archive=tmp_path / "redistribute.zip")["valid"]
    lines = (REAL_NQG_DEV / "dev.txt.shuffle.dev.source.txt").read_bytes().count(b"\n")
    assert len(records) == lines == 8965
    assert not any("\r" in r["source"] or "\r" in r["target"] for r in records)
    assert all(r["source"].count("<hl>") >= 2 for r in records)  # every sentence has its answer span marked
    assert len({r["id"] for r in records}) == len(records)


@pytest.mark.skipif(not REAL_NQG_DEV.is_dir(), reason=f"the real NQG dev split is not at {REAL_NQG_DEV} (shared data folder)")
def test_the_real_dev_split_gives_nqg_pp_its_word_features(tmp_path):
    """NQG++'s input: the unmarked sentence, and per word its answer BIO, case, POS and NER tag, every tag
    one the models' fixed inventories know."""
    with zipfile.ZipFile(tmp_path / "redistribute.zip", "w") as archive:
        for path in sorted(REAL_NQG_DEV.iterdir()):
            archive.write(path, f"redistribute/QG/dev/{path.name}")
    source = nqg_source(answer_markers=None, token_features=True)
    records = load_source_splits(source, ["valid"], archive=tmp_path / "redistribute.zip")["valid"]
    assert len(records) == 8965 and not any("<hl>" in r["source"] for r in records)
    for record in records:
        words = release_tokens(record["source"])
        assert sorted(record["token_features"]) == ["answer", "case", "ner", "pos"]
        for name, tags in record["token_features"].items():
            assert len(tags) == len(words) and set(tags) <= set(FEATURE_TAGS[name]), (record["id"], name)
        assert record["answer"] == " ".join(w for w, t in zip(words, record["token_features"]["answer"], strict=True) if t != "O")


@pytest.mark.skipif(not REAL_NQG_DEV.is_dir(), reason=f"the real NQG dev split is not at {REAL_NQG_DEV} (shared data folder)")
def test_a_sentence_split_of_the_real_dev_file_keeps_every_held_out_sentence_out_of_training():
    """The release's dev file asks up to 14 questions of one sentence; line ranges put most held-out
    sentences in training too, sentence_split none."""
    prefixes = dict.fromkeys(SPLITS, "dev.txt.shuffle.dev")
    source = {"kind": "nqg_zhou2017", "directory": str(REAL_NQG_DEV), "member_prefix": "", "prefixes": prefixes, "answer_markers": None}
    source = resolved(source)
    split = load_source_splits({**source, "sentence_split": {"valid": 500, "test": 500, "seed": 0}}, SPLITS)
    sentences = {name: {r["source"] for r in records} for name, records in split.items()}
    assert not sentences["train"] & sentences["valid"] and not sentences["train"] & sentences["test"]
    assert not sentences["valid"] & sentences["test"]
    assert all(500 <= len(split[name]) < 515 for name in ("valid", "test"))  # whole sentence groups: a few over
    # every pair is in one split, but for the training pairs over 100 words (dropped like FocusSeq2Seq)
    text = (REAL_NQG_DEV / "dev.txt.shuffle.dev.source.txt").read_bytes().decode("utf-8")
    lines = [" ".join(release_tokens(line.rstrip("\r"))) for line in text.split("\n")[:-1]]
    held_out = sentences["valid"] | sentences["test"]
    long_training = sum(1 for line in lines if len(line.split(" ")) > 100 and line not in held_out)
    assert sum(len(records) for records in split.values()) + long_training == len(lines) == 8965
    ranged = load_source_splits({**source, "line_ranges": {"train": [1, 7965], "test": [8466, 8965]}}, ["train", "test"])
    leaked = {r["source"] for r in ranged["test"]} & {r["source"] for r in ranged["train"]}
    assert len(leaked) > 250  # what the split is for: 311 of the 500 test sentences when cut by lines


def test_a_sentence_split_keeps_a_sentences_questions_together(tmp_path):
    """Three questions of one sentence and two of another, in a one-file release: each sentence's
    questions land in one split, the ids name the file's lines."""
    asked = [NQG_EXAMPLES[0]] * 3 + [NQG_EXAMPLES[1]] * 2 + [NQG_EXAMPLES[2]]
    asked = [(sentence, tags, f"{question} {i}") for i, (sentence, tags, question) in enumerate(asked)]
    archive = nqg_zip(tmp_path / "r.zip", examples=asked)
    source = nqg_source(prefixes=dict.fromkeys(SPLITS, "dev.txt.shuffle.dev"), sentence_split={"valid": 1, "test": 1})
    assert source["sentence_split"]["seed"] == 0
    splits = load_source_splits(source, SPLITS, archive=archive)
    assert sorted(r["id"].split("-")[1] for records in splits.values() for r in records) == [str(i) for i in range(1, 7)]
    for records in splits.values():
        assert len({r["source"] for r in records}) == 1  # one sentence each: all of its questions
    assert sorted(len(records) for records in splits.values()) == [1, 2, 3]


def test_tag_files_out_of_step_with_the_sentences_name_member_and_line(tmp_path):
    archive = nqg_zip(tmp_path / "r.zip", overrides={("test", "pos"): "DT NN\n"})
    with pytest.raises(DataFormatError, match=r"dev\.txt\.shuffle\.test\.pos: 1 lines, but the split has 3 sentences"):
        load_source_splits(nqg_source(token_features=True), SPLITS, archive=archive)


def test_release_tokens_are_separated_by_plain_spaces_only():
    assert release_tokens("4 ft 8\u00a01\u20442 in") == ["4", "ft", "8\u00a01\u20442", "in"]


def test_a_release_folder_is_read_in_place_and_a_missing_one_is_named(tmp_path):
    archive = nqg_zip(tmp_path / "r.zip")
    folder = tmp_path / "release"
    with zipfile.ZipFile(archive) as unpacked:
        unpacked.extractall(folder)
    source = resolved({"kind": "nqg_zhou2017", "directory": "release"})
    splits = load_source_splits(source, SPLITS, base_dir=tmp_path)
    assert splits == load_source_splits(nqg_source(), SPLITS, archive=archive)
    ranged = load_source_splits({**source, "line_ranges": {"test": [2, 3]}}, ["test"], base_dir=tmp_path)["test"]
    assert [r["id"] for r in ranged] == ["test-2", "test-3"]
    with pytest.raises(FileNotFoundError, match=r"directory .*elsewhere does not exist"):
        load_source_splits({**source, "directory": "elsewhere"}, SPLITS, base_dir=tmp_path)


def test_archive_members_end_lines_at_a_lone_carriage_return(tmp_path):
    """A release whose files were rewritten with CR-only line ends reads as the original."""
    archive = nqg_zip(tmp_path / "r.zip")
    folder = tmp_path / "release"
    with zipfile.ZipFile(archive) as unpacked:
        unpacked.extractall(folder)
    for member in folder.rglob("*"):
        if member.is_file():
            member.write_bytes(member.read_bytes().replace(b"\n", b"\r"))
    source = resolved({"kind": "nqg_zhou2017", "directory": "release"})
    assert load_source_splits(source, SPLITS, base_dir=tmp_path) == load_source_splits(nqg_source(), SPLITS, archive=archive)
