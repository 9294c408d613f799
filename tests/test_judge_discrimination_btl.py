"""Judge-discrimination BTL (seed 002): the PyMC model and its frequentist twin, pinned together."""

from __future__ import annotations

import warnings

import choix
import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import bayescal as bc
from bayescal import simulate
from bayescal.data import Comparisons
from bayescal.frequentist import MLEBoundaryError
from bayescal.frequentist import judge_discrimination_btl as jdf
from bayescal.identify import IdentificationError, IdentificationWarning
from bayescal.models import judge_discrimination_btl as jd


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
    # references.md D2.4: exp(score) with geometric mean 1 and sum-zero Fisher SEs
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
    _, _, hess, _ = jdf._derivatives(s, alpha, cells, True, hessian=True)
    x0, h = np.r_[s, alpha], 1e-6

    def grad(x):
        return jdf._derivatives(x[: data.n_items], x[data.n_items:], cells, True, False)[1]

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
        np.testing.assert_allclose(logp(point), jdf.loglik(params, data), rtol=1e-10)


def test_map_with_flat_priors_is_the_mle(data):
    mode = bc.fit(jd.build(data, jd.Priors.flat()), "map")
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
    post = posterior
    assert np.allclose(post["posterior"]["ability"].sum("item"), 0, atol=1e-8)
    assert np.allclose(np.log(post["posterior"]["discrimination"]).sum("judge"), 0, atol=1e-8)
    mle = jdf.fit(data)
    table = bc.compare(post, mle, prob=0.9)
    terms = [f"ability[{m}]" for m in data.items] + [f"discrimination[{k}]" for k in data.judges]
    sub = table.loc[terms]
    # weak priors, 4000 verdicts: posterior means sit within a fraction of a Wald SE of the MLE
    assert (np.abs(sub["nuts_estimate"] - sub["mle_estimate"]) < 0.5 * sub["mle_se"]).all()
    assert sub["width_ratio_nuts/mle"].between(0.7, 1.3).all()
    assert (sub["overlap_nuts/mle"] > 0.6).all()
    summary = bc.summarize(post, 0.9)
    assert list(summary.columns) == ["parameter", "method", "estimate", "se", "lower", "upper",
                                     "prob", "interval"]
    assert set(summary["interval"]) == {"eti"}
    diag = bc.diagnose(post, warn=False)
    assert {"r_hat_max", "ess_bulk_min", "divergences"} <= set(diag.index.get_level_values(1))


# ---------------------------------------------------------------- coverage (theory-derived band)
def test_wald_coverage_inside_binomial_band(truth):
    """95% Wald intervals cover the truth at the nominal rate. One item and one judge per
    replicate keep the B outcomes independent, so the count is Binomial(B, 0.95) if the
    intervals are exact; the band is 0.95 ± 3 sd (a false alarm rate of about 0.3%)."""
    reps = 300
    hits = np.zeros((reps, 2), bool)
    for r in range(reps):
        data = simulate.judge_discrimination_btl(truth, 3000, random_seed=1000 + r)
        tab = jdf.fit(data).summary(0.95)
        for c, term in enumerate(("ability[model_00]", "discrimination[judge_01]")):
            true = float(truth["ability"][0] if c == 0 else truth["discrimination"][1])
            hits[r, c] = tab.loc[term, "lower"] <= true <= tab.loc[term, "upper"]
    half = 3 * np.sqrt(0.95 * 0.05 / reps)
    cover = hits.mean(axis=0)
    assert np.all(np.abs(cover - 0.95) < half), cover


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
    assert np.isfinite(mode["posterior"]["ability"].values).all()


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
    # the prior on log discrimination keeps the MAP finite
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentificationWarning)
        mode = bc.fit(jd.build(data), "map")
    assert np.isfinite(mode["posterior"]["discrimination"].values).all()


def test_no_signal_at_all_is_refused_not_given_a_huge_interval():
    df = verdicts([("a", "b", 2, 2), ("b", "c", 2, 2), ("c", "a", 2, 2)], judge="j1")
    df = pd.concat([df, df.assign(judge="j2")])
    with pytest.raises((IdentificationError, MLEBoundaryError)):
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
    try:
        est = jdf.fit(data)
    except MLEBoundaryError as err:
        assert "'coin' → 0" in str(err)
    else:
        assert est.params["discrimination"].sel(judge="coin").item() < 0.2 * others.min()
