"""The objectives outside the workflow: a loss for a plain transformers Trainer (trainer_losses.py), TRL's
SFTTrainer with any objective (sft_trainer.py), and the `gold-textgen sft` command (sft_command.py, its
checks in sft_checks.py)."""
