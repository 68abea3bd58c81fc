"""The experiment trackers a training job can log to (`training_logger`, the Trainer's `report_to`), and
whether each one's package is installed, checked when the config is read.

transformers finds out only when the Trainer is built, inside the training job: after the queue wait, and
after Snakemake has deleted the model the job replaces (`-f`). Importing transformers' integrations takes
seconds, too long for every Snakemake start (every cluster job parses the workflow), so the names and the
packages each one needs are listed here, and a test holds the list to transformers' own
(`INTEGRATION_TO_CALLBACK`, `get_available_reporting_integrations`).
"""

from __future__ import annotations

import importlib.util

# report_to name -> the modules it needs; a tuple is a choice (any one of them will do).
TRACKER_MODULES: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "azure_ml": ("azureml.core.run",),
    "comet_ml": ("comet_ml",),
    "mlflow": ("mlflow",),
    "neptune": ("neptune",),
    "tensorboard": (("tensorboard", "tensorboardX"),),
    "trackio": ("trackio",),
    "wandb": ("wandb",),
    "codecarbon": ("codecarbon",),
    "clearml": ("clearml",),
    "dagshub": ("dagshub", "mlflow"),
    "flyte": ("flytekit",),
    "dvclive": ("dvclive",),
    "swanlab": ("swanlab",),
    "kubeflow": (),  # no package: transformers reports to the Kubeflow trainer server its environment names
}
NO_LOGGER = "none"


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a dotted name whose parent package is missing
        return False


def missing_modules(name: str) -> list[str]:
    """The modules logger `name` needs that this environment lacks (a choice is shown as `a or b`)."""
    missing = []
    for need in TRACKER_MODULES[name]:
        choices = need if isinstance(need, tuple) else (need,)
        if not any(_found(module) for module in choices):
            missing.append(" or ".join(choices))
    return missing


def logger_problem(name: str) -> str | None:
    """Why `name` cannot be a training logger here (None: it can)."""
    if name == NO_LOGGER:
        return None
    if name not in TRACKER_MODULES:
        return f"'{name}' is not a training logger (choose one of: {', '.join([NO_LOGGER, *TRACKER_MODULES])})"
    missing = missing_modules(name)
    if missing:
        return f"the {name} logger needs {', '.join(missing)}, which this environment does not have (install it, or choose another logger)"
    return None
