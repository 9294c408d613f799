"""Cluster keys through aggregation, and cluster-robust intervals against statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

import bayescal as bc
from bayescal.basis import zero_sum_basis
from bayescal.data import DataError
from bayescal.frequentist import judge_discrimination_btl as jd_f
from bayescal.frequentist import order_effect_btl as oe_f
from bayescal.frequentist.covariance import FewClustersWarning, cluster_meat

ITEMS = ["alpha", "beta", "gamma", "delta", "eps"]
JUDGES = ["j1", "j2", "j3"]


def battles(n_battles: int = 240, seed: int = 0, shared_sd: float = 1.5) -> pd.DataFrame:
    """Battles (a pair shown in one order) judged by every judge, with a battle effect u_b
    shared by the judges' verdicts: verdicts within a battle are positively correlated."""
    rng = np.random.default_rng(seed)
    s = np.array([1.0, 0.5, 0.0, -0.5, -1.0])
    gamma = np.array([1.5, 1.0, 1 / 1.5])
    rows = []
    for b in range(n_battles):
        i, j = rng.choice(5, size=2, replace=False)
        u = rng.normal(0, shared_sd)
        order = rng.choice([-1, 1])
        for k in range(3):
            p = expit(gamma[k] * (s[i] - s[j]) + u)
            y = 0.5 if rng.random() < 0.1 else float(rng.random() < p)
            rows.append((f"b{b:03d}", JUDGES[k], ITEMS[i], ITEMS[j], y, order))
    return pd.DataFrame(rows, columns=["battle", "judge", "item_a", "item_b", "outcome", "order"])


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return battles()


@pytest.fixture(scope="module")
def data(frame) -> bc.Comparisons:
    return bc.Comparisons.from_frame(frame, cluster="battle")


def _check_consistent(c: bc.Comparisons) -> None:
    assert np.allclose(np.bincount(c.cluster_cell, c.cluster_count, c.n_cells), c.count)
    assert np.allclose(np.bincount(c.cluster_cell, c.cluster_wins, c.n_cells), c.wins)
    assert set(np.unique(c.cluster_code)) == set(range(len(c.clusters)))
    keys = c.cluster_code * c.n_cells + c.cluster_cell
    assert len(np.unique(keys)) == len(keys)  # one record per (cluster, cell)


def test_cluster_key_is_carried_without_changing_cells(frame, data):
    """Cells equal the unclustered aggregation; (cluster, cell) sums add up to the cells; each
    battle's records hold exactly its rows (orientation flips included)."""
    plain = bc.Comparisons.from_frame(frame)
    for name in ("judge", "item_i", "item_j", "order", "count", "wins", "wins_sq"):
        assert np.array_equal(getattr(plain, name), getattr(data, name))
    assert plain.clusters == () and plain.cluster_code.size == 0
    assert len(data.clusters) == frame["battle"].nunique()
    assert f"{len(data.clusters)} clusters" in repr(data)
    _check_consistent(data)
    g = data.clusters.index("b007")
    rec = data.cluster_code == g
    rows = frame[frame["battle"] == "b007"]
    assert data.cluster_count[rec].sum() == len(rows)
    a, b = rows["item_a"].iloc[0], rows["item_b"].iloc[0]
    wins_of_first = rows["outcome"].sum() if a < b else (1 - rows["outcome"]).sum()
    assert data.cluster_wins[rec].sum() == pytest.approx(wins_of_first)


def test_collapse_and_subset_keep_clusters_consistent(data):
    for c in (data.collapse(order=True), data.collapse(order=True, judges=True),
              data.subset(["j1", "j3"]), data.subset(["j3"]).collapse()):
        _check_consistent(c)
        assert c.clusters
    pooled = data.collapse(order=True, judges=True)
    # every battle had one pair in one order: pooled over judges, one record per battle
    assert len(pooled.cluster_code) == len(pooled.clusters) == len(data.clusters)
    assert np.allclose(pooled.cluster_count, 3)


