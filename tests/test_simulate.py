"""Chen et al.'s data-generating process (``simulate.misclassification``): moments and shapes.

Bands: a proportion estimated from n Bernoulli(p) draws has sd sqrt(p(1-p)/n); the checks accept
4 sd (a false alarm has probability ~6e-5 per check; the seeds are fixed anyway).
"""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.compare import truth_series
from bayescal.data import DataError, Labels
from bayescal.simulate import misclassification


def within(estimate: float, p: float, n: float, sds: float = 4.0) -> bool:
    return abs(estimate - p) <= sds * np.sqrt(p * (1 - p) / n)


def test_shapes_names_and_truth() -> None:
    labels, truth = misclassification(
        500, prevalence=0.3, specificity=[0.9, 0.7, 0.6], sensitivity=[0.8, 0.75, 0.55],
        labelled_fraction=0.2, random_seed=1, judges=["a", "b", "c"],
    )
    assert isinstance(labels, Labels)
    assert labels.judges == ("a", "b", "c")
    assert labels.m + labels.n == 500
    assert labels.yhat_cal.shape == (labels.m, 3) and labels.yhat_test.shape == (labels.n, 3)
    assert labels.is_binary()
    assert set(truth.data_vars) == {"prevalence", "specificity", "sensitivity"}
    assert truth["prevalence"].ndim == 0 and float(truth["prevalence"]) == 0.3
    assert truth["specificity"].dims == ("judge",)
    assert list(truth["judge"].values) == ["a", "b", "c"]
    np.testing.assert_array_equal(truth["sensitivity"].values, [0.8, 0.75, 0.55])
    assert truth.attrs["m"] == labels.m and truth.attrs["n"] == labels.n
    # the truth's terms are the models' terms, so compare(..., truth=truth) can use them
    assert list(truth_series(truth).index) == [
        "prevalence", "specificity[a]", "specificity[b]", "specificity[c]",
        "sensitivity[a]", "sensitivity[b]", "sensitivity[c]",
    ]


def test_scalars_broadcast_and_default_names() -> None:
    one, t1 = misclassification(50, prevalence=0.5, specificity=0.8, sensitivity=0.7,
                                labelled_fraction=0.5, random_seed=2)
    assert one.judges == ("judge",) and t1.sizes["judge"] == 1
    two, t2 = misclassification(50, prevalence=0.5, specificity=0.8, sensitivity=[0.7, 0.9],
                                labelled_fraction=0.5, random_seed=2)
    assert two.judges == ("judge_0", "judge_1")
    np.testing.assert_array_equal(t2["specificity"].values, [0.8, 0.8])
    three, _ = misclassification(50, prevalence=0.5, specificity=0.8, sensitivity=0.7,
                                 labelled_fraction=0.5, random_seed=2, judges=["x", "y", "z"])
    assert three.n_judges == 3


def test_same_seed_same_draw() -> None:
    kw = dict(prevalence=0.4, specificity=[0.8, 0.6], sensitivity=[0.7, 0.9],
              labelled_fraction=0.1, random_seed=7)
    a, _ = misclassification(300, **kw)
    b, _ = misclassification(300, **kw)
    np.testing.assert_array_equal(a.y_cal, b.y_cal)
    np.testing.assert_array_equal(a.yhat_test, b.yhat_test)


def test_moments_match_the_parameters() -> None:
    """Large N: θ, each judge's q0 and q1 and the labelled fraction within a binomial band."""
    theta, q0, q1, f, n_items = 0.3, [0.9, 0.7, 0.55], [0.65, 0.8, 0.95], 0.5, 200_000
    labels, truth = misclassification(n_items, prevalence=theta, specificity=q0,
                                      sensitivity=q1, labelled_fraction=f, random_seed=2026)
    assert within(labels.m / n_items, f, n_items)
    y = labels.y_cal
    assert within(y.mean(), theta, labels.m)
    assert within(truth.attrs["sample_prevalence"], theta, n_items)
    for k in range(3):
        yhat = labels.yhat_cal[:, k]
        assert within(yhat[y == 1].mean(), q1[k], (y == 1).sum())
        assert within(1 - yhat[y == 0].mean(), q0[k], (y == 0).sum())
        # the test set (R independent of Y) has the judge's marginal rate p
        p = (1 - theta) * (1 - q0[k]) + theta * q1[k]
        assert within(labels.yhat_test[:, k].mean(), p, labels.n)


def test_judges_are_conditionally_independent_given_y() -> None:
    """Within Y = 1, two judges' labels are uncorrelated; marginally they are correlated."""
    labels, _ = misclassification(100_000, prevalence=0.5, specificity=[0.8, 0.8],
                                  sensitivity=[0.8, 0.8], labelled_fraction=0.9, random_seed=3)
    y, a, b = labels.y_cal, labels.yhat_cal[:, 0], labels.yhat_cal[:, 1]
    for cls in (0, 1):
        r = np.corrcoef(a[y == cls], b[y == cls])[0, 1]
        assert abs(r) < 4 / np.sqrt((y == cls).sum())
    # marginal correlation: Cov = θ(1-θ)κ² = 0.09, Var = 0.25 -> r = 0.36
    assert np.corrcoef(a, b)[0, 1] == pytest.approx(0.36, abs=0.02)


