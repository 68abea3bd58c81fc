"""Training: the Trainer toolkit (build_trainer), MLE, fine-tuning with any objective (helper_models.py:
the lagged policy and the frozen model for every trainer; the reward cache; on-policy sampling), the
objectives as a library loss (trainer_losses.py) and in TRL (sft_trainer.py, packed batches one example per
row in packed_examples.py, the `gold-textgen sft` command in sft_command.py), checkpoints and resuming,
batch samplers, multi-process launch (sharded policies refused: sharded_weights.py)."""
