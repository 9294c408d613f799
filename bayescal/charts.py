r"""Local charts and data units of the registered models: the independent side of the contract.

The contract test (``tests/test_contract.py``) checks every twin's covariance against one
computation that uses nothing of the twin but its public ``loglik``. That computation needs,
per model, two things this module gives, both written from the model's definition (the cards'
equations), never from the twin's code:

* a **chart** (:class:`Chart`): free coordinates x around the estimate, a map from x to the
  parameters ``loglik`` takes, and a map from x to the identified quantities compared. Any
  smooth one-to-one parameterisation of the model's parameter set near the estimate will do:
  a covariance carried to identified quantities by the delta method does not depend on the
  chart. The charts below are deliberately not the twins' (no Helmert bases, no G Fᵀ
  factorisation): sum-zero vectors drop their last entry, a rank-(r + 1) matrix is moved
  along its own singular vectors.
* **units** (:class:`Unit`): the data's independent pieces (a verdict, a labelled item, an
  anchor), each with its log-likelihood as a function of the parameters (from a public
  ``loglik`` on a data set holding the unit), those of every outcome it could have had (for
  the expected information), its weight and sample (block) in the objective and its cluster
  under every cluster key.

With them the test forms, in the chart, the observed information :math:`H = -\nabla^2\ell`,
the expected information :math:`\sum_t w_t \sum_o P_t(o)\, s_o s_o^\top` (P(o) = exp of the
unit's log-likelihood, s_o its score), the sandwich meat :math:`\sum_t w_t^2 s_t s_t^\top` and
the cluster meat :math:`c \sum_g S_g S_g^\top`, :math:`S_g = \sum_{t\in g} s_t`, each per
block (its scores centred). Numpy only; no PyMC, and no twin's module.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logit

__all__ = ["Chart", "Unit", "anchors", "btl", "comparison_verdicts",
           "human_calibration", "human_verdicts", "label_items", "low_rank", "misclassification",
           "misclassification_dependent", "order_effect", "score_calibration", "verdicts"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Chart:
    """Free coordinates around an estimate.

    Attributes
    ----------
    x : ndarray
        The estimate's coordinates.
    params : callable
        x -> the twin's ``loglik`` parameters (a dict of arrays).
    quantities : callable
        x -> the identified quantities compared, each shaped like the estimate's variable of
        that name.
    """

    x: Array
    params: Callable[[Array], dict[str, Array]]
    quantities: Callable[[Array], dict[str, Array]]


@dataclass(frozen=True)
class Unit:
    """One independent piece of the data.

    Attributes
    ----------
    logp : callable
        Parameters (as ``loglik`` takes them) -> the unit's log-likelihood, computed with the
        twin's public ``loglik`` only.
    outcomes : tuple of callable
        The same for every outcome the unit could have had (their probabilities sum to one);
        units of one ``cell`` share the tuple.
    cell : hashable
        Units with the same covariates (the same outcome probabilities).
    clusters : mapping
        The unit's cluster label under each cluster key the model offers.
    weight : float
        The unit's weight in the objective (1 for a likelihood).
    block : str
        The sample it belongs to: a weighted objective Σ_b w_b ℓ_b has one block per weight
        (human calibration: ``"human"``, ``"llm"``), its samples independent, so that meats and
        cluster sums are formed per block (centred, with each block's own G/(G − 1)).
    """

    logp: Callable[[Mapping[str, Array]], float]
    outcomes: tuple[Callable[[Mapping[str, Array]], float], ...]
    cell: Hashable
    clusters: Mapping[str, str] = field(default_factory=dict)
    weight: float = 1.0
    block: str = "all"


LogLik = Callable[..., float]


# ---------------------------------------------------------------------------- charts
def _centred(free: Array) -> Array:
    """A vector (or rows) summing to zero from all entries but the last: the last is -Σ."""
    return np.concatenate([free, -free.sum(axis=-1, keepdims=True)], axis=-1)


def btl(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    """Judge-discrimination BTL: σ(γ_k (s_i − s_j)), Σ s = 0, Π γ = 1.

    x = (s_1..s_{N−1}, log γ_1..log γ_{K−1}); the last entry of each is minus the sum.
    """
    s = np.asarray(estimate.params["ability"].values, dtype=np.float64)
    weighted = "discrimination" in estimate.params
    n = s.size
    x0 = s[:-1]
    if weighted:
        lg = np.log(np.asarray(estimate.params["discrimination"].values, dtype=np.float64))
        x0 = np.concatenate([x0, lg[:-1]])

    def params(x: Array) -> dict[str, Array]:
        out = {"ability": _centred(x[: n - 1])}
        if weighted:
            out["discrimination"] = np.exp(_centred(x[n - 1:]))
        return out

    return Chart(x0, params, params)


def order_effect(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    """Order-effect BTL: σ(s_ki − s_kj + a b_k), each judge's scores summing to zero.

    x = (each judge's s_k1..s_k,N−1, then b).
    """
    S = np.asarray(estimate.params["ability"].transpose("judge", "item").values, np.float64)
    b = np.asarray(estimate.params["order_effect"].values, dtype=np.float64)
    k, n = S.shape

    def params(x: Array) -> dict[str, Array]:
        return {"ability": _centred(x[: k * (n - 1)].reshape(k, n - 1)),
                "order_effect": x[k * (n - 1):]}

    return Chart(np.concatenate([S[:, :-1].ravel(), b]), params, params)


class _RankChart:
    r"""Centred K x N matrices of rank r + 1 near Ŝ.

    With the rows centred, S = [S̃, −S̃1] for S̃ = S[:, :N−1]; with the SVD S̃ = P Σ Qᵀ
    (r + 1 terms) and orthonormal complements P⊥, Q⊥,
    :math:`\tilde S(A, B, D) = (P + P_\perp A)(\Sigma + D)(Q + Q_\perp B)^\top` is a local
    chart of the rank-(r + 1) matrices at (0, 0, 0): its tangent vectors
    :math:`P_\perp A\Sigma Q^\top`, :math:`PDQ^\top`, :math:`P\Sigma B^\top Q_\perp^\top` span
    the tangent space, of dimension (r + 1)(K + N − 1 − r − 1).
    """

    def __init__(self, S: Array, r1: int) -> None:
        tilde = S[:, :-1]
        p_full, sv, qt_full = np.linalg.svd(tilde)
        self.k, self.n = S.shape
        self.r1 = r1
        self.P, self.P_perp = p_full[:, :r1], p_full[:, r1:]
        self.Q, self.Q_perp = qt_full[:r1].T, qt_full[r1:].T
        self.sigma = np.diag(sv[:r1])
        self.sizes = (self.P_perp.shape[1] * r1, self.Q_perp.shape[1] * r1, r1 * r1)
        self.size = sum(self.sizes)

    def split(self, x: Array) -> tuple[Array, Array, Array]:
        a, b, d = np.split(x[: self.size], np.cumsum(self.sizes)[:-1])
        return a.reshape(-1, self.r1), b.reshape(-1, self.r1), d.reshape(self.r1, self.r1)

    def row_basis(self, x: Array) -> Array:
        """Columns spanning the rows of S̃ at x: Q + Q⊥B."""
        _, b, _ = self.split(x)
        return self.Q + self.Q_perp @ b

    def matrix(self, x: Array) -> Array:
        a, _, d = self.split(x)
        tilde = (self.P + self.P_perp @ a) @ (self.sigma + d) @ self.row_basis(x).T
        return _centred(tilde)


def low_rank(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    """Low-rank judges: σ(S_ki − S_kj + a b_k), S centred rows of rank r + 1.

    x = (the rank chart of S, b).
    """
    S = np.asarray(estimate.params["ability"].transpose("judge", "item").values, np.float64)
    chart = _RankChart(S, int(options["rank"]) + 1)
    order = "order_effect" in estimate.params
    b = (np.asarray(estimate.params["order_effect"].values, dtype=np.float64) if order
         else np.zeros(0))

    def params(x: Array) -> dict[str, Array]:
        out = {"ability": chart.matrix(x)}
        if order:
            out["order_effect"] = x[chart.size:]
        return out

    return Chart(np.concatenate([np.zeros(chart.size), b]), params, params)


def human_calibration(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    r"""Human calibration: the judges' S, b and s_h in the judges' calibration space.

    Consensus space: :math:`s_h = c\,S^\top 1_K` (the consensus direction μ is the unit
    vector along :math:`S^\top 1_K`); full space: :math:`s_h = [z, -1^\top z]`,
    :math:`z = (Q + Q_\perp B) u` (the row space of S). x = (rank chart of S, b, c or u).
    """
    S = np.asarray(estimate.params["ability"].transpose("judge", "item").values, np.float64)
    s_h = np.asarray(estimate.params["human_ability"].values, dtype=np.float64)
    chart = _RankChart(S, int(options.get("rank", 1)) + 1)
    order = "order_effect" in estimate.params
    b = (np.asarray(estimate.params["order_effect"].values, dtype=np.float64) if order
         else np.zeros(0))
    n_b = b.size
    full = options.get("space", "consensus") == "full"
    if full:
        coef = chart.Q.T @ s_h[:-1]
    else:
        m = S.sum(axis=0)
        coef = np.array([s_h @ m / (m @ m)])

    def params(x: Array) -> dict[str, Array]:
        S_x = chart.matrix(x)
        c = x[chart.size + n_b:]
        if full:
            human = _centred(chart.row_basis(x) @ c)
        else:
            human = c[0] * S_x.sum(axis=0)
        out = {"ability": S_x, "human_ability": human}
        if order:
            out["order_effect"] = x[chart.size: chart.size + n_b]
        return out

    return Chart(np.concatenate([np.zeros(chart.size), b, coef]), params, params)


def misclassification(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    """Misclassification: x = logits of θ, q0 (per judge), q1 (per judge)."""
    theta = float(estimate.params["prevalence"].values)
    q0 = np.asarray(estimate.params["specificity"].values, dtype=np.float64)
    q1 = np.asarray(estimate.params["sensitivity"].values, dtype=np.float64)
    k = q0.size

    def params(x: Array) -> dict[str, Array]:
        p = expit(x)
        return {"prevalence": np.asarray(p[0]), "specificity": p[1: 1 + k],
                "sensitivity": p[1 + k:]}

    return Chart(logit(np.concatenate([[theta], q0, q1])), params, params)


def misclassification_dependent(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    """Item-effect misclassification: x = logits of θ, q0, q1 (per judge) and log σ_y.

    σ_y > 0 (the model's item effect scale) is moved on the log scale; the estimate must
    have both σ_y away from 0, where |σ| is smooth.
    """
    theta = float(estimate.params["prevalence"].values)
    q0 = np.asarray(estimate.params["specificity"].values, dtype=np.float64)
    q1 = np.asarray(estimate.params["sensitivity"].values, dtype=np.float64)
    sd = np.asarray(estimate.params["item_sd"].values, dtype=np.float64)
    k = q0.size

    def params(x: Array) -> dict[str, Array]:
        p = expit(x[:-2])
        return {"prevalence": np.asarray(p[0]), "specificity": p[1: 1 + k],
                "sensitivity": p[1 + k:], "item_sd": np.exp(x[-2:])}

    return Chart(np.concatenate([logit(np.concatenate([[theta], q0, q1])), np.log(sd)]),
                 params, params)


def score_calibration(estimate: Any, data: Any, options: Mapping[str, Any]) -> Chart:
    r"""Monotone ordinal calibration: :math:`P(H \le k \mid J = j) = \sigma(c_k - \beta_j)`.

    x = (c_1, log(c_{k+1} − c_k), log(β_{j+1} − β_j)), β at the lowest level 0; the
    quantities are the cutpoints, the level effects and the calibrated means
    :math:`\sum_v v P(H = v \mid J = j)`.
    """
    cut = np.asarray(estimate.params["cutpoint"].values, dtype=np.float64)
    effect = np.asarray(estimate.params["level_effect"].values, dtype=np.float64)
    levels = np.arange(data.scale[0], data.scale[1] + 1, dtype=np.float64)
    k = cut.size + 1

    def params(x: Array) -> dict[str, Array]:
        return {"cutpoint_first": np.asarray(x[0]), "cutpoint_log_gap": x[1: k - 1],
                "log_increment": x[k - 1:]}

    def quantities(x: Array) -> dict[str, Array]:
        c = x[0] + np.concatenate([[0.0], np.cumsum(np.exp(x[1: k - 1]))])
        beta = np.concatenate([[0.0], np.cumsum(np.exp(x[k - 1:]))])
        below = expit(c[None, :] - beta[:, None])  # P(H <= level k | J = j)
        prob = np.diff(np.column_stack([np.zeros(k), below, np.ones(k)]), axis=1)
        return {"cutpoint": c, "level_effect": beta, "calibrated_mean": prob @ levels}

    x0 = np.concatenate([[cut[0]], np.log(np.diff(cut)), np.log(np.diff(effect))])
    return Chart(x0, params, quantities)


# ---------------------------------------------------------------------------- units
def comparison_verdicts(data: Any) -> dict[str, NDArray[Any]]:
    """The verdicts behind the cells of a :class:`~bayescal.data.Comparisons`
    (:meth:`~bayescal.data.Comparisons.verdicts`), with their cell's codes: per verdict
    ``cell``, ``judge``, ``item_i``, ``item_j``, ``order`` and ``outcome`` (1, 1/2 or 0)."""
    cell, outcome = data.verdicts()
    return {"cell": cell, "judge": data.judge[cell], "item_i": data.item_i[cell],
            "item_j": data.item_j[cell], "order": data.order[cell], "outcome": outcome}


def _own_key_labels(data: Any, verdict: dict[str, NDArray[Any]]) -> list[str]:
    """The data's own cluster label of every verdict, consistent with its cluster records.

    A record (cluster, cell) holds a count n_r and wins w_r; its verdicts are a_r wins, t_r
    ties and z_r losses with a_r + t_r/2 = w_r. The cell's ties are shared among its records
    (t_r of the parity of 2 w_r, at most 2 min(w_r, n_r − w_r)); any such split gives every
    cluster the same total score, since a verdict's score is affine in its outcome.
    """
    labels = np.empty(verdict["cell"].size, dtype=object)
    order = np.argsort(verdict["cell"], kind="stable")
    starts = np.searchsorted(verdict["cell"][order], np.arange(data.n_cells + 1))
    for c in range(data.n_cells):
        rows = order[starts[c]: starts[c + 1]]
        y = verdict["outcome"][rows]
        pools = {v: list(rows[y == v]) for v in (1.0, 0.5, 0.0)}
        recs = np.flatnonzero(data.cluster_cell == c)
        n = np.rint(data.cluster_count[recs]).astype(int)
        w2 = np.rint(2 * data.cluster_wins[recs]).astype(int)  # twice the wins
        t = w2 % 2
        room = np.minimum(w2, 2 * n - w2)  # at most 2 min(w, n - w) ties
        left = len(pools[0.5]) - t.sum()
        for r in range(len(recs)):
            add = min(left, (room[r] - t[r]) // 2 * 2)
            t[r] += add
            left -= add
        if left:
            raise AssertionError("the cluster records do not match their cell's verdicts")
        for r, rec in enumerate(recs):
            ones = (w2[r] - t[r]) // 2
            take = ([pools[1.0].pop() for _ in range(ones)]
                    + [pools[0.5].pop() for _ in range(t[r])]
                    + [pools[0.0].pop() for _ in range(n[r] - ones - t[r])])
            labels[take] = data.clusters[data.cluster_code[rec]]
    return list(labels)


def verdicts(data: Any, loglik: LogLik, options: Mapping[str, Any], *,
             unit_logp: Callable[[int, float], Callable[[Mapping[str, Array]], float]]
             | None = None, weights: Mapping[str, float] | None = None,
             blocks: Mapping[str, str] | None = None) -> list[Unit]:
    """Every verdict of a :class:`~bayescal.data.Comparisons`, its log-likelihood that of the
    one-verdict data set.

    Outcomes are a win and a loss of item i (a tie is not an outcome of these models: it is
    half of each). Clusters: the data's own key, ``judge_pair`` (judge x unordered pair, both
    orders pooled) and ``pair``. ``unit_logp`` ((cell, outcome) -> log-likelihood function)
    replaces ``loglik`` on a one-verdict data set; ``weights`` and ``blocks`` (judge -> weight,
    judge -> block) weight a judge's verdicts and name their sample.
    """
    from bayescal.data import Comparisons

    cache: dict[tuple[int, float], Callable[[Mapping[str, Array]], float]] = {}

    def one(cell: int, y: float) -> Callable[[Mapping[str, Array]], float]:
        if (cell, y) not in cache:
            d = Comparisons.from_codes(
                data.items, data.judges, judge=[data.judge[cell]], item_a=[data.item_i[cell]],
                item_b=[data.item_j[cell]], outcome=[y], order=[data.order[cell]],
                humans=data.humans)
            cache[cell, y] = lambda q: loglik(q, d)
        return cache[cell, y]

    logp = unit_logp if unit_logp is not None else one
    verdict = comparison_verdicts(data)
    own = _own_key_labels(data, verdict) if data.cluster_key is not None else None
    units = []
    for t, cell in enumerate(verdict["cell"]):
        k, i, j = data.judge[cell], data.item_i[cell], data.item_j[cell]
        judge, a, b = data.judges[k], data.items[i], data.items[j]
        clusters = {"judge_pair": f"{judge}: {a} vs {b}", "pair": f"{a} vs {b}"}
        if own is not None:
            clusters[data.cluster_key] = own[t]
        units.append(Unit(logp(cell, float(verdict["outcome"][t])),
                          (logp(cell, 1.0), logp(cell, 0.0)), int(cell), clusters,
                          1.0 if weights is None else float(weights[judge]),
                          "all" if blocks is None else blocks[judge]))
    return units


def human_verdicts(data: Any, loglik: LogLik, options: Mapping[str, Any]) -> list[Unit]:
    r"""Verdicts of human calibration, weighted as in its objective (DIAL (11)).

    The objective is :math:`L_h(s_h) + w\,L_l(S, b)` with :math:`w = \lambda n_h / n_l`: a
    human verdict weighs 1 and its log-likelihood is a BTL's at the human scores (the
    judge-discrimination twin's ``loglik`` without discrimination); an LLM verdict weighs w and
    its log-likelihood is DIAL's model (1) at (S, b) (the low-rank twin's ``loglik``). The
    contract checks that these units add up to the human-calibration twin's own ``loglik``.
    The two samples (blocks ``human`` and ``llm``) are independent. Under a built-in key every
    human verdict is its own cluster (the pooled human "judge" is a population of raters, whose
    repeated comparisons of a pair come from different people, as DIAL assumes); under the
    data's own key human verdicts are clustered by it like the LLM ones.
    """
    from bayescal import registry
    from bayescal.data import Comparisons

    humans = set(data.humans)
    machines = tuple(j for j in data.judges if j not in humans)
    btl = registry.get("judge_discrimination_btl").loglik
    model_1 = registry.get("low_rank_judges").loglik
    cache: dict[tuple[int, float], Callable[[Mapping[str, Array]], float]] = {}

    def one(cell: int, y: float) -> Callable[[Mapping[str, Array]], float]:
        if (cell, y) in cache:
            return cache[cell, y]
        judge = data.judges[data.judge[cell]]
        codes = {"item_a": [data.item_i[cell]], "item_b": [data.item_j[cell]], "outcome": [y]}
        if judge in humans:
            d = Comparisons.from_codes(data.items, ("human",), judge=[0], **codes)
            cache[cell, y] = lambda q: btl({"ability": q["human_ability"]}, d,
                                           discrimination=False)
        else:
            d = Comparisons.from_codes(data.items, machines, judge=[machines.index(judge)],
                                       order=[data.order[cell]], **codes)
            cache[cell, y] = lambda q: model_1(
                {k: q[k] for k in ("ability", "order_effect") if k in q}, d)
        return cache[cell, y]

    is_human = np.isin(np.asarray(data.judges)[data.judge], list(humans))
    n_h = float(data.count[is_human].sum())
    w = float(options["llm_weight"]) * n_h / (float(data.count.sum()) - n_h)
    units = verdicts(data, loglik, options, unit_logp=one,
                     weights={j: 1.0 if j in humans else w for j in data.judges},
                     blocks={j: "human" if j in humans else "llm" for j in data.judges})
    own = data.cluster_key
    return [u if u.block == "llm" else dataclasses.replace(u, clusters={
        key: label if key == own else f"human verdict {t}" for key, label in u.clusters.items()})
        for t, u in enumerate(units)]


def label_items(data: Any, loglik: LogLik, options: Mapping[str, Any]) -> list[Unit]:
    """Every item of a :class:`~bayescal.data.Labels`. A Labels needs both a calibration and a
    test set, so a unit's log-likelihood is ℓ(data with the item once more) − ℓ(data).

    Calibration items have the 2^(K+1) outcomes (Y, Ŷ_1..Ŷ_K), test items the 2^K (Ŷ).
    """
    from bayescal.data import Labels

    k = data.n_judges
    cache: dict[tuple[float, ...], Callable[[Mapping[str, Array]], float]] = {}

    def plus(y: float | None, yhat: tuple[float, ...]) -> Callable[[Mapping[str, Array]], float]:
        key = (np.nan if y is None else y, *yhat)
        if key not in cache:
            row = np.asarray(yhat, dtype=np.float64)[None, :]
            if y is None:
                grown = Labels.from_arrays(data.y_cal, data.yhat_cal,
                                           np.vstack([data.yhat_test, row]), judges=data.judges)
            else:
                grown = Labels.from_arrays(np.append(data.y_cal, y),
                                           np.vstack([data.yhat_cal, row]), data.yhat_test,
                                           judges=data.judges)
            cache[key] = lambda q, g=grown: loglik(q, g) - loglik(q, data)
        return cache[key]

    patterns = list(itertools.product((0.0, 1.0), repeat=k))
    cal_out = tuple(plus(y, p) for y in (0.0, 1.0) for p in patterns)
    test_out = tuple(plus(None, p) for p in patterns)
    units = [Unit(plus(float(y), tuple(row)), cal_out, "calibration")
             for y, row in zip(data.y_cal, data.yhat_cal, strict=True)]
    units += [Unit(plus(None, tuple(row)), test_out, "test") for row in data.yhat_test]
    return units


def anchors(data: Any, loglik: LogLik, options: Mapping[str, Any]) -> list[Unit]:
    """Every anchor (item with a human score) of a :class:`~bayescal.data.Ratings`, its
    log-likelihood that of the one-anchor data set; its outcomes are the scale's scores."""
    from bayescal.data import Ratings

    levels = range(data.scale[0], data.scale[1] + 1)
    cache: dict[tuple[float, float], Callable[[Mapping[str, Array]], float]] = {}

    def one(j: float, h: float) -> Callable[[Mapping[str, Array]], float]:
        if (j, h) not in cache:
            anchor = Ratings.from_arrays([j], [h], scale=data.scale)
            cache[j, h] = lambda q: loglik(q, anchor)
        return cache[j, h]

    return [Unit(one(float(j), float(h)), tuple(one(float(j), float(v)) for v in levels),
                 float(j))
            for j, h in zip(data.judge[data.rated], data.human[data.rated], strict=True)]
