"""The paper's numbers the claims registry (paper_claims.py) carries its effects from, as its tables print
them (configs/paper.yaml's `paper_results` holds the same numbers; tests/test_paper_claims.py checks that
they agree). Each row is labelled by its data set and, where a table has several models, the model and
metric (claims/paper_rows.py matches a run's task to a row)."""

from __future__ import annotations

# The paper's numbers (Tables 1-4), test sets unless said: (GOLD variant, MLE) per task and metric.
QUALITY = {
    "gold_delta": {"NQG (NQG++, BLEU)": (14.96, 14.23), "CNN/DM (pointer-generator, R-2)": (17.16, 17.10)},
    "gold_p": {
        "NQG (NQG++, BLEU)": (15.93, 14.23),
        "CNN/DM (pointer-generator, R-2)": (17.31, 17.10),
        "NQG (BART, BLEU)": (21.42, 20.68),
        "CNN/DM (BART, R-2)": (22.01, 21.28),
        "XSum (BART, R-2)": (22.26, 22.08),
        "IWSLT14 (transformer, BLEU)": (35.33, 34.64),
    },
    "gold_s": {
        "NQG (NQG++, BLEU)": (16.10, 14.23),
        "CNN/DM (pointer-generator, R-2)": (17.81, 17.10),
        "NQG (BART, BLEU)": (21.98, 20.68),
        "CNN/DM (BART, R-2)": (22.09, 21.28),
        "XSum (BART, R-2)": (22.58, 22.08),
        "IWSLT14 (transformer, BLEU)": (35.45, 34.64),
    },
}
PERPLEXITY = {
    "gold_delta": {"NQG (NQG++)": (110.58, 29.25), "CNN/DM (pointer-generator)": (133.10, 20.11)},
    "gold_p": {
        "NQG (NQG++)": (148.84, 29.25),
        "CNN/DM (pointer-generator)": (143.58, 20.11),
        "NQG (BART)": (10.48, 5.96),
        "CNN/DM (BART)": (11.44, 5.41),
        "XSum (BART)": (6.95, 5.07),
        "IWSLT14 (transformer)": (7.59, 5.31),
    },
    "gold_s": {
        "NQG (NQG++)": (158.45, 29.25),
        "CNN/DM (pointer-generator)": (29.80, 20.11),
        "NQG (BART)": (7.67, 5.96),
        "CNN/DM (BART)": (9.60, 5.41),
        "XSum (BART)": (6.85, 5.07),
        "IWSLT14 (transformer)": (6.90, 5.31),
    },
}
# Table 2 (dev sets): (MLE greedy, MLE with the decoder, GOLD-s greedy, GOLD-s with the decoder).
SAMPLING_DROPS = {
    "topk5": {"NQG (BLEU)": (14.13, 11.27, 16.06, 15.41), "CNN/DM (R-2)": (17.40, 13.06, 18.51, 17.02)},
    "topk20": {"NQG (BLEU)": (14.13, 10.08, 16.06, 15.38), "CNN/DM (R-2)": (17.40, 11.23, 18.51, 16.57)},
}
ON_POLICY = {"NQG (NQG++, BLEU)": (16.38, 14.55), "CNN/DM (pointer-generator, R-2)": (18.14, 17.35)}
# Table 4 beside Table 1, the standard models: on-policy fine-tuning of MLE (MLE+PG, MLE) and of GOLD-s
# (GOLD+PG, GOLD-s), and GOLD-s against MLE+PG.
MLE_PG_OVER_MLE = {"NQG (NQG++, BLEU)": (14.55, 14.23), "CNN/DM (pointer-generator, R-2)": (17.35, 17.10)}
GOLD_PG_OVER_GOLD = {"NQG (NQG++, BLEU)": (16.38, 16.10), "CNN/DM (pointer-generator, R-2)": (18.14, 17.81)}
GOLD_OVER_MLE_PG = {"NQG (NQG++, BLEU)": (16.10, 14.55), "CNN/DM (pointer-generator, R-2)": (17.81, 17.35)}