def test_collapse_index_maps_cells_onto_the_pooled_cells(data):
    """``collapse_index`` sends each cell to its pooled cell: the sums of count, wins and wins_sq
    over the cells sent to a pooled cell are that cell's, and judge and pair are kept (judge
    pooled only when asked). The twins map cluster records through it."""
    for kw in ({"order": True}, {"order": True, "judges": True}, {"order": False}):
        pooled = data.collapse(**kw)
        index = data.collapse_index(**kw)
        for name in ("count", "wins", "wins_sq"):
            assert np.allclose(np.bincount(index, getattr(data, name), pooled.n_cells),
                               getattr(pooled, name)), (kw, name)
        assert np.array_equal(pooled.item_i[index], data.item_i)
        assert np.array_equal(pooled.item_j[index], data.item_j)
        if not kw.get("judges"):
            assert np.array_equal(pooled.judge[index], data.judge)


def test_cluster_column_must_exist_and_be_complete(frame):
    with pytest.raises(DataError, match=r"missing column.*'cluster'.*'battle_id'"):
        bc.Comparisons.from_frame(frame, cluster="battle_id")
    bad = frame.copy()
    bad.loc[4, "battle"] = None
    with pytest.raises(DataError, match="missing values in rows 4"):
        bc.Comparisons.from_frame(bad, cluster="battle")


def test_cluster_meat_by_hand():
    """Σ_g S_g S_gᵀ with the factor G/(G-1), dense and sparse alike."""
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(9, 3))
    codes = np.array([5, 5, 2, 7, 2, 7, 7, 5, 2])
    totals = np.stack([scores[codes == g].sum(0) for g in (2, 5, 7)])
    expected = 1.5 * totals.T @ totals
    assert cluster_meat(scores, codes) == pytest.approx(expected)
    import scipy.sparse as sp
    assert cluster_meat(sp.csr_array(scores), codes) == pytest.approx(expected)
    assert cluster_meat(scores, codes, correction="CR0") == pytest.approx(expected / 1.5)
    with pytest.raises(ValueError, match="2 clusters"):
        cluster_meat(scores, np.zeros(9))


def test_unweighted_cluster_covariance_equals_statsmodels_glm(frame, data):
    """γ ≡ 1 BTL expanded to rows: statsmodels GLM Binomial (logit) on x = (e_i - e_j)ᵀA with
    cov_type='cluster'. use_correction="CR0" in statsmodels, times G/(G-1), is our CR1 (statsmodels'
    default also applies (N-1)/(N-p)). Catches a meat summed per cell instead of per cluster, a
    missing or doubled G/(G-1), and an expected-information bread."""
    est = jd_f.fit(data, discrimination=False, information="cluster")
    a = zero_sum_basis(len(ITEMS))
    codes = {lab: n for n, lab in enumerate(data.items)}  # sorted labels, the data's codes
    x = np.zeros((len(frame), len(ITEMS)))
    x[np.arange(len(frame)), frame["item_a"].map(codes)] = 1.0
    x[np.arange(len(frame)), frame["item_b"].map(codes)] = -1.0
    groups = pd.factorize(frame["battle"])[0]
    glm = sm.GLM(frame["outcome"].to_numpy(), x @ a, family=sm.families.Binomial())
    res = glm.fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False},
                  tol=1e-12)
    n_clusters = len(np.unique(groups))
    cov_sm = a @ res.cov_params() @ a.T * n_clusters / (n_clusters - 1)
    assert est.params["ability"].to_numpy() == pytest.approx(a @ res.params, abs=1e-7)
    assert est.cov == pytest.approx(cov_sm, rel=1e-6, abs=1e-10)
    # the dependence is real here (3 verdicts per battle share u_b): cluster SEs exceed the sandwich
    sandwich = jd_f.fit(data, discrimination=False, information="sandwich")
    assert np.all(est.se.to_numpy()[:3] > 1.1 * sandwich.se.to_numpy()[:3])


