import copy
from pathlib import Path

import pytest
import yaml
from conftest import shipped_layers

from gold_textgen.config.layers import config_layers, merged_config, take_switched_sources, where_set
from gold_textgen.config.schema import validate_config
from gold_textgen.config.views import ANALYSIS_READS, analysis_settings, analysis_view, decoder_view, task_config, training_view
from gold_textgen.data.sources import local_source_files
from gold_textgen.runtime.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_default_config_is_valid_and_gets_defaults(config):
    validated = validate_config(config)
    assert validated["tasks"]["demo"]["tokenizer"]["lowercase"] is False  # filled from the schema
    assert validated["tasks"]["demo"]["generation"]["batch_size"] == 64


@pytest.mark.parametrize("name", sorted(path.name for path in (REPO / "configs").glob("*.yaml")))
def test_every_shipped_config_merges_into_a_valid_config(config, name):
    from snakemake.utils import update_config

    layers = shipped_layers(name)
    for path in layers:
        update_config(config, yaml.safe_load(path.read_text()))
    take_switched_sources(config, config_layers(REPO / "config.yaml", layers))
    validated = validate_config(config)
    # Every experiment runs the control beside its objectives, defined for every task without an entry.
    assert "mle_continued" in validated["experiment"]["objectives"]
    for task in validated["experiment"]["tasks"]:
        assert validated["tasks"][task]["objectives"]["mle_continued"]["loss"] == "nll"


def test_the_control_is_built_in_and_a_task_may_define_its_own(config):
    config["tasks"]["demo"]["objectives"].pop("mle_continued", None)
    control = validate_config(copy.deepcopy(config))["tasks"]["demo"]["objectives"]["mle_continued"]
    assert control == {"loss": "nll", "start_from": "mle"}
    config["tasks"]["demo"]["objectives"]["mle_continued"] = {"loss": "nll", "label_smoothing": 0.0}  # still the control's loss
    assert validate_config(config)["tasks"]["demo"]["objectives"]["mle_continued"]["label_smoothing"] == 0.0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c["tasks"]["demo"]["mle"].update(learning_rate=-1),
            r"tasks\.demo\.mle\.learning_rate: -1 is less than or equal to the minimum",
        ),
        (lambda c: c["tasks"]["demo"]["mle"].update(lr=0.1), r"unknown config key tasks\.demo\.mle\.lr \(allowed here: .*learning_rate"),
        (
            lambda c: c["tasks"]["demo"]["source"].update(sloppy_share=1.5),
            r"tasks\.demo\.source\.sloppy_share: 1\.5 is greater than the maximum of 1",
        ),
        (lambda c: c["tasks"]["demo"].update(metric="meteor"), r"tasks\.demo\.metric: 'meteor' is not one of"),
        (lambda c: c["experiment"].update(seeds=["one"]), r"experiment\.seeds\.0: 'one' is not of type 'integer'"),
        (lambda c: c["experiment"].update(tasks=["nqg"]), r"experiment\.tasks\[0\]: task 'nqg' is not defined"),
        (lambda c: c["experiment"].update(decoders=["beam9"]), r"experiment\.decoders\[0\]: decoder 'beam9' is not defined"),
        (lambda c: c["tasks"]["demo"]["model"].update(kind="pretrained"), r"tasks\.demo\.model: 'name_or_path' is a required property"),
        (lambda c: c["tasks"]["demo"]["model"].update(attention_heads=5), r"tasks\.demo\.model\.attention_heads: must divide d_model"),
        (lambda c: c["tasks"]["demo"]["source"].update(min_length=40), r"tasks\.demo\.source\.min_length: must not exceed max_length"),
        (lambda c: c["tasks"]["demo"]["source"].update(synonym_probs=[0.5, 0.2]), r"tasks\.demo\.source\.synonym_probs: must sum to 1"),
        (
            lambda c: c["tasks"]["demo"]["source"].update(class_shares=[0.4] * 4),
            r"tasks\.demo\.source\.class_shares: must sum to 1",
        ),
        (lambda c: c["tasks"]["demo"]["source"].update(chunk_probs=[0.2, 0.2, 0.2]), r"tasks\.demo\.source\.chunk_probs: must sum to 1"),
        (lambda c: c.update(extra=1), r"unknown config key extra"),
        # a name ends where its pattern ends: Python's $ would let a final newline into a folder name
        (lambda c: c["experiment"].update(name="demo\n"), r"experiment\.name: 'demo\\n' does not match"),
        (lambda c: c["experiment"].update(objectives=["mle", "gold_s\n"]), r"experiment\.objectives\.1: 'gold_s\\n' does not match"),
        (lambda c: c["experiment"].update(name="index.md"), r"experiment\.name: 'index\.md': a reserved name"),
        (lambda c: c["experiment"].update(name="x" * 300), r"experiment\.name: 300 characters, at most 100 allowed"),
        # a reward floor beyond a reward's scale overflows the float32 returns
        (lambda c: c["tasks"]["demo"]["objectives"]["gold_s"].update(floor=1e300), r"gold_s\.floor: 1e\+300 is greater than the maximum"),
        (
            lambda c: c["tasks"]["demo"]["mle"].update(learning_rate=float("nan")),
            r"tasks\.demo\.mle\.learning_rate: nan is not a finite number",
        ),
        (lambda c: c["tasks"]["demo"]["objectives"]["gold_p"].update(baseline=float("inf")), r"gold_p\.baseline: inf is not a finite"),
        (lambda c: c["experiment"].update(seeds=[1.0]), r"experiment\.seeds\.0: 1\.0 is not of type 'integer'"),
        (lambda c: c["analysis"].update(gold_objective="mle"), r"analysis\.gold_objective: 'mle' is not a GOLD objective"),
        (lambda c: c["tasks"]["demo"].update(dev_decoder="beam9"), r"tasks\.demo\.dev_decoder: decoder 'beam9' is not defined"),
        (lambda c: c["tasks"]["demo"].update(dev_decoder="topk5"), r"tasks\.demo\.dev_decoder: 'topk5' samples"),
        (lambda c: c["tasks"]["demo"]["mle"].update(tokens_per_update=4096), r"tasks\.demo\.mle\.tokens_per_update: needs max_tokens"),
        (
            lambda c: c["tasks"]["demo"]["fine_tune"].update(tokens_per_update=4096, max_tokens=1024, gradient_accumulation_steps=2),
            r"tasks\.demo\.fine_tune\.gradient_accumulation_steps: leave it at 1 with tokens_per_update",
        ),
    ],
)
def test_bad_values_are_rejected_naming_the_key(config, edit, message):
    edit(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config)


