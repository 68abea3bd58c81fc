"""Docs that cannot go stale: every command of the README's and docs' command blocks that plans or trains
runs as written (a dry run where it trains), no page states a job count outside the README's experiments
table (whose counts tests/test_workflow_experiments.py checks against every shipped experiment's plan), and
the configuration reference is the one the schema generates, and the Python blocks of the guide pages run
as written after the TRL example."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import README_EXPERIMENTS, REPO, SNAKEMAKE, driver_environment
from snakemake_in_process import snakemake_in_process

from gold_textgen.catalog import LOSSES
from gold_textgen.docs_pages.generated_pages import COMMAND, stale_pages

pytestmark = pytest.mark.workflow
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
GOLD_TEXTGEN = Path(sys.executable).with_name("gold-textgen")
# A job count in any form: "47 jobs", "18 evaluation jobs", "a 1,202-job grid" (not "267 job seconds"), or a
# table column named jobs.
JOB_COUNT = re.compile(r"\b\d[\d,]*(?:[ -][a-zA-Z]+)?[ -]jobs?\b(?!\s+seconds)|^\|(?:[^|\n]*\|)*\s*jobs\s*\|", re.M)


def command_lines(text: str) -> list[str]:
    """The commands of a page's bash blocks: continuation lines joined, comments and `.venv/bin/` dropped."""
    commands, language = [], None
    for block in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        language, body = block.group(1), block.group(2).replace("\\\n", " ")
        if language not in ("bash", "sh"):
            continue
        for line in body.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()  # a comment, or a line of one
            commands.append(re.sub(r"^\.venv/bin/", "", line))
    return [command for command in commands if command]


def planning_command(command: str) -> list[str] | None:
    """The command as it runs here (a dry run where it would train), or None: not Snakemake or
    gold-textgen planning or training, a placeholder (`<...>`, `[...]`) for the reader to fill in, or a
    config file of the reader's own."""
    if re.search(r"<[^>]*>|\[--", command):
        return None
    words = shlex.split(command)
    if words[:2] in (["gold-textgen", "run"], ["gold-textgen", "status"]) and "--set" not in words:
        # These only wrap Snakemake's dry run of the same config files (tests/test_cli.py covers the wrapper;
        # `plan` runs as written).
        configs = [word for word in words[2:] if word.endswith(".yaml") and word != "config.yaml"]
        rest = [word for word in words[2:] if not word.endswith(".yaml")]
        words = ["snakemake", *rest, *(["--configfile", *configs] if configs else [])]
    if words[0] == "snakemake" and "--report" not in words:
        run = [str(SNAKEMAKE), *words[1:], *([] if "-n" in words else ["-n"])]
    elif words[:2] in (["gold-textgen", "run"],):
        run = [str(GOLD_TEXTGEN), *words[1:], *([] if "-n" in words else ["-n"])]
    elif words[:2] in (["gold-textgen", "plan"], ["gold-textgen", "status"]):
        run = [str(GOLD_TEXTGEN), *words[1:]]
    else:
        return None
    configs = [word for word in words[1:] if word.endswith(".yaml")]
    return run if all((REPO / config).is_file() for config in configs) else None


def run_all(commands: list[list[str]]) -> list[subprocess.CompletedProcess]:
    """Each command's outcome, in order, run from the project's root: the gold-textgen commands (two Python
    starts each) four at a time, then Snakemake's dry runs one after the other in this process
    (tests/snakemake_in_process.py)."""
    in_process = [command[0] == str(SNAKEMAKE) for command in commands]
    with ThreadPoolExecutor(max_workers=4) as pool:  # done before a dry run here changes this process's environment
        started = [None if here else pool.submit(run_process, command) for command, here in zip(commands, in_process, strict=True)]
        finished = [None if future is None else future.result() for future in started]
    return [
        snakemake_in_process(command, driver_environment(), timeout=300, cwd=REPO) if result is None else result
        for command, result in zip(commands, finished, strict=True)
    ]