def _observed_free_inverse(params: dict, data: bc.Comparisons, jac: np.ndarray) -> np.ndarray:
    """Inverse observed information in free coordinates, from finite differences of gradient."""
    def grad(theta: np.ndarray) -> np.ndarray:
        raw = jac @ theta
        n = len(ITEMS)
        g = jd_f.gradient({"ability": raw[:n], "discrimination": np.exp(raw[n:])}, data)
        return jac.T @ np.concatenate([g["ability"], g["log_discrimination"]])

    theta0 = jac.T @ np.concatenate([params["ability"], np.log(params["discrimination"])])
    h = 1e-6
    hess = np.stack([(grad(theta0 + h * e) - grad(theta0 - h * e)) / (2 * h)
                     for e in np.eye(len(theta0))])
    return np.linalg.inv(-(hess + hess.T) / 2)


def _pair_key(frame: pd.DataFrame, with_judge: bool) -> np.ndarray:
    lo = np.minimum(frame["item_a"], frame["item_b"])
    hi = np.maximum(frame["item_a"], frame["item_b"])
    key = lo + "|" + hi
    return pd.factorize(frame["judge"] + "/" + key if with_judge else key)[0]


@pytest.mark.parametrize("key", ["battle", "judge_pair"])
def test_judge_aware_cluster_covariance_from_rows(frame, data, key):
    """Judge-aware model, by hand at the row level: per-row scores g_t (y_t - p_t), summed by
    cluster (the data's battles, or the built-in judge x pair), G/(G-1), bread from finite
    differences of the gradient, the delta method for γ. The whole covariance is compared.
    Catches an expected-information bread, an SE 20 % off, a key that is ignored (battle and
    judge x pair give different matrices) and records not mapped onto the pooled cells."""
    est = jd_f.fit(data, information="cluster", cluster=None if key == "battle" else key)
    assert est.info["cluster"] == key
    params = {"ability": est.params["ability"].to_numpy(),
              "discrimination": est.params["discrimination"].to_numpy()}
    n, k = len(ITEMS), len(JUDGES)
    jac = np.zeros((n + k, n + k - 2))
    jac[:n, : n - 1] = zero_sum_basis(n)
    jac[n:, n - 1:] = zero_sum_basis(k)
    inv = _observed_free_inverse(params, data, jac)
    icode = {lab: c for c, lab in enumerate(data.items)}
    ia = frame["item_a"].map(icode).to_numpy()
    ib = frame["item_b"].map(icode).to_numpy()
    kk = frame["judge"].map({lab: c for c, lab in enumerate(data.judges)}).to_numpy()
    gamma = params["discrimination"][kk]
    d = params["ability"][ia] - params["ability"][ib]
    r = frame["outcome"].to_numpy() - expit(gamma * d)
    scores = np.zeros((len(frame), n + k))
    rows = np.arange(len(frame))
    scores[rows, ia] += r * gamma
    scores[rows, ib] -= r * gamma
    scores[rows, n + kk] += r * gamma * d
    groups = (pd.factorize(frame["battle"])[0] if key == "battle"
              else _pair_key(frame, with_judge=True))
    totals = np.stack([scores[groups == g].sum(0) for g in range(groups.max() + 1)])
    g_count = len(totals)
    meat = jac.T @ (totals.T @ totals) @ jac * g_count / (g_count - 1)
    delta = np.r_[np.ones(n), params["discrimination"]]  # d γ / d log γ = γ
    cov = jac @ inv @ meat @ inv @ jac.T * np.outer(delta, delta)
    scale = np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(est.cov / scale, cov / scale, rtol=0, atol=2e-5)


