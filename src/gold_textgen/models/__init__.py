"""Model builders: the layouts built from scratch and the checkpoints loaded by name."""