def run_process(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def grouped(commands: dict[tuple[str, ...], str]) -> dict[tuple[str, ...], str]:
    """Commands that differ only in their targets, `--cores`, `--profile` and where `-n` stands, planned as one
    (the targets together): the same configs and options, one Snakemake start instead of several."""
    groups: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    for run, where in commands.items():
        words, targets, options, index = list(run), [], [], 0
        while index < len(words):
            word = words[index]
            index += 2 if word in ("--cores", "--profile") else 1
            if word in ("--cores", "--profile"):  # how jobs run, not what is planned (tests/slurm covers the profile)
                continue
            if re.match(r"(results|logs)/", word) or (word == "fetch" and words[0] == str(SNAKEMAKE)):
                targets.append(word)
            else:
                options.append(word)
        dry = options.count("-n") > 0
        key = (*[word for word in options if word != "-n"], *(["-n"] if dry else []))
        entry = groups.setdefault(key, ([], []))
        if words[0] == str(SNAKEMAKE) and not targets:
            targets = ["all"]  # the default target, named, so that it stays one beside the others' targets
        entry[0].extend(target for target in targets if target not in entry[0])
        entry[1].append(where)
    return {(*options[:1], *targets, *options[1:]): "\n".join(wheres) for options, (targets, wheres) in groups.items()}


def is_a_shipped_experiments_plan(run: tuple[str, ...]) -> bool:
    """`snakemake all --configfile <shipped configs> -n`: nothing but the dry run of a shipped experiment."""
    words = list(run)
    if words[0] != str(SNAKEMAKE) or words[1:2] != ["all"] or words[-1] != "-n" or words[2:3] != ["--configfile"]:
        return False
    return all(word.startswith("configs/") and (REPO / word).is_file() for word in words[3:-1])


@pytest.mark.slow
def test_every_command_block_that_plans_or_trains_runs_as_written():
    commands = {}
    for page in PAGES:
        for command in command_lines(page.read_text()):
            if (run := planning_command(command)) is not None:
                commands.setdefault(tuple(run), f"{page.relative_to(REPO)}: {command}")
    assert len(commands) >= 10, "the docs' command blocks were not found"
    # A bare dry run of a shipped experiment is what tests/test_workflow_experiments.py already makes of each.
    plans = {run: where for run, where in grouped(commands).items() if not is_a_shipped_experiments_plan(run)}
    failed = [
        f"{where}\n{result.stderr.strip()[-1500:]}"
        for (run, where), result in zip(plans.items(), run_all([list(run) for run in plans]), strict=True)
        if result.returncode
    ]
    assert not failed, "commands of the docs that fail as written:\n\n" + "\n\n".join(failed)


# The docs' commands that CI does not run as written, each with why and where the same path is tested.
NOT_IN_CI = {
    r"make (demo|setup)\b": "minutes of setup and training: CI runs `make test` after its own setup, and the demo's workflow at test size",
    r"make test$": "what .ci/run itself calls",
    r"source \.venv/bin/activate$": "a shell's setting, not a command with an outcome",
    r"pip install ": "an install from the package registry",
    r"srun ": "a SLURM job on a GPU node (tests/slurm runs the profile's jobs on a local cluster)",
    r"tmux ": "a terminal session for the driver; the command inside it is planned above",
    r"python -m benchmarks\.": "a benchmark that measures and records (minutes to hours); tests of its parts at test size",
    r"gold-textgen export ": "needs the trained model it names: tests/test_causal_workflow.py exports one",
    r"gold-textgen tally ": "needs filled rating sheets: tests/test_human_eval.py tallies some",
    r"gold-textgen report\b": "needs a finished run: tests/test_cli.py (before one) and tests/test_report.py (after, in a browser)",
    r"gold-textgen plan .*--device benchmarks/devices/my-gpu\.yaml": "the profile the `srun` line before it measures on your GPU",
    r"snakemake .*configs/my_objectives\.yaml": (
        "the page's own YAML block writes that config; tests/test_workflow_code_identity.py runs an added objective"
    ),
}
# The docs' commands that run here as written, in a fresh folder (they write into the folder they run in).
RUN_HERE = (r"gold-textgen --help$", r"gold-textgen example-corpus$")


def test_every_fenced_command_runs_here_or_says_why_not(tmp_path):
    """Every command of the README's and the docs' bash blocks is planned or run as written by this file's
    tests, or matches a NOT_IN_CI entry with its reason; a placeholder for the reader to fill in (`<...>`,
    `[--...]`) is refused: a command a reader copies must run."""
    unexplained, placeholders, ran = [], [], set()
    for page in PAGES:
        for command in command_lines(page.read_text()):
            where = f"{page.relative_to(REPO)}: {command}"
            if re.search(r"<[^>]*>|\[--", command):
                placeholders.append(where)
            elif any(re.match(pattern, command) for pattern in RUN_HERE):
                result = subprocess.run(
                    shlex.split(re.sub(r"^gold-textgen", str(GOLD_TEXTGEN), command)), cwd=tmp_path, capture_output=True, text=True
                )
                assert result.returncode == 0, f"{where}\n{result.stderr[-2000:]}"
                ran.add(next(pattern for pattern in RUN_HERE if re.match(pattern, command)))
            elif planning_command(command) is None and not any(re.match(pattern, command) for pattern in NOT_IN_CI):
                unexplained.append(where)
    assert not placeholders, "commands with a placeholder a reader must fill in:\n" + "\n".join(placeholders)
    assert not unexplained, "commands neither run nor explained in NOT_IN_CI:\n" + "\n".join(unexplained)
    assert ran == set(RUN_HERE), "a RUN_HERE command no page has any more"


def test_no_other_page_states_a_job_count():
    """A count typed into prose goes stale; the experiments table is checked, so counts live there."""
    found = []
    for page in PAGES:
        text = README_EXPERIMENTS.sub("", page.read_text())
        found += [f"{page.relative_to(REPO)}: {match.group(0)}" for match in JOB_COUNT.finditer(text)]
    assert not found, "job counts outside the README's experiments table:\n" + "\n".join(found)


# An output path without its experiment's folder: the layout before results/<experiment>/ (guide: Results layout).
OUTPUT_FOLDERS = "tables|models|figures|scores|generations|data|analysis|runs|checkpoints|rewards|tokenizers|downloads"
FLAT_RESULTS_PATH = re.compile(rf"\bresults/(?:{OUTPUT_FOLDERS})/")
# Where users and readers of the code meet output paths: pages, configs, the workflow, the package, the scripts.
TEXT_FILES = ("README.md", "config.yaml", "Snakefile", "docs/**/*.md", "configs/*.yaml", "rules/**/*.smk", "profiles/**/*.yaml")
TEXT_FILES += ("src/gold_textgen/**/*.py", "src/gold_textgen/**/*.yaml", "workflow_scripts/*.py", "benchmarks/*.py")


def test_no_page_config_or_comment_names_an_output_outside_its_experiments_folder():
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for pattern in TEXT_FILES
        for path in sorted(REPO.glob(pattern))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if FLAT_RESULTS_PATH.search(line)
    ]
    assert not found, "output paths without results/<experiment>/:\n" + "\n".join(found)