def test_local_source_is_checked_by_its_own_schema(config):
    config["tasks"]["demo"]["source"] = {"kind": "local", "format": "csv", "train": "a", "valid": "b", "test": "c"}
    with pytest.raises(ConfigError, match=r"tasks\.demo\.source\.format: 'csv' is not one of"):
        validate_config(config)


def test_local_source_files_lists_what_the_loader_reads():
    spec = {"kind": "local", "format": "parallel", "train": "d/train", "valid": "d/valid", "test": "d/test", "suffixes": [".de", ".en"]}
    assert local_source_files(spec)[:2] == ["d/train.de", "d/train.en"]
    assert local_source_files({"kind": "synthetic"}) == []


def test_training_view_ignores_decoding_only_settings(config):
    task = validate_config(config)["tasks"]["demo"]
    changed = copy.deepcopy(task)
    changed["generation"]["batch_size"] = 7
    changed["generation"]["length_penalty"] = 2.0
    assert training_view(changed, "mle") == training_view(task, "mle")
    changed["generation"]["max_new_tokens"] = 5
    assert training_view(changed, "mle") != training_view(task, "mle")


def test_training_view_separates_objectives(config):
    task = validate_config(config)["tasks"]["demo"]
    changed = copy.deepcopy(task)
    changed["objectives"]["gold_p"]["min_weight"] = 0.2
    changed["fine_tune"]["sync_every"] = 7
    assert training_view(changed, "mle") == training_view(task, "mle")  # MLE ignores GOLD settings
    assert training_view(changed, "gold_s") != training_view(task, "gold_s")  # shared GOLD settings count
    changed["fine_tune"]["sync_every"] = task["fine_tune"]["sync_every"]
    assert training_view(changed, "gold_s") == training_view(task, "gold_s")  # another objective's don't
    assert training_view(changed, "gold_p") != training_view(task, "gold_p")


def test_dev_decoder_resolves_with_the_task_overrides_and_counts_for_training(config):
    greedy = task_config(validate_config(copy.deepcopy(config)), "demo")
    assert greedy["dev_search"] == {"num_beams": 1}
    config["tasks"]["demo"]["dev_decoder"] = "beam5"
    config["tasks"]["demo"]["decoder_overrides"] = {"beam5": {"num_beams": 4}}
    config["tasks"]["demo"]["generation"]["length_penalty"] = 2.0
    beam = task_config(validate_config(config), "demo")
    assert beam["dev_search"] == {"num_beams": 4, "length_penalty": 2.0}
    assert training_view(beam, "mle") != training_view(greedy, "mle")


