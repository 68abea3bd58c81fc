"""gold-textgen: run and inspect the GOLD workflow's experiments (run it from the project's root, where
the Snakefile is). Every subcommand has --help; the Snakemake commands of the docs work unchanged."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import click
import yaml

from ..bookkeeping.experiment_index import REPLACE_VARIABLE, read_record
from ..config.layers import OVERRIDES_SUFFIX
from ..config.set_overrides import checked_config
from ..cost.device_profile import DeviceProfile
from ..cost.dry_run import job_counts
from ..cost.planned_cost import DryRunFailed, cost_report, planned_jobs_output, snakemake_failure
from ..runtime.errors import ConfigError
from ..runtime.files import write_text

BASE_CONFIG = Path("config.yaml")
OVERRIDE_FOLDER = Path(".snakemake/gold-textgen")


def snakemake_command() -> list[str]:
    """Snakemake from this environment (the one the package is installed in)."""
    found = Path(sys.executable).with_name("snakemake")
    return [str(found)] if found.exists() else [sys.executable, "-m", "snakemake"]


def workflow_root() -> Path:
    if not Path("Snakefile").is_file():
        raise click.ClickException("no Snakefile here: run gold-textgen from the project's root")
    return Path.cwd()


def experiment_arguments(configs: tuple[str, ...], overrides: tuple[str, ...]) -> tuple[dict, list[str]]:
    """(the validated config, Snakemake's --configfile arguments): the config files, then the overrides
    written to a file of their own, named after the experiment (which they keep) and their content, so that
    two calls at once with other overrides never read each other's."""
    workflow_root()
    files = [Path(path) for path in configs]
    for path in files:
        if not path.is_file():
            raise click.BadParameter(f"{path}: no such config file", param_hint="CONFIGS")
    try:
        config, layer = checked_config(BASE_CONFIG, files, overrides)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    arguments = [str(path) for path in files if path.resolve() != BASE_CONFIG.resolve()]
    if overrides:
        text = yaml.safe_dump(layer, sort_keys=False)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        path = OVERRIDE_FOLDER / f"{config['experiment']['name']}.{digest}{OVERRIDES_SUFFIX}"
        write_text(path, text)
        arguments.append(str(path))
    return config, (["--configfile", *arguments] if arguments else [])


def load_profile(path: str) -> DeviceProfile:
    """A device profile, or the reason it is not one as the command's error."""
    try:
        return DeviceProfile.load(path)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None


def planned_jobs(arguments: list[str]) -> dict[str, int]:
    """Jobs per rule that Snakemake would run for these --configfile arguments (its dry run's table); the
    dry run's warnings (outputs changed in place, say) are shown."""
    result = subprocess.run([*snakemake_command(), "-n", "--quiet", "rules", *arguments], capture_output=True, text=True)
    if result.returncode:
        raise click.ClickException(snakemake_failure(result))
    for line in (result.stdout + result.stderr).splitlines():
        if line.startswith("WARNING: "):
            click.echo(line, err=True)
    return job_counts(result.stdout)


CONFIGS = click.argument("configs", nargs=-1, type=click.Path(dir_okay=False))
SET = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="override a setting (dotted key, YAML value); repeatable")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gold-textgen")
def main() -> None:
    """Run and inspect the GOLD workflow's experiments (from the project's root)."""


@main.command()
@CONFIGS
@SET
@click.option("--profile", help="a Snakemake profile by name (profiles/<name>), e.g. slurm")
@click.option("--cores", default="all", show_default=True, help="local cores (ignored with --profile)")
@click.option("-n", "--dry-run", "show_only", is_flag=True, help="show what would run, run nothing")
@click.option("--target", "targets", multiple=True, help="build only this output (repeatable)")
@click.option(
    "--replace",
    is_flag=True,
    help="run these settings on the models its folder holds, made under other settings (retrained where training changed)",
)
@click.option(
    "--snakemake",
    "passed",
    metavar="OPTIONS",
    help="more Snakemake options, as one quoted string: --snakemake '--keep-going --rerun-incomplete --set-threads train_mle=2'",
)
def run(configs, overrides, profile, cores, show_only, targets, replace, passed) -> None:
    """Run an experiment: CONFIGS (config files, merged over config.yaml in order) with any --set overrides."""
    flags = [target for target in targets if target.startswith("-")]
    if flags:
        raise click.BadParameter(f"{flags[0]} is an option, not an output; pass Snakemake options with --snakemake", param_hint="--target")
    config, arguments = experiment_arguments(configs, overrides)
    # Targets and options before --configfile: Snakemake reads every word after it as one more config file.
    command = [*snakemake_command(), *(["--profile", profile] if profile else ["--cores", cores]), *targets]
    command += [*shlex.split(passed or ""), *(["-n"] if show_only else []), *arguments]
    environment = {**os.environ, **({REPLACE_VARIABLE: config["experiment"]["name"]} if replace else {})}
    click.echo(" ".join(command), err=True)
    raise SystemExit(subprocess.call(command, env=environment))


