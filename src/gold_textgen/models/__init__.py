"""Model builders: transformer layouts built from scratch and pretrained checkpoints loaded by name, the
standard models (NQG++ and the pointer-generator: copy attention, their own beam search), decoder-only
models in the seq2seq contract, LoRA adapters (lora.py), the export every HF tool loads (export.py), and
models trained elsewhere, recorded and loaded for evaluation (import_record.py, imported.py)."""
