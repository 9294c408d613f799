"""Judge-specific effects of comparison features in DIAL's low-rank judges (issue 19).

logit = S_ki - S_kj + a b_k + β_kᵀ(x_i - x_j) with S = γμᵀ + UVᵀ (Condition 3 unchanged). At
full rank (r + 1 = K judges, K ≤ N - 1) the low-rank S is any row-centred matrix, so the model
is the order-effect BTL: its estimates and covariances (pinned to statsmodels in
tests/test_order_effect_features.py) are an independent reference for the low-rank twin's
gauge-free chart, its β blocks and its meats. The PyMC model is pinned to the twin.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_expit

import bayescal as bc
from bayescal.data import Comparisons
from bayescal.frequentist import low_rank_judges as lrf
from bayescal.frequentist import order_effect_btl as oef
from bayescal.identify import IdentificationError
from bayescal.models import low_rank_judges as lrm


def _load_study():
    path = Path(__file__).resolve().parents[1] / "validation" / "order_effect_features.py"
    spec = importlib.util.spec_from_file_location("validation_order_effect_features_lr", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


STUDY = _load_study()  # 4 items, 3 judges, log length and markdown features
ITEMS, JUDGES, FEATURES = STUDY.ITEMS, STUDY.JUDGES, STUDY.FEATURES
K, N, F = len(JUDGES), len(ITEMS), 2


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return STUDY.simulate_frame(300, seed=23)


@pytest.fixture(scope="module")
def data(frame) -> Comparisons:
    return Comparisons.from_frame(frame, features=FEATURES, cluster="question", humans=["h"])


def _terms() -> list[str]:
    return ([f"ability[{k}, {i}]" for k in JUDGES for i in ITEMS]
            + [f"order_effect[{k}]" for k in JUDGES]
            + [f"feature_effect[{k}, {f}]" for k in JUDGES for f in ("loglen", "md")])


@pytest.mark.parametrize("information", ["expected", "observed", "sandwich", "cluster"])
def test_full_rank_equals_the_order_effect_btl(data, information):
    """At r = K - 1 = 2 (S of rank 3 = K: every row-centred 3 x 4 matrix) the low-rank twin's
    S, b, β and their whole covariance equal the order-effect BTL's for every kind (the data's
    question key, CR0, couples the judges). Catches a β block missing from the information or
    the meats, β's coordinates mixed with b's in the chart, or β's rows left in the gauge
    directions; an SE 20% too wide fails (checked below)."""
    extra = {"cluster": {"correction": "CR0"}}.get(information, {})
    low = lrf.fit(data, rank=2, information=information, **extra)
    ref = oef.fit(data, information=information, **extra)
    a = [low.terms.index(t) for t in _terms()]
    b = [ref.terms.index(t) for t in _terms()]
    got = np.concatenate([low.params[n].values.ravel()
                          for n in ("ability", "order_effect", "feature_effect")])
    want = np.concatenate([ref.params[n].values.ravel()
                           for n in ("ability", "order_effect", "feature_effect")])
    np.testing.assert_allclose(got, want, atol=2e-6)
    np.testing.assert_allclose(low.cov[np.ix_(a, a)], ref.cov[np.ix_(b, b)], rtol=1e-4,
                               atol=1e-8)
    se = np.sqrt(np.diag(low.cov[np.ix_(a, a)]))
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(1.2 * se, np.sqrt(np.diag(ref.cov[np.ix_(b, b)])),
                                   rtol=1e-4)


def test_loglik_on_cells_equals_the_rows_and_the_gradient_its_differences(frame, data, rng):
    """At random (S, b, β) the twin's loglik equals the frame's row-by-row log-likelihood, and
    its gradient central differences, with and without order effects (the orders pooled with
    the features kept). Catches β dropped from the predictor when the orders are pooled, and a
    feature gradient taken with the wrong judge or column."""
    k = frame["judge"].map({j: c for c, j in enumerate(JUDGES)}).to_numpy()
    ia = frame["item_a"].map({x: c for c, x in enumerate(ITEMS)}).to_numpy()
    ib = frame["item_b"].map({x: c for c, x in enumerate(ITEMS)}).to_numpy()
    x = np.column_stack([frame["loglen_a"] - frame["loglen_b"], frame["md_a"] - frame["md_b"]])
    y = frame["outcome"].to_numpy()
    for order_effects in (True, False):
        s = rng.normal(size=(K, N))
        s -= s.mean(axis=1, keepdims=True)
        params = {"ability": s, "feature_effect": rng.normal(size=(K, F))}
        eta = s[k, ia] - s[k, ib] + np.sum(x * params["feature_effect"][k], axis=1)
        if order_effects:
            params["order_effect"] = rng.normal(size=K)
            eta = eta + frame["order"].to_numpy() * params["order_effect"][k]
        rows = float(np.sum(y * log_expit(eta) + (1 - y) * log_expit(-eta)))
        assert lrf.loglik(params, data, order_effects=order_effects) == pytest.approx(
            rows, rel=1e-12)
        grad = lrf.gradient(params, data, order_effects=order_effects)
        h = 1e-6
        for name, value in params.items():
            num = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                up, down = value.copy(), value.copy()
                up[idx] += h
                down[idx] -= h
                num[idx] = (lrf.loglik({**params, name: up}, data, order_effects=order_effects)
                            - lrf.loglik({**params, name: down}, data,
                                         order_effects=order_effects)) / (2 * h)
            np.testing.assert_allclose(grad[name], num, rtol=1e-6, atol=1e-5)


def test_rank_one_fit_is_stationary_and_refuses_confounded_features(frame, data):
    """At rank 1 (a real restriction here) the MLE's gradient in (b, β) vanishes and β's
    SEs are finite; a feature proportional to the display order is refused with order effects
    and accepted without them. Catches the order check applied to the order-agnostic fit, or a
    fit that stops short in the β coordinates."""
    est = lrf.fit(data, rank=1, information="expected")
    at = {n: est.params[n].values for n in ("ability", "order_effect", "feature_effect")}
    grad = lrf.gradient(at, data)
    # b and β are unconstrained, so their score vanishes; S's does only along the low-rank
    # tangent space (rank 1 is a restriction here)
    for name in ("order_effect", "feature_effect"):
        assert np.max(np.abs(grad[name])) < 1e-6
    assert np.all(np.isfinite(est.se.filter(like="feature_effect")))
    f = frame.assign(orderish_a=0.5 * frame["order"], orderish_b=0.0)
    bad = Comparisons.from_frame(f, features={"loglen": ("loglen_a", "loglen_b"),
                                              "orderish": ("orderish_a", "orderish_b")})
    for call in (lambda: lrf.fit(bad), lambda: lrm.build(bad)):
        with pytest.raises(IdentificationError, match="feature 'orderish'.*display order"):
            call()
    nopos = lrf.fit(bad, order_effects=False, information="expected")
    assert np.all(np.isfinite(nopos.se.filter(like="orderish")))


def _model_params(model):
    names = ("ability", "order_effect", "feature_effect")
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")
    return lambda point: dict(zip(names, fn(point), strict=True))


def test_pymc_loglik_equals_twin_and_flat_map_is_the_mle(data, rng):
    """The PyMC likelihood equals the twin's loglik at random points (rank 1), and the
    flat-prior MAP's S, b and β equal the twin's MLE. Catches the feature term indexed by the
    wrong judge in the model, or missing from its predictor."""
    model = lrm.build(data, rank=1)
    assert model.named_vars_to_dims["feature_effect"] == ("judge", "feature")
    logp = model.compile_logp(vars=[model["outcome"]], jacobian=False)
    params = _model_params(model)
    init = model.initial_point()
    for _ in range(3):
        point = {name: v + 0.3 * rng.normal(size=np.shape(v)) for name, v in init.items()}
        np.testing.assert_allclose(logp(point), lrf.loglik(params(point), data), rtol=1e-10)
    mle = lrf.fit(data, rank=1, information="expected")
    mode = bc.fit(lrm.build(data, rank=1, priors=lrm.Priors.flat()), "map")
    for name in ("ability", "order_effect", "feature_effect"):
        np.testing.assert_allclose(mode["posterior"][name].values[0, 0], mle.params[name].values,
                                   atol=2e-4)


@pytest.mark.slow
def test_cli_feature_flag_on_the_low_rank_fit(frame, tmp_path, capsys):
    """``fit low-rank-judges --feature ... --humans h``: summary.csv has one feature_effect row
    per (judge, feature) equal to the twin's MLE, and the contrasts to h are written. Catches
    the flag missing from this fit. Slow (a whole run folder with figures, about 8 s): the flag
    comes from the registry's ``features`` for every model, which the default run checks on
    the judge-discrimination fit."""
    from bayescal.cli import main

    path = tmp_path / "v.csv"
    frame.drop(columns="question").to_csv(path, index=False)
    assert main(["fit", "low-rank-judges", str(path), "--method", "mle", "--feature",
                 "loglen_a:loglen_b", "--feature", "md_a:md_b", "--humans", "h", "--out",
                 str(tmp_path / "run")]) == 0
    capsys.readouterr()
    table = pd.read_csv(tmp_path / "run" / "summary.csv", index_col="term")
    est = lrf.fit(Comparisons.from_frame(frame, features=FEATURES, humans=["h"]))
    for k in JUDGES:
        for f in ("loglen", "md"):
            assert table.loc[f"feature_effect[{k}, {f}]", "estimate"] == pytest.approx(
                float(est.params["feature_effect"].sel(judge=k, feature=f)), abs=1e-8)
    contrasts = pd.read_csv(tmp_path / "run" / "feature_effect_contrasts.csv")
    assert len(contrasts) == 4 and set(contrasts["human"]) == {"h"}
