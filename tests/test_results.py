"""fit / summarize / diagnose / compare: the shared machinery every model uses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.stats import norm

import bayescal as bc
from bayescal.frequentist import Estimate
from bayescal.summary import COLUMNS, term_labels, wald_interval


def fake_posterior(shift: float, seed: int = 0) -> xr.DataTree:
    """Two chains of a 3-vector; ``shift`` moves the second chain (a non-mixing sampler)."""
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=(2, 500, 3))
    draws[1] += shift
    post = xr.Dataset({"ability": (("chain", "draw", "item"), draws)},
                      coords={"chain": [0, 1], "draw": np.arange(500), "item": ["a", "b", "c"]})
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((2, 500), bool)),
                        "energy": (("chain", "draw"), rng.normal(size=(2, 500)))})
    tree = xr.DataTree.from_dict({"posterior": post, "sample_stats": stats})
    tree.attrs["bayescal_method"] = "nuts"
    return tree


def test_summary_schema_and_equal_tailed_quantiles():
    tree = fake_posterior(0.0)
    table = bc.summarize(tree, 0.8)
    assert list(table.columns) == COLUMNS and list(table.index) == ["ability[a]", "ability[b]",
                                                                    "ability[c]"]
    draws = tree["posterior"]["ability"].values[..., 1].ravel()
    assert table.loc["ability[b]", "lower"] == pytest.approx(np.quantile(draws, 0.1))
    assert table.loc["ability[b]", "upper"] == pytest.approx(np.quantile(draws, 0.9))
    assert table.loc["ability[b]", "se"] == pytest.approx(draws.std(ddof=1))
    with pytest.raises(ValueError, match="prob"):
        bc.summarize(tree, 95)


def test_diagnose_passes_a_mixed_posterior_and_warns_on_a_stuck_chain():
    ok = bc.diagnose(fake_posterior(0.0), warn=False)
    assert ok["ok"].all()
    with pytest.warns(bc.DiagnosticWarning, match="ability r_hat_max"):
        bad = bc.diagnose(fake_posterior(3.0))
    assert not bad.loc[("ability", "r_hat_max"), "ok"]


def test_diagnose_refuses_a_map_result():
    tree = fake_posterior(0.0)
    tree.attrs["bayescal_method"] = "map"
    with pytest.raises(ValueError, match="MAP"):
        bc.diagnose(tree)


def test_compare_columns_truth_and_names():
    a, b = fake_posterior(0.0, seed=1), fake_posterior(0.0, seed=2)
    truth = xr.Dataset({"ability": ("item", [0.0, 0.0, 10.0])}, coords={"item": ["a", "b", "c"]})
    table = bc.compare(first=a, second=b, prob=0.9, truth=truth)
    assert {"first_estimate", "second_upper", "width_ratio_first/second",
            "overlap_first/second", "covers_first"} <= set(table.columns)
    assert table["covers_first"].tolist() == [True, True, False]
    assert table["overlap_first/second"].between(0.8, 1.0).all()
    same = bc.compare(a, b, prob=0.9)
    assert "nuts_2_estimate" in same.columns
    with pytest.raises(ValueError, match="at least one"):
        bc.compare(prob=0.9)


def test_wald_intervals():
    lo, hi = wald_interval(0.3, 0.05, 0.9, "wald")
    assert hi - 0.3 == pytest.approx(norm.ppf(0.95) * 0.05)
    lo, hi = wald_interval(0.3, 0.05, 0.9, "wald-logit")
    half = norm.ppf(0.95) * 0.05 / (0.3 * 0.7)
    assert np.log(hi / (1 - hi)) == pytest.approx(np.log(0.3 / 0.7) + half)
    assert 0 < lo < 0.3 < hi < 1
    with pytest.raises(ValueError, match="unknown interval"):
        wald_interval(0.3, 0.05, 0.9, "profile")


def test_wald_log_interval_for_positive_parameters():
    """exp(log θ ± z se/θ): positive even when θ ± z se is not, symmetric on the log scale.
    Catches a log interval built with se instead of se/θ (the delta method)."""
    lo, hi = wald_interval(5.08, 54.1, 0.95, "wald-log")  # the γ = 5.08 [−100.9, 111.0]
    half = norm.ppf(0.975) * 54.1 / 5.08
    assert np.log(hi) - np.log(5.08) == pytest.approx(half)
    assert np.log(5.08) - np.log(lo) == pytest.approx(half)
    assert 0 < lo < 5.08 < hi
    with pytest.raises(ValueError, match="positive estimate"):
        wald_interval([1.0, 0.0], [0.1, 0.1], 0.9, "wald-log")


@pytest.mark.parametrize("kind", ["wald", "wald-log", "wald-logit"])
def test_an_interval_never_excludes_its_estimate(kind):
    """Every interval kind contains its estimate, for standard errors from tiny to huge."""
    rng = np.random.default_rng(7)
    est = rng.uniform(0.001, 0.999, 500)  # inside the support of every kind
    se = np.exp(rng.uniform(-12, 6, 500))
    lo, hi = wald_interval(est, se, 0.95, kind)
    assert np.all((lo <= est) & (est <= hi))


def test_compare_coverage_is_missing_where_there_is_no_truth_or_no_interval():
    """A term without a true value, or without an interval from a method, has unknown coverage
    (pd.NA), not False: a coverage rate averaged over such rows would be biased low."""
    est = Estimate(
        method="mle",
        params=xr.Dataset({"ability": ("item", [0.0, 1.0]), "spread": 2.0},
                          coords={"item": ["a", "b"]}),
        cov=np.diag([0.04, 0.04, 0.25]),
        terms=("ability[a]", "ability[b]", "spread"),
        interval={"ability": "wald", "spread": "none"},
    )
    table = bc.compare(est, prob=0.9, truth={"ability[a]": 0.1, "spread": 2.0})
    covers = table["covers_mle"]
    assert str(covers.dtype) == "boolean"
    assert bool(covers["ability[a]"]) is True
    assert covers.isna().tolist() == [False, True, True]
    assert covers.mean() == 1.0  # only the known row counts


def test_term_labels_for_two_dimensional_parameters():
    da = xr.DataArray(np.zeros((2, 3)), dims=("judge", "item"),
                      coords={"judge": ["j1", "j2"], "item": ["a", "b", "c"]})
    assert term_labels("ability", da)[:4] == ["ability[j1, a]", "ability[j1, b]",
                                              "ability[j1, c]", "ability[j2, a]"]


def test_fit_rejects_an_unknown_method():
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("x")
    with pytest.raises(ValueError, match="'nuts' or 'map'"):
        bc.fit(model, "laplace")  # type: ignore[arg-type]


def test_summarize_rejects_other_objects():
    with pytest.raises(TypeError, match="cannot summarize"):
        bc.summarize(pd.DataFrame(), 0.9)


def test_compare_against_a_reference_and_points_without_intervals():
    a, b, c = (fake_posterior(0.0, seed=k) for k in (1, 2, 3))
    point = fake_posterior(0.0, seed=4)
    point.attrs["bayescal_method"] = "map"
    point["posterior"] = point["posterior"].to_dataset().isel(chain=[0], draw=[0])
    table = bc.compare(a=a, b=b, c=c, mode=point, prob=0.9)
    assert [col for col in table.columns if col.startswith("width_ratio")] == [
        "width_ratio_a/c", "width_ratio_b/c"]
    assert "mode_estimate" in table.columns and "mode_lower" not in table.columns
    table = bc.compare(a=a, b=b, c=c, prob=0.9, reference="a")
    assert "width_ratio_c/a" in table.columns
    with pytest.raises(ValueError, match="reference 'mode'"):
        bc.compare(a=a, mode=point, prob=0.9, reference="mode")
