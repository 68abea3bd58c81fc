"""Training objectives as pure functions of model outputs and references (no models, no files): a file per
loss or family of losses (each catalog row names its file and functions), the weighted NLL they share, and
table.py, every loss's weights and extra term, which the trainers look up."""
