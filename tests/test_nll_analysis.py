import pandas as pd
import pytest

from gold_textgen.analysis.nll_analysis import by_time_step, nll_distribution_summary


def nll_table(rows):
    """rows: (example, position, nll, correct)"""
    frame = pd.DataFrame(rows, columns=["example", "position", "nll", "correct"])
    frame["token_id"] = 5
    return frame


def test_summary_shares_and_quantiles():
    table = nll_table([(0, i, v, True) for i, v in enumerate([0.01, 0.05, 0.5, 2.0, 6.0])])
    row = nll_distribution_summary({"mle": table}).iloc[0]
    assert row["tokens"] == 5 and row["median"] == 0.5
    assert row["share_below_0.1"] == pytest.approx(0.4) and row["share_above_5"] == pytest.approx(0.2)
    assert row["max"] == 6.0 and row["mean"] == pytest.approx(8.56 / 5)


def test_by_time_step_means_and_accuracy():
    # 30 examples: step 1 always right with NLL 0.1, step 2 wrong in a third of them with NLL 3
    rows = []
    for example in range(30):
        rows.append((example, 0, 0.1, True))
        rows.append((example, 1, 3.0 if example % 3 == 0 else 0.3, example % 3 != 0))
    rows.append((0, 2, 9.0, False))  # step 3 reached by one reference only: left out
    stats = by_time_step({"gold_s": nll_table(rows)}, resamples=300, min_count=20)
    nll = stats[stats["measure"] == "nll"].set_index("t")
    accuracy = stats[stats["measure"] == "accuracy"].set_index("t")
    assert nll.index.tolist() == [1, 2]
    assert nll.loc[1, "mean"] == pytest.approx(0.1) and nll.loc[1, "low"] == pytest.approx(0.1)
    assert nll.loc[2, "mean"] == pytest.approx((10 * 3.0 + 20 * 0.3) / 30)
    assert accuracy.loc[2, "mean"] == pytest.approx(200 / 3)
    assert accuracy.loc[2, "low"] < 200 / 3 < accuracy.loc[2, "high"]
    assert set(stats["objective"]) == {"gold_s"}
