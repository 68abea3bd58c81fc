"""Every name a sentence puts in backticks resolves to something that exists, so no comment, docstring,
docs page or config comment keeps the name of a file, class, function or config key after it moved or
went away. Checked kinds: a path (a tracked file or folder, or a file the code writes), a class or a call
(a CamelCase name, or a name followed by brackets: defined in the project or in a library it names), a `gold_textgen.` module, and a config
key (`experiment.seeds`, `tasks.demo.model.lora`: each part a key of the schema or of a shipped config);
and the kinds of tests/name_kinds.py: a bare snake_case name, a dotted `module.name` (defined in that
module), a library's attribute, a make target, and a path written outside backticks. PROBES holds a
made-up name of each kind, which the checks must find. Names of other projects' files and settings are
listed below, each with where it lives."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import subprocess
from functools import cache
from pathlib import Path

import yaml
from conftest import REPO
from name_kinds import DOTTED, MAKE, PLAIN_PATH, SNAKE, definitions, library_attribute, make_targets

# Other projects' files, classes and settings the docs cite by name (they exist there, not here).
ELSEWHERE = {
    "fairseq_cli/train.py": "fairseq",
    "examples/translation/prepare-iwslt14.sh": "fairseq",
    "prepare-iwslt14.sh": "fairseq",
    "run_iwslt_golds.sh": "yzpang/gold-off-policy-text-gen-iclr21",
    "run_cnndm_validation_step2.sh": "yzpang/gold-off-policy-text-gen-iclr21",
    "train.py": "clovaai/FocusSeq2Seq",
    "layers/beam_search.py": "clovaai/FocusSeq2Seq",
    "layers/decoder.py": "clovaai/FocusSeq2Seq",
    "utils/data_utils.py": "clovaai/FocusSeq2Seq",
    "utils/initializer.py": "clovaai/FocusSeq2Seq",
    "utils/rouge/perl_rouge.py": "clovaai/FocusSeq2Seq",
    "Seq2Seq": "clovaai/FocusSeq2Seq's model class",
    "redistribute/QG/": "the NQG release's archive",
    "GEMTrainer": "the GEM reference implementation",
    "GOLDTrainer": "TRL's experimental trainer of the same name",
    "KillWait": "slurm.conf",
    "MinJobAge": "slurm.conf",
    "directory()": "Snakemake's rule-output helper",
    "key.csv": "the human-evaluation key a user passes",
    "configs/my_run.yaml": "a config of the reader's own",
    "generation_config.json": "what transformers' save_pretrained writes beside a model",
    "nvidia-h200.yaml": "the profile benchmarks.device_profile names after the device it runs on",
    "src/llamafactory/train/trainer_utils.py": "LLaMA-Factory",
    "apply_chat_template": "a transformers tokenizer's method",
    "save_pretrained": "a transformers model's and tokenizer's method",
    "get_available_reporting_integrations": "transformers.integrations",
    "assistant_only_loss": "a field of TRL's SFTConfig",
    "use_peft": "a field of TRL's ModelConfig",
    "dft_loss": "TRL's SFTTrainer",
    "use_token_scaling": "TRL's Liger kernel path",
    "tailr_loss": "thu-coai/TaiLr's fairseq criterion",
    "compute_advantage": "verl's PPO core (PSFT's reference)",
    "compute_policy_loss_vanilla": "verl's PPO core (PSFT's reference)",
    "max_len_b": "fairseq's generation option",
    "min_len": "fairseq's generation option",
    "transformer_iwslt_de_en": "fairseq's architecture name",
    "slurm_account": "a resource of Snakemake's SLURM executor plugin",
    "gpu_model": "a resource of Snakemake's SLURM executor plugin",
    "my_run": "a config of the reader's own (configs/my_run.yaml)",
    "gold_zz": "a made-up objective name, the example of an error",
}
LIBRARIES = (
    "transformers",
    "trl",
    "peft",
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.distributed.fsdp",
    "datasets",
    "tokenizers",
    "pandas",
    "numpy",
    "snakemake",
    "sacrebleu",
    "matplotlib.pyplot",
    "click",
    "yaml",
    "jsonschema",
    "accelerate",
    "safetensors",
)
SUFFIXES = (".py", ".yaml", ".md", ".smk", ".sh", ".toml", ".cfg", ".txt", ".json", ".csv", ".html", ".png", ".jsonl")


@cache
def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()


def prose() -> dict[str, str]:
    """Per tracked file, the text a reader reads: docs pages (the changelog, a record of past names, aside),
    docstrings and comments of the code, comments of the rules and configs."""
    texts = {}
    for name in tracked():
        path = REPO / name
        if name.endswith(".md") and name != "CHANGELOG.md" and not name.startswith("docs/runs/"):
            texts[name] = path.read_text()
        elif name.endswith(".py"):
            source = path.read_text()
            nodes = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)]
            docstrings = [ast.get_docstring(node) or "" for node in nodes]
            texts[name] = "\n".join(docstrings + re.findall(r"#(.*)$", source, re.M))
        elif name.endswith((".smk", ".yaml")) or name == "Snakefile":
            texts[name] = "\n".join(re.findall(r"#(.*)$", path.read_text(), re.M))
    return texts


@cache
def defined_names() -> frozenset[str]:
    """Classes, functions, attributes and variables the project's Python defines, and its rules."""
    names = set()
    for name in tracked():
        if name.endswith(".py"):
            for node in ast.walk(ast.parse((REPO / name).read_text())):
                if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(node.name)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
                names.update(target.id for target in targets if isinstance(target, ast.Name))
                names.update(target.attr for target in targets if isinstance(target, ast.Attribute))
        elif name.endswith(".smk") or name == "Snakefile":
            names.update(re.findall(r"^\s*(?:rule|checkpoint)\s+(\w+)", (REPO / name).read_text(), re.M))
    return frozenset(names)