def test_bad_arguments_are_refused() -> None:
    kw = dict(prevalence=0.5, specificity=0.8, sensitivity=0.8, labelled_fraction=0.5)
    with pytest.raises(ValueError, match="prevalence must lie in"):
        misclassification(100, **{**kw, "prevalence": 1.2})
    with pytest.raises(ValueError, match="labelled_fraction"):
        misclassification(100, **{**kw, "labelled_fraction": 1.0})
    with pytest.raises(ValueError, match="different numbers of judges"):
        misclassification(100, **{**kw, "specificity": [0.8, 0.9], "sensitivity": [0.8] * 3})
    with pytest.raises(ValueError, match="different numbers of judges"):
        misclassification(100, **{**kw, "specificity": [0.8, 0.9]}, judges=["a"])
    with pytest.raises(ValueError, match="n_items"):
        misclassification(1, **kw)


def test_empty_split_is_a_clear_data_error() -> None:
    kw = dict(prevalence=0.5, specificity=0.8, sensitivity=0.8, random_seed=0)
    with pytest.raises(DataError, match=r"calibration set is empty.*Raise n_items"):
        misclassification(5, labelled_fraction=1e-9, **kw)
    with pytest.raises(DataError, match="test set is empty"):
        misclassification(5, labelled_fraction=1 - 1e-9, **kw)


# ---------------------------------------------------------------- DIAL's low-rank judges
@pytest.mark.parametrize("mode", ["random", "overdispersed", "both_orders"])
def test_low_rank_judges_simulator_modes(mode: str) -> None:
    """Every documented mode of ``simulate.low_rank_judges`` returns binary verdicts with the
    order recorded, n_l of them, and win rates inside a 4-sd band of the model's σ(η) where ε = 0
    (both_orders, DIAL's real-data design, used to crash on its own soft outcomes)."""
    from bayescal import simulate

    truth = simulate.low_rank_judges_truth(6, 3, 1, random_seed=1)
    kwargs = {"random": {}, "overdispersed": {"overdispersion": 1.0},
              "both_orders": {"both_orders": True}}[mode]
    data = simulate.low_rank_judges(truth, 9000, random_seed=2, **kwargs)
    assert data.n_rows == 9000 and data.has_order and not data.quasi_likelihood
    S, b = truth["ability"].values, truth["order_effect"].values
    p = 1 / (1 + np.exp(-(S[data.judge, data.item_i] - S[data.judge, data.item_j]
                          + data.order * b[data.judge])))
    z = (data.wins - data.count * p) / np.sqrt(data.count * p * (1 - p))
    if mode == "overdispersed":
        assert np.std(z) > 1.5  # ε_kij adds between-cell variance
    else:
        assert np.abs(z).max() < 4.5 and 0.8 < np.std(z) < 1.2
    if mode == "both_orders":
        # every (judge, pair) in both orders, counts equal up to one
        assert data.n_cells == 3 * 15 * 2 and data.count.max() - data.count.min() <= 1
    else:
        first = (data.count * (data.order == 1)).sum() / data.count.sum()
        assert within(first, 0.75, 9000)


def test_simulate_dial_human_comparisons() -> None:
    """The human comparisons of ``simulate_dial.human`` follow σ(s_hi − s_hj) (4-sd band)."""
    from bayescal import simulate_dial as sd

    par = sd.truth(5, 3, 1, random_seed=3)
    human = sd.human(par, 4000, random_seed=4)
    assert human.humans == ("human",) and human.n_rows == 4000
    s = par["s_h"]
    p = 1 / (1 + np.exp(-(s[human.item_i] - s[human.item_j])))
    z = (human.wins - human.count * p) / np.sqrt(human.count * p * (1 - p))
    assert np.abs(z).max() < 4.5


def test_dial_truth_with_one_judge_and_a_rank_too_large_for_the_design() -> None:
    """Catches the IndexError a one-judge order-effect truth raised (its judge-centred U is
    zero, so the sign fix found no non-zero entry), and a rank larger than the design allows
    being drawn as a truth of lower rank without a word."""
    from bayescal.simulate import low_rank_judges_truth, order_effect_truth

    one = order_effect_truth(5, 1, random_seed=3)
    assert one.ability.shape == (1, 5)
    np.testing.assert_allclose(one.ability.sum("item"), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="rank 2 needs at least 3 judges"):
        low_rank_judges_truth(6, 2, 2)
    with pytest.raises(ValueError, match="lower the rank"):
        order_effect_truth(5, 1, rank=1)