def test_config_errors_name_the_file_that_set_the_key(tmp_path):
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("tasks:\n  demo:\n    mle:\n      learning_rate: -1\n")
    layers = config_layers(REPO / "config.yaml", [overlay], {"experiment": {"seeds": [3]}})
    assert where_set(layers, ["tasks", "demo", "mle", "learning_rate"]) == str(overlay)
    assert where_set(layers, ["tasks", "demo", "mle", "warmup_steps"]) == str(REPO / "config.yaml")
    assert where_set(layers, ["experiment", "seeds", 0]) == "--config"
    assert where_set(layers, ["analysis", "bootstrap_resamples"]) == str(REPO / "config.yaml")
    assert where_set(layers, ["tasks", "demo", "mle", "adam_beta2"]) == str(overlay)  # a default under the overlay's block
    assert ConfigError("config key experiment.tasks[0]: task 'x' is not defined").key_path == ["experiment", "tasks", 0]


def test_an_overlay_that_switches_the_source_kind_replaces_the_source_block(tmp_path):
    overlay = tmp_path / "local.yaml"
    local = {"kind": "local", "format": "jsonl", "train": "d/train.jsonl", "valid": "d/valid.jsonl", "test": "d/test.jsonl"}
    overlay.write_text(yaml.safe_dump({"tasks": {"demo": {"source": local}}}))
    tweak = tmp_path / "tweak.yaml"
    tweak.write_text("tasks:\n  demo:\n    source:\n      train: e/train.jsonl\n")
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    merged = copy.deepcopy(base)
    for path in (overlay, tweak):  # Snakemake merges key by key
        merged = _merge(merged, yaml.safe_load(path.read_text()))
    assert "num_train" in merged["tasks"]["demo"]["source"]  # the synthetic keys leaked in
    take_switched_sources(merged, config_layers(REPO / "config.yaml", [overlay, tweak]))
    assert merged["tasks"]["demo"]["source"] == {**local, "train": "e/train.jsonl"}
    validate_config(merged)
    same_kind = copy.deepcopy(base)
    take_switched_sources(same_kind, config_layers(REPO / "config.yaml", [tweak]))
    assert same_kind == base  # no switch of kind: nothing is replaced


def _merge(base: dict, update: dict) -> dict:
    from snakemake.utils import update_config

    update_config(base, update)
    return base


def test_decoder_view_applies_the_tasks_overrides_and_leaves_out_the_run_count(config):
    config["decoders"]["topk5"] = {"do_sample": True, "top_k": 5, "samples": 3}
    config["tasks"]["demo"]["decoder_overrides"] = {"beam3": {"num_beams": 4}, "topk5": {"temperature": 0.5}}
    validate_config(config)
    assert decoder_view(config, "demo", "beam3") == {"num_beams": 4, "do_sample": False}
    assert decoder_view(config, "demo", "topk5") == {"num_beams": 1, "do_sample": True, "top_k": 5, "temperature": 0.5}
    assert decoder_view(config, "demo", "greedy") == {"num_beams": 1, "do_sample": False}
    assert config["decoders"]["beam3"]["num_beams"] == 3  # the shared entry is left alone


def test_each_analysis_rule_sees_only_the_settings_it_reads(config):
    analysis = analysis_settings(validate_config(config))
    changed = {**analysis, "num_examples": analysis["num_examples"] + 1}
    affected = {rule for rule in ANALYSIS_READS if analysis_view(analysis, rule) != analysis_view(changed, rule)}
    assert affected == {"examples"}


def nqg_pp_task(config: dict, source: dict, **model) -> dict:
    """The demo task turned into a word-level copy model (NQG++ unless `model` says otherwise)."""
    task = config["tasks"]["demo"]
    task["source"] = source
    task["model"] = {"kind": "scratch", "architecture": "nqg_pp", **model}
    task["tokenizer"] = {"kind": "wordlevel", "copy_slots": 10}
    return config