@cache
def written_names() -> str:
    """The string literals of the package, the rules and the benchmarks joined: where the names of the files
    they write appear."""
    pieces = []
    for name in tracked():
        writes = name.startswith(("src/", "rules/", "benchmarks/")) or name == "Snakefile"
        if writes and (name.endswith((".py", ".smk")) or name == "Snakefile"):
            pieces += re.findall(r"[\"']([^\"'\n]+)[\"']", (REPO / name).read_text())
    return "\n".join(pieces)


@cache
def config_keys() -> frozenset[str]:
    """Every key of the schema's properties and of the shipped configs."""
    keys = set()

    def collect(node, in_properties=False):
        if isinstance(node, dict):
            for key, value in node.items():
                if in_properties:
                    keys.add(str(key))
                collect(value, key == "properties" and not in_properties)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    def every_key(node):
        if isinstance(node, dict):
            keys.update(str(key) for key in node)
            for value in node.values():
                every_key(value)

    collect(yaml.safe_load((REPO / "src/gold_textgen/config/config.schema.yaml").read_text()))
    for name in tracked():
        if name == "config.yaml" or (name.startswith("configs/") and name.endswith(".yaml")):
            every_key(yaml.safe_load((REPO / name).read_text()))
    return frozenset(keys)


def in_a_library(name: str) -> bool:
    for library in LIBRARIES:
        try:
            if hasattr(importlib.import_module(library), name.split(".")[0]):
                return True
        except ImportError:
            continue
    return False


def path_resolves(name: str) -> bool:
    stripped = name.rstrip("/")
    if any((REPO / base / stripped).exists() for base in ("", "src/gold_textgen", "docs", "src")):
        return True
    if any(path == stripped or path.endswith("/" + stripped) or f"/{stripped}/" in f"/{path}" for path in tracked()):
        return True
    return Path(stripped).name in written_names()  # a file the workflow writes (a table, a marker file)


@cache
def known_words() -> frozenset[str]:
    """What a bare snake_case name may be: a name the project's Python defines (parameters included), a
    config key, a word of the package's strings (columns, files, labels), a shipped config's name, a
    registered claim, a rule."""
    from gold_textgen.claims.paper_claims import CLAIMS
    from gold_textgen.comparisons.significance import BASELINES

    words = set().union(*definitions(tuple(tracked())).values()) | config_keys() | defined_names() | set(CLAIMS)
    words |= set(re.findall(r"[a-z][a-z0-9_]*", written_names()))
    words |= {Path(name).stem for name in tracked() if name.startswith("configs/")}
    words |= {f"vs_{baseline}" for baseline in BASELINES}  # the significance columns, named after their baselines
    for name in tracked():  # the functions of the rules' Python
        if name.endswith(".smk") or name == "Snakefile":
            words.update(re.findall(r"^def (\w+)", (REPO / name).read_text(), re.M))
    return frozenset(words)


def other_kinds(name: str) -> str | None:
    """Why a name of the kinds tests/name_kinds.py adds does not resolve (None: it does, or is none of them)."""
    core = re.sub(r"\(.*\)$", "", name)  # a call's arguments aside
    if name.endswith(SUFFIXES):
        return None  # a file name: the path checks read it
    if (found := library_attribute(core)) is not None:
        return None if found else "no such attribute in that library"
    if match := MAKE.fullmatch(name):
        return None if match.group(1) in make_targets() else "no such make target"
    stems = definitions(tuple(name for name in tracked() if name.startswith(("src/", "benchmarks/"))))
    if (match := DOTTED.fullmatch(core)) and match.group(1) in stems and match.group(1) not in config_keys():
        return None if match.group(2) in stems[match.group(1)] else f"{match.group(1)} defines no {match.group(2)}"
    if SNAKE.fullmatch(core):
        known = core in known_words() or in_a_library(core)
        return None if known else "no such name in the project, its configs or its files"
    return None


