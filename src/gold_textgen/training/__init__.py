"""Training: the Trainer toolkit, MLE, GOLD fine-tuning with its lagged policy and reward cache,
checkpoints and resuming, batch samplers, multi-process launch."""
