"""`gold-textgen export` (model_exchange/export.py) on what it cannot or must not write: a recurrent model, which
has no transformers class, and a folder that exists. The exports of trained workflow models are checked
where those models are trained (tests/test_causal_workflow.py, with tests/exported_models.py)."""

from __future__ import annotations

from click.testing import CliRunner
from settings import tiny_recurrent

from gold_textgen.cli.main import main
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.models.transformer import initial_model


def test_a_recurrent_model_is_refused_with_how_to_load_it_and_an_existing_folder_is_never_written(tmp_path):
    tokenizer = train_tokenizer([" ".join(f"w{i}" for i in range(20))])
    model_dir = tmp_path / "nqg_pp"
    initial_model(tiny_recurrent("nqg_pp", copy=False), tokenizer).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    refused = CliRunner().invoke(main, ["export", str(model_dir), str(tmp_path / "out")])
    assert refused.exit_code == 1 and "import gold_textgen.models.recurrent" in refused.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()
    (tmp_path / "taken").mkdir()
    refused = CliRunner().invoke(main, ["export", str(model_dir), str(tmp_path / "taken")])
    assert refused.exit_code == 1 and "exists" in refused.output


def test_a_model_whose_weights_are_cut_short_is_refused_in_one_line(tmp_path):
    tokenizer = train_tokenizer([" ".join(f"w{i}" for i in range(20))])
    model_dir = tmp_path / "nqg_pp"
    initial_model(tiny_recurrent("nqg_pp", copy=False), tokenizer).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    weights = model_dir / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    refused = CliRunner().invoke(main, ["export", str(model_dir), str(tmp_path / "out")])
    assert refused.exit_code == 1 and "its model cannot be read (SafetensorError" in refused.output, refused.output
    assert "Traceback" not in refused.output and not (tmp_path / "out").exists()