def problem(name: str) -> str | None:
    """Why `name` does not resolve, or None (also for a name of a kind this test does not check)."""
    if name in ELSEWHERE:
        return None
    if (why := other_kinds(name)) is not None or library_attribute(re.sub(r"\(.*\)$", "", name)) is not None:
        return why
    top_level = ("experiment.", "tasks.", "decoders.", "analysis.", "cost.", "training_logger.")
    if name.startswith("gold_textgen."):
        module = name.removesuffix("()").split(":")[0]
        parts = module.split(".")

        def module(n: int) -> bool:  # the first n parts name a module or a package
            path = REPO / "src" / Path(*parts[:n])
            return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

        # a module, or a name in one (defined there)
        found = module(len(parts)) or (module(len(parts) - 1) and parts[-1] in defined_names())
        return None if found else "no such module"
    if ("/" in name or name.endswith(SUFFIXES)) and " " not in name and not re.search(r"[{}<>*$|=()\[\]\"]", name):
        outside = name.startswith(("results/", "logs/", ".snakemake", "/", "~", "http", "../", "file:"))
        hub_name = re.fullmatch(r"[\w.-]+/[\w.-]+", name) and not name.endswith(SUFFIXES)
        if outside or hub_name:
            return None  # run outputs, absolute or external addresses, and hub names (owner/name)
        return None if path_resolves(name) else "no such file, and no code writes one of that name"
    if name.startswith(top_level) and re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z0-9_]+)+", name):
        missing = [part for part in name.split(".") if part not in config_keys()]
        return f"no config key {missing[0]}" if missing else None
    core = name.removesuffix("()")
    if re.fullmatch(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*(\.\w+)*", core) or (name.endswith("()") and re.fullmatch(r"[\w.]+", core)):
        last = core.split(".")[-1]
        known = last in defined_names() or hasattr(builtins, core) or in_a_library(core)
        return None if known else "no such class or function"
    return None


def test_every_name_in_backticks_resolves():
    stale = {}
    for file, text in prose().items():
        for name in dict.fromkeys(re.findall(r"`([^`\n]+)`", text)):
            why = problem(name)
            if why:
                stale.setdefault(f"`{name}`: {why}", []).append(file)
    assert not stale, "\n".join(f"{name} ({', '.join(files)})" for name, files in sorted(stale.items()))


def test_the_check_finds_a_moved_file_a_removed_class_and_an_unknown_config_key():
    assert problem("catalog/rows.py") is None and problem("training/no_such_module.py")
    assert problem("ObjectiveSFTTrainer") is None and problem("LossSettings")  # a class the catalog once named
    assert problem("tasks.demo.model.lora") is None and problem("experiment.seedz")
    assert problem("gold_textgen.training.packed_examples") is None and problem("gold_textgen.training.packing")


def test_every_path_in_plain_prose_resolves():
    """A project path written without backticks (`see configs/x.yaml`) is checked like one in them."""
    stale = {}
    for file, text in prose().items():
        plain = re.sub(r"```.*?```|`[^`\n]*`", " ", text, flags=re.S)
        for name in dict.fromkeys(PLAIN_PATH.findall(plain)):
            if name not in ELSEWHERE and not path_resolves(name):
                stale.setdefault(name, []).append(file)
    assert not stale, "\n".join(f"{name} ({', '.join(files)})" for name, files in sorted(stale.items()))


# Made-up names of every kind the checks catch: each must be found (the checks cannot pass vacuously).
PROBES = [
    "no_such_helper_here",  # a bare snake_case name
    "method_test.no_such_power",  # a dotted name its module does not define
    "claims.power_range",  # a function named in the wrong module (method_test defines it)
    "torch.no_such_thing",  # a library attribute
    "make no-such-target",  # a make target
]


def test_the_check_finds_every_kind_of_made_up_name():
    assert [name for name in PROBES if problem(name) is None] == []
    assert problem("method_test.power_range") is None and problem("torch.no_grad") is None and problem("make demo") is None
    assert PLAIN_PATH.findall("as configs/no_such.yaml says") == ["configs/no_such.yaml"] and not path_resolves("configs/no_such.yaml")