NQG_SOURCE = {"kind": "nqg_zhou2017", "url": "file:///unused", "answer_markers": None}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.update(training_logger="tensorbord"), r"training_logger: 'tensorbord' is not a training logger \(choose one of"),
        (
            lambda c: c.update(training_logger="neptune"),
            r"training_logger: the neptune logger needs neptune, which this environment does not have",
        ),
        (lambda c: c["tasks"]["demo"]["objectives"]["gold_s"].update(loss="dft"), r"gold_s\.reward: does not apply to loss dft"),
        (
            lambda c: c["tasks"]["demo"]["objectives"].update(dft={"loss": "dft", "mixing_ratio": 0.5}),
            r"objectives\.dft\.mixing_ratio: does not apply to loss dft \(it is a setting of mixce; loss dft reads none of them\)",
        ),
        (
            lambda c: c["tasks"]["demo"]["objectives"].update(mixce={"loss": "mixce", "mixing_ratio": 0.5, "min_weight": 0.1}),
            r"mixce\.min_weight: does not apply to loss mixce \(it is a setting of gold, tailr; loss mixce reads mixing_ratio\)",
        ),
        # a name tables label by itself must be that objective: the control another loss, "DFT" MixCE's numbers
        (
            lambda c: c["tasks"]["demo"]["objectives"].update(mle_continued={"loss": "gold", "reward": "s"}),
            r"objectives\.mle_continued: tables label it as loss 'nll', but it has loss 'gold'",
        ),
        (
            lambda c: c["tasks"]["demo"]["objectives"].update(dft={"loss": "mixce", "mixing_ratio": 0.5}),
            r"objectives\.dft: tables label it as loss 'dft', but it has loss 'mixce'; give it another name",
        ),
        (
            lambda c: c["tasks"]["demo"]["objectives"].update(gold_s={"loss": "gold", "reward": "p"}),
            r"objectives\.gold_s: tables label it as reward 's', but it has reward 'p'",
        ),
        (
            lambda c: c["tasks"]["demo"]["tokenizer"].update(lowercase=True),
            r"tasks\.demo\.tokenizer\.lowercase: the model would write lowercase",
        ),
        (
            lambda c: c["tasks"]["demo"].update(metric="exact_match"),
            r"tasks\.demo\.metric: exact_match scores final answers after '####' .* a synthetic source's references are sentences",
        ),
        (
            lambda c: c["tasks"]["demo"]["fine_tune"].update(keep="last", early_stopping_patience=2),
            r"tasks\.demo\.fine_tune\.keep: last keeps the model after max_steps, an equal budget for every run",
        ),
        (
            lambda c: (
                c["tasks"]["demo"]["fine_tune"].update(rewards="online"),
                c["tasks"]["demo"]["objectives"].update(gold_again={"reward": "s", "start_from": "gold_s"}),
            ),
            r"objectives\.gold_again\.start_from: with fine_tune\.rewards: online the rewards come from the model",
        ),
        (lambda c: c["tasks"]["demo"]["tokenizer"].update(copy_slots=5), r"tasks\.demo\.tokenizer\.copy_slots: only the copy models"),
        (
            lambda c: c["tasks"]["demo"]["tokenizer"].update(vocab_size=8),
            r"tasks\.demo\.tokenizer\.vocab_size: 8 leaves 4 entries for words after the 4 special tokens; at least 32",
        ),
        (
            lambda c: nqg_pp_task(c, {**NQG_SOURCE, "token_features": True}, architecture="pointer_generator", features=["answer"]),
            r"tasks\.demo\.model\.features: only the nqg_pp model reads token features",
        ),
        (
            lambda c: nqg_pp_task(c, NQG_SOURCE, features=["answer", "pos"]),
            r"tasks\.demo\.model\.features: the source keeps no token features; set source\.token_features: true",
        ),
        (
            lambda c: nqg_pp_task(c, c["tasks"]["demo"]["source"], features=["answer"]),
            r"tasks\.demo\.model\.features: a synthetic source has no token features",
        ),
        (
            lambda c: nqg_pp_task(c, {"kind": "local", "format": "tsv", "train": "a", "valid": "b", "test": "c"}, features=["case"]),
            r"tasks\.demo\.model\.features: a local source in tsv format has no token features",
        ),
    ],
)
def test_settings_a_job_would_reject_or_ignore_stop_the_config(config, edit, message):
    """Each of these used to pass validation and fail (or be ignored) only inside the job, after the
    queue wait and after Snakemake had deleted the output the job replaces."""
    edit(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config)


def test_features_are_accepted_where_the_source_has_them(config):
    validate_config(nqg_pp_task(copy.deepcopy(config), {**NQG_SOURCE, "token_features": True}, features=["answer", "ner"]))
    jsonl = {"kind": "local", "format": "jsonl", "train": "a", "valid": "b", "test": "c"}  # may carry token_features
    validate_config(nqg_pp_task(config, jsonl, features=["answer"]))