@main.command()
@CONFIGS
@SET
@click.option(
    "--device",
    "device_profile",
    metavar="PROFILE",
    help="a device profile (benchmarks/devices/*.yaml): hours per rule and table, wall time",
)
@click.option(
    "--slots",
    type=click.IntRange(min=1),
    default=None,
    help="cores (GPUs on a GPU profile) the jobs share, for the wall time (default: this machine's cores)",
)
@click.option("--all", "everything", is_flag=True, help="cost everything, not only what is out of date")
def plan(configs, overrides, device_profile, slots, everything) -> None:
    """What would run for an experiment: jobs per rule; with --device (or the config's cost.device_profile)
    also the expected and upper-bound hours per rule and per table, and the wall time (nothing runs)."""
    config, arguments = experiment_arguments(configs, overrides)
    device_profile = device_profile or config["cost"]["device_profile"]
    if device_profile is None:
        counts = planned_jobs(arguments + (["--forceall"] if everything else []))
        for rule, count in counts.items():
            click.echo(f"{rule:24s} {count:6d}")
        click.echo(f"{'total':24s} {sum(counts.values()):6d}" if counts else "nothing to run: every output is up to date")
        return
    profile = load_profile(device_profile)  # a bad profile stops the command before the dry run's seconds
    slots = slots or len(os.sched_getaffinity(0))
    # A local run on `slots` cores gives each job the threads it asks for up to that many, and the schedule
    # depends on them (two 2-thread jobs do not share 2 cores): the dry run plans with the same cores. On a
    # GPU profile the slots are GPUs, and each job keeps the threads of its request.
    cores = [] if profile.gpu else ["--cores", str(slots)]
    try:
        output, startup = planned_jobs_output(snakemake_command(), cores + arguments, everything)
    except DryRunFailed as error:
        raise click.ClickException(str(error)) from None
    click.echo(cost_report(config, device_profile, output, slots, startup)[0])


@main.command()
@CONFIGS
@SET
def status(configs, overrides) -> None:
    """Whether an experiment's outputs are up to date: the jobs that would run, per rule (exit status 0 when
    none would, 1 when some would)."""
    config, arguments = experiment_arguments(configs, overrides)
    pending = planned_jobs(arguments)
    name = config["experiment"]["name"]
    record = read_record(f"results/{name}") or {}
    if record.get("config_edited_during_run"):
        edited = ", ".join(record["config_edited_during_run"])
        click.echo(f"{name}: its last run's config was edited while it went ({edited}); its results are of the config as it was read")
    if not pending:
        click.echo(f"{name}: up to date (results/{name}/)")
        return
    click.echo(f"{name}: {sum(pending.values())} jobs to run: " + ", ".join(f"{rule} {count}" for rule, count in pending.items()))
    raise SystemExit(1)


@main.command()
@CONFIGS
@SET
@click.option("--output", type=click.Path(dir_okay=False), help="the HTML file (default: results/<experiment>/report.html)")
def report(configs, overrides, output) -> None:
    """Every table and figure of an experiment in one HTML file: Snakemake's report of CONFIGS (merged over
    config.yaml) with any --set overrides, after the experiment has run; its front page names the results
    that were not up to date."""
    config, arguments = experiment_arguments(configs, overrides)
    name = config["experiment"]["name"]
    if not Path(f"results/{name}/tables").is_dir():
        run_it = " ".join(["gold-textgen run", *configs])
        raise click.ClickException(f"results/{name}/ holds no tables yet: run the experiment first ({run_it})")
    output = output or f"results/{name}/report.html"
    command = [*snakemake_command(), "--report", output, *arguments]
    click.echo(" ".join(command), err=True)
    raise SystemExit(subprocess.call(command))


