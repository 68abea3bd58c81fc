"""Training: the Trainer toolkit (build_trainer), MLE, fine-tuning with any objective (helper_models.py:
the lagged policy and the frozen model for every trainer; the reward cache; on-policy sampling), the
objective's loss step (objective_loss.py, packed batches one example per row in packed_examples.py), batch
samplers, divergence guard and multi-process launch (sharded policies refused: sharded_weights.py)."""
