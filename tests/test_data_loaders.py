import json
from pathlib import Path

import pytest

from gold_textgen.data.prepare import prepare_dataset
from gold_textgen.data.records import DataFormatError, load_jsonl, load_local_split, load_parallel, load_tsv


def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def test_jsonl_reads_fields_ids_and_extras(tmp_path):
    path = write(
        tmp_path / "a.jsonl", '{"id": "x1", "source": "ein Haus", "target": "a house", "topic": "home"}\n\n{"source": "s", "target": "t"}\n'
    )
    records = load_jsonl(path)
    assert records[0] == {"id": "x1", "source": "ein Haus", "target": "a house", "topic": "home"}
    assert records[1] == {"id": "a-3", "source": "s", "target": "t"}


def test_jsonl_custom_field_names(tmp_path):
    path = write(tmp_path / "a.jsonl", '{"document": "d", "summary": "s"}\n')
    assert load_jsonl(path, source_field="document", target_field="summary")[0]["target"] == "s"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"source": "s"}', "missing field 'target'"),
        ('{"source": "s", "target": "   "}', "empty target"),
        ('{"source": "", "target": "t"}', "empty source"),
        ('{"source": "\\u200b", "target": "t"}', r"empty source \(only invisible characters: U\+200B\)"),
        ('{"source": "s", "target": " \\ufeff\\u2060"}', "empty target"),
        ('{"source": "a\\ud800", "target": "t"}', r"field 'source' holds a lone surrogate \(character 1"),
        ('{"source": "s", "target": "t", "note": ["\\udc00"]}', "field 'note' holds a lone surrogate"),
        ('{"source": "s", "target": 3}', "field 'target' must be a string"),
        ('{"source": "s", "target": ', "invalid JSON"),
        ('["s", "t"]', "expected a JSON object"),
    ],
)
def test_jsonl_bad_records_name_file_and_line(tmp_path, line, problem):
    path = write(tmp_path / "bad.jsonl", '{"source": "ok", "target": "ok"}\n' + line + "\n")
    with pytest.raises(DataFormatError, match=rf"bad\.jsonl:2: {problem}"):
        load_jsonl(path)