# A list of objectives typed by hand goes stale when the catalog changes: a paragraph that names this many
# of the catalog's losses lists them (docs/reference/objectives.md is the list, generated).
LISTED = 4
HAND_LISTS_IN = ("README.md", "docs/*.md", "docs/guide/*.md", "src/gold_textgen/**/*.py", "Snakefile", "rules/**/*.smk")


def catalog_names() -> re.Pattern:
    """The catalog's losses by name and table label, but for GOLD (every page names it) and the words that
    are not only names (NLL, PG, probability)."""
    names = {
        spelling
        for row in LOSSES.values()
        if row.name not in ("gold", "nll", "policy_gradient", "probability")
        for spelling in (row.name, row.label)
    }
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(?![\w-])")


def test_no_page_or_docstring_lists_the_objectives_by_hand():
    names, found = catalog_names(), []
    for pattern in HAND_LISTS_IN:
        for path in sorted(REPO.glob(pattern)):
            if path.parent.name == "catalog":
                continue  # the catalog itself
            for paragraph in re.split(r"\n\s*\n", path.read_text()):
                listed = {match.group(1).lower().replace("-", "_") for match in names.finditer(paragraph)}
                if len(listed) >= LISTED:
                    found.append(f"{path.relative_to(REPO)}: {', '.join(sorted(listed))}")
    assert not found, "objectives listed by hand (say 'every loss of the catalog', or link docs/reference/objectives.md):\n" + "\n".join(
        found
    )


def test_the_generated_pages_are_what_their_generator_writes():
    """The configuration and objectives references, generated from the schema and the catalog."""
    stale = stale_pages(REPO)
    assert not stale, f"stale generated pages: {', '.join(stale)}; regenerate them: {COMMAND} (or make docs)"


# The pages whose Python blocks run as written, after the example (they continue from its SFT model).
PAGES_WITH_CODE = ("docs/guide/objectives.md", "docs/guide/decoder-only.md")


# One Python runs the example (its arguments up to --blocks) then each block (in a namespace of its own, in
# page order): torch, transformers and TRL are imported once. A line on stderr marks where the example ends.
RUNNER = """import runpy, sys
split = sys.argv.index("--blocks")
example, blocks = sys.argv[1:split], sys.argv[split + 1:]
sys.argv = example
runpy.run_path(example[0], run_name="__main__")
print("--- the example ended", file=sys.stderr, flush=True)
for script in blocks:
    sys.argv = [script]
    runpy.run_path(script, run_name="__main__")
    print("ran", script)
"""


