import math

import pytest

from gold_textgen.evaluation import metrics


def test_bleu_identical_is_100():
    score, signature = metrics.corpus_bleu(["the cat sat on the mat"], ["the cat sat on the mat"])
    assert score == pytest.approx(100.0)
    assert signature.startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp")


def test_bleu_known_value_from_ngram_precisions():
    # 1..4-gram precisions 5/6, 4/5, 3/4, 2/3, equal lengths: BLEU = (1/3) ** (1/4).
    score, _ = metrics.corpus_bleu(["a b c d e f"], ["a b c d e g"])
    assert score == pytest.approx(100 * (1 / 3) ** 0.25, abs=1e-6)


def test_bleu_brevity_penalty():
    # Perfect precisions, hypothesis 5 words vs reference 7: BP = exp(1 - 7/5).
    score, _ = metrics.corpus_bleu(["a b c d e"], ["a b c d e f g"])
    assert score == pytest.approx(100 * math.exp(1 - 7 / 5), abs=1e-6)


def test_rouge_known_values():
    scores = metrics.corpus_rouge(["a b c"], ["a b d"])
    assert scores["rouge1"] == pytest.approx(200 / 3)
    assert scores["rouge2"] == pytest.approx(50.0)  # bigrams {ab, bc} vs {ab, bd}
    assert scores["rougeL"] == pytest.approx(200 / 3)  # LCS "a b"


def test_rouge_uses_stemming_and_averages_over_examples():
    scores = metrics.corpus_rouge(["cats running", "x"], ["cat runs", "y"])
    assert scores["rouge1"] == pytest.approx(50.0)  # 100 for the stemmed pair, 0 for the other


def test_rouge_lsum_splits_sentences_at_newlines():
    hypothesis, reference = "b c\na d", "a d\nb c"
    scores = metrics.corpus_rouge([hypothesis], [reference])
    assert scores["rougeLsum"] == pytest.approx(100.0)
    assert scores["rougeL"] < 100.0


def test_perplexity():
    assert metrics.perplexity(total_nll=2 * math.log(4), num_tokens=2) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        metrics.perplexity(1.0, 0)


def test_task_metric_dispatch_and_alignment():
    assert metrics.task_metric("rouge2", ["a b c"], ["a b d"]) == pytest.approx(50.0)
    with pytest.raises(ValueError, match="unknown metric"):
        metrics.task_metric("meteor", ["a"], ["a"])
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        metrics.corpus_bleu(["a", "b"], ["a"])


def test_files2rouge_variant_does_not_stem_and_splits_sentences_at_periods():
    assert metrics.corpus_rouge(["cats running"], ["cat runs"], "files2rouge")["rouge1"] == pytest.approx(0.0)
    hypothesis, reference = "b c. a d.", "a d. b c."
    files2rouge = metrics.corpus_rouge([hypothesis], [reference], "files2rouge")
    assert files2rouge["rougeLsum"] == pytest.approx(100.0)  # summary-level LCS over the two sentences
    assert files2rouge["rougeL"] < 100.0
    assert metrics.corpus_rouge([hypothesis], [reference], "stemmed")["rougeLsum"] < 100.0  # one line: one sentence
    with pytest.raises(ValueError, match="unknown ROUGE variant 'porter'"):
        metrics.Scoring(rouge="porter")


def test_the_focusseq2seq_variant_stems_and_splits_sentences_at_the_word_period():
    """ROUGE-1.5.5 -m as FocusSeq2Seq runs it, by hand. Stemmed tokens: reference [the cat sat | dog ran],
    hypothesis [the cat sat | the dog run]. ROUGE-1: 4 of 6 and 4 of 5 match; ROUGE-2: (the cat), (cat sat)
    of 5 and 4 bigrams; ROUGE-Lsum: union LCS 3 (sentence 1) + 1 (dog) = 4."""
    reference, hypothesis = "the cats sat . dogs ran .", "the cat sat . the dogs running ."
    scores = metrics.corpus_rouge([hypothesis], [reference], "rouge155_stemmed")

    def f1(precision, recall):
        return 100 * 2 * precision * recall / (precision + recall)

    assert scores["rouge1"] == pytest.approx(f1(4 / 6, 4 / 5))
    assert scores["rouge2"] == pytest.approx(f1(2 / 5, 2 / 4))
    assert scores["rougeLsum"] == pytest.approx(f1(4 / 6, 4 / 5))
    unstemmed = metrics.corpus_rouge([hypothesis], [reference], "files2rouge")["rouge1"]
    assert unstemmed == pytest.approx(f1(3 / 6, 3 / 5))  # the, sat, dogs: no stemming
    # a "." inside a word ends no sentence (FocusSeq2Seq splits at the word "."): one sentence, Lsum == L
    one = metrics.corpus_rouge(["mr. smith sat down"], ["mr. smith sat"], "rouge155_stemmed")
    assert one["rougeLsum"] == pytest.approx(one["rougeL"])
    assert metrics._period_word_sentences("a b . c d .\ne f") == "a b .\nc d .\ne f"


def test_task_metric_scores_rouge2_with_the_task_variant():
    stemmed = metrics.task_metric("rouge2", ["cats running fast"], ["cat runs fast"], metrics.Scoring(rouge="stemmed"))
    plain = metrics.task_metric("rouge2", ["cats running fast"], ["cat runs fast"], metrics.Scoring(rouge="files2rouge"))
    assert (stemmed, plain) == (pytest.approx(100.0), pytest.approx(0.0))


def test_chrf_is_sacrebleus_corpus_chrf_with_its_signature():
    import sacrebleu

    hypotheses, references = ["the cat sat on a mat", "a dog runs"], ["the cat sat on the mat", "the dog ran"]
    score, signature = metrics.corpus_chrf(hypotheses, references)
    assert score == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [references]).score)
    assert 0 < score < 100 and signature.startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no")
    assert metrics.corpus_chrf(["a b c"], ["a b c"])[0] == pytest.approx(100.0)


def test_the_unk_share_of_the_references_beside_perplexity(tmp_path):
    """Known answer: 2 of 5 reference tokens are <unk> (id 3) -> 40%, above the warning threshold."""
    import pandas as pd

    from gold_textgen.evaluation.scoring import UNK_WARNING_RATE, nll_summary, unk_warning, unk_warnings_from_scores
    from gold_textgen.runtime.files import write_json

    table = pd.DataFrame({"token_id": [3, 7, 3, 9, 2], "nll": [0.1, 1.0, 0.1, 2.0, 0.5], "correct": [True, False, True, False, True]})
    summary = nll_summary(table, unk_token_id=3)
    assert summary["unk_rate"] == pytest.approx(40.0)
    assert nll_summary(table)["unk_rate"] == 0.0  # a tokenizer without <unk>
    assert unk_warning(UNK_WARNING_RATE, "x") is None
    assert "40.0% of the reference tokens are <unk>" in unk_warning(40.0, "task demo")
    for name, task, rate in (("a", "demo", 40.0), ("b", "demo", 2.0), ("c", "other", 1.0)):
        write_json(tmp_path / f"{name}.json", {"task": task, "split": "test", "unk_rate": rate})
    warnings = unk_warnings_from_scores(sorted(tmp_path.glob("*.json")))
    assert len(warnings) == 1 and warnings[0].startswith("task demo, test split: 40.0%")