def test_non_utf8_is_reported_with_its_line(tmp_path):
    path = write(tmp_path / "latin.tsv", b"gut\tgood\n" + "schön\tnice\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"latin\.tsv:2: not valid UTF-8"):
        load_tsv(path)


def test_tsv_reads_pairs_and_keeps_quotes(tmp_path):
    path = write(tmp_path / "d.tsv", 'er sagt "ja"\the says "yes"\n')
    assert load_tsv(path) == [{"id": "d-1", "source": 'er sagt "ja"', "target": 'he says "yes"'}]


def test_tsv_wrong_column_count(tmp_path):
    path = write(tmp_path / "d.tsv", "a\tb\nonly one column\n")
    with pytest.raises(DataFormatError, match=r"d\.tsv:2: expected 2 tab-separated fields"):
        load_tsv(path)


def test_tsv_empty_target(tmp_path):
    path = write(tmp_path / "d.tsv", "a\t \n")
    with pytest.raises(DataFormatError, match=r"d\.tsv:1: empty target"):
        load_tsv(path)


def test_parallel_files_pair_lines(tmp_path):
    src, tgt = write(tmp_path / "train.src", "a b\nc d\n"), write(tmp_path / "train.tgt", "A B\nC D\n")
    assert [r["target"] for r in load_parallel(src, tgt)] == ["A B", "C D"]


def test_parallel_length_mismatch_names_both_files(tmp_path):
    src, tgt = write(tmp_path / "train.src", "a\nb\nc\n"), write(tmp_path / "train.tgt", "A\nB\n")
    with pytest.raises(DataFormatError, match=r"train\.tgt:3: .*train\.src has 3 lines but .*train\.tgt has 2"):
        load_parallel(src, tgt)


def test_parallel_empty_target_line(tmp_path):
    src, tgt = write(tmp_path / "x.src", "a\nb\nc\n"), write(tmp_path / "x.tgt", "A\n\nC\n")
    with pytest.raises(DataFormatError, match=r"x\.tgt:2: empty target"):
        load_parallel(src, tgt)


@pytest.mark.parametrize("blank", ["\u3164", "\u115f", "\u2800", "\ufe0f", "\u034f", "\u180b", "\U000e0020", "\u3164 \u2800"])
def test_a_source_of_fillers_and_default_ignorable_characters_alone_is_empty(tmp_path, blank):
    """A Hangul filler, the blank Braille pattern, a variation selector, the combining grapheme joiner: each
    shows nothing, as a zero-width space does."""
    src, tgt = write(tmp_path / "x.src", f"a\n{blank}\n"), write(tmp_path / "x.tgt", "A\nB\n")
    with pytest.raises(DataFormatError, match=r"x\.src:2: empty source \(only invisible characters: U\+"):
        load_parallel(src, tgt)
    assert load_parallel(write(tmp_path / "y.src", f"a\n{blank}b\n"), tgt)[1]["source"] == f"{blank}b"  # beside a letter: kept


def test_parallel_source_of_only_a_zero_width_space_is_empty(tmp_path):
    src, tgt = write(tmp_path / "x.src", "a\n\u200b\n"), write(tmp_path / "x.tgt", "A\nB\n")
    with pytest.raises(DataFormatError, match=r"x\.src:2: empty source \(only invisible characters: U\+200B\)"):
        load_parallel(src, tgt)


@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "parallel"])
def test_prepare_dataset_writes_the_contract_for_each_local_format(tmp_path, fmt):
    pairs = {"train": [("a b", "x y"), ("c", "z")], "valid": [("d", "w")], "test": [("e f", "u v")]}
    spec = {"kind": "local", "format": fmt, "suffixes": [".src", ".tgt"]}
    for split, rows in pairs.items():
        if fmt == "jsonl":
            write(tmp_path / f"{split}.jsonl", "".join(json.dumps({"source": s, "target": t}) + "\n" for s, t in rows))
            spec[split] = f"{split}.jsonl"
        elif fmt == "tsv":
            write(tmp_path / f"{split}.tsv", "".join(f"{s}\t{t}\n" for s, t in rows))
            spec[split] = f"{split}.tsv"
        else:
            write(tmp_path / f"{split}.src", "".join(f"{s}\n" for s, _ in rows))
            write(tmp_path / f"{split}.tgt", "".join(f"{t}\n" for _, t in rows))
            spec[split] = split
    outputs = {split: tmp_path / "out" / f"{split}.jsonl" for split in pairs}
    sizes = prepare_dataset(spec, outputs, base_dir=tmp_path)
    assert sizes == {"train": 2, "valid": 1, "test": 1}
    written = [json.loads(line) for line in outputs["train"].read_text().splitlines()]
    assert [(r["source"], r["target"]) for r in written] == pairs["train"]
    assert all({"id", "source", "target"} <= set(r) for r in written)


def test_local_split_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="unknown local data format 'xml'"):
        load_local_split({"format": "xml", "train": "t"}, "train", tmp_path)


def test_duplicate_ids_are_rejected(tmp_path):
    write(tmp_path / "t.jsonl", '{"id": "1", "source": "a", "target": "b"}\n{"id": "1", "source": "c", "target": "d"}\n')
    spec = {"kind": "local", "format": "jsonl", "train": "t.jsonl", "valid": "t.jsonl", "test": "t.jsonl"}
    with pytest.raises(DataFormatError, match=r"t\.jsonl:2: duplicate id '1' \(first at line 1\)"):
        prepare_dataset(spec, {"train": tmp_path / "o.jsonl"}, base_dir=tmp_path)


