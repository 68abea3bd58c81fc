"""The report's account of out-of-date results, on a hand-made `snakemake --summary` table."""

from pathlib import Path

import pytest

from gold_textgen.bookkeeping.report_status import description, is_report_run, out_of_date, summary_command, warning

SUMMARY = """Building DAG of jobs...
output_file\tdate\trule\tlog-file(s)\tstatus\tplan
results/tables/main.csv\tThu Nov 26 20:06:16 2026\tmain_table\tlogs/main_table/main_table.log\tok\tupdate pending
results/models/demo/gold_p/seed1\t-\tfine_tune\tlogs/fine_tune/demo/gold_p/seed1.log\tmissing\tno update
results/tokenizers/demo\tThu Nov 26 20:05:15 2026\ttrain_tokenizer\tlogs/train_tokenizer/demo.log\tupdated input files\tupdate pending
results/data/demo/test.jsonl\tThu Nov 26 20:05:11 2026\tprepare_dataset\tlogs/prepare_dataset/demo.log\tok\tno update
"""


def test_only_outputs_that_are_not_current_are_listed():
    rows = out_of_date(SUMMARY)
    assert [(row["output_file"], row["status"], row["plan"]) for row in rows] == [
        ("results/tables/main.csv", "ok", "update pending"),
        ("results/models/demo/gold_p/seed1", "missing", "no update"),
        ("results/tokenizers/demo", "updated input files", "update pending"),
    ]
    page = description(rows, when="today")
    assert "**3 result(s) were not up to date** when this report was created (today)" in page
    assert "- ``results/models/demo/gold_p/seed1 (rule fine_tune): missing, no update``" in page
    assert "3 result(s) that are not up to date" in warning(rows)
    assert description([], when="today").endswith("was up to date when the report was created (today).\n")
    assert warning([]) is None
    with pytest.raises(ValueError, match="no summary table"):
        out_of_date("Building DAG of jobs...\n")


def test_a_long_list_is_cut_and_counted():
    rows = out_of_date(
        "output_file\tdate\trule\tlog-file(s)\tstatus\tplan\n" + "".join(f"o{i}\t-\tr\t-\tmissing\tno update\n" for i in range(50))
    )
    page = description(rows)
    assert page.count("- ``o") == 40 and "... and 10 more" in page


@pytest.mark.parametrize(
    ("argv", "reports"),
    [
        (["snakemake", "--report", "r.html"], True),
        (["snakemake", "--report=r.html"], True),
        (["snakemake", "--reporter", "html", "--report-html-path", "r.html"], True),
        (["snakemake", "--cores", "2", "--report-after-run", "--report", "r.html"], False),
        (["snakemake", "--cores", "2", "results/tables/report.csv"], False),
    ],
)
def test_a_report_run_is_recognised_from_the_driver_arguments(argv, reports):
    assert is_report_run(argv) is reports


def test_the_summary_runs_the_same_workflow_with_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = summary_command("Snakefile", ".", ["configs/a.yaml"])
    assert command[command.index("--snakefile") + 1] == str(tmp_path / "Snakefile")
    assert command[command.index("--directory") + 1] == str(tmp_path)
    assert command[command.index("--configfiles") + 1] == str(Path(tmp_path, "configs", "a.yaml"))
    assert "--summary" in command and "--nolock" in command
