"""Judge-discrimination BTL (Xu, Tan, Wu, Zhou 2026, arXiv:2601.21817): the PyMC model and its
frequentist twin, pinned together."""

from __future__ import annotations

import warnings

import choix
import numpy as np
import pandas as pd
import pytest
from scipy.linalg import null_space
from scipy.optimize import minimize
from scipy.stats import binom, norm
from statsmodels.genmod.families import Binomial
from statsmodels.genmod.generalized_linear_model import GLM
from statsmodels.tools.numdiff import approx_hess3

import bayescal as bc
from bayescal import simulate
from bayescal.data import Comparisons
from bayescal.frequentist import MLEBoundaryError
from bayescal.frequentist import judge_discrimination_btl as jdf
from bayescal.identify import IdentificationError, IdentificationWarning
from bayescal.models import judge_discrimination_btl as jd
from bayescal.schema import wald_interval


def verdicts(rows: list[tuple[str, str, int, int]], judge: str = "judge") -> pd.DataFrame:
    """(a, b, wins of a, wins of b) -> one row per verdict."""
    out = []
    for a, b, wa, wb in rows:
        out += [(a, b, judge, 1.0)] * wa + [(a, b, judge, 0.0)] * wb
    return pd.DataFrame(out, columns=["item_a", "item_b", "judge", "outcome"])


@pytest.fixture(scope="module")
def truth():
    return simulate.judge_discrimination_truth(6, 3, random_seed=11)


@pytest.fixture(scope="module")
def data(truth):
    return simulate.judge_discrimination_btl(truth, 4000, random_seed=12)


@pytest.fixture(scope="module")
def model(data):
    return jd.build(data)


@pytest.fixture(scope="module")
def posterior(model):
    return bc.fit(model, "nuts", draws=300, tune=300, chains=2, cores=1, nuts_sampler="pymc",
                  random_seed=3, check=False)


# ---------------------------------------------------------------- outside references
def test_wikipedia_worked_example():
    # Wikipedia's Bradley–Terry worked example: exp(score) with geometric mean 1 and sum-zero
    # Fisher SEs
    data = Comparisons.from_frame(verdicts([("A", "B", 2, 3), ("A", "D", 1, 4), ("B", "C", 5, 3),
                                            ("C", "D", 1, 3)]))
    est = jdf.fit(data)
    np.testing.assert_allclose(np.exp(est.params["ability"].values),
                               [0.640, 1.043, 0.660, 2.270], atol=5e-4)
    np.testing.assert_allclose(est.params["ability"].values,
                               [-0.446545, 0.042403, -0.415803, 0.819946], atol=1e-6)
    np.testing.assert_allclose(est.se.values, [0.5481, 0.4818, 0.5204, 0.6213], atol=5e-5)


def test_choix_testcase_pairwise_2():
    # choix tests/data/testcase-pairwise-2.json: (winner, loser) pairs -> ML scores
    pairs = [(0, 1), (0, 1), (1, 2), (2, 0)]
    df = pd.DataFrame({"item_a": [f"i{w}" for w, _ in pairs],
                       "item_b": [f"i{lo}" for _, lo in pairs], "outcome": 1.0})
    est = jdf.fit(Comparisons.from_frame(df))
    np.testing.assert_allclose(est.params["ability"].values, [0.419617624, -0.419617624, 0.0],
                               atol=1e-8)


def test_unweighted_twin_equals_choix(data):
    pooled = data.collapse(judges=True)
    n = pooled.n_items
    wins = np.zeros((n, n))
    np.add.at(wins, (pooled.item_i, pooled.item_j), pooled.wins)
    np.add.at(wins, (pooled.item_j, pooled.item_i), pooled.count - pooled.wins)
    # ilsr_pairwise_dense iterates to the ML fixed point; its scores are defined up to a constant
    ref = choix.ilsr_pairwise_dense(wins, alpha=0.0, tol=1e-12, max_iter=10_000)
    est = jdf.fit(data, discrimination=False)
    np.testing.assert_allclose(est.params["ability"].values, ref - ref.mean(), atol=1e-6)
    assert "discrimination" not in est.params


# ---------------------------------------------------------------- derivatives and information
def test_gradient_matches_finite_differences(data, rng):
    s = rng.normal(size=data.n_items)
    alpha = rng.normal(size=data.n_judges)
    grad = jdf.gradient({"ability": s, "discrimination": np.exp(alpha)}, data)
    x0 = np.r_[s, alpha]

    def f(x):
        return jdf.loglik({"ability": x[: data.n_items],
                           "discrimination": np.exp(x[data.n_items:])}, data)

    h = 1e-6
    num = np.array([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(len(x0))])
    np.testing.assert_allclose(np.r_[grad["ability"], grad["log_discrimination"]], num,
                               rtol=1e-6, atol=1e-4)


