"""The protocol of Subasic et al. (2026, arXiv:2611.00447): split, modes, checkpoints, Table 2,
Wilcoxon–Holm, stopping rules."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wilcoxon

from bayescal import calibration as cal
from bayescal.calibration import protocol as pr
from bayescal.calibration.metrics import mae
from bayescal.data import DataError, Ratings

METHODS = {"raw": cal.Raw, "sqm": lambda s: cal.SQM(s, "mid"),
           "sqm_upper": lambda s: cal.SQM(s, "upper"), "isotonic": cal.Isotonic,
           "sliced_wasserstein": cal.SlicedWassersteinOT}


def _ratings(groups: int = 4, n: int = 60, seed: int = 0) -> Ratings:
    rng = np.random.default_rng(seed)
    j = rng.integers(1, 6, groups * n)
    h = np.clip(j - 1 + rng.integers(-1, 2, groups * n), 1, 5)  # judge inflates by one point
    return Ratings.from_arrays(j, h, scale=(1, 5),
                               groups={"dataset": np.repeat([f"d{g}" for g in range(groups)], n)})


@pytest.fixture(scope="module")
def result() -> pr.ProtocolResult:
    return pr.run(_ratings(), METHODS, seeds=(0, 1), rules=["stop_at_100", "ema_slope",
                                                              "page_hinkley", "adwin",
                                                              "champion_challenger",
                                                              "reservoir_validation"])


def test_modes_checkpoints_and_data_limited_fits(result: pr.ProtocolResult) -> None:
    cur = result.curve
    runs = cur.groupby(["dataset", "seed", "method"])
    assert runs.ngroups == 4 * 2 * len(METHODS)
    sqm = cur[(cur["method"] == "sqm") & (cur["dataset"] == "d0") & (cur["seed"] == 0)]
    assert sqm["n_anchors"].tolist() == list(range(1, 43))  # pool 42: every 1 % is ≥ 1 anchor
    iso = cur[(cur["method"] == "isotonic") & (cur["dataset"] == "d0") & (cur["seed"] == 0)]
    assert iso["mode"].unique().tolist() == ["full-batch"]
    assert iso["n_anchors"].tolist() == [5, 11, 21, 32, 42]  # ceil(10/25/50/75/100 % of 42)
    assert cur["exact"].between(0, 1).all() and (cur["w1"] >= 0).all()


def test_held_out_items_are_never_fitted_and_final_equals_an_independent_fit() -> None:
    """The final SQM checkpoint equals SQM fitted on the pool alone and scored on the 30 %
    held-out items; catches a split that leaks test items into the stream."""
    r = _ratings(groups=1, n=50, seed=3)
    res = pr.run(r, {"sqm": METHODS["sqm"]}, seeds=(7,), rules=[])
    rng = np.random.default_rng([7, 0])
    order = rng.permutation(50)
    test, pool = np.sort(order[:15]), order[15:]
    assert len(np.intersect1d(test, pool)) == 0
    fit = cal.SQM((1, 5), "mid").fit(r.judge[pool], r.human[pool])
    final = res.curve.iloc[-1]
    assert final["n_anchors"] == 35
    assert final["mae"] == pytest.approx(mae(fit.predict(r.judge[test]), r.human[test]))


def test_table2_shape_delta_and_ranking(result: pr.ProtocolResult) -> None:
    """Δ% over one pooled raw median per metric; the judge inflates every score by one point, so
    every calibrator beats raw (except upper SQM, whose upward bias costs it here) and raw has the
    most losses."""
    t = pr.table2(result)
    assert list(t.columns) == ["mode", "mae", "mae_delta_pct", "w1", "w1_delta_pct", "exact",
                               "exact_delta_pct", "rank", "wins", "losses"]
    raw = t.loc["raw"]
    assert raw["mae_delta_pct"] == 0
    assert (t.loc[["sqm", "isotonic", "sliced_wasserstein"], "rank"] < raw["rank"]).all()
    sqm = t.loc["sqm"]
    assert sqm["mae_delta_pct"] == pytest.approx(100 * (raw["mae"] - sqm["mae"]) / raw["mae"])
    assert sqm["exact_delta_pct"] == pytest.approx(
        100 * (sqm["exact"] - raw["exact"]) / raw["exact"])
    assert t["losses"].idxmax() == "raw"
    assert t["wins"].sum() >= 4 * 3  # at least one winner per group x metric (ties count)
    rounded = pr.table2(result, rounded=True)
    assert rounded.loc["sqm", "mae"] == pytest.approx(t.loc["sqm", "mae"])  # integer outputs
    assert rounded.loc["isotonic", "w1"] != pytest.approx(t.loc["isotonic", "w1"])
    best = pr.table2(result, checkpoint="best")
    assert (best["mae"].reindex(t.index) <= t["mae"] + 1e-12).all()


def test_wilcoxon_is_scipy_on_group_pairs_with_holm(result: pr.ProtocolResult) -> None:
    w = pr.wilcoxon_vs_raw(result)
    vals = result.curve.loc[result.curve.groupby(["dataset", "seed", "method"])["n_anchors"]
                            .idxmax()].groupby(["dataset", "method"])[["mae", "w1", "exact"]]
    vals = vals.mean().reset_index()
    ps = []
    for m in ("mae", "w1", "exact"):
        wide = vals.pivot(index="dataset", columns="method", values=m)
        ps.append(wilcoxon(wide["sqm"], wide["raw"]).pvalue)
    got = w[w["method"] == "sqm"].set_index("metric")
    np.testing.assert_allclose(got["p"], ps)
    order = np.argsort(ps)
    holm = np.maximum.accumulate([min(1, (3 - i) * ps[k]) for i, k in enumerate(order)])
    np.testing.assert_allclose(got["p_holm"].to_numpy()[order], holm)
    assert (got["n_pairs"] == 4).all()
    one = pr.run(_ratings(groups=1), METHODS, seeds=(0,), rules=[])
    assert pr.wilcoxon_vs_raw(one)["p"].isna().all()  # one group: no paired test


def test_stopping_rules_regret(result: pr.ProtocolResult) -> None:
    """Regret against the best checkpoint can never be negative; stop_at_100 on 42-anchor
    pools never fires (stops at the end: zero regret against the final state)."""
    st = pr.stopping(result)
    assert (st["regret_best"] >= -1e-9).all()
    fixed = st.xs("stop_at_100", level="rule")
    assert (fixed["fired"] == 0).all() and (fixed["regret_final"] == 0).all()
    assert set(st.index.get_level_values("rule")) == {"stop_at_100", "ema_slope", "page_hinkley",
                                                      "adwin", "champion_challenger",
                                                      "reservoir_validation"}
    early = pr.early_stop(result)
    assert early["fraction"].between(0, 1).all()


def test_too_small_or_unrated_groups_are_named() -> None:
    r = Ratings.from_arrays([1, 2, 3, 4, 5, 1, 2], [1, 2, 3, 4, 5, 1, 2], scale=(1, 5),
                            groups={"dataset": ["a"] * 5 + ["b"] * 2})
    with pytest.raises(DataError, match=r"group \{'dataset': 'b'\} has 2 human-rated items"):
        pr.run(r, METHODS, seeds=(0,), rules=[])
    r2 = Ratings.from_arrays([1, 2, 3], [1, np.nan, np.nan], scale=(1, 5),
                             groups={"dataset": ["a", "b", "b"]})
    with pytest.warns(UserWarning, match="2 of 3 items have no human score"), \
            pytest.raises(DataError, match="has 1 human-rated items"):
        pr.run(r2, METHODS, seeds=(0,), rules=[])
    with pytest.raises(DataError, match="unknown stopping rule"):
        pr.run(_ratings(), METHODS, rules=["patience"])


# The modes of Table 3 of Subasic et al. (2026): streaming, batch or full-batch per method
TABLE3_MODES = {
    "sqm": "streaming", "sqm_upper": "streaming", "sqm_predictive": "streaming",
    "sqm_predictive_upper": "streaming", "contrastive_rollout": "streaming",
    "few_shot": "streaming", "bayesian_update": "streaming", "streaming_linear": "streaming",
    "median_scaling": "streaming", "sliced_wasserstein": "batch", "dawid_skene": "batch",
    "cross_entropy": "full-batch", "isotonic": "full-batch", "sd_kde": "full-batch",
    "platt": "full-batch",
}


def test_default_methods_cover_table3() -> None:
    """Every Table 3 method bayescal implements is offered, in its Table 3 mode (the protocol
    fits full-batch methods once per data-limited fraction and updates the others anchor by
    anchor, so a wrong mode changes every curve of that method). The old last assert here was
    ``isinstance(x, object)``, true of anything. Conformal is the one deviation: Table 3 lists
    it under batch, bayescal updates it per anchor (its point prediction is streaming linear
    regression's), so it is pinned as streaming here to make a change of mind visible."""
    methods = pr.default_methods(True)
    assert set(TABLE3_MODES) | {"raw", "conformal"} == set(methods)
    modes = {name: factory((1, 5)).mode for name, factory in methods.items()}
    assert {name: modes[name] for name in TABLE3_MODES} == TABLE3_MODES
    assert modes["conformal"] == "streaming" and modes["raw"] == "streaming"
    without = pr.default_methods(False)
    assert set(methods) - set(without) == {"sqm_predictive", "sqm_predictive_upper",
                                          "contrastive_rollout"}


def test_a_distributional_output_is_scored_as_a_distribution() -> None:
    """Catches W1 of predictive SQM computed on its weighted-mean output (non-integer points
    against integer human scores: above zero even for a perfect distribution), a mixture
    built without the weights, or a CDF on the wrong support."""
    from bayescal.calibration.metrics import wasserstein, wasserstein_distribution

    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, 400)
    counts = np.bincount(human - 1, minlength=5) / len(human)
    perfect = np.tile(counts, (len(human), 1))  # every item predicts the humans' own histogram
    assert wasserstein_distribution(perfect, human, (1, 5)) == pytest.approx(0.0, abs=1e-12)
    assert wasserstein(perfect @ np.arange(1, 6), human) > 0.9  # the mean-output score
    dist = rng.dirichlet(np.ones(5), size=len(human))
    by_hand = np.abs(np.cumsum(dist.mean(axis=0)) - np.cumsum(counts)).sum()
    assert wasserstein_distribution(dist, human, (1, 5)) == pytest.approx(by_hand, rel=1e-12)
    with pytest.raises(ValueError, match="one column per level"):
        wasserstein_distribution(dist[:, :4], human, (1, 5))


def test_protocol_reports_the_distributional_w1_beside_the_point_one() -> None:
    """Point methods: w1_distribution is w1; predictive SQM: its image distribution."""
    rng = np.random.default_rng(5)
    n = 120
    judge = rng.integers(1, 6, n)
    dist = rng.dirichlet(np.ones(5) * 0.5, size=n)
    dist[np.arange(n), judge - 1] += 2.0
    dist /= dist.sum(axis=1, keepdims=True)
    human = np.clip(judge - 1 + rng.integers(0, 2, n), 1, 5)
    ratings = Ratings.from_arrays(judge, human, scale=(1, 5), judge_dist=dist)
    cur = pr.run(ratings, {"sqm": cal.SQM, "sqm_predictive": cal.PredictiveSQM},
                 seeds=(0,)).curve
    point = cur[cur["method"] == "sqm"]
    np.testing.assert_allclose(point["w1_distribution"], point["w1"])
    pred = cur[cur["method"] == "sqm_predictive"]
    assert (pred["w1_distribution"] != pred["w1"]).any()
