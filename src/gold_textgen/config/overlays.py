"""An experiment that extends another (`experiment.extends`, an overlay such as nqg_real_on_policy.yaml
over nqg_real.yaml) keeps its data, models and scores in the base experiment's folder, to reuse what the
base trained. That is safe only while it changes nothing the base's files are made from: the settings of
the base's tasks (it may add objectives), the decoders the base runs, and which runs each evaluation job
makes. Anything else would retrain or re-score in the base's folder, so it is an error naming the key."""

from __future__ import annotations

from collections.abc import Sequence

from ..runtime.errors import ConfigError
from .views import analysis_settings, evaluated_runs

SPLITS = ("train", "valid", "test")


def base_layers(layers: Sequence[tuple[str, dict]], base: str) -> list[tuple[str, dict]]:
    """The layers that make the base experiment: up to the last config file that names it."""
    for index in range(len(layers) - 1, -1, -1):
        experiment = layers[index][1].get("experiment")
        if isinstance(experiment, dict) and experiment.get("name") == base:
            return list(layers[: index + 1])
    raise ConfigError(
        f"config key experiment.extends: no config file given names the experiment '{base}'; pass its config file before "
        "this one (e.g. --configfile configs/nqg_real.yaml configs/nqg_real_on_policy.yaml)"
    )


def _first_difference(old, new, path: str) -> str | None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            found = _first_difference(old.get(key), new.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    return None if old == new else path


def check_extension(base: dict, extended: dict) -> None:
    """Raise ConfigError if `extended` (validated) changes what `base` (validated) makes in their shared folder."""
    name = base["experiment"]["name"]
    for task in base["experiment"]["tasks"]:
        if task not in extended["tasks"]:
            continue
        old, new = base["tasks"][task], extended["tasks"][task]
        settings = _first_difference(
            {k: v for k, v in old.items() if k != "objectives"}, {k: v for k, v in new.items() if k != "objectives"}, f"tasks.{task}"
        )
        kept = {key: new["objectives"].get(key) for key in old["objectives"]}  # new objectives may be added
        objectives = _first_difference(old["objectives"], kept, f"tasks.{task}.objectives")
        for changed in (settings, objectives):
            if changed:
                raise ConfigError(
                    f"config key {changed}: changes a setting of the experiment '{name}' this one extends; its models would be "
                    f"retrained in results/{name}/. Add new objectives instead, or give this experiment its own folder (drop extends)"
                )
    for decoder, settings in base["decoders"].items():
        if decoder in extended["decoders"] and extended["decoders"][decoder] != settings:
            raise ConfigError(f"config key decoders.{decoder}: changes a decoder of the experiment '{name}' this one extends")
    old_analysis, new_analysis = analysis_settings(base), analysis_settings(extended)
    for split in SPLITS:
        if evaluated_runs(base, old_analysis, split) != evaluated_runs(extended, new_analysis, split):
            raise ConfigError(
                f"config key experiment.decoders: the {split} split would be decoded with other runs than the experiment '{name}' "
                "decodes it with (experiment.decoders, sweep_decoders, eval_split, sweep_split, analysis.split and analysis.decoder "
                f"decide them), so every model's evaluation would be redone in results/{name}/; keep them as the base has them"
            )
