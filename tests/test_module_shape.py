"""The package's rooms are kept to a size a reader can hold: modules under the line limit with room to
spare, measured as the formatter lays them out (so a file cannot reach the limit by folding lines), no
function longer than a screen and a half, and no sub-package holding more than its share of the code."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from gold_textgen.docs_pages.code_map import FLOORS, line_count

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gold_textgen"
PYPROJECT = PACKAGE.parents[1] / "pyproject.toml"
MAX_MODULE_LINES = 350
MARGIN = 0.05  # a module within 5% of the limit is split at its seams before it is squeezed to stay under
MAX_FUNCTION_LINES = 80
MAX_SUB_PACKAGE_SHARE = 0.13
# What lets a file keep hand-folded lines past the formatter: its exemptions.
EXEMPTIONS = ("  # fmt: skip", "# fmt: off", "# fmt: on")


def modules(package: Path = PACKAGE) -> list[Path]:
    return sorted(path for path in package.rglob("*.py") if "__pycache__" not in path.parts)


def laid_out_lines(files: list[Path], root: Path, scratch: Path) -> dict[str, int]:
    """Each file's line count as ruff formats it at the project's settings with its `fmt: skip` and `fmt:
    off` exemptions removed: lines folded by hand inside an exemption count as the formatter would lay them
    out; elsewhere the formatter has laid them out already (`make lint` checks it). Comments and docstrings
    wrap as written: their width is the project's line length either way."""
    for file in files:
        copy = scratch / file.relative_to(root)
        copy.parent.mkdir(parents=True, exist_ok=True)
        lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if line.strip() not in ("# fmt: off", "# fmt: on")]
        copy.write_text("".join(line.replace(EXEMPTIONS[0], "") for line in kept), encoding="utf-8")
    ruff = Path(sys.executable).with_name("ruff")
    subprocess.run(
        [str(ruff if ruff.exists() else shutil.which("ruff")), "format", "--quiet", "--config", str(PYPROJECT), str(scratch)], check=True
    )
    return {str(file.relative_to(root)): line_count(scratch / file.relative_to(root)) for file in files}


def test_no_module_is_near_the_line_limit_as_written_or_as_laid_out(tmp_path):
    ceiling = int(MAX_MODULE_LINES * (1 - MARGIN))
    written = {str(path.relative_to(PACKAGE)): line_count(path) for path in modules()}
    laid_out = laid_out_lines(modules(), PACKAGE, tmp_path)
    assert {name: lines for name, lines in written.items() if lines > ceiling} == {}
    assert {name: lines for name, lines in laid_out.items() if lines > ceiling} == {}


def test_lines_folded_inside_a_formatter_exemption_count_as_laid_out(tmp_path):
    """The probe: 300 short values folded ten to a line under `# fmt: skip` are 32 lines as written and
    over 300 as the formatter lays them out, so the folded file fails the test above."""
    package = tmp_path / "package"
    package.mkdir()
    values = "\n".join("    " + ", ".join(f"value_{row}_{column}" for column in range(10)) + "," for row in range(30))
    folded = package / "folded.py"
    folded.write_text(f"VALUES = (\n{values}\n)  # fmt: skip\n", encoding="utf-8")
    assert line_count(folded) == 32
    assert laid_out_lines([folded], package, tmp_path / "laid_out")["folded.py"] > 300


def long_functions(path: Path) -> dict[str, int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        f"{path.relative_to(PACKAGE)}:{node.name}": node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }


def test_no_function_is_longer_than_the_limit():
    found = {}
    for path in modules():
        found |= long_functions(path)
    assert found == {}


def test_no_sub_package_holds_more_than_its_share_of_the_code():
    sizes = {name: sum(line_count(path) for path in modules(PACKAGE / name)) for name in FLOORS}
    total = sum(sizes.values())
    assert {name: round(lines / total, 3) for name, lines in sizes.items() if lines / total > MAX_SUB_PACKAGE_SHARE} == {}