@pytest.mark.trl
@pytest.mark.slow
def test_the_trl_example_and_the_docs_code_blocks_run_as_written(tmp_path):
    """examples/trl_sft_gold.py as docs/guide/objectives.md runs it, cut to a few updates, then every Python
    block of the guide pages, as written, in the folder the example wrote to."""
    pytest.importorskip("trl", reason="TRL (pip install -e '.[dev]') runs the SFTTrainer tests")
    example = [str(REPO / "examples" / "trl_sft_gold.py"), "--output-dir", "runs/trl_gold", "--examples", "64"]
    blocks = [block for page in PAGES_WITH_CODE for block in re.findall(r"```python\n(.*?)```", (REPO / page).read_text(), re.S)]
    blocks = [block for block in blocks if not RUN_ELSEWHERE.match(block)]  # test_blocks_run_elsewhere_are_run_there
    assert len(blocks) >= 2
    scripts = []
    for number, block in enumerate(blocks):
        scripts.append(tmp_path / f"block{number}.py")
        scripts[-1].write_text(block)
    command = [sys.executable, "-W", "always::FutureWarning", "-c", RUNNER, *example, "--sft-steps", "2", "--gold-steps", "3"]
    result = subprocess.run([*command, "--blocks", *map(str, scripts)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    example_said, _, blocks_said = result.stderr.partition("--- the example ended\n")
    assert "GOLD-s update 3: loss" in result.stdout and blocks_said, result.stderr[-3000:]
    assert "FutureWarning" not in example_said, example_said[-3000:]  # no deprecated TRL interface
    assert result.stdout.count("ran ") == len(scripts)
    # peft 0.21 still calls a transformers 5 name that warns (is_gradient_checkpointing): not an interface of ours
    from_trl = [line for line in blocks_said.splitlines() if "FutureWarning" in line and "/trl/" in line]
    assert not from_trl, from_trl


# A block that needs a workflow's finished run says which test runs its calls on one: `# run by tests/<file>`.
RUN_ELSEWHERE = re.compile(r"# run by (tests/\S+\.py)")


def test_blocks_run_elsewhere_are_run_there():
    """Every call a `# run by tests/<file>` block makes (the names before an opening parenthesis, its imports)
    is made in that file: the page shows what the test runs."""
    found = 0
    for page in PAGES_WITH_CODE:
        for block in re.findall(r"```python\n(.*?)```", (REPO / page).read_text(), re.S):
            marked = RUN_ELSEWHERE.match(block)
            if not marked:
                continue
            found += 1
            test = (REPO / marked.group(1)).read_text()
            calls = set(re.findall(r"\b([A-Za-z_]\w*)\(", block)) | set(re.findall(r"^from [\w.]+ import (\w+)", block, re.M))
            missing = sorted(name for name in calls if not re.search(rf"\b{name}\b", test))
            assert not missing, f"{page}: {marked.group(1)} does not run {', '.join(missing)}"
    assert found


# A measured duration or a count of tests typed in prose: "41 min", "about five minutes", "a five-minute demo",
# "2.5 h", "722 tests".
TYPED_FIGURE = re.compile(
    r"\b(?:\d+(?:[.,]\d+)*[\s-]?|(?:one|two|three|four|five|six|seven|eight|nine|ten)[\s-])(?:ms|min|minutes?|hours?|h|s)\b"
    r"|\b\d[\d,]*\s+tests\b",
    re.I,
)


# What a benchmark writes into a page (benchmarks/page_blocks.py): its measured figures, with its machine and commit.
GENERATED_BLOCK = re.compile(r"<!-- ([\w -]+): written by [^>]*-->.*?<!-- /\1 -->", re.S)


def test_measured_times_and_test_counts_are_quoted_from_the_benchmarks_page_alone():
    """docs/benchmarks.md holds them, each with the command that measured it, its machine and commit (the
    suite's row written by `benchmarks.suite_time`); the front page, the guides, the development page and
    the comments of the configs and the Makefile link there instead of typing a figure that goes stale, or
    quote a benchmark's block that the benchmark itself writes there (the middle recipe's, in the guide)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "docs" / "guide").glob("*.md"))]
    texts = {page: page.read_text() for page in pages if page.name != "benchmarks.md"}
    for path in [REPO / "config.yaml", REPO / "Makefile", *sorted((REPO / "configs").glob("*.yaml"))]:
        texts[path] = "\n".join(re.findall(r"#(.*)$", path.read_text(), re.M))
    texts = {path: GENERATED_BLOCK.sub("", text) for path, text in texts.items()}  # a benchmark's own block quotes its run
    typed = [f"{path.relative_to(REPO)}: {match.group(0)!r}" for path, text in texts.items() for match in TYPED_FIGURE.finditer(text)]
    assert not typed, "\n".join(typed)
    assert "<!-- suite-time" in (REPO / "docs" / "benchmarks.md").read_text()
