import numpy as np
import pandas as pd
import pytest

from gold_textgen.analysis.bootstrap import bootstrap_interval, mean_with_interval


def test_interval_of_a_normal_mean_has_the_textbook_width():
    values = np.random.default_rng(1).normal(5.0, 2.0, size=400)
    low, high = bootstrap_interval(values, resamples=4000, confidence=0.95, seed=0)
    assert low < values.mean() < high
    # 95% interval of a mean: +-1.96 sigma / sqrt(n) = +-0.196
    assert high - low == pytest.approx(2 * 1.96 * 2.0 / 20, rel=0.15)


def test_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    trials = 300
    covered = 0
    for trial in range(trials):
        low, high = bootstrap_interval(rng.exponential(1.0, size=200), resamples=1000, seed=trial)
        covered += low <= 1.0 <= high
    assert 0.90 <= covered / trials <= 0.985


def test_constant_values_give_a_zero_width_interval_and_one_value_none():
    assert bootstrap_interval([3.0] * 10) == (3.0, 3.0)
    assert all(np.isnan(bootstrap_interval([1.0])))


def test_grouped_means_drop_small_groups():
    frame = pd.DataFrame({"t": [1, 1, 1, 2], "v": [1.0, 2.0, 3.0, 9.0]})
    stats = mean_with_interval(frame, "t", "v", min_count=2)
    assert stats["t"].tolist() == [1]
    row = stats.iloc[0]
    assert row["mean"] == 2.0 and row["count"] == 3 and 1.0 <= row["low"] <= 2.0 <= row["high"] <= 3.0
