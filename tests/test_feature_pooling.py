"""Pooling of the judges' feature effects across judges, one choice for the three pairwise
models (``Priors.feature_pooling``, :func:`bayescal.models._btl.feature_term`): independent
(the default), one shared effect, or a hierarchical prior β_kf ~ N(β̄_f, τ_f)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pymc as pm
import pytest
import statsmodels.api as sm

import bayescal as bc
from bayescal.data import Comparisons
from bayescal.frequentist import judge_discrimination_btl as jdf
from bayescal.frequentist import low_rank_judges as lrf
from bayescal.frequentist import order_effect_btl as oef
from bayescal.models import judge_discrimination_btl as jdm
from bayescal.models import low_rank_judges as lrm
from bayescal.models import order_effect_btl as oem


def _load_study():
    path = Path(__file__).resolve().parents[1] / "validation" / "order_effect_features.py"
    spec = importlib.util.spec_from_file_location("validation_order_effect_features_pool", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


STUDY = _load_study()
ITEMS, JUDGES, FEATURES = STUDY.ITEMS, STUDY.JUDGES, STUDY.FEATURES
MODELS = {"order_effect": (oem, oef, {}), "judge_discrimination": (jdm, jdf, {}),
          "low_rank": (lrm, lrf, {"rank": 1})}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return STUDY.simulate_frame(200, seed=29)


@pytest.fixture(scope="module")
def data(frame) -> Comparisons:
    return Comparisons.from_frame(frame, features=FEATURES)


def test_shared_effect_flat_map_equals_statsmodels(frame, data):
    """Order-effect BTL with one feature effect for all judges and flat priors: the MAP's
    β̄ equals statsmodels' Logit on the raw rows with design [each judge's item_a minus item_b
    dummies (item A dropped), each judge's order column, the shared x_a - x_b columns], and
    every judge's ``feature_effect`` row is β̄. Catches the shared effect broadcast to the wrong
    axis or a judge left with its own effect."""
    priors = oem.Priors(ability_sd=None, order_effect_sd=None, feature_effect_sd=None,
                        feature_pooling="shared")
    mode = bc.fit(oem.build(data, priors=priors), "map")["posterior"]
    k = frame["judge"].map({j: c for c, j in enumerate(JUDGES)}).to_numpy()
    n, kk = len(ITEMS), len(JUDGES)
    x = np.zeros((len(frame), kk * (n - 1 + 1) + 2))
    for c, item in enumerate(ITEMS[1:]):
        diff = ((frame["item_a"] == item).to_numpy(float)
                - (frame["item_b"] == item).to_numpy(float))
        x[np.arange(len(frame)), k * (n - 1) + c] = diff
    x[np.arange(len(frame)), kk * (n - 1) + k] = frame["order"].to_numpy()
    x[:, -2] = frame["loglen_a"] - frame["loglen_b"]
    x[:, -1] = frame["md_a"] - frame["md_b"]
    res = sm.Logit(frame["outcome"].to_numpy(), x).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(mode["feature_effect_shared"].values[0, 0], res.params[-2:],
                               atol=1e-5)
    np.testing.assert_allclose(mode["feature_effect"].values[0, 0],
                               np.tile(res.params[-2:], (kk, 1)), atol=1e-5)


# the order-effect BTL's shared effect is pinned by its MAP above; one model per remaining
# pooling keeps the compile cost down (the pooling code is the one feature_term of all three)
@pytest.mark.parametrize(("name", "pooling"), [("judge_discrimination", "partial"),
                                               ("low_rank", "shared")])
def test_pooled_models_keep_the_twins_likelihood(data, rng, name, pooling):
    """The PyMC likelihood at random points equals the twin's loglik at the model's own
    ``feature_effect`` (the deterministic (judge, feature) array the pooling builds).
    Catches a pooled effect that the likelihood does not use, or one indexed by the wrong
    judge."""
    model_mod, twin, opts = MODELS[name]
    model = model_mod.build(data, priors=model_mod.Priors(feature_pooling=pooling), **opts)
    assert model.named_vars_to_dims["feature_effect"] == ("judge", "feature")
    names = [n for n in ("ability", "discrimination", "order_effect", "feature_effect")
             if n in model.named_vars]
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")
    logp = model.compile_logp(vars=[model["outcome"]], jacobian=False)
    init = model.initial_point()
    for _ in range(2):
        point = {v: val + 0.5 * rng.normal(size=np.shape(val)) for v, val in init.items()}
        params = dict(zip(names, fn(point), strict=True))
        np.testing.assert_allclose(logp(point), twin.loglik(params, data), rtol=1e-10)


def test_partial_pooling_prior_has_the_hierarchical_moments(data):
    """β_kf = β̄_f + τ_f z_kf with β̄_f ~ N(0, 1), τ_f ~ HalfNormal(1), z standard normal:
    Var β_kf = 1 + E τ² = 2 and corr(β_kf, β_k'f) = 1/2. Over 4000 prior draws (fixed seed)
    the sample variance is within 10% (relative SE about 3% under this mixture's kurtosis) and
    the correlation within 0.05 (SE about 0.012). Catches τ used as a variance (Var 1 + E τ⁴ =
    4), the mean left out (correlation 0), or z shared across judges (correlation 1)."""
    model = oem.build(data, priors=oem.Priors(feature_pooling="partial", feature_pooling_sd=1.0))
    with model:
        prior = pm.sample_prior_predictive(draws=4000, var_names=["feature_effect"],
                                           random_seed=11)
    beta = prior["prior"]["feature_effect"].values.reshape(-1, len(JUDGES), 2)
    assert np.var(beta[:, :, 0]) == pytest.approx(2.0, rel=0.10)
    corr = np.corrcoef(beta[:, 0, 0], beta[:, 1, 0])[0, 1]
    assert corr == pytest.approx(0.5, abs=0.05)


def test_pooling_is_validated_and_the_twins_refuse_a_pooled_penalty(data):
    """An unknown pooling, or a flat τ prior, is refused by every Priors; a twin handed a
    pooled prior as its penalty refuses it before fitting (the independent Gaussian it adds
    is not that prior, so its optimum would belong to another model)."""
    for model_mod in (oem, jdm, lrm):
        with pytest.raises(ValueError, match="feature_pooling must be one of"):
            model_mod.Priors(feature_pooling="partly")
        with pytest.raises(ValueError, match="feature_pooling_sd cannot be None"):
            model_mod.Priors(feature_pooling="partial", feature_pooling_sd=None)
    for model_mod, twin in ((oem, oef), (jdm, jdf)):
        with pytest.raises(ValueError, match="independent feature-effect priors only"):
            twin.fit(data, penalty=model_mod.Priors(feature_pooling="shared"))
