"""PyMC counterpart of DIAL's human calibration (SPEC §1.16): logps equal the twin's, w = 1 is
joint Bayes, λ by PSIS-LOO over human comparisons."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal import simulate_dial as sd
from bayescal.frequentist import human_calibration as hc
from bayescal.models import human_calibration as hm


@pytest.fixture(scope="module")
def data():
    par = sd.truth(6, 3, 1, random_seed=2)
    par["s_h"] = par["mu"] + 0.4 * par["V"][:, 0]
    human = sd.human(par, 120, random_seed=4)
    return sd.llm(par, 1500, random_seed=3), human


def _point(model, seed):
    rng = np.random.default_rng(seed)
    ip = model.initial_point()
    if "item_basis_free" in ip:
        ip["item_basis_free"] = np.eye(*ip["item_basis_free"].shape) * 2.0
    return {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in ip.items()}


@pytest.mark.parametrize("space", ["full"])  # s_h = c_0 μ + V c_V covers the consensus term
def test_pymc_logps_equal_the_twin(data, space):
    """At random points the Potential equals w × the twin's LLM log-likelihood and the human
    observed node equals the twin's human log-likelihood (w = λ n_h/n_l). Catches a power applied
    as λ instead of w, a flipped display order or a human node on cells instead of comparisons
    (the sum is the same, so we also check the count of pointwise terms)."""
    llm, human = data
    lam = 4.0
    model = hm.build(llm, human, space=space, llm_weight=lam)
    p = hc.problem(llm, human, space=space)
    w = lam * p.n_h / p.n_l
    outs = model.replace_rvs_by_values([model["ability"], model["order_effect"],
                                        model["human_ability"], model["llm_tempered"]])
    outs.append(model.logp(vars=[model["human_outcome"]]))  # one compilation for all
    f = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")
    for seed in range(3):
        pt_ = _point(model, seed)
        S, b, s_h, pot, human_logp = f(pt_)
        U, sv, Vt = np.linalg.svd(S, full_matrices=False)
        G = U[:, : p.r1] * np.sqrt(sv[: p.r1])
        F = Vt[: p.r1].T * np.sqrt(sv[: p.r1])
        raw = np.concatenate([G.ravel(), F.ravel(), b, np.zeros(p.n_u)])
        assert np.allclose(G @ F.T, S, atol=1e-10)  # rank r + 1 by construction
        assert pot == pytest.approx(-w * hc._llm_nll(raw, p), rel=1e-10)
        assert human_logp == pytest.approx(-hc._human_nll_s(s_h, p), rel=1e-10)
    assert model.rvs_to_values[model["human_outcome"]].eval().size == human.n_rows


def test_power_one_is_joint_bayes(data):
    """w = 1 (λ = n_l/n_h): the tempered model's logp equals the model with the LLM verdicts as
    an ordinary observed node, at random points."""
    llm, human = data
    tempered = hm.build(llm, human, power=1.0)
    joint = hm.build(llm, human, power=1.0, tempered=False)
    lt, lj = tempered.compile_logp(), joint.compile_logp()
    for seed in range(3):
        pt_ = _point(tempered, seed)
        assert lt(pt_) == pytest.approx(lj(pt_), rel=1e-12)


def test_human_rows_recover_ties():
    """One row per human comparison from cell sums, ties (y = 1/2) included."""
    from bayescal.data import Comparisons

    llm = sd.llm(sd.truth(4, 2, 1), 400)
    human = Comparisons.from_codes(list(llm.items), ["h"], judge=[0] * 5,
                                   item_a=[0, 0, 0, 1, 2], item_b=[1, 1, 1, 0, 3],
                                   outcome=[1, 0.5, 0, 1, 0.5])
    p = hc.problem(llm, human)
    i, j, y = hm.human_rows(p)
    got = sorted(zip(i.tolist(), j.tolist(), y.tolist(), strict=True))
    assert got == sorted([(0, 1, 1.0), (0, 1, 0.5), (0, 1, 0.0), (0, 1, 0.0), (2, 3, 0.5)])


@pytest.mark.slow
def test_loo_path_runs_and_prefers_a_sensible_weight(data):
    """PSIS-LOO over human comparisons on [∞ (cut), λ₀, 0]: finite elpds, one selection."""
    llm, human = data
    table, fits = hm.choose_by_loo(llm, human, grid_values=[np.inf, llm.n_rows / human.n_rows,
                                                            0.0], draws=200, tune=200, chains=2)
    assert np.isfinite(table["elpd_loo"]).all()
    assert table["selected"].sum() == 1
    assert set(fits) == {np.inf, llm.n_rows / human.n_rows, 0.0}


def test_flat_prior_map_equals_the_twin(data):
    """With flat priors on every identified block, the MAP of the power posterior at λ (full
    space) is the twin's weighted estimate (11): human scores, S and b within 1e-5. Catches a
    power w that is not λ n_h/n_l (the optimum moves), or a chart mismatch between the models."""
    import warnings

    import pymc as pm

    llm, human = data
    lam = 4.0
    flat = hm.Priors(loading_mean_sd=None, loading_sd=None, disagreement_sd=None,
                     order_effect_sd=None, calibration_sd=None)
    model = hm.build(llm, human, llm_weight=lam, priors=flat, space="full")
    start = model.initial_point()
    start.update(hm.initvals(model))
    start["calibration_consensus"] = np.array(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mode = pm.find_MAP(start=start, model=model, method="L-BFGS-B", progressbar=False,
                           options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10})
    est = hc.fit(llm, human, llm_weight=lam, space="full")
    for name in ("human_ability", "ability", "order_effect"):
        assert np.abs(mode[name] - est.params[name].values).max() < 1e-5, name
