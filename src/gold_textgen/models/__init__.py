"""Model builders: transformer layouts built from scratch and pretrained checkpoints loaded by name, the
standard models (NQG++ and the pointer-generator: copy attention, their own beam search), decoder-only
models in the seq2seq contract, LoRA adapters (lora.py), and the reference tokens' NLL (label_nll.py)."""
