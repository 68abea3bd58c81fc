"""A device profile: one machine's measured speed on the tasks it was measured on (written by
`python -m benchmarks.device_profile`), and the rates of any task read from it: `measured` where the
profile holds the task's very shape, `scaled` from the nearest measured shape of the same architecture
(by model size and tokens per example) otherwise, and none where it holds no such architecture.

Rates are seconds per example, measured at the task's batch size: an MLE update (the training job's own
loop) and a fine-tuning update (its trainer's step, scaled alike), a no-grad forward (a helper model, the
reward cache, token NLL), a decoded example per beam count; and a job's start (interpreter and imports)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import jsonschema
import yaml

from ..bookkeeping.resources import named_parameters, scratch_parameters
from ..config.views import is_recurrent
from ..runtime.errors import ConfigError

SHAPE_KEYS = ("model", "tokenizer", "max_source_length", "max_target_length")
# Where a source's data lies, not what it holds: a local copy of the same release is the same shape.
SOURCE_LOCATION = ("url", "checksum", "directory", "path", "revision", "data_files", "train", "valid", "test")


def shape_key(task: dict) -> str:
    """What a task's speed depends on (model, tokenizer, lengths, and the source, whose sentences set the
    lengths batches actually have), hashed: equal keys, equal speed."""
    shape = {key: task.get(key) for key in SHAPE_KEYS}
    shape["source"] = {key: value for key, value in task["source"].items() if key not in SOURCE_LOCATION}
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:16]


def architecture(task: dict) -> str:
    model = task["model"]
    return model.get("architecture") if model["kind"] == "scratch" else f"pretrained {model.get('architecture', 'seq2seq')}"


def model_size(task: dict) -> float | None:
    """A relative measure of the arithmetic per token (parameters touched per token), or None if unknown."""
    model = task["model"]
    if model["kind"] == "pretrained":
        return named_parameters(str(model.get("name_or_path", "")))
    vocabulary = task["tokenizer"]["vocab_size"]
    if is_recurrent(model):
        hidden, embedding = model["decoder_hidden"], model["embedding_dim"]
        recurrent = 3 * (embedding + model["encoder_hidden"]) * model["encoder_hidden"] * 2 + 3 * (embedding + hidden) * hidden
        return recurrent + vocabulary * hidden
    return scratch_parameters(model) + vocabulary * model["d_model"]


def tokens_per_example(task: dict) -> int:
    return task["max_source_length"] + task["max_target_length"]


@dataclass(frozen=True)
class Rates:
    """Seconds per example of each unit, and where they come from (`measured`, or `scaled from <task>`)."""

    update: float  # an MLE update
    fine_tune_update: float  # a fine-tuning update with the control's loss (helper models come on top)
    forward: float
    decode: dict[int, float]  # beams -> seconds per decoded example
    job_start: float
    origin: str

    def decode_seconds(self, beams: int) -> float:
        """A beam count the profile did not time scales from the nearest timed one (cost grows with beams)."""
        if beams in self.decode:
            return self.decode[beams]
        nearest = min(self.decode, key=lambda timed: abs(timed - beams))
        return self.decode[nearest] * beams / nearest

    def scaled(self, factor: float, origin: str) -> Rates:
        decode = {beams: seconds * factor for beams, seconds in self.decode.items()}
        return Rates(self.update * factor, self.fine_tune_update * factor, self.forward * factor, decode, self.job_start, origin)


SECONDS = {"type": "number", "minimum": 0}
# What a device profile holds (benchmarks.device_profile writes it): a value of the wrong type is refused by
# name when the profile is read, not met later as a traceback of the plan.
PROFILE_SCHEMA = {
    "type": "object",
    "required": ["device", "threads", "measured", "job_start_s", "cpu_job_s", "tasks"],
    "properties": {
        "device": {"type": "string"},
        "threads": {"type": "integer", "minimum": 1},
        "measured": {"type": "object"},
        "job_start_s": SECONDS,
        "cpu_job_s": SECONDS,
        "warm_job_start_s": SECONDS,
        "warm_cpu_job_s": SECONDS,
        "tasks": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["task", "architecture", "size", "tokens", "update_s", "forward_s", "decode_s"],
                "properties": {
                    "task": {"type": "string"},
                    "architecture": {"type": ["string", "null"]},
                    "size": {"type": ["number", "null"], "minimum": 0},
                    "tokens": {"type": "integer", "minimum": 1},
                    "threads": {"type": "integer", "minimum": 1},
                    "update_s": SECONDS,
                    "fine_tune_update_s": SECONDS,
                    "forward_s": SECONDS,
                    "decode_s": {
                        "type": "object",
                        "minProperties": 1,
                        "additionalProperties": SECONDS,
                        "propertyNames": {"pattern": "^[1-9][0-9]*$"},
                    },
                },
            },
        },
    },
}


def profile_problem(data: object) -> str | None:
    """The first way `data` is not a device profile, naming the key ('tasks.<key>.update_s: ...'); None if it is one."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(PROFILE_SCHEMA).iter_errors(data))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


