"""The code in a result's identity: a digest of the package source each workflow step runs.

Snakemake reruns a job when its params change. Each rule that runs package code puts `code_version(...)` in
its params: a sha256 over the step's adapter in `workflow_scripts/` and every module of the package that
adapter imports, directly or through other modules (imports inside functions included). Editing
`objectives/gold.py` therefore reruns the fine-tuning jobs (their trainer imports it) and what reads their
models, but not MLE training or the data preparation, which never import it.

The objectives catalog is read at the grain of its rows: a job's identity holds the rows of the losses it
runs (`rows`: a fine-tuning job its objective's loss, the tables the experiment's losses, MLE, evaluation
and the data steps none) and, of the loss functions the loss table imports by name, those rows' modules.
Adding or editing a row, or a loss's own file, reruns only the jobs of that loss and what reads them.

What counts as a change is what can change behaviour: comments, docstrings, blank lines and trailing
spaces are left out, so a reworded docstring reruns nothing; any other edit, reformatting included, does.
Where code lives is left out too: a job's identity is the set of the top-level statements (functions,
classes, assignments) of its modules, each as it runs, whichever module holds it, and the package's own
import lines are left out (an import under another name counts as that name). Moving a function or a class
to another module, splitting a module at its seams, renaming a module or moving modules into a package of
their own reruns nothing. What a set cannot see: the order of a module's top-level statements, and which of
two same-named definitions an import picks (a reordering or a switch that changes behaviour is rare; one
that breaks fails loudly). The start-up modules (`STARTUP_MODULES`: how a step starts and where it logs)
are left out.
The digest reads files, never imports them (the DAG is built without torch), and does not depend on where
the package or the checkout lies, so a copied results folder keeps its identity.
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import io
import json
import os
import tokenize
from pathlib import Path

from ..catalog import function_modules

PACKAGE = "gold_textgen"


def package_root() -> Path:
    """The folder of the installed gold_textgen package (its source, for an editable install)."""
    return Path(__file__).resolve().parents[1]


def behaviour_statements(source: str) -> list[str]:
    """`source`'s top-level statements as they run: less comments, docstrings, blank lines and trailing
    spaces, and less the package's own imports (`from .dropout_state import without_dropout`): where a name
    comes from is the package's layout. A job's identity is the set of its modules' statements
    (`script_code_version`), so moving a function, a class or a whole module elsewhere in the package, and
    the import lines that follow it, leaves every digest as it was. An own import under another name
    (`import f as g`) is kept as that, since it changes what the module's code calls `g`."""
    lines = source.splitlines()
    edits: list[tuple[int, int, int, int]] = []  # (first line, first col, last line, end col) to blank, 1-based lines
    renamed_imports: list[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                edits.append((first.lineno, first.col_offset, first.end_lineno, first.end_col_offset))
        if _is_own_import(node):
            renamed_imports += [f"import {alias.name} as {alias.asname}" for alias in node.names if alias.asname]
            edits.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            edits.append((token.start[0], token.start[1], token.end[0], token.end[1]))
    # Blank from the end so earlier spans keep their columns; every line keeps its number.
    for first_line, first_col, last_line, end_col in sorted(edits, reverse=True):
        if first_line == last_line:
            line = lines[first_line - 1]
            lines[first_line - 1] = line[:first_col] + line[end_col:]
        else:
            lines[first_line - 1] = lines[first_line - 1][:first_col]
            for number in range(first_line, last_line - 1):
                lines[number] = ""
            lines[last_line - 1] = lines[last_line - 1][end_col:]
    statements = []
    for node in tree.body:
        first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", ()))])
        text = "\n".join(line.rstrip() for line in lines[first - 1 : node.end_lineno] if line.strip())
        if text:
            statements.append(text)
    return [*statements, *sorted(set(renamed_imports))]


def behaviour_text(source: str) -> str:
    """`source` as it runs (`behaviour_statements`), one statement after another."""
    return "\n".join(behaviour_statements(source))


def statement_digests(source: str) -> frozenset[str]:
    """The digests of `source`'s statements as they run: what a module adds to a job's identity."""
    return frozenset(hashlib.sha256(statement.encode()).hexdigest() for statement in behaviour_statements(source))


def _is_own_import(node: ast.AST) -> bool:
    """A `from` import of one of the package's modules (relative, or absolute from gold_textgen): where the
    names come from is the package's layout, not its behaviour."""
    if not isinstance(node, ast.ImportFrom):
        return False
    return bool(node.level) or (node.module or "").split(".")[0] == PACKAGE


def module_file(module: str, root: Path) -> Path | None:
    """The source file of a gold_textgen module (None for a name that is not one, e.g. a class)."""
    parts = module.split(".")[1:]
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(module: str, file: Path) -> str:
    return module if file.name == "__init__.py" else module.rpartition(".")[0]


def imported_modules(source: str, module: str | None, file: Path | None, root: Path) -> set[str]:
    """The gold_textgen modules a source imports anywhere in it (absolute and relative imports)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if module is None or file is None:
                    continue
                package = _package_of(module, file).split(".")
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != PACKAGE:
                continue
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    return {name for name in found if module_file(name, root) is not None}


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


# A record of each file's digest and imports under its path, size and modification time, so that planning
# a workflow reads and tokenises only the files that changed since (use_cache; the workflow keeps it in the
# user's cache folder, shared by every working directory). Without it every file is read.
_cache: dict | None = None
# What a digest means (behaviour_text's rules): part of each cache key, so that a cache written under other
# rules is never read as this one's.
DIGEST_RULES = "4: the set of top-level statements, own imports left out"
_cache_path: Path | None = None
_cache_changed = False  # new entries not yet in the file (written at exit)


def default_cache_file() -> Path:
    """$XDG_CACHE_HOME/gold-textgen/code_identity.json (~/.cache/... when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gold-textgen" / "code_identity.json"


def use_cache(path: str | Path) -> None:
    """Keep the files' digests in `path` between processes (a JSON file, rewritten at the process's exit
    when it grew: a plan digests every step's code, and one write of the file is enough)."""
    global _cache, _cache_path
    if _cache_path is None:
        atexit.register(_save_cache)
    _cache_path = Path(path)
    try:
        _cache = json.loads(_cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        _cache = {}


def _stamp(stat: os.stat_result) -> tuple[int, ...]:
    """What tells a file's edits apart: the change time and the inode besides the modification time and size
    (an edit whose modification time was put back, by a checkout, an editor or os.utime, still moves the
    change time, which nothing sets)."""
    return stat.st_mtime_ns, stat.st_size, stat.st_ctime_ns, stat.st_ino


@functools.cache
def _file_facts(file: Path, module: str | None, root: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(digests of its statements, imported gold_textgen modules) of one file, read once per process."""
    global _cache_changed
    key = f"{file.resolve()}|{module}|{root.resolve()}|{DIGEST_RULES}"
    stat = file.stat()
    stamp = list(_stamp(stat))
    entry = _cache.get(key) if _cache is not None else None
    if entry and entry["stamp"] == stamp:
        return frozenset(entry["digests"]), frozenset(entry["imports"])
    source = file.read_text(encoding="utf-8")
    digests = statement_digests(source)
    imports = frozenset(imported_modules(source, module, file if module else None, root))
    if _cache is not None:
        _cache[key] = {"stamp": stamp, "digests": sorted(digests), "imports": sorted(imports)}
        _cache_changed = True
    return digests, imports


def _save_cache() -> None:
    """Replace the cache file with the entries of the files that still exist (a package copy that was deleted
    leaves none behind), when there is something new (no fsync: a cache lost in a crash is rebuilt; a damaged
    one is ignored)."""
    global _cache_changed
    if not _cache_changed or _cache is None or _cache_path is None:
        return
    for key in [key for key in _cache if not os.path.exists(key.split("|", 1)[0]) or not key.endswith(f"|{DIGEST_RULES}")]:
        del _cache[key]
    partial = _cache_path.with_name(f".{_cache_path.name}.{os.getpid()}.tmp")
    try:
        _cache_path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(_cache), encoding="utf-8")
        os.replace(partial, _cache_path)
    except OSError:  # a read-only home: the digests are worked out each time instead
        pass
    _cache_changed = False


def _module_facts(module: str, root: Path) -> tuple[frozenset[str], frozenset[str]]:
    return _file_facts(module_file(module, root), module, root)


CATALOG = "gold_textgen.catalog"
LOSS_TABLE = "gold_textgen.objectives.table"  # imports each row's loss functions by the module name the row gives


def catalog_rows_text(source: str, rows: tuple[str, ...]) -> str:
    """A catalog module's source with only the `Loss(...)` rows of the losses in `rows` (each row starts on a
    line of its own and ends with its closing parenthesis and comma)."""
    lines = source.splitlines(keepends=True)
    others = [
        (node.lineno, node.end_lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Loss" and node.args
        if isinstance(node.args[0], ast.Constant) and node.args[0].value not in rows
    ]
    for first, last in sorted(others, reverse=True):
        del lines[first - 1 : last]
    return "".join(lines)


@functools.cache
def _rows_digests(file: Path, stamp: tuple[int, ...], rows: tuple[str, ...]) -> frozenset[str]:
    return statement_digests(catalog_rows_text(file.read_text(encoding="utf-8"), rows))


def _module_digests(module: str, root: Path, rows: tuple[str, ...] | None) -> frozenset[str]:
    """A module's statement digests; the catalog's modules' at the grain of `rows` (None: every row)."""
    if not module.startswith(CATALOG) or rows is None:
        return _module_facts(module, root)[0]
    file = module_file(module, root)
    return _rows_digests(file, _stamp(file.stat()), tuple(sorted(rows)))


def module_closure(entries: set[str], root: Path, rows: tuple[str, ...] | None = None) -> list[str]:
    """`entries` and every gold_textgen module they import, transitively, with their parent packages; of the
    loss modules the loss table imports by name, those of `rows` (None: all)."""
    pending = [name for entry in entries for name in _with_parents(entry)]
    seen: set[str] = set()
    while pending:
        module = pending.pop()
        if module in seen or module_file(module, root) is None:
            continue
        seen.add(module)
        by_name = function_modules(rows) if module == LOSS_TABLE else ()
        for imported in [*_module_facts(module, root)[1], *by_name]:
            pending.extend(_with_parents(imported))
    return sorted(seen)


@functools.cache
def script_code_version(
    script: Path, root: Path | None = None, extra_modules: tuple[str, ...] = (), rows: tuple[str, ...] | None = None
) -> str:
    """The code identity of a workflow step: `script` (a workflow_scripts/ adapter) and the modules it runs,
    plus `extra_modules` it reaches by name (training.launch dispatches "mle" and "fine_tune" this way), with
    the catalog rows of the losses `rows` (None: every row)."""
    root = root or package_root()
    script_digests, script_imports = _file_facts(script, None, root)
    modules = module_closure(set(script_imports) | set(extra_modules), root, rows)
    # one set of statements, whichever file holds each: where code lives is not its behaviour
    statements = set(script_digests)
    for module in modules:
        if module not in STARTUP_MODULES:
            statements |= _module_digests(module, root, rows)
    return hashlib.sha256("\0".join(sorted(statements)).encode()).hexdigest()[:16]


def workflow_code_version(scripts_dir: Path, root: Path | None = None) -> str:
    """One digest of every step's code (all of `scripts_dir`'s adapters and what they run): what an
    experiment's results were built with, as a whole."""
    digest = hashlib.sha256()
    for script in sorted(Path(scripts_dir).glob("*.py")):
        digest.update(script.name.encode() + script_code_version(script, root, TRAINING_MODULES).encode())
    return digest.hexdigest()[:16]


# How a step starts, where it logs and how it checks its files, not what it computes: a step forked warm
# from a server or started cold, logging to its file either way, writes the same outputs
# (tests/test_workflow_code_identity.py runs both), and the checks of its inputs and the record of its
# outputs (output_records.py, file_times.py) only stop a step or write beside it, so editing these reruns nothing.
STARTUP_MODULES = frozenset(
    {
        "gold_textgen.runtime.warm_start",
        "gold_textgen.runtime.warm_start_server",
        "gold_textgen.runtime.warm_messages",
        "gold_textgen.runtime.logs",
        "gold_textgen.runtime.output_records",
        "gold_textgen.runtime.file_times",
    }
)

# Modules the training launcher imports by name (training/launch.py), part of the whole workflow's code.
TRAINING_MODULES = ("gold_textgen.training.mle", "gold_textgen.training.fine_tune")