def test_observed_hessian_matches_finite_differences(data, rng):
    cells = jdf._cells(data, True)
    s, alpha = rng.normal(size=data.n_items), rng.normal(size=data.n_judges)
    _, g, parts = jdf._derivatives(s, alpha, cells, True)
    hess = jdf._hessian(cells, True, g, parts)
    x0, h = np.r_[s, alpha], 1e-6

    def grad(x):
        return jdf._derivatives(x[: data.n_items], x[data.n_items:], cells, True)[1]

    num = np.array([(grad(x0 + h * e) - grad(x0 - h * e)) / (2 * h) for e in np.eye(len(x0))])
    np.testing.assert_allclose(hess, num, rtol=1e-6, atol=1e-4)


def test_information_types_coincide_on_expected_data(truth):
    """With y = n p (the data's expectation) and y² sums of Bernoulli rows, the MLE is the truth
    and the observed information, the expected information and the sandwich are equal."""
    s = truth["ability"].values
    gamma = truth["discrimination"].values
    n_items, n_judges = len(s), len(gamma)
    k, i, j = (a.ravel() for a in np.meshgrid(np.arange(n_judges), np.arange(n_items),
                                              np.arange(n_items), indexing="ij"))
    keep = i < j
    k, i, j = k[keep], i[keep], j[keep]
    p = 1 / (1 + np.exp(-gamma[k] * (s[i] - s[j])))
    count = np.full(len(k), 50.0)
    data = Comparisons(items=tuple(truth["item"].values), judges=tuple(truth["judge"].values),
                       judge=k, item_i=i, item_j=j, order=np.zeros_like(k), count=count,
                       wins=count * p, wins_sq=count * p, n_rows=count.sum())
    fits = {inf: jdf.fit(data, information=inf) for inf in ("expected", "observed", "sandwich")}
    np.testing.assert_allclose(fits["expected"].params["ability"].values, s, atol=1e-9)
    np.testing.assert_allclose(fits["expected"].params["discrimination"].values, gamma, atol=1e-9)
    np.testing.assert_allclose(fits["observed"].cov, fits["expected"].cov, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(fits["sandwich"].cov, fits["expected"].cov, rtol=1e-8, atol=1e-12)


@pytest.fixture(scope="module")
def tied_rows(truth):
    """1500 simulated verdicts, one in five replaced by a tie: residuals are far from zero and
    the within-cell variance differs from the Bernoulli one, so the three covariances differ."""
    df = simulate.judge_discrimination_btl(truth, 1500, random_seed=31, as_frame=True)
    tie = np.random.default_rng(32).random(len(df)) < 0.2
    df.loc[tie, "outcome"] = 0.5
    return df


def _row_codes(df, data):
    items, judges = pd.Index(data.items), pd.Index(data.judges)
    return (items.get_indexer(df["item_a"]), items.get_indexer(df["item_b"]),
            judges.get_indexer(df["judge"]), df["outcome"].to_numpy(float))


def _reference_covariances(df, data, est):
    """Covariances of (s, γ) computed without the twin's derivatives: a numerical Hessian of
    ``loglik`` in a free chart of our own (scipy's null space, not the twin's Helmert basis; the
    covariance J (JᵀHJ)⁻¹ Jᵀ does not depend on the basis), and the expected information and the
    per-verdict score outer products summed row by row in a plain loop."""
    n, m = data.n_items, data.n_judges
    b_s, b_a = null_space(np.ones((1, n))), null_space(np.ones((1, m)))
    jac = np.zeros((n + m, n + m - 2))
    jac[:n, : n - 1], jac[n:, n - 1:] = b_s, b_a
    s_hat = est.params["ability"].values
    a_hat = np.log(est.params["discrimination"].values)
    theta = np.r_[b_s.T @ s_hat, b_a.T @ a_hat]

    def loglik(t):
        return jdf.loglik({"ability": b_s @ t[: n - 1],
                           "discrimination": np.exp(b_a @ t[n - 1:])}, data)

    observed = -approx_hess3(theta, loglik)  # information in the free chart
    expected_raw = np.zeros((n + m, n + m))
    meat_raw = np.zeros((n + m, n + m))
    for i, j, k, y in zip(*_row_codes(df, data), strict=True):
        gamma = np.exp(a_hat[k])
        d = s_hat[i] - s_hat[j]
        p = 1 / (1 + np.exp(-gamma * d))
        g = np.zeros(n + m)  # ∂η/∂(s, log γ) for this verdict
        g[i], g[j], g[n + k] = gamma, -gamma, gamma * d
        expected_raw += p * (1 - p) * np.outer(g, g)
        meat_raw += (y - p) ** 2 * np.outer(g, g)
    expected = jac.T @ expected_raw @ jac
    meat = jac.T @ meat_raw @ jac
    h_inv = np.linalg.inv(observed)
    free = {"expected": np.linalg.inv(expected), "observed": h_inv,
            "sandwich": h_inv @ meat @ h_inv}
    delta = np.r_[np.ones(n), np.exp(a_hat)]  # d γ / d log γ = γ
    return {kind: jac @ cov @ jac.T * np.outer(delta, delta) for kind, cov in free.items()}


def test_covariances_match_an_independent_computation(tied_rows):
    """Expected, observed and sandwich covariances of the judge-aware twin equal a computation
    from scratch, on data with ties and non-zero residuals. Catches: standard errors inflated
    by 20 % (covariance × 1.44), the expected information returned for ``observed`` (or the
    reverse), a sandwich meat that drops the within-cell variance (uses (y_c − n_c p_c)² per
    cell instead of Σ_t (y_t − p_c)² over its verdicts), and a wrong delta method for γ."""
    data = Comparisons.from_frame(tied_rows)
    fits = {kind: jdf.fit(data, information=kind) for kind in ("expected", "observed",
                                                                 "sandwich")}
    ref = _reference_covariances(tied_rows, data, fits["expected"])
    # the data discriminate: the three references differ by far more than the tolerance
    for a, b in (("expected", "observed"), ("expected", "sandwich"), ("observed", "sandwich")):
        assert np.max(np.abs(ref[a] - ref[b]) / np.sqrt(np.outer(np.diag(ref[a]),
                                                                 np.diag(ref[a])))) > 1e-2
    # tolerance, relative to the standard errors: the finite-difference Hessian (observed,
    # sandwich) is good to about 1e-6, the loop for the expected information to rounding
    for kind, atol in (("expected", 1e-10), ("observed", 2e-5), ("sandwich", 2e-5)):
        scale = np.sqrt(np.outer(np.diag(ref[kind]), np.diag(ref[kind])))
        np.testing.assert_allclose(fits[kind].cov / scale, ref[kind] / scale, rtol=0,
                                   atol=atol, err_msg=kind)


def test_mle_matches_an_outside_optimizer(tied_rows):
    """The twin's MLE maximises ``loglik``: scipy's BFGS from a different start, in a different
    chart, reaches the same point (a wrong gradient or a stopped Newton would not)."""
    data = Comparisons.from_frame(tied_rows)
    est = jdf.fit(data)
    n, m = data.n_items, data.n_judges
    b_s, b_a = null_space(np.ones((1, n))), null_space(np.ones((1, m)))

    def negll(t):
        return -jdf.loglik({"ability": b_s @ t[: n - 1],
                            "discrimination": np.exp(b_a @ t[n - 1:])}, data) / data.n_rows

    res = minimize(negll, np.full(n + m - 2, 0.1), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(b_s @ res.x[: n - 1], est.params["ability"].values, atol=1e-5)
    np.testing.assert_allclose(np.exp(b_a @ res.x[n - 1:]), est.params["discrimination"].values,
                               atol=1e-5)


def test_unweighted_covariances_equal_statsmodels_glm(tied_rows):
    """γ ≡ 1: the twin's estimate and its three covariances equal statsmodels' binomial GLM on
    the design of item differences in a sum-zero chart (nonrobust for expected and observed,
    which coincide for a linear predictor; HC0 for the sandwich). Catches a wrong or inflated
    information and a sandwich without the within-cell variance of tied verdicts."""
    data = Comparisons.from_frame(tied_rows)
    ia, ib, _, y = _row_codes(tied_rows, data)
    n = data.n_items
    basis = null_space(np.ones((1, n)))
    design = (np.eye(n)[ia] - np.eye(n)[ib]) @ basis
    model = GLM(y, design, family=Binomial())
    ref = {"nonrobust": model.fit(tol=1e-13), "HC0": model.fit(tol=1e-13, cov_type="HC0")}
    for kind, sm_cov in (("expected", "nonrobust"), ("observed", "nonrobust"),
                         ("sandwich", "HC0")):
        est = jdf.fit(data, discrimination=False, information=kind)
        np.testing.assert_allclose(est.params["ability"].values,
                                   basis @ ref[sm_cov].params, atol=1e-8)
        np.testing.assert_allclose(est.cov, basis @ ref[sm_cov].cov_params() @ basis.T,
                                   rtol=1e-7, err_msg=kind)
    # the robust and model-based covariances differ here, so each comparison can fail
    assert not np.allclose(ref["HC0"].cov_params(), ref["nonrobust"].cov_params(), rtol=1e-2)


def test_ties_make_the_sandwich_narrower(truth):
    # a tie has within-row variance (1/2 - p)² < p(1 - p): the model-based information
    # overstates the variance of tied verdicts, the sandwich does not
    df = simulate.judge_discrimination_btl(truth, 4000, random_seed=5, as_frame=True)
    df.loc[df.index % 3 == 0, "outcome"] = 0.5
    data = Comparisons.from_frame(df)
    expected = jdf.fit(data, information="expected").se
    sandwich = jdf.fit(data, information="sandwich").se
    assert (sandwich < expected).all()


def test_single_judge_has_no_discrimination():
    df = verdicts([("a", "b", 3, 2), ("b", "c", 3, 2), ("c", "a", 3, 2)])
    est = jdf.fit(Comparisons.from_frame(df))
    assert list(est.params.data_vars) == ["ability"]


# ---------------------------------------------------------------- PyMC model = twin
def _twin_params(model, point):
    outs = model.replace_rvs_by_values([model[v] for v in ("ability", "discrimination")
                                        if v in model.named_vars])
    values = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")(point)
    names = [v for v in ("ability", "discrimination") if v in model.named_vars]
    return dict(zip(names, values, strict=True))


@pytest.mark.parametrize("discrimination", [True, False])
def test_pymc_loglik_equals_twin(data, rng, discrimination):
    model = jd.build(data, discrimination=discrimination)
    logp = model.compile_logp(vars=[model["outcome"]], jacobian=False)
    for _ in range(3):
        point = {v.name: rng.normal(size=model.initial_point()[v.name].shape)
                 for v in model.value_vars}
        params = _twin_params(model, point)
        np.testing.assert_allclose(logp(point),
                                   jdf.loglik(params, data, discrimination=discrimination),
                                   rtol=1e-10)


def test_map_with_flat_priors_is_the_mle(data):
    mode = bc.fit(jd.build(data, priors=jd.Priors.flat()), "map")
    mle = jdf.fit(data)
    for name in ("ability", "discrimination"):
        np.testing.assert_allclose(mode["posterior"][name].values.ravel(),
                                   mle.params[name].values, atol=1e-5)


def test_map_is_the_penalized_mle(data, model):
    mode = bc.fit(model, "map")
    pen = jdf.fit(data, penalty=jd.Priors())
    assert pen.method == "penalized-mle"
    for name in ("ability", "discrimination"):
        np.testing.assert_allclose(mode["posterior"][name].values.ravel(),
                                   pen.params[name].values, atol=1e-5)
    assert mode["posterior"].sizes["chain"] == 1 and mode["posterior"].sizes["draw"] == 1


def test_posterior_tables_and_comparison(posterior, data):
    """NUTS and the twin agree where they should (4000 verdicts, weak priors): posterior sd over
    Wald se averages 1 within 0.1 over the nine terms (measured 1.02; the Monte Carlo error of
    one sd from 600 draws is about 3-4 %), which catches a 20 % error in either standard error
    (the mean would move to 0.85 or 1.25)."""
    post = posterior
    assert np.allclose(post["posterior"]["ability"].sum("item"), 0, atol=1e-8)
    assert np.allclose(np.log(post["posterior"]["discrimination"]).sum("judge"), 0, atol=1e-8)
    mle = jdf.fit(data)
    table = bc.compare(post, mle, prob=0.9)
    terms = [f"ability[{m}]" for m in data.items] + [f"discrimination[{k}]" for k in data.judges]
    sub = table.loc[terms]
    # weak priors, 4000 verdicts: posterior means sit within a fraction of a Wald SE of the MLE
    assert (np.abs(sub["nuts_estimate"] - sub["mle_estimate"]) < 0.5 * sub["mle_se"]).all()
    sd_ratio = sub["nuts_se"] / sub["mle_se"]
    assert abs(sd_ratio.mean() - 1) < 0.1, sd_ratio
    assert sd_ratio.between(0.85, 1.2).all(), sd_ratio
    assert sub["width_ratio_nuts/mle"].between(0.8, 1.25).all()
    assert (sub["overlap_nuts/mle"] > 0.6).all()
    summary = bc.summarize(post, 0.9)
    assert list(summary.columns) == ["parameter", "method", "estimate", "se", "lower", "upper",
                                     "prob", "interval"]
    assert set(summary["interval"]) == {"eti"}
    diag = bc.diagnose(post, warn=False)
    assert {"r_hat_max", "ess_bulk_min", "divergences"} <= set(diag.index.get_level_values(1))


# ---------------------------------------------------------------- coverage (theory-derived band)
COVERAGE_REPS = 1000
NOMINAL = 0.95


def _coverage_band(reps: int = COVERAGE_REPS, alpha: float = 1e-3) -> tuple[int, int]:
    """Acceptance band for the number of covering intervals out of ``reps`` independent ones:
    the central 1 - alpha range of Binomial(reps, 0.95)."""
    return int(binom.ppf(alpha / 2, reps, NOMINAL)), int(binom.isf(alpha / 2, reps, NOMINAL))


def test_coverage_band_detects_a_20_percent_standard_error_error():
    """The band of the coverage test below rejects standard errors 20 % too wide or too narrow.

    A Wald interval built with se × c covers with probability 2Φ(1.96 c) − 1: 0.9813 for
    c = 1.2 and 0.8831 for c = 0.8. With 1000 replicates the band for a correct interval is
    [926, 971] (false alarm 0.08 % per term); a count from Binomial(1000, 0.9813) lands above it
    with probability 0.985, and one from Binomial(1000, 0.8831) lands below it with probability
    0.99999."""
    z = norm.ppf(0.5 + NOMINAL / 2)
    wide, narrow = 2 * norm.cdf(1.2 * z) - 1, 2 * norm.cdf(0.8 * z) - 1
    assert wide == pytest.approx(0.9813, abs=1e-4) and narrow == pytest.approx(0.8831, abs=1e-4)
    lo, hi = _coverage_band()
    assert (lo, hi) == (926, 971)
    assert binom.sf(hi, COVERAGE_REPS, wide) > 0.98  # power against se × 1.2
    assert binom.cdf(lo - 1, COVERAGE_REPS, narrow) > 0.999  # power against se × 0.8


def test_wald_coverage_inside_binomial_band(truth):
    """95 % Wald intervals (expected information; γ on the log scale) cover the truth at the
    nominal rate. Catches standard errors 20 % too wide or too narrow (see the band test above)
    and a wrong interval formula. One ability and one discrimination per replicate: for each term
    the count of covering intervals is Binomial(1000, 0.95) when the intervals are exact."""
    hits = np.zeros((COVERAGE_REPS, 2), bool)
    true = np.array([truth["ability"].values[0], truth["discrimination"].values[1]])
    for r in range(COVERAGE_REPS):
        data = simulate.judge_discrimination_btl(truth, 3000, random_seed=1000 + r)
        est = jdf.fit(data)
        value = np.array([est.params["ability"].values[0],
                          est.params["discrimination"].values[1]])
        se = np.sqrt(np.diag(est.cov))[[0, data.n_items + 1]]
        for c, name in enumerate(("ability", "discrimination")):
            lower, upper = wald_interval(value[c], se[c], NOMINAL, est.interval[name])
            hits[r, c] = lower <= true[c] <= upper
    lo, hi = _coverage_band()
    counts = hits.sum(axis=0)
    assert np.all((lo <= counts) & (counts <= hi)), (counts, (lo, hi))


# ---------------------------------------------------------------- what is not identified
def test_disconnected_graph_twin_refuses_bayes_warns():
    df = verdicts([("a", "b", 3, 2), ("c", "d", 2, 3)])
    data = Comparisons.from_frame(df)
    with pytest.raises(IdentificationError, match=r"\{a, b\}; \{c, d\}"):
        jdf.fit(data)
    with pytest.warns(IdentificationWarning, match="from the prior"):
        jd.build(data)


def test_item_that_never_loses_twin_refuses_map_proceeds():
    df = verdicts([("a", "b", 3, 0), ("b", "c", 2, 2), ("c", "a", 0, 2), ("b", "d", 2, 1),
                   ("d", "c", 1, 1)])
    data = Comparisons.from_frame(df)
    with pytest.raises(IdentificationError, match=r"\['a'\] never lose"):
        jdf.fit(data)
    with pytest.warns(IdentificationWarning, match="never lose"):
        model = jd.build(data)
    mode = bc.fit(model, "map")
    # the prior alone makes the MAP finite; that it is the right point is what can fail
    pen = jdf.fit(data, penalty=jd.Priors())
    np.testing.assert_allclose(mode["posterior"]["ability"].values.ravel(),
                               pen.params["ability"].values, atol=1e-5)


def _alphabetical_with_constant_judge(truth, labels_by_rank):
    """Items relabelled so label order follows ``labels_by_rank``; a judge always answers 'A'
    (the alphabetically first item, as in data displayed in alphabetical order)."""
    df = simulate.judge_discrimination_btl(truth, 3000, random_seed=4, as_frame=True)
    rank = truth["ability"].to_series().sort_values(ascending=False).index
    mapping = dict(zip(rank, labels_by_rank, strict=True))
    df["item_a"], df["item_b"] = df["item_a"].map(mapping), df["item_b"].map(mapping)
    always_a = df[df["judge"] == "judge_00"].copy()
    always_a["judge"] = "always_a"
    always_a["outcome"] = np.where(always_a["item_a"] < always_a["item_b"], 1.0, 0.0)
    return Comparisons.from_frame(pd.concat([df, always_a]))


@pytest.mark.parametrize(("labels", "direction"), [("abcdef", "∞"), ("fedcba", "0")])
def test_judge_at_the_boundary_is_reported_not_given_an_interval(truth, labels, direction):
    data = _alphabetical_with_constant_judge(truth, list(labels))
    with pytest.raises(MLEBoundaryError, match=f"'always_a' → {direction}"):
        jdf.fit(data)
    # the prior on log discrimination keeps the MAP finite; it must be the penalized optimum
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentificationWarning)
        mode = bc.fit(jd.build(data), "map")
        pen = jdf.fit(data, penalty=jd.Priors())
    np.testing.assert_allclose(mode["posterior"]["discrimination"].values.ravel(),
                               pen.params["discrimination"].values, rtol=1e-5)


def test_no_signal_at_all_is_refused_not_given_a_huge_interval():
    """Two judges that only tie: each is named with the true reason (not a disagreement with
    the ranking), before any fitting."""
    df = pd.DataFrame({"item_a": ["a", "b", "c"] * 2, "item_b": ["b", "c", "a"] * 2,
                       "judge": ["j1"] * 3 + ["j2"] * 3, "outcome": 0.5})
    with pytest.raises(IdentificationError, match=r"'j1' gave only ties.*'j2' gave only ties"):
        jdf.fit(Comparisons.from_frame(df))


def test_information_argument_is_checked(data):
    with pytest.raises(ValueError, match="information must be"):
        jdf.fit(data, information="fisher")  # type: ignore[arg-type]


def test_wald_quantile_is_exact():
    data = Comparisons.from_frame(verdicts([("A", "B", 2, 3), ("B", "C", 5, 3), ("C", "A", 1, 3)]))
    tab = jdf.fit(data).summary(0.9)
    z = norm.ppf(0.95)
    np.testing.assert_allclose(tab["upper"] - tab["estimate"], z * tab["se"], rtol=1e-12)


def test_a_judge_without_signal_gets_a_discrimination_near_zero(truth):
    """A coin-flipping judge is a result, not an error: its discrimination is small. Its
    constrained MLE is at γ = 0 whenever its verdicts happen to anti-correlate with the others'
    ranking; then the twin says so (→ 0) rather than reporting an interval."""
    df = simulate.judge_discrimination_btl(truth, 6000, random_seed=21, as_frame=True)
    noise = df[df["judge"] == "judge_00"].copy()
    noise["judge"] = "coin"
    noise["outcome"] = np.random.default_rng(22).integers(0, 2, len(noise)).astype(float)
    data = Comparisons.from_frame(pd.concat([df, noise]))
    mode = bc.fit(jd.build(data), "map")
    gamma = mode["posterior"]["discrimination"].sel(judge="coin").item()
    others = mode["posterior"]["discrimination"].drop_sel(judge="coin").values
    assert gamma < 0.2 * others.min()
    # on these data the coin's verdicts anti-correlate with the ranking (Σ (y - n/2)(ŝ_i - ŝ_j)
    # < 0), so its MLE is γ = 0 and the twin must say so
    with pytest.raises(MLEBoundaryError, match="'coin' → 0 \\(its verdicts do not agree"):
        jdf.fit(data)


# ---------------------------------------------------------------- issue 6: intervals and reasons
@pytest.fixture(scope="module")
def coin_flips():
    """60 coin-flip verdicts, two judges, three items: discriminations with huge standard
    errors (the issue's γ = 5.08 [−100.9, 111.0] case)."""
    rng = np.random.default_rng(0)
    items = np.array(["a", "b", "c"])
    pairs = np.array([rng.choice(3, 2, replace=False) for _ in range(60)])
    return pd.DataFrame({"item_a": items[pairs[:, 0]], "item_b": items[pairs[:, 1]],
                         "judge": np.tile(["j1", "j2"], 30),
                         "outcome": rng.integers(0, 2, 60).astype(float)})


def test_discrimination_intervals_are_log_scale_by_default(coin_flips):
    """Default γ intervals are exp(log γ̂ ± z se/γ̂): positive, and the natural-scale ones
    (scale="natural", the paper's) cross zero on these data. The ``se`` column is the
    natural-scale standard error either way. Catches a γ interval that crosses zero again,
    a log interval built with se instead of se/γ̂, and a scale option that is ignored."""
    data = Comparisons.from_frame(coin_flips)
    log = jdf.fit(data).summary(0.95)
    natural = jdf.fit(data, scale="natural").summary(0.95)
    z = norm.ppf(0.975)
    gam = log[log["parameter"] == "discrimination"]
    assert set(gam["interval"]) == {"wald-log"}
    assert (gam["lower"] > 0).all()
    np.testing.assert_allclose(np.log(gam["upper"] / gam["estimate"]),
                               z * gam["se"] / gam["estimate"], rtol=1e-12)
    np.testing.assert_allclose(np.log(gam["estimate"] / gam["lower"]),
                               z * gam["se"] / gam["estimate"], rtol=1e-12)
    nat = natural[natural["parameter"] == "discrimination"]
    assert set(nat["interval"]) == {"wald"} and (nat["lower"] < 0).all()
    np.testing.assert_allclose(nat["upper"] - nat["estimate"], z * nat["se"], rtol=1e-12)
    pd.testing.assert_series_equal(gam["se"], nat["se"])
    # abilities keep the natural-scale Wald interval under both options
    ab = log["parameter"] == "ability"
    pd.testing.assert_frame_equal(log[ab], natural[ab])
    with pytest.raises(ValueError, match="scale must be"):
        jdf.fit(data, scale="logit")  # type: ignore[arg-type]


@pytest.mark.parametrize("information", ["expected", "observed", "sandwich"])
@pytest.mark.parametrize("scale", ["log", "natural"])
def test_an_interval_never_excludes_its_estimate(coin_flips, tied_rows, information, scale):
    for df in (coin_flips, tied_rows):
        table = jdf.fit(Comparisons.from_frame(df), information=information,
                        scale=scale).summary(0.9)
        assert ((table["lower"] <= table["estimate"])
                & (table["estimate"] <= table["upper"])).all()


def _with_extra_judge(rows: list[tuple[str, str, float]], name: str = "odd"):
    """The simulated 6-item panel plus judge ``name`` giving ``rows`` (a, b, outcome)."""
    truth = simulate.judge_discrimination_truth(4, 2, random_seed=3)
    df = simulate.judge_discrimination_btl(truth, 400, random_seed=4, as_frame=True)
    extra = pd.DataFrame(rows, columns=["item_a", "item_b", "outcome"]).assign(judge=name)
    return pd.concat([df, extra], ignore_index=True)


ODD_JUDGES = {
    "only ties": ([("model_00", "model_01", 0.5), ("model_02", "model_03", 0.5)],
                  "gave only ties"),
    "single verdict": ([("model_00", "model_01", 1.0)],
                       "gave a single verdict \\('model_00' over 'model_01'\\)"),
    "one pair, one way": ([("model_02", "model_01", 1.0)] * 3 + [("model_01", "model_02", 0.0)],
                          "gave 4 verdicts, all on one pair and all the same way "
                          "\\('model_02' over 'model_01'\\)"),
}


@pytest.mark.parametrize("case", list(ODD_JUDGES))
def test_a_judge_the_data_cannot_bound_is_named_with_its_reason(case):
    """Twin refuses before fitting and ``build`` warns, naming the judge and the true reason
    (before: "its verdicts do not agree with the ranking" for ties, silence in ``build``)."""
    rows, reason = ODD_JUDGES[case]
    data = Comparisons.from_frame(_with_extra_judge(rows))
    with pytest.raises(IdentificationError, match=f"judge 'odd' {reason}") as err:
        jdf.fit(data)
    assert "do not agree" not in str(err.value)
    with pytest.warns(IdentificationWarning, match=f"judge 'odd' {reason}.*prior"):
        jd.build(data)
    with pytest.warns(IdentificationWarning, match="improper"):
        jd.build(data, priors=jd.Priors(discrimination_sd=None))
    with pytest.warns(IdentificationWarning, match="set by the prior alone"):
        jdf.fit(data, penalty=jd.Priors())


def test_a_judge_without_verdicts_is_named():
    truth = simulate.judge_discrimination_truth(4, 2, random_seed=3)
    base = simulate.judge_discrimination_btl(truth, 400, random_seed=4)
    data = Comparisons(**{**base.__dict__, "judges": (*base.judges, "idle")})
    with pytest.raises(IdentificationError, match="judge 'idle' has no verdicts") as err:
        jdf.fit(data)
    assert "do not agree" not in str(err.value)
    with pytest.warns(IdentificationWarning, match="judge 'idle' has no verdicts"):
        jd.build(data)


def test_informative_judges_raise_no_identification_warning():
    """A judge with split verdicts on a single pair, or a few verdicts on several pairs, is
    bounded by its data: no warning (a check that warned for every judge would fail here)."""
    rows = [("model_00", "model_01", 1.0), ("model_00", "model_01", 0.0),
            ("model_00", "model_01", 1.0)]
    for extra in (rows, [("model_00", "model_01", 1.0), ("model_02", "model_03", 0.0)]):
        data = Comparisons.from_frame(_with_extra_judge(extra))
        with warnings.catch_warnings():
            warnings.simplefilter("error", IdentificationWarning)
            jd.build(data)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "2", True])