@dataclass(frozen=True)
class DeviceProfile:
    device: str
    threads: int
    measured: dict  # commit, date, command
    job_start: float
    cpu_job: float  # a job that runs no model (data, tables, figures): its whole time
    tasks: dict  # shape key -> {task, architecture, size, tokens, update_s, forward_s, decode_s: {beams: s}}
    path: Path | None = None
    # The same two starts for a step forked from the warm-start server (runtime/warm_start.py): a local run's
    # steps, the first of which waits for the server's start. None in a profile measured before warm starts
    # (its cold starts stand in).
    warm_job_start: float | None = None
    warm_cpu_job: float | None = None

    @classmethod
    def load(cls, path: str | Path) -> DeviceProfile:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"cost.device_profile: no device profile at {path} (python -m benchmarks.device_profile writes one)")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as error:
            raise ConfigError(f"{path}: not YAML ({getattr(error, 'problem', None) or error})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: not a device profile (device, threads, ..., tasks: benchmarks.device_profile writes one)")
        missing = [key for key in PROFILE_SCHEMA["required"] if key not in data]
        if missing:
            raise ConfigError(f"{path}: not a device profile (missing {', '.join(missing)})")
        problem = profile_problem(data)
        if problem:
            raise ConfigError(f"{path}: not a device profile: {problem} (benchmarks.device_profile writes one)")
        warm = data.get("warm_job_start_s"), data.get("warm_cpu_job_s")
        return cls(data["device"], data["threads"], data["measured"], data["job_start_s"], data["cpu_job_s"], data["tasks"], path, *warm)

    def to_yaml(self) -> str:
        data = {
            "device": self.device,
            "threads": self.threads,
            "measured": self.measured,
            "job_start_s": round(self.job_start, 3),
            "cpu_job_s": round(self.cpu_job, 3),
            **({"warm_job_start_s": round(self.warm_job_start, 3)} if self.warm_job_start is not None else {}),
            **({"warm_cpu_job_s": round(self.warm_cpu_job, 3)} if self.warm_cpu_job is not None else {}),
            "tasks": self.tasks,
        }
        return yaml.safe_dump(data, sort_keys=False)

    def started_warm(self) -> DeviceProfile:
        """This profile for the steps of a local run, which start warm (runtime/warm_start.py)."""
        return replace(self, job_start=_first(self.warm_job_start, self.job_start), cpu_job=_first(self.warm_cpu_job, self.cpu_job))

    @property
    def gpu(self) -> bool:
        """Whether the profile was measured on a GPU (model jobs then count as GPU-hours)."""
        return not self.device.startswith("cpu")

    def rates(self, task: dict) -> Rates | None:
        """The rates of `task` (task_config), measured or scaled, or None where no measured task shares its architecture."""
        entry = self.tasks.get(shape_key(task))
        if entry is not None:
            return self._rates(entry, "measured")
        size = model_size(task)
        same = [entry for entry in self.tasks.values() if entry["architecture"] == architecture(task) and entry["size"]]
        if size is None or not same:
            return None
        tokens = tokens_per_example(task)
        nearest = min(same, key=lambda entry: abs(entry["size"] * entry["tokens"] - size * tokens))
        factor = size * tokens / (nearest["size"] * nearest["tokens"])
        return self._rates(nearest, "").scaled(factor, f"scaled from {nearest['task']} (x{factor:.2f})")

    def _rates(self, entry: dict, origin: str) -> Rates:
        decode = {int(beams): seconds for beams, seconds in entry["decode_s"].items()}
        fine_tune = entry.get("fine_tune_update_s", entry["update_s"])  # profiles measured before it: as MLE
        return Rates(entry["update_s"], fine_tune, entry["forward_s"], decode, self.job_start, origin)


def _first(value: float | None, otherwise: float) -> float:
    return otherwise if value is None else value
