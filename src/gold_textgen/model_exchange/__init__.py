"""Models entering and leaving the workflow: the export every Hugging Face tool loads (export.py, with its
tokenizer and the Llama layout of decoder-only models), and models trained elsewhere, recorded and loaded
for evaluation (import_record.py, imported.py)."""
