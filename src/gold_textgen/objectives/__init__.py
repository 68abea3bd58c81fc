"""Training objectives as pure functions of model outputs and references (no models, no files)."""
