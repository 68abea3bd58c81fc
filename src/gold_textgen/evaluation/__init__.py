"""Evaluation of a trained model: decoding and stop sequences, teacher-forced token NLL, metrics and
scores, lead-3."""
