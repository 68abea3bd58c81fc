"""Training checkpoints that resume only the run that wrote them, whole: the run's identity and each
checkpoint's completion marker (resuming.py), the lock that keeps two jobs out of one folder, the helper
models' state saved beside the policy's, and loading without warnings for weights a checkpoint never holds."""
