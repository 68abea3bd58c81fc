import re

import pandas as pd
import pytest

from gold_textgen.analysis.human_eval import SheetError, build_sheet, main, majority, tally, write_sheet


def outputs(name, count):
    return [{"id": f"x{i}", "source": f"input {i}", "reference": f"ref {i}", "hypothesis": f"{name} says {i}"} for i in range(count)]


@pytest.fixture
def exported(tmp_path):
    generations = {"GOLD": outputs("GOLD", 30), "MLE": outputs("MLE", 30)}
    sheet, key = build_sheet(generations, "GOLD", "MLE", count=20, seed=4)
    write_sheet(sheet, key, tmp_path / "sheet.csv", tmp_path / "key.csv")
    return tmp_path, key


def test_sheet_hides_the_systems_and_shuffles_their_order(exported):
    folder, key = exported
    sheet = pd.read_csv(folder / "sheet.csv", keep_default_na=False)
    assert list(sheet.columns) == ["item", "input", "output_a", "output_b", "preference"]
    assert len(sheet) == 20 and (sheet["preference"] == "").all()
    assert 3 <= (key["system_a"] == "GOLD").sum() <= 17  # a fair coin, not a fixed order
    for row, k in zip(sheet.itertuples(), key.itertuples(), strict=True):
        assert row.output_a.startswith(k.system_a) and row.output_b.startswith(k.system_b)
        assert row.input == f"input {k.id[1:]}"


def fill(folder, key, name, prefers):
    """A rater who picks, per item, the system `prefers(item)` returns (or 'tie')."""
    sheet = pd.read_csv(folder / "sheet.csv", keep_default_na=False)
    choices = []
    for row in key.itertuples():
        wanted = prefers(row.item)
        choices.append("tie" if wanted == "tie" else ("A" if row.system_a == wanted else "B"))
    sheet["preference"] = choices
    sheet.to_csv(folder / name, index=False)
    return folder / name


def test_round_trip_export_fill_import(exported):
    folder, key = exported
    # items 1-10: all three prefer GOLD; 11-14: two prefer MLE; 15-17: two say tie; 18-20: no majority (tie)
    plans = [
        lambda i: "GOLD" if i <= 10 or i >= 18 else ("MLE" if i <= 14 else "tie"),
        lambda i: "GOLD" if i <= 10 else ("MLE" if i <= 14 or i >= 18 else "tie"),
        lambda i: "GOLD" if i <= 13 else ("tie" if i <= 20 else "MLE"),
    ]
    sheets = [fill(folder, key, f"rater{n}.csv", plan) for n, plan in enumerate(plans)]
    result = tally(pd.read_csv(folder / "key.csv"), sheets).set_index("system")
    assert result.loc["GOLD", ["win", "lose", "tie"]].tolist() == pytest.approx([50.0, 20.0, 30.0])
    assert result.loc["MLE", ["win", "lose", "tie"]].tolist() == pytest.approx([20.0, 50.0, 30.0])
    assert result.loc["GOLD", "raters"] == 3 and result.loc["GOLD", "items"] == 20


def test_majority_of_three():
    assert majority(["A", "A", "B"]) == "A"
    assert majority(["A", "B", "tie"]) == "tie"
    assert majority(["tie", "tie", "B"]) == "tie"


def test_a_bad_rating_names_file_and_line(exported):
    folder, key = exported
    path = fill(folder, key, "bad.csv", lambda i: "GOLD")
    sheet = pd.read_csv(path)
    sheet.loc[4, "preference"] = "maybe"
    sheet.to_csv(path, index=False)
    with pytest.raises(SheetError, match=r"bad.csv:6: preference 'maybe' of item 5"):
        tally(key, [path])


def test_command_line_writes_the_result(exported, capsys):
    folder, key = exported
    sheets = [str(fill(folder, key, f"r{n}.csv", lambda i: "MLE")) for n in range(3)]
    main(["tally", "--key", str(folder / "key.csv"), *sheets, "--output", str(folder / "result.csv")])
    result = pd.read_csv(folder / "result.csv").set_index("system")
    assert result.loc["MLE", "win"] == 100.0 and result.loc["GOLD", "lose"] == 100.0
    assert "MLE" in capsys.readouterr().out


def test_tally_names_a_missing_key_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["tally", "--key", str(tmp_path / "key.csv"), str(tmp_path / "r1.csv")])
    assert f"{tmp_path / 'key.csv'}: no such file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "key.csv: not a CSV table (EmptyDataError"),
        (b"\xe7\x00,\n", "key.csv: not a CSV table (UnicodeDecodeError"),
        (b"a,b\n1,2\n", "key.csv: no 'item' column"),
        (b"item,system_a,system_b\nfirst,MLE,GOLD\n", "key.csv: its 'item' column holds other values than item numbers"),
    ],
)
def test_a_key_that_is_not_the_sheets_key_is_named_in_one_line(exported, tmp_path, content, said):
    folder, key = exported
    sheet = fill(folder, key, "r1.csv", lambda i: "MLE")
    bad_key = tmp_path / "key.csv"
    bad_key.write_bytes(content)
    with pytest.raises(SystemExit, match=re.escape(f"error: {bad_key}") + ".*" + re.escape(said.split("key.csv")[1])):
        main(["tally", "--key", str(bad_key), str(sheet)])


def test_a_sheet_with_an_item_that_is_no_number_names_its_line(exported):
    folder, key = exported
    path = fill(folder, key, "odd.csv", lambda i: "GOLD")
    sheet = pd.read_csv(path)
    sheet["item"] = sheet["item"].astype(str)
    sheet.loc[2, "item"] = "third"
    sheet.to_csv(path, index=False)
    with pytest.raises(SheetError, match=r"odd.csv:4: item 'third' is not an item number"):
        tally(key, [path])