def test_the_training_loggers_are_transformers_own_with_the_same_availability():
    from transformers.integrations import INTEGRATION_TO_CALLBACK, get_available_reporting_integrations

    from gold_textgen.config.training_loggers import TRACKER_MODULES, logger_problem

    assert set(TRACKER_MODULES) == set(INTEGRATION_TO_CALLBACK)
    available = set(get_available_reporting_integrations())
    for name in set(TRACKER_MODULES) - {"kubeflow", "comet_ml", "azure_ml"}:  # those three also read the environment
        assert (logger_problem(name) is None) == (name in available), name
    assert logger_problem("tensorboard") is None and logger_problem("none") is None


def test_merged_config_layers_overlays_as_snakemake_does(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"tasks": {"demo": {"model": {"d_model": 768}}}}))
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    merged = merged_config(REPO / "config.yaml", [REPO / "configs" / "causal_demo.yaml", overlay])
    model = merged["tasks"]["demo"]["model"]
    assert model["architecture"] == "causal" and model["d_model"] == 768 and model["decoder_layers"] == 4
    assert merged["tasks"]["demo"]["objectives"] == base["tasks"]["demo"]["objectives"]  # untouched keys stay
    gold, base_gold = merged["tasks"]["demo"]["fine_tune"], base["tasks"]["demo"]["fine_tune"]
    assert gold["sync_every"] == 100 != base_gold["sync_every"] and gold["horizon"] == base_gold["horizon"]  # merged key by key
    assert merged_config(REPO / "config.yaml") == base


def nqg_task(config: dict, **source) -> dict:
    task = config["tasks"]["demo"]
    one_file = dict.fromkeys(("train", "valid", "test"), "dev")
    task["source"] = {"kind": "nqg_zhou2017", "directory": "release", "prefixes": one_file, **source}
    return config


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            {"sentence_split": {"valid": 5, "test": 5}, "line_ranges": {"train": [1, 10]}},
            r"tasks\.demo\.source\.line_ranges: set it or sentence_split, not both",
        ),
        (
            {"sentence_split": {"valid": 5, "test": 5}, "prefixes": {"train": "train.txt", "valid": "dev", "test": "dev"}},
            r"tasks\.demo\.source\.prefixes: sentence_split divides one file among the splits, but they read train train\.txt, valid dev",
        ),
        ({"sentence_split": {"valid": 5}}, r"tasks\.demo\.source\.sentence_split: 'test' is a required property"),
    ],
)
def test_a_sentence_split_reads_one_file_and_no_line_ranges(config, source, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(nqg_task(config, **source))


def test_a_sentence_split_draws_with_seed_zero_unless_told(config):
    source = validate_config(nqg_task(config, sentence_split={"valid": 5, "test": 5}))["tasks"]["demo"]["source"]
    assert source["sentence_split"] == {"valid": 5, "test": 5, "seed": 0} and source["line_ranges"] == {}


def test_the_old_name_of_the_fine_tuning_block_is_read_with_a_deprecation_message(config):
    config["tasks"]["demo"]["gold"] = {"sync_every": 7}  # an old overlay over the new config.yaml's fine_tune block
    with pytest.warns(FutureWarning, match=r"config key tasks\.demo\.gold: renamed to tasks\.demo\.fine_tune"):
        task = validate_config(config)["tasks"]["demo"]
    assert "gold" not in task and task["fine_tune"]["sync_every"] == 7
    assert (
        task["fine_tune"]["learning_rate"]
        == yaml.safe_load((REPO / "config.yaml").read_text())["tasks"]["demo"]["fine_tune"]["learning_rate"]
    )


def test_names_that_become_folder_names_are_bounded_before_anything_runs():
    """An objective, imported model, task or decoder name is a folder of every result path: a 260-character
    one would plan, train for an hour, then fail on "File name too long". The schema bounds them."""
    long = "a" * 260
    for place in ("objectives", "imported_models", "task", "decoder"):
        config = merged_config(REPO / "config.yaml")
        if place == "objectives":
            config["experiment"]["objectives"] = ["mle", long]
            config["tasks"]["demo"]["objectives"][long] = {"loss": "nll"}
        elif place == "imported_models":
            config["tasks"]["demo"]["imported_models"] = {long: {"path": "elsewhere"}}
        elif place == "task":
            config["tasks"][long] = config["tasks"]["demo"]
        else:
            config["decoders"][long] = {"num_beams": 1}
        with pytest.raises(ConfigError, match="260 characters, at most 100 allowed"):
            validate_config(config)
