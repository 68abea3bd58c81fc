"""Evaluation of a trained model: decoding, teacher-forced token NLL, metrics and scores, lead-3."""
