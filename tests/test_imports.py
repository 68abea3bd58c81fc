"""The package's shape: sub-packages import only downwards, and the modules of jobs that only read files
do not pull in torch."""

import ast
import subprocess
import sys
from pathlib import Path

import gold_textgen
from gold_textgen.docs_pages.code_map import FLOORS

PACKAGE = Path(gold_textgen.__file__).parent
# Lower floors never import higher ones; sub-packages on one floor never import each other.
CPU_MODULES = (
    "analysis.tables",
    "analysis.paper_comparison",
    "analysis.rule_outputs",
    "analysis.human_eval",
    "analysis.bootstrap",
    "evaluation.scoring",
    "evaluation.lead3",
    "data.prepare",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every gold_textgen module `path` imports, relative imports resolved."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            found.add(".".join(base + ([node.module] if node.module else [])))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gold_textgen"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("gold_textgen")}
    return found


def sub_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__main__" else None  # __main__: the entry point, above every sub-package


def import_violations(modules: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, imports in sorted(modules.items()):
        home = sub_package(module)
        for target in sorted(imports):
            other = sub_package(target)
            if home is None or other == home:
                continue
            if other not in FLOORS:
                problems.append(f"{module} imports {target}, outside every sub-package")
            elif FLOORS[other] >= FLOORS[home]:
                problems.append(f"{module} ({home}) imports {target} ({other}): imports go to lower sub-packages only")
    return problems


def test_every_module_lives_in_a_sub_package():
    top_level = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert top_level == []
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == sorted(FLOORS)


def test_sub_packages_import_only_downwards():
    modules = {module_name(path): imported_modules(path) for path in PACKAGE.rglob("*.py")}
    assert import_violations(modules) == []


def test_the_direction_check_catches_an_upward_import_and_a_sideways_one():
    modules = {
        "gold_textgen.data.prepare": {"gold_textgen.training.training_job"},  # upward
        "gold_textgen.analysis.tables": {"gold_textgen.training.mle"},  # sideways, same rank
        "gold_textgen.training.mle": {"gold_textgen.data.tokenization", "gold_textgen.training.training_job"},  # fine
    }
    problems = import_violations(modules)
    assert [problem.split(":")[0] for problem in problems] == [
        "gold_textgen.analysis.tables (analysis) imports gold_textgen.training.mle (training)",
        "gold_textgen.data.prepare (data) imports gold_textgen.training.training_job (training)",
    ]


def test_relative_imports_are_resolved_from_the_importing_module():
    path = PACKAGE / "training" / "mle.py"
    assert "gold_textgen.training.training_job" in imported_modules(path)
    assert "gold_textgen.data.tokenization" in imported_modules(path)


def test_cpu_only_job_modules_do_not_import_torch():
    """Jobs that only read files (scores, tables, figures, analyses) must start fast: importing torch or
    transformers costs seconds per job."""
    probe = "; ".join(f"import gold_textgen.{name}" for name in CPU_MODULES)
    probe += "; import sys; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def import_cycles(modules: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of the module-level import graph (each as the modules along it, its first repeated)."""
    cycles, state = [], {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(modules.get(module, ())):
            if state.get(target) == "open":
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = "done"

    for module in sorted(modules):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_import_cycles():
    modules = {module_name(path): imported_modules(path) for path in PACKAGE.rglob("*.py")}
    # `from . import x` in a package names the package itself: not an edge
    modules = {module: {target for target in imports if target in modules and target != module} for module, imports in modules.items()}
    assert import_cycles(modules) == []


def test_the_cycle_check_finds_a_cycle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
