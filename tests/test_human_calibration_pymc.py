"""PyMC counterpart of DIAL's human calibration: its log-likelihood equals the twin's, w = 1 is
joint Bayes, λ by PSIS-LOO over human comparisons."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal import simulate_dial as sd
from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc
from bayescal.models import human_calibration as hm


@pytest.fixture(scope="module")
def data():
    par = sd.truth(6, 3, 1, random_seed=2)
    par["s_h"] = par["mu"] + 0.4 * par["V"][:, 0]
    return Comparisons.concat([sd.llm(par, 1500, random_seed=3),
                               sd.human(par, 120, random_seed=4)])


def _point(model, seed):
    rng = np.random.default_rng(seed)
    ip = model.initial_point()
    if "item_basis_free" in ip:
        ip["item_basis_free"] = np.eye(*ip["item_basis_free"].shape) * 2.0
    return {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in ip.items()}


@pytest.mark.parametrize("space", ["full"])  # s_h = c_0 μ + V c_V covers the consensus term
def test_pymc_loglik_equals_the_twin(data, space):
    """At random points the model's log-likelihood terms (the observed human ``outcome`` plus
    the tempered LLM Potential) equal the twin's public ``loglik(params, data, llm_weight=λ)``,
    and the human node alone equals it at λ = 0. Catches a power applied as λ instead of
    w = λ n_h/n_l, a flipped display order, or a human node on cells instead of comparisons
    (the sum is the same, so the count of pointwise terms is checked too)."""
    lam = 4.0
    model = hm.build(data, space=space, llm_weight=lam)
    outs = model.replace_rvs_by_values([model["ability"], model["order_effect"],
                                        model["human_ability"], model["llm_tempered"]])
    outs.append(model.logp(vars=[model["outcome"]]))  # one compilation for all
    f = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")
    for seed in range(3):
        S, b, s_h, pot, human_logp = f(_point(model, seed))
        params = {"ability": S, "order_effect": b, "human_ability": s_h}
        assert pot + human_logp == pytest.approx(
            hc.loglik(params, data, llm_weight=lam, space=space), rel=1e-10)
        assert human_logp == pytest.approx(
            hc.loglik(params, data, llm_weight=0, space=space), rel=1e-10)
    n_human = data.subset(["human"]).n_rows
    assert model.rvs_to_values[model["outcome"]].eval().size == n_human
    assert model.coords["comparison"][0].endswith("#1")  # readable per-comparison labels


def test_power_one_is_joint_bayes(data):
    """w = 1 (λ = n_l/n_h): the tempered model's logp equals the model with the LLM verdicts as
    the ordinary observed node ``llm_outcome``, at random points."""
    tempered = hm.build(data, power=1.0)
    joint = hm.build(data, power=1.0, tempered=False)
    assert list(joint.coords["cell"]) == hm.design(data).llm.cell_labels()
    lt, lj = tempered.compile_logp(), joint.compile_logp()
    for seed in range(3):
        pt_ = _point(tempered, seed)
        assert lt(pt_) == pytest.approx(lj(pt_), rel=1e-12)


def test_design_has_one_row_per_human_comparison_ties_included():
    """One row per human comparison from cell sums, ties (y = 1/2) included."""
    llm = sd.llm(sd.truth(4, 2, 1), 400)
    human = Comparisons.from_codes(list(llm.items), ["human"], judge=[0] * 5,
                                   item_a=[0, 0, 0, 1, 2], item_b=[1, 1, 1, 0, 3],
                                   outcome=[1, 0.5, 0, 1, 0.5])
    des = hm.design(Comparisons.concat([llm, human], humans=["human"]))
    got = sorted(zip(des.human_i.tolist(), des.human_j.tolist(), des.human_y.tolist(),
                     strict=True))
    assert got == sorted([(0, 1, 1.0), (0, 1, 0.5), (0, 1, 0.0), (0, 1, 0.0), (2, 3, 0.5)])


def test_priors_are_validated():
    with pytest.raises(ValueError, match="calibration_sd"):
        hm.Priors(calibration_sd=0.0)
    with pytest.raises(ValueError, match="basis_sd"):
        hm.Priors(basis_sd=None)
    assert hm.Priors.flat().human_sd is None


@pytest.mark.slow
def test_loo_path_runs_and_prefers_a_sensible_weight(data):
    """PSIS-LOO over human comparisons on [∞ (cut), λ₀, 0]: finite elpds, one selection."""
    lam0 = data.subset(["judge_00", "judge_01", "judge_02"]).n_rows / data.subset(
        ["human"]).n_rows
    table, fits = hm.choose_by_loo(data, grid_values=[np.inf, lam0, 0.0], draws=200, tune=200,
                                   chains=2)
    assert np.isfinite(table["elpd_loo"]).all()
    assert table["selected"].sum() == 1
    assert set(fits) == {np.inf, lam0, 0.0}


def test_flat_prior_map_equals_the_twin(data):
    """With flat priors on every identified block, the MAP of the power posterior at λ (full
    space) is the twin's weighted estimate (11): human scores, S and b within 1e-5. Catches a
    power w that is not λ n_h/n_l (the optimum moves), or a chart mismatch between the models."""
    import warnings

    import pymc as pm

    lam = 4.0
    flat = hm.Priors.flat()
    model = hm.build(data, llm_weight=lam, priors=flat, space="full")
    start = model.initial_point()
    start.update(hm.initvals(model))
    start["calibration_consensus"] = np.array(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mode = pm.find_MAP(start=start, model=model, method="L-BFGS-B", progressbar=False,
                           options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10})
    est = hc.fit(data, llm_weight=lam, space="full")
    for name in ("human_ability", "ability", "order_effect"):
        assert np.abs(mode[name] - est.params[name].values).max() < 1e-5, name