@pytest.mark.parametrize("field", ["ability_sd", "discrimination_sd"])
def test_priors_reject_a_scale_that_is_not_a_positive_number(field, bad):
    with pytest.raises(ValueError, match=f"{field} must be a finite positive number"):
        jd.Priors(**{field: bad})


def test_twin_rejects_a_bad_penalty_before_fitting(data):
    class Penalty:  # duck-typed, so Priors' own check does not run
        ability_sd = 2.0
        discrimination_sd = -1.0

    with pytest.raises(ValueError, match="discrimination_sd must be a finite positive"):
        jdf.fit(data, penalty=Penalty())


# ---------------------------------------------------------------- one shape (issue 14)
def test_cell_kernel_with_one_softplus_equals_the_bernoulli_sum():
    """``_btl.kernel_logp`` = y·η − n·softplus(η) equals y log σ(η) + (n − y) log σ(−η) (the
    twin's form), ties and extreme η included, and so does its gradient y − nσ(η). Catches a
    sign slip or a dropped term in the one-softplus rewrite (issue 17)."""
    import pytensor
    import pytensor.tensor as pt
    from scipy.special import expit, log_expit

    from bayescal.models import _btl

    y, eta, n = pt.dvectors("y", "eta", "n")
    logp = _btl.kernel_logp(y, eta, n)
    fn = pytensor.function([y, eta, n], [logp, pytensor.grad(logp.sum(), eta)])
    grid = np.array([-800.0, -40.0, -3.0, -0.5, 0.0, 0.5, 3.0, 40.0, 800.0])
    count = np.array([1.0, 7.0, 2.0, 1e6])
    yy, ee, nn = (a.ravel() for a in np.meshgrid(np.array([0.0, 0.5, 1.0]), grid, count))
    yy = yy * nn  # no wins, half of them (ties), all of them
    value, grad = fn(yy, ee, nn)
    ref = yy * log_expit(ee) + (nn - yy) * log_expit(-ee)
    np.testing.assert_allclose(value, ref, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(grad, yy - nn * expit(ee), rtol=1e-12, atol=1e-9)
    draws = _btl.draw_wins(np.array([-50.0, 0.0, 50.0]), np.array([5.0, 4.0, 3.0]),
                           np.random.default_rng(0), size=(2000, 3))
    assert (draws[:, 0] == 0).all() and (draws[:, 2] == 3).all()
    assert abs(draws[:, 1].mean() - 2.0) < 4 * np.sqrt(1.0 / 2000)


def test_signatures_priors_and_coordinates(data):
    """``build(data, *, priors=None, discrimination=True)``; ``fit(data, *, ...)`` with
    information="auto"; ``loglik(params, data, *, discrimination=True)``; the observed variable
    ``outcome`` over ``cell`` labelled by ``Comparisons.cell_labels`` of the pooled cells
    (before: cells numbered 0..n-1). ``loglik`` refuses a γ it would ignore and a missing one."""
    import inspect

    kw = inspect.Parameter.KEYWORD_ONLY
    build = inspect.signature(jd.build).parameters
    assert build["priors"].kind is kw and build["priors"].default is None
    fit = inspect.signature(jdf.fit).parameters
    assert all(p.kind is kw for name, p in fit.items() if name != "data")
    assert (fit["information"].default, fit["cluster"].default,
            fit["correction"].default) == ("auto", None, None)
    assert inspect.signature(jdf.loglik).parameters["discrimination"].kind is kw
    with pytest.raises(TypeError):
        jd.build(data, jd.Priors())  # type: ignore[misc]
    model = jd.build(data)
    assert [rv.name for rv in model.observed_RVs] == ["outcome"]
    assert model.named_vars_to_dims["outcome"] == ("cell",)
    assert list(model.coords["cell"]) == data.collapse(order=True).cell_labels()
    s = np.zeros(data.n_items)
    with pytest.raises(ValueError, match="lack 'discrimination'"):
        jdf.loglik({"ability": s}, data)
    with pytest.raises(ValueError, match="discrimination=False fixes every"):
        jdf.loglik({"ability": s, "discrimination": np.ones(data.n_judges)}, data,
                   discrimination=False)
    with pytest.raises(ValueError, match=r"ability must have shape \(6,\)"):
        jdf.loglik({"ability": np.zeros(5), "discrimination": np.ones(3)}, data)
    est = jdf.fit(data)
    assert est.converged is True and est.info["converged"] is True


@pytest.mark.parametrize(("n_items", "n_judges", "weighted", "n_beta"),
                         [(6, 4, True, 0), (7, 1, False, 0), (2, 2, True, 0), (5, 3, True, 6),
                          (4, 2, False, 2)])
def test_chart_maps_are_the_dense_chart_products(n_items, n_judges, weighted, n_beta):
    """The Newton run's maps between free and raw coordinates, Jθ and Jᵀx by Helmert suffix
    and prefix sums in O(p), equal the products with the dense J of ``_chart`` (from
    ``zero_sum_basis``, the identity on the feature effects β). Catches an off-by-one in a
    sum (x_{k+1} taken as x_k), a wrong normalisation, the log γ block mapped with the
    abilities' basis, or β's entries transformed."""
    c = jdf._Cells(*(np.zeros(0, dtype=np.int64),) * 3, *(np.zeros(0),) * 3, n_items, n_judges,
                   np.zeros((0, n_beta // n_judges)))
    jac = jdf._chart(c, weighted)
    rng = np.random.default_rng(3)
    theta, raw = rng.normal(size=jac.shape[1]), rng.normal(size=jac.shape[0])
    np.testing.assert_allclose(jdf._chart_raw(theta, c, weighted), jac @ theta, rtol=0,
                               atol=1e-14)
    np.testing.assert_allclose(jdf._chart_free(raw, c, weighted), jac.T @ raw, rtol=0,
                               atol=1e-14)