@pytest.mark.filterwarnings("ignore::bayescal.frequentist.covariance.FewClustersWarning")
@pytest.mark.parametrize("key", ["judge_pair", "pair"])
def test_unweighted_builtin_keys_equal_statsmodels_glm(frame, data, key):
    """The built-in keys on the γ ≡ 1 BTL: statsmodels' cluster-robust GLM with groups judge x
    unordered pair (display orders pooled) or unordered pair, times G/(G-1) (CR1) and without
    (CR0). Catches records indexing the per-order cells instead of the pooled ones, and
    "judge_pair" computed after the judges are pooled (it would equal "pair")."""
    a = zero_sum_basis(len(ITEMS))
    codes = {lab: n for n, lab in enumerate(data.items)}
    x = np.zeros((len(frame), len(ITEMS)))
    x[np.arange(len(frame)), frame["item_a"].map(codes)] = 1.0
    x[np.arange(len(frame)), frame["item_b"].map(codes)] = -1.0
    groups = _pair_key(frame, with_judge=key == "judge_pair")
    g = groups.max() + 1
    res = sm.GLM(frame["outcome"].to_numpy(), x @ a, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}, tol=1e-12)
    cr0 = a @ res.cov_params() @ a.T
    cr1 = jd_f.fit(data, discrimination=False, information="cluster", cluster=key)
    none = jd_f.fit(data, discrimination=False, information="cluster", cluster=key,
                    correction="CR0")
    assert cr1.cov == pytest.approx(cr0 * g / (g - 1), rel=1e-6, abs=1e-12)
    assert none.cov == pytest.approx(cr0, rel=1e-6, abs=1e-12)
    assert (cr1.info["cluster"], cr1.info["correction"], cr1.info["n_clusters"]) == (
        key, "CR1", g)


def test_order_effect_uses_the_user_key_and_equals_statsmodels_glm(frame, data):
    """The order-effect twin with the data's battle key (three judges per battle): the whole
    covariance, cross-judge blocks included, equals statsmodels' cluster-robust GLM on the
    rows (all judges in one design) with groups = battle, times G/(G-1). It differs from the
    one-cluster-per-(judge, pair) result the twin gave before whatever key was named, and
    CR0 reproduces statsmodels without a factor. Catches a named key that is ignored (issue
    14: ``--cluster battle`` printed the same table as no key), per-judge meats that drop the
    cross-judge terms, and a missing G/(G-1)."""
    from scipy.linalg import null_space

    n, k = len(ITEMS), len(JUDGES)
    basis = null_space(np.ones((1, n)))
    ia = pd.Index(data.items).get_indexer(frame["item_a"])
    ib = pd.Index(data.items).get_indexer(frame["item_b"])
    kk = pd.Index(data.judges).get_indexer(frame["judge"])
    x = np.zeros((len(frame), k * n))
    np.put_along_axis(x, kk[:, None] * n + np.arange(n - 1), basis[ia] - basis[ib], axis=1)
    x[np.arange(len(frame)), kk * n + n - 1] = frame["order"].to_numpy(float)
    to_raw = np.zeros((k * (n + 1), k * n))
    for j in range(k):
        to_raw[j * n:(j + 1) * n, j * n:j * n + n - 1] = basis
        to_raw[k * n + j, j * n + n - 1] = 1.0
    groups = pd.factorize(frame["battle"])[0]
    g = groups.max() + 1
    res = sm.GLM(frame["outcome"].to_numpy(), x, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}, tol=1e-13)
    cr0 = to_raw @ res.cov_params() @ to_raw.T
    battle = oe_f.fit(data, information="cluster")
    assert battle.info["cluster"] == "battle" and battle.info["n_clusters"] == g
    assert oe_f.fit(data).info["cluster"] == "battle"  # auto: the data's key
    values = np.r_[battle.params["ability"].values.ravel(), battle.params["order_effect"].values]
    np.testing.assert_allclose(values, to_raw @ res.params, atol=1e-8)
    scale = np.sqrt(np.outer(np.diag(cr0), np.diag(cr0)))
    np.testing.assert_allclose(battle.cov / scale, cr0 * g / (g - 1) / scale, rtol=0, atol=1e-7)
    plain = oe_f.fit(data, information="cluster", correction="CR0")
    np.testing.assert_allclose(plain.cov / scale, cr0 / scale, rtol=0, atol=1e-7)
    # the battle couples the judges: cross-judge covariances are far from zero
    b_idx = [battle.terms.index(f"order_effect[{j}]") for j in JUDGES]
    se_b = battle.se.to_numpy()[b_idx]
    corr = battle.cov[np.ix_(b_idx, b_idx)] / np.outer(se_b, se_b)
    assert np.min(np.abs(corr[np.triu_indices(k, 1)])) > 0.1, corr
    with pytest.warns(FewClustersWarning):
        cells = oe_f.fit(data, information="cluster", cluster="judge_pair")
    ratio = battle.se.to_numpy() / cells.se.to_numpy()
    assert np.max(np.abs(np.log(ratio))) > np.log(1.1), ratio