@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "parallel"])
def test_every_format_drops_a_byte_order_mark_and_trailing_blank_lines(tmp_path, fmt):
    if fmt == "jsonl":
        records = load_jsonl(write(tmp_path / "t.jsonl", '\ufeff{"source": "a", "target": "b"}\n\n\n'))
    elif fmt == "tsv":
        records = load_tsv(write(tmp_path / "t.tsv", "\ufeffa\tb\n\n"))
    else:
        records = load_parallel(write(tmp_path / "t.src", "\ufeffa\n\n"), write(tmp_path / "t.tgt", "\ufeffb\n"))
    assert [(r["source"], r["target"]) for r in records] == [("a", "b")]


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("e.jsonl", "\n\n", r"e\.jsonl: no records"),
        ("e.tsv", "", r"e\.tsv: no records"),
        ("n.jsonl", '{"id": null, "source": "a", "target": "b"}\n', r"n\.jsonl:1: field 'id' must be a string or an integer, got null"),
        ("d.tsv", "a\tb\n", None),
    ],
)
def test_empty_files_and_null_ids_are_named(tmp_path, name, text, problem):
    path = write(tmp_path / name, text)
    loader = load_jsonl if name.endswith(".jsonl") else load_tsv
    if problem is None:
        assert len(loader(path)) == 1
        return
    with pytest.raises(DataFormatError, match=problem):
        loader(path)


def test_a_tsv_header_is_read_only_when_declared(tmp_path):
    path = write(tmp_path / "h.tsv", "source\ttarget\na\tb\n")
    with pytest.raises(DataFormatError, match=r"h\.tsv:1: looks like a header line .*set `header: true`"):
        load_tsv(path)
    assert [(r["source"], r["target"]) for r in load_tsv(path, header=True)] == [("a", "b")]
    spec = {"kind": "local", "format": "tsv", "header": True, "train": "h.tsv", "valid": "h.tsv", "test": "h.tsv"}
    assert len(load_local_split(spec, "train", tmp_path)) == 1


@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "parallel"])
def test_every_format_ends_lines_at_a_lone_carriage_return(tmp_path, fmt):
    """Classic Mac files and some spreadsheet exports end lines with CR only: three records, not one."""
    pairs = [("a b", "x y"), ("c", "z"), ("d e", "w")]
    if fmt == "jsonl":
        text = "\r".join(json.dumps({"source": s, "target": t}) for s, t in pairs) + "\r"
        records = load_jsonl(write(tmp_path / "t.jsonl", text))
    elif fmt == "tsv":
        records = load_tsv(write(tmp_path / "t.tsv", "\r".join(f"{s}\t{t}" for s, t in pairs) + "\r"))
    else:
        source = write(tmp_path / "t.src", "\r".join(s for s, _ in pairs) + "\r")
        target = write(tmp_path / "t.tgt", "\r\n".join(t for _, t in pairs))
        records = load_parallel(source, target)
    assert [(r["source"], r["target"]) for r in records] == pairs
    assert [r["id"] for r in records][-1].endswith("3")


def test_a_bad_byte_after_a_carriage_return_names_its_line(tmp_path):
    path = write(tmp_path / "t.tsv", b"a\tb\rc\td\xff\r")
    with pytest.raises(DataFormatError, match=r"t\.tsv:2: not valid UTF-8 \(byte 3: b'\\xff'\)"):
        load_tsv(path)


@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "parallel"])
def test_a_stray_carriage_return_inside_a_line_is_an_error_not_a_line_break(tmp_path, fmt):
    """Read as a break, a CR inside line 2 of one parallel file would split it and pair every later source
    with the wrong target; with one such CR in each file the pairs between them would shift silently."""
    if fmt == "parallel":
        source = write(tmp_path / "t.src", "a b\nc\rd\ne\n")
        target = write(tmp_path / "t.tgt", "x\ny\rz\nw\n")
        with pytest.raises(DataFormatError, match=r"t\.src:2: a stray \\r ends this line, while the file's lines end with \\n"):
            load_parallel(source, target)
        return
    line = json.dumps({"source": "c", "target": "d"}) if fmt == "jsonl" else "c d\te f"
    path = write(tmp_path / f"t.{fmt}", f"{line}\n{line[:3]}\r{line[3:]}\n")
    loader = load_jsonl if fmt == "jsonl" else load_tsv
    with pytest.raises(DataFormatError, match=r":2: a stray \\r"):
        loader(path)


def test_a_tsv_field_longer_than_the_csv_modules_limit_is_read(tmp_path):
    long_source = "word " * 40_000  # 200,000 characters: csv's default field limit is 131,072
    records = load_tsv(write(tmp_path / "long.tsv", f"{long_source.strip()}\tshort\n"))
    assert len(records[0]["source"]) == len(long_source.strip())
