"""Bootstrap CIs, paired comparison and compare() on score outputs."""

from __future__ import annotations

import numpy as np
import pytest

from drivebench.evaluator.scoring import compare, score
from drivebench.evaluator.stats import bootstrap_ci, bootstrap_ratio_cis, paired_compare, sign_flip_p_value


def test_ci_contains_the_mean_and_is_seeded() -> None:
    rng = np.random.default_rng(1)
    for values in (rng.random(300), (rng.random(500) < 0.3).astype(float), rng.random(5000)):
        lo, hi = bootstrap_ci(values, seed=7)
        assert lo <= values.mean() <= hi
        assert (lo, hi) == bootstrap_ci(values, seed=7)
    assert bootstrap_ci([np.nan, np.nan]) is None


def test_ci_width_matches_the_normal_approximation() -> None:
    v = (np.random.default_rng(2).random(2000) < 0.5).astype(float)
    lo, hi = bootstrap_ci(v, resamples=2000)
    se = v.std() / np.sqrt(len(v))
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_both_resampling_paths_agree() -> None:
    rng = np.random.default_rng(3)
    few = (rng.random(4000) < 0.4).astype(float)  # 2 distinct rows: multinomial path
    many = few + rng.random(4000) * 1e-9  # all distinct: index path
    a = bootstrap_ratio_cis(few, np.ones_like(few), resamples=2000)[0]
    b = bootstrap_ratio_cis(many, np.ones_like(many), resamples=2000)[0]
    assert a == pytest.approx(b, abs=0.01)


def test_ratio_ci_with_excluded_rows() -> None:
    num = np.array([1.0, 0.0, 2.0, 0.0])
    den = np.array([1.0, 0.0, 2.0, 1.0])
    lo, hi = bootstrap_ratio_cis(num, den)[0]
    assert 0.0 <= lo <= 0.75 <= hi <= 1.0


def test_identical_runs_give_p_one() -> None:
    v = np.random.default_rng(4).random(200)
    res = paired_compare(v, v)
    assert res["p_value"] == 1.0 and res["diff"] == 0.0 and res["ci"] == [0.0, 0.0]


def test_clearly_better_run_is_significant() -> None:
    rng = np.random.default_rng(5)
    b = (rng.random(300) < 0.5).astype(float)
    a = np.maximum(b, (rng.random(300) < 0.4).astype(float))
    res = paired_compare(a, b)
    assert res["diff"] > 0 and res["p_value"] < 0.01 and res["ci"][0] > 0


def test_noise_is_not_significant() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.random(400), rng.random(400)
    assert paired_compare(a, b)["p_value"] > 0.01


def test_sign_flip_p_value_bounds_and_seed() -> None:
    d = np.random.default_rng(7).normal(0.1, 1, 100)
    p = sign_flip_p_value(d, permutations=10_000, seed=1)
    assert 1 / 10_001 <= p <= 1 and p == sign_flip_p_value(d, permutations=10_000, seed=1)
    assert sign_flip_p_value([]) == 1.0


def test_paired_drops_nan_and_checks_length() -> None:
    res = paired_compare([1.0, np.nan, 0.0], [0.0, 1.0, np.nan])
    assert res["n"] == 1
    with pytest.raises(ValueError):
        paired_compare([1.0], [1.0, 2.0])


def test_compare_two_scores(mkq, mkr) -> None:
    qs = [mkq(f"q{i}", [f"g{i}"]) for i in range(120)]
    good = [mkr(f"q{i}", [f"g{i}"]) for i in range(120)]
    bad = [mkr(f"q{i}", ["x", f"g{i}"] if i % 3 else ["x"]) for i in range(120)]
    a, b = score(qs, good, (1, 3)), score(qs, bad, (1, 3))
    cmp = compare(a, b)
    assert cmp["queries"] == 120
    assert cmp["metrics"]["hit_rate@1"]["diff"] == 1.0 and cmp["metrics"]["hit_rate@1"]["p_value"] < 0.01
    assert compare(a, a)["metrics"]["ndcg@3"]["p_value"] == 1.0
    assert "latency_ms_p50" not in cmp["metrics"]


def test_score_ci_brackets_each_metric(mkq, mkr) -> None:
    qs = [mkq(f"q{i}", [f"g{i}"]) for i in range(50)]
    run = [mkr(f"q{i}", [f"g{i}"] if i % 2 else ["x", f"g{i}"]) for i in range(50)]
    out = score(qs, run, (1, 3), seed=3)
    for name, (lo, hi) in out["ci"].items():
        assert lo <= out["metrics"][name] <= hi, name
    assert out == score(qs, run, (1, 3), seed=3)
