"""The loss catalog is the one description of every objective: the schema's objective part, the settings
check, the torch functions, the trainer's helpers and the table labels all follow from its rows (and this
test fails where one of them and a row disagree)."""

import copy

import pytest

from gold_textgen import catalog as catalog
from gold_textgen.analysis import objective_names
from gold_textgen.config.cross_references import check_objective_keys
from gold_textgen.config.objective_schema import objective_schema
from gold_textgen.config.schema import defaults, load_schema
from gold_textgen.objectives import table
from gold_textgen.runtime.errors import ConfigError
from gold_textgen.training.helper_models import HELPER_ARGUMENTS
from gold_textgen.training.objective_settings import KNOWN_SETTINGS


def disagreements(schema_objective: dict) -> list[str]:
    """Where an objective schema differs from the one the rows describe: loss names, settings, types, and
    each loss's defaults and required settings."""
    expected = objective_schema()
    problems = []
    if schema_objective["properties"]["loss"]["enum"] != list(catalog.LOSSES):
        problems.append("loss names")
    for name, entry in expected["properties"].items():
        if name not in schema_objective["properties"]:
            problems.append(f"setting {name} missing")
        elif {k: v for k, v in schema_objective["properties"][name].items() if k != "description"} != {
            k: v for k, v in entry.items() if k != "description"
        }:
            problems.append(f"setting {name}: type, range or default")
    problems += [f"setting {name} belongs to no row" for name in set(schema_objective["properties"]) - set(expected["properties"])]
    if schema_objective["allOf"] != expected["allOf"]:
        problems.append("per-loss defaults or required settings")
    return problems


def required_values(row: catalog.Loss) -> dict:
    """A valid value for each setting the row requires."""
    return {key: setting.schema.get("enum", [0.5])[0] for key, setting in row.settings.items() if setting.default is catalog.REQUIRED}


def test_the_schema_objective_part_is_the_catalogs():
    assert disagreements(load_schema()["$defs"]["objective"]) == []
    for name, row in catalog.LOSSES.items():
        filled = defaults("objective", loss=name, **required_values(row))
        for key, setting in row.settings.items():
            if setting.default not in (catalog.REQUIRED, None):
                assert filled[key] == setting.default, (name, key)
        if row.label_smoothing is not None:
            assert filled["label_smoothing"] == row.label_smoothing, name


@pytest.mark.parametrize(
    "change",
    [
        lambda schema: schema["properties"]["loss"]["enum"].pop(),  # a row without its loss name
        lambda schema: schema["properties"]["kl_weight"].update(minimum=1),  # another range
        lambda schema: schema["allOf"][0]["then"]["properties"]["min_weight"].update(default=0.5),  # another default
        lambda schema: schema["properties"].pop("clip_high"),  # a setting missing
    ],
)
def test_the_check_fails_when_a_row_and_the_schema_disagree(change):
    schema = copy.deepcopy(load_schema()["$defs"]["objective"])
    change(schema)
    assert disagreements(schema) != []


def test_two_rows_must_agree_on_a_shared_settings_type(monkeypatch):
    eaft = catalog.LOSSES["eaft"]
    changed = catalog.Loss(**{**eaft.__dict__, "settings": {**eaft.settings, "alpha": catalog.Setting({"type": "integer"}, "other")}})
    monkeypatch.setitem(catalog.LOSSES, "eaft", changed)
    with pytest.raises(ValueError, match="setting 'alpha' has different types in the rows of probability, eaft"):
        objective_schema()


def test_every_row_has_its_functions_helpers_settings_and_label():
    for name, row in catalog.LOSSES.items():
        assert callable(table.LOSSES[name].weights), name
        assert (table.LOSSES[name].extra is None) == (row.functions[1] is None), name
        assert row.needs(defaults("objective", loss=name, **required_values(row))) <= set(catalog.NEEDS)
        assert set(row.settings) <= KNOWN_SETTINGS
        assert (row.reference and row.summary.startswith(f"{name}:")) or name == "gold", name
    # every need has a helper the trainer checks, but the returns (from the rewards) and the policy's own table
    assert set(HELPER_ARGUMENTS) == set(catalog.NEEDS) - {"gold_returns", "distribution"}
    for name, row in catalog.LOSSES.items():
        if name not in ("gold", "nll", "policy_gradient"):  # those appear under the names of GOLD's variants and the control
            assert objective_names.label(name) == row.label and objective_names.color(name, 0) == row.colour


def test_a_setting_of_another_loss_is_refused_with_the_losses_that_read_it():
    config = {"tasks": {"demo": {"objectives": {"mine": {"loss": "dft", "kl_weight": 0.1}}}}}
    with pytest.raises(
        ConfigError, match=r"tasks\.demo\.objectives\.mine\.kl_weight: does not apply to loss dft \(it is a setting of asft"
    ):
        check_objective_keys(config)


def test_the_helpers_name_a_missing_one():
    from settings import objective_settings

    from gold_textgen.training.helper_models import HelperModels

    with pytest.raises(ValueError, match=r"loss asft needs the frozen starting model's whole distribution .*: pass frozen \(the starting"):
        HelperModels(objective_settings(loss="asft"))


def test_the_library_refuses_a_setting_of_another_loss():
    from gold_textgen.training.objective_settings import ObjectiveSettings

    with pytest.raises(ValueError, match=r"objective setting\(s\) kl_weight do not apply to loss dft"):
        ObjectiveSettings.with_defaults(loss="dft", kl_weight=0.1)
    assert ObjectiveSettings.with_defaults(loss="asft", kl_weight=0.05, label_smoothing=0.1).kl_weight == 0.05