def test_one_row_per_cluster_is_the_sandwich_times_g_over_g_minus_1(frame):
    """With every verdict its own cluster the cluster meat is the row sandwich's meat, up to
    G/(G-1): catches per-record residuals that use the cell's p wrongly or lose ties' y²."""
    data = bc.Comparisons.from_frame(frame.assign(row=np.arange(len(frame))), cluster="row")
    cl = jd_f.fit(data, information="cluster")
    sw = jd_f.fit(data, information="sandwich")
    g = len(frame)
    assert cl.cov == pytest.approx(sw.cov * g / (g - 1), rel=1e-9, abs=1e-12)


def test_cluster_information_needs_a_key_and_enough_clusters(frame):
    """No key: refused; G ≤ p: refused (the meat is singular) before fitting; G < 30: warned,
    by the one rule of frequentist/covariance.py."""
    plain = bc.Comparisons.from_frame(frame)
    with pytest.raises(ValueError, match="cluster key"):
        jd_f.fit(plain, information="cluster")
    few = bc.Comparisons.from_frame(frame.assign(two=frame.index % 4), cluster="two")
    with pytest.raises(ValueError, match="singular: 4 clusters for 6 parameters"):
        jd_f.fit(few, information="cluster")
    some = bc.Comparisons.from_frame(frame.assign(g=frame.index % 12), cluster="g")
    with pytest.warns(FewClustersWarning, match="few clusters by 'g': 12 clusters"):
        jd_f.fit(some, information="cluster")


def test_a_named_key_is_used_or_refused_before_fitting(frame):
    """judge-discrimination twin: ``cluster=`` naming a key the data lack, or with a kind that
    uses no key, is refused before fitting (on data whose fit would be refused for another
    reason: an item that never loses). Before: ``--cluster battle`` without ``--information
    cluster`` silently used no clustering."""
    never_loses = frame.copy()
    never_loses.loc[never_loses["item_a"] == "alpha", "outcome"] = 1.0
    never_loses.loc[never_loses["item_b"] == "alpha", "outcome"] = 0.0
    data = bc.Comparisons.from_frame(never_loses, cluster="battle")
    from bayescal.identify import IdentificationError

    with pytest.raises(IdentificationError, match="never lose"):
        jd_f.fit(data, information="expected")
    for kw, message in (({"information": "cluster", "cluster": "nonexistent"},
                         "unknown cluster key 'nonexistent'"),
                        ({"information": "expected", "cluster": "battle"},
                         "only apply to information='cluster'"),
                        ({"information": "observed", "correction": "CR1"},
                         "only apply to information='cluster'")):
        with pytest.raises(ValueError, match=message) as err:
            jd_f.fit(data, **kw)
        assert not isinstance(err.value, IdentificationError), kw


def test_auto_resolves_by_the_documented_rule_and_is_recorded(frame, data):
    """judge-discrimination twin, information="auto": the data's key -> cluster (CR1); ties
    without a key -> sandwich; binary verdicts -> expected; recorded with the reason."""
    binary = frame[frame["outcome"] != 0.5]
    cases = [(data, ("cluster", "battle", "CR1")),
             (bc.Comparisons.from_frame(frame), ("sandwich", None, None)),
             (bc.Comparisons.from_frame(binary), ("expected", None, None))]
    for d, (kind, key, corr) in cases:
        auto = jd_f.fit(d)
        assert (auto.info["information"], auto.info["cluster"], auto.info["correction"]) == (
            kind, key, corr)
        assert auto.info["information_reason"] != "requested"
        np.testing.assert_array_equal(auto.cov, jd_f.fit(d, information=kind).cov)