@main.command(context_settings={"ignore_unknown_options": True}, add_help_option=False)
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def signatures(arguments) -> None:
    """The run checks and the paper's registered claims an experiment's grid covers, on its files (--results, --task; --help)."""
    from ..comparisons.demo_signatures import main as signatures_main

    raise SystemExit(signatures_main(list(arguments)))


@main.command(context_settings={"ignore_unknown_options": True}, add_help_option=False)
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def tally(arguments) -> None:
    """Tally filled human-evaluation sheets: --key key.csv SHEET... [--output result.csv] (--help for more)."""
    from ..analysis.human_eval import main as human_eval_main

    human_eval_main(["tally", *arguments])


def _not_trained_yet(model_dir: Path) -> str:
    """Why MODEL_DIR is missing, and the command that trains it where its path names an experiment."""
    parts = model_dir.parts
    if len(parts) >= 3 and parts[0] == "results" and parts[2] == "models":
        config = Path("configs") / f"{parts[1]}.yaml"
        configfile = f" --configfile {config}" if config.is_file() else ""
        return (
            f"{model_dir} does not exist: the experiment {parts[1]!r} has not trained it yet; run it first "
            f"(snakemake --cores all{configfile} {model_dir})"
        )
    return f"{model_dir} does not exist: name a model folder the workflow wrote (results/<experiment>/models/<task>/<objective>/seed<N>)"


@main.command(name="example-corpus")
@click.argument("directory", type=click.Path(file_okay=False), default="data/my_corpus")
@click.option("--train", type=click.IntRange(min=1), default=2000, show_default=True, help="training pairs")
@click.option("--valid", type=click.IntRange(min=1), default=200, show_default=True, help="dev pairs")
@click.option("--test", type=click.IntRange(min=1), default=200, show_default=True, help="test pairs")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="seed of the language and its sentences")
def example_corpus(directory, train, valid, test, seed) -> None:
    """Write an example parallel corpus to DIRECTORY in configs/local_example.yaml's layout ({split}.src and
    .tgt, line-aligned), from the demo's synthetic translation language: the own-data recipes on a fresh clone."""
    from ..data.example_corpus import write_example_corpus

    sizes = write_example_corpus(Path(directory), train, valid, test, seed)
    click.echo(f"{directory}: " + ", ".join(f"{split} {count} pairs" for split, count in sizes.items()))


@main.command(name="export")
@click.argument("model_dir", type=click.Path(file_okay=False))
@click.argument("out", type=click.Path(file_okay=False))
def export_command(model_dir, out) -> None:
    """Write the model in MODEL_DIR (a workflow's results/<experiment>/models/...) to OUT in the form
    transformers' Auto classes, peft, lm-eval and vLLM load (docs/guide/decoder-only.md)."""
    from safetensors import SafetensorError

    from ..model_exchange.export import export_model

    if not Path(model_dir).is_dir():
        raise click.ClickException(_not_trained_yet(Path(model_dir)))

    try:
        written = export_model(Path(model_dir), Path(out))
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    except (SafetensorError, OSError) as error:  # weights cut short or edited into another format, a file missing
        raise click.ClickException(
            f"{model_dir}: its model cannot be read ({type(error).__name__}: {error}); remake it with the job that wrote it "
            "(delete the folder and rerun the workflow)"
        ) from None
    for what, folder in written.items():
        click.echo(f"{what}: {folder}")


@main.command()
@click.option(
    "--config", "config_path", required=True, type=click.Path(exists=True, dir_okay=False), help="TRL's SFT arguments and a loss block"
)
def sft(config_path) -> None:
    """Fine-tune a causal LM with any objective of the catalog through TRL's SFTTrainer, as `trl sft --config`
    does (docs/guide/sft-command.md)."""
    from ..sft.sft_command import run_sft

    try:
        output = run_sft(Path(config_path))
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"saved: {output}")