def test_cluster_standard_errors_match_the_spread_of_estimates_under_battle_dependence():
    """Four judges copy one shared verdict of their battle with probability ρ = 0.8 (marginal
    P(i ≻ j) stays σ(s_i - s_j), so the truth is the generating s), else give their own.
    Over R = 300 datasets the mean cluster SE of each ŝ_i must match the sd of ŝ_i within
    4 Monte Carlo sd of the ratio, 4·sqrt(1/(2R)) = 0.16: catches a cluster SE 20 % too wide
    or too narrow. The expected-information SE (on the first 30 datasets; it barely varies)
    ignores the dependence (design effect 1 + 3ρ² ≈ 2.9, ratio ≈ 0.59) and must fall outside
    the band (power check). Coverage of the 95 % cluster intervals, pooled over items, lies
    within 4 binomial sd (inflated by sqrt(N) for the items' dependence)."""
    rng = np.random.default_rng(2026)
    s = np.array([1.0, 0.6, 0.2, -0.2, -0.6, -1.0])
    n_items, n_judges, n_battles, rho, reps = 6, 4, 300, 0.8, 300
    est_s, se_cluster, se_expected = [], [], []
    for r in range(reps):
        i = rng.integers(0, n_items, n_battles)
        j = (i + rng.integers(1, n_items, n_battles)) % n_items
        p = expit(s[i] - s[j])
        shared = rng.random(n_battles) < p
        own = rng.random((n_battles, n_judges)) < p[:, None]
        copy = rng.random((n_battles, n_judges)) < rho
        y = np.where(copy, shared[:, None], own).astype(float).ravel()
        data = bc.Comparisons.from_codes(
            [f"m{k}" for k in range(n_items)], [f"j{k}" for k in range(n_judges)],
            judge=np.tile(np.arange(n_judges), n_battles), item_a=np.repeat(i, n_judges),
            item_b=np.repeat(j, n_judges), outcome=y, cluster=np.repeat(np.arange(n_battles),
                                                                       n_judges))
        cl = jd_f.fit(data, discrimination=False, information="cluster")
        est_s.append(cl.params["ability"].to_numpy())
        se_cluster.append(cl.se.to_numpy())
        if r < 30:
            se_expected.append(jd_f.fit(data, discrimination=False,
                                        information="expected").se.to_numpy())
    est_s, se_cluster, se_expected = map(np.asarray, (est_s, se_cluster, se_expected))
    spread = est_s.std(axis=0, ddof=1)
    band = 4 * np.sqrt(1 / (2 * reps))
    ratio = se_cluster.mean(axis=0) / spread
    assert np.all(np.abs(ratio - 1) < band), ratio
    assert np.all(se_expected.mean(axis=0) / spread < 1 - band)
    covered = np.abs(est_s - s) <= 1.959963984540054 * se_cluster
    n_ind = covered.size
    assert abs(covered.mean() - 0.95) < 4 * np.sqrt(0.95 * 0.05 / n_ind) * np.sqrt(n_items)


def test_cluster_keys_are_normalised_like_labels(frame):
    """A battle id read as 7 in one file and 7.0 (or " 7") in another is one battle: split keys
    would double the clusters and shrink the cluster-robust SEs without a word."""
    base = bc.Comparisons.from_frame(frame.assign(battle=frame["battle"].str[1:].astype(int)),
                                     cluster="battle")
    odd = frame.assign(battle=frame["battle"].str[1:].astype(int).astype(object))
    odd.loc[odd.index[::2], "battle"] = odd.loc[odd.index[::2], "battle"].astype(float)
    odd.loc[odd.index[1::4], "battle"] = " " + odd.loc[odd.index[1::4], "battle"].astype(str)
    with pytest.warns(UserWarning, match="'battle'"):
        split = bc.Comparisons.from_frame(odd, cluster="battle")
    assert split.clusters == base.clusters
    np.testing.assert_array_equal(split.cluster_count, base.cluster_count)
