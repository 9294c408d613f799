r"""Frequentist twin of DIAL's judge-specific order-effect BTL (seed 000, model (1)).

Model (SPEC §1.2): judge k prefers the canonical item i over j, shown in order a (+1: i shown
first, -1: second), with probability

.. math:: p^{(a)}_{kij} = \sigma(s_{ki} - s_{kj} + a\,b_k),\qquad 1_N^\top s_k = 0 .

Ties are half a win each way (SPEC §1.1), so with ties the likelihood is a quasi-likelihood.
Judges share no parameter, so the MLE is one logistic regression per judge on the design
:math:`[D_k C, z_k]` (C an orthonormal sum-zero basis), solved by Newton's method on cells.

Covariance (``information``):

* ``expected`` / ``observed``: the inverse Fisher information :math:`(\sum_c n_c p_c(1-p_c)
  x_c x_c^\top)^{-1}`; with the canonical logit link the observed information equals it;
* ``sandwich``: :math:`H^{-1}(\sum_c x_c x_c^\top \sum_{t\in c}(y_t - p_c)^2) H^{-1}`,
  independent verdicts (HC0; the authors' "iid" b intervals, SPEC §1.17.3);
* ``cluster``: the cell-clustered sandwich with clusters (judge, unordered pair), both display
  orders pooled (SPEC §1.8), robust to pair-level overdispersion.

Before fitting, :func:`bayescal.identify.require_order_effect_mle` checks display order is
recorded, each judge's design has rank N (DIAL Prop. 1) and no judge's MLE is infinite.

See ``models/order_effect_btl.md``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Literal, Protocol

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit, ndtr

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.frequentist.covariance import cluster_meat
from bayescal.identify import IdentificationError, require_order, require_order_effect_mle
from bayescal.schema import check_prob, term_labels, wald_interval

__all__ = [
    "debiased_probability",
    "fit",
    "gradient",
    "loglik",
    "order_averaged_identity",
    "order_averaged_probability",
    "order_effect_tests",
    "order_probability",
    "pairwise_probabilities",
    "pooled",
]

Information = Literal["expected", "observed", "sandwich", "cluster"]
_INFORMATION = ("expected", "observed", "sandwich", "cluster")
_MAX_ITER = 100
_GRAD_TOL = 1e-11  # on the per-verdict average score
_RUNAWAY = 50.0


class PriorsLike(Protocol):
    """Prior scales of the model's ``Priors`` (the twin never imports PyMC)."""

    ability_sd: float | None
    order_effect_sd: float | None


def _require_params(params: Mapping[str, ArrayLike], data: Comparisons) -> tuple[
        NDArray[np.float64], NDArray[np.float64]]:
    s = np.asarray(params["ability"], dtype=np.float64)
    b = np.asarray(params["order_effect"], dtype=np.float64)
    if s.shape != (data.n_judges, data.n_items) or b.shape != (data.n_judges,):
        raise ValueError(
            f"ability must have shape (judges, items) = {(data.n_judges, data.n_items)} and "
            f"order_effect shape ({data.n_judges},); got {s.shape} and {b.shape}"
        )
    return s, b


def _eta(s: NDArray[np.float64], b: NDArray[np.float64], data: Comparisons) -> NDArray[np.float64]:
    k = data.judge
    return s[k, data.item_i] - s[k, data.item_j] + data.order * b[k]


def loglik(params: Mapping[str, ArrayLike], data: Comparisons) -> float:
    r"""Log-likelihood (kernel) of model (1) at ``params``.

    Parameters
    ----------
    params : mapping
        ``ability`` (judges x items, :math:`S`) and ``order_effect`` (judges, :math:`b`).
    data : Comparisons
        With display order recorded.

    Returns
    -------
    float
        :math:`\sum_c [y_c\log\sigma(\eta_c) + (n_c - y_c)\log\sigma(-\eta_c)]` with
        :math:`\eta_c = s_{ki} - s_{kj} + a_c b_k`: the sum of per-verdict Bernoulli
        log-likelihoods (a tie is y = 1/2), equal on cells and on raw rows.
    """
    require_order(data)
    s, b = _require_params(params, data)
    eta = _eta(s, b, data)
    return float(np.sum(data.wins * log_expit(eta) + (data.count - data.wins) * log_expit(-eta)))


def gradient(params: Mapping[str, ArrayLike], data: Comparisons) -> dict[str, NDArray[np.float64]]:
    """Analytic gradient of :func:`loglik` in the raw coordinates (S, b).

    Returns
    -------
    dict
        ``ability`` (judges x items) and ``order_effect`` (judges).
    """
    require_order(data)
    s, b = _require_params(params, data)
    r = data.wins - data.count * expit(_eta(s, b, data))
    n, kk = data.n_items, data.n_judges
    flat_i = data.judge * n + data.item_i
    flat_j = data.judge * n + data.item_j
    g_s = (np.bincount(flat_i, r, kk * n) - np.bincount(flat_j, r, kk * n)).reshape(kk, n)
    return {"ability": g_s, "order_effect": np.bincount(data.judge, r * data.order, kk)}


def _design(data: Comparisons, mask: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Rows x_c = (C_i - C_j, a_c) of one judge's cells in the free chart (u, b)."""
    basis = zero_sum_basis(data.n_items)
    return np.column_stack([basis[data.item_i[mask]] - basis[data.item_j[mask]],
                            data.order[mask].astype(np.float64)])


def _newton(
    x: NDArray[np.float64], n: NDArray[np.float64], y: NDArray[np.float64],
    prec: NDArray[np.float64],
) -> tuple[NDArray[np.float64], int, bool]:
    """Maximise the (penalised) concave logistic log-likelihood of one judge by Newton steps.

    The objective is concave, so a Newton step halved until the objective does not decrease
    converges from zero; the per-verdict average gradient is driven below 1e-11.
    """
    theta = np.zeros(x.shape[1])
    scale = 1.0 / n.sum()

    def objective(t: NDArray[np.float64]) -> float:
        eta = x @ t
        return float(np.sum(y * log_expit(eta) + (n - y) * log_expit(-eta))
                     - 0.5 * np.sum(prec * t**2)) * scale

    value = objective(theta)
    for it in range(1, _MAX_ITER + 1):
        p = expit(x @ theta)
        grad = (x.T @ (y - n * p) - prec * theta) * scale
        if np.max(np.abs(grad)) < _GRAD_TOL:
            return theta, it, True
        hess = ((x * (n * p * (1 - p))[:, None]).T @ x + np.diag(prec)) * scale
        step = np.linalg.solve(hess, grad)
        for _ in range(60):
            new = objective(theta + step)
            if new >= value - 1e-15:
                break
            step = step / 2
        theta, value = theta + step, new
        if np.max(np.abs(theta)) > _RUNAWAY:
            return theta, it, False
    return theta, _MAX_ITER, False


def fit(
    data: Comparisons,
    *,
    information: Information = "expected",
    penalty: PriorsLike | None = None,
) -> Estimate:
    """Per-judge maximum likelihood of DIAL's order-effect BTL (model (1)) with Wald covariance.

    Parameters
    ----------
    data : Comparisons
        Verdicts with display order recorded for every cell.
    information : {"expected", "observed", "sandwich", "cluster"}
        Covariance: inverse Fisher information (expected = observed for this logit model),
        the independent-verdict sandwich (HC0), or the cell-clustered sandwich with clusters
        (judge, unordered pair) pooling both display orders (SPEC §1.8, §1.11).
    penalty : Priors, optional
        Add the Gaussian log prior of :class:`bayescal.models.order_effect_btl.Priors`
        (sum-zero normal on each judge's scores, normal on b_k); the optimum is then the MAP of
        :func:`bayescal.models.order_effect_btl.build`. ``None`` gives the MLE.

    Returns
    -------
    Estimate
        ``ability`` (judge x item, :math:`s_{ki}`, sum zero per judge) and ``order_effect``
        (judge, :math:`b_k`), method ``"mle"`` (or ``"penalized-mle"``). ``info`` holds the
        per-judge verdict counts and the number of clusters.

    Raises
    ------
    DataError
        Display order missing for some cells (named).
    IdentificationError
        A judge with a disconnected graph, an order effect confounded with its scores (no
        cycle with a nonzero signed order sum; the witness or reason is named), or an
        infinite MLE (separation).
    """
    if information not in _INFORMATION:
        raise ValueError(f"information must be one of {_INFORMATION}, got {information!r}")
    empty = [k for k in data.judges if not np.any(data.judge == data.judges.index(k))]
    if empty:
        raise DataError(f"judge(s) {empty} have no comparisons; drop them with "
                        "Comparisons.subset before fitting")
    penalized = penalty is not None and (penalty.ability_sd is not None
                                         and penalty.order_effect_sd is not None)
    if penalized:
        require_order(data)
    else:
        require_order_effect_mle(data)
    n_items, n_judges = data.n_items, data.n_judges
    basis = zero_sum_basis(n_items)
    prec = np.zeros(n_items)
    if penalty is not None:
        if penalty.ability_sd is not None:
            prec[:-1] = 1.0 / penalty.ability_sd**2
        if penalty.order_effect_sd is not None:
            prec[-1] = 1.0 / penalty.order_effect_sd**2
    s = np.zeros((n_judges, n_items))
    b = np.zeros(n_judges)
    size = n_judges * (n_items + 1)
    cov = np.zeros((size, size))
    iterations = []
    clusters = 0
    for k in range(n_judges):
        mask = data.judge == k
        x = _design(data, mask)
        n, y, y2 = data.count[mask], data.wins[mask], data.wins_sq[mask]
        theta, its, ok = _newton(x, n, y, prec)
        iterations.append(its)
        if not ok:
            raise MLEBoundaryError(
                f"judge {data.judges[k]!r}: Newton's method did not converge in {its} "
                "iterations (estimates running to infinity); use the MAP or NUTS fit"
            )
        p = expit(x @ theta)
        bread = (x * (n * p * (1 - p))[:, None]).T @ x + np.diag(prec)
        inv = np.linalg.inv(bread)
        if information == "sandwich":
            # Σ_t (y_t - p)² within a cell from its sums of y and y² (ties make y² ≠ y)
            sq = y2 - 2 * p * y + n * p**2
            cov_free = inv @ ((x * sq[:, None]).T @ x) @ inv
        elif information == "cluster":
            key = data.item_i[mask] * n_items + data.item_j[mask]
            _, cl = np.unique(key, return_inverse=True)
            n_cl = int(cl.max()) + 1
            _check_clusters(data.judges[k], n_cl, n_items)
            clusters += n_cl
            scores = x * (y - n * p)[:, None]
            cov_free = inv @ cluster_meat(scores, cl, correction="CR0") @ inv
        else:
            cov_free = inv
        s[k] = basis @ theta[:-1]
        b[k] = theta[-1]
        # raw (s_k, b_k) = T θ with T = blockdiag(C, 1)
        t = np.zeros((n_items + 1, n_items))
        t[:n_items, :-1] = basis
        t[n_items, -1] = 1.0
        block = t @ cov_free @ t.T
        rows = np.concatenate([k * n_items + np.arange(n_items), [n_judges * n_items + k]])
        cov[np.ix_(rows, rows)] = block
    ll = loglik({"ability": s, "order_effect": b}, data)
    return _estimate(data, s, b, cov, ll, information, penalty,
                     {"optimizer": "Newton per judge", "iterations": iterations,
                      "clusters": clusters if information == "cluster" else None})


def _check_clusters(judge: str, n_clusters: int, n_params: int) -> None:
    """Refuse a singular clustered covariance; warn where few clusters bias it downwards.

    The cluster score sums add to zero at the MLE, so the meat has rank at most G - 1 and
    some contrast gets a zero variance unless G > N. With G not far above N the sandwich is
    biased low (a simulated judge with N = 6 and G = 15 pairs gave SEs about 0.7 of the
    model-based ones on data that follow the model).
    """
    if n_clusters <= n_params:
        raise IdentificationError(
            f"judge {judge!r} has {n_clusters} (judge, pair) clusters for {n_params} parameters: "
            "the clustered covariance is singular. Use information='expected' or 'sandwich'."
        )
    if n_clusters < 5 * n_params:
        warnings.warn(
            f"judge {judge!r}: {n_clusters} (judge, pair) clusters for {n_params} parameters; "
            "with so few clusters the clustered standard errors are biased downwards. Compare "
            "with information='expected' before trusting them.",
            UserWarning,
            stacklevel=3,
        )


def _estimate(
    data: Comparisons,
    s: NDArray[np.float64],
    b: NDArray[np.float64],
    cov: NDArray[np.float64],
    ll: float,
    information: str,
    penalty: PriorsLike | None,
    info: dict[str, object],
) -> Estimate:
    ds = xr.Dataset(
        {
            "ability": xr.DataArray(s, dims=("judge", "item"),
                                    coords={"judge": list(data.judges),
                                            "item": list(data.items)}),
            "order_effect": xr.DataArray(b, dims="judge", coords={"judge": list(data.judges)}),
        }
    )
    terms = tuple(label for name, da in ds.data_vars.items()
                  for label in term_labels(str(name), da))
    n_k = np.bincount(data.judge, data.count, data.n_judges)
    return Estimate(
        method="mle" if penalty is None else "penalized-mle",
        params=ds,
        cov=cov,
        terms=terms,
        interval={"ability": "wald", "order_effect": "wald"},
        loglik=ll,
        converged=True,
        info={**info, "information": information, "n_verdicts": float(data.n_rows),
              "n_verdicts_per_judge": dict(zip(data.judges, n_k.tolist(), strict=True))},
    )


# ---------------------------------------------------------------------------- tests (§1.11)
def _holm(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values."""
    m = len(p)
    order = np.argsort(p)
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def order_effect_tests(estimate: Estimate, *, pairwise: bool = True) -> pd.DataFrame:
    r"""Wald tests of DIAL §B.3 / SPEC §1.11: :math:`H_0: b_k = 0` and :math:`H_0: b_k = b_{k'}`.

    :math:`z = \hat b_k/\mathrm{se}(\hat b_k)` and
    :math:`z = (\hat b_k - \hat b_{k'})/(v_{kk} + v_{k'k'} - 2v_{kk'})^{1/2}`, two-sided normal,
    with the covariance of ``estimate`` (whatever ``information`` it was fitted with). Holm's
    adjustment is applied within each family (all ``b_k = 0`` tests; all pairwise tests).

    Parameters
    ----------
    estimate : Estimate
        From :func:`fit` (or any Estimate with an ``order_effect[judge]`` parameter).
    pairwise : bool
        Include the K(K-1)/2 tests of equal order effects.

    Returns
    -------
    DataFrame
        Columns ``family`` (``"b_k = 0"`` or ``"b_k = b_k'"``), ``judge``, ``judge_2``,
        ``estimate`` (b_k or b_k - b_k'), ``se``, ``statistic`` (z), ``p_value``, ``p_holm``.
    """
    if "order_effect" not in estimate.params:
        raise ValueError("the estimate has no order_effect parameter")
    judges = [str(j) for j in estimate.params["order_effect"].coords["judge"].values]
    idx = [estimate.terms.index(f"order_effect[{j}]") for j in judges]
    b = np.asarray(estimate.params["order_effect"].values, dtype=np.float64)
    v = estimate.cov[np.ix_(idx, idx)]
    rows = []
    se = np.sqrt(np.diag(v))
    for k, j in enumerate(judges):
        rows.append(("b_k = 0", j, "", b[k], se[k]))
    if pairwise:
        for k in range(len(judges)):
            for k2 in range(k + 1, len(judges)):
                var = v[k, k] + v[k2, k2] - 2 * v[k, k2]
                rows.append(("b_k = b_k'", judges[k], judges[k2], b[k] - b[k2],
                             np.sqrt(max(var, 0.0))))
    out = pd.DataFrame(rows, columns=["family", "judge", "judge_2", "estimate", "se"])
    out["statistic"] = out["estimate"] / out["se"]
    out["p_value"] = 2 * ndtr(-np.abs(out["statistic"]))  # two-sided normal p-value
    out["p_holm"] = np.nan
    for fam in out["family"].unique():
        sel = (out["family"] == fam).to_numpy()
        out.loc[sel, "p_holm"] = _holm(out.loc[sel, "p_value"].to_numpy())
    return out


# ----------------------------------------------------------------- probabilities (§1.13)
def order_probability(delta: ArrayLike, order_effect: ArrayLike, order: ArrayLike) -> NDArray:
    r"""Order-specific probability :math:`p^{(a)} = \sigma(\Delta + a b)` (model (1))."""
    return expit(np.asarray(delta) + np.asarray(order) * np.asarray(order_effect))


def debiased_probability(delta: ArrayLike) -> NDArray:
    r"""Position-debiased probability :math:`p^{deb} = \sigma(\Delta)` (DIAL §3.1).

    :math:`\Delta = s_{ki} - s_{kj}`, the judge's score difference with the order term removed.
    """
    return expit(np.asarray(delta))


def order_averaged_probability(delta: ArrayLike, order_effect: ArrayLike) -> NDArray:
    r"""Order-averaged probability :math:`p^{avg} = (p^{(+1)} + p^{(-1)})/2` (DIAL §3.1)."""
    d, b = np.asarray(delta), np.asarray(order_effect)
    return (expit(d + b) + expit(d - b)) / 2


def order_averaged_identity(delta: ArrayLike, order_effect: ArrayLike) -> NDArray:
    r"""DIAL identity (B.1): :math:`p^{avg} = \tfrac12 + \tfrac{u}{2}\,\frac{1-t^2}{1-u^2t^2}`.

    With :math:`u = \tanh(\Delta/2)` (so :math:`2p^{deb} - 1 = u`) and :math:`t = \tanh(b/2)`;
    the attenuation factor :math:`(1-t^2)/(1-u^2t^2) \le 1` shows :math:`p^{avg}` is pulled
    towards 1/2 relative to :math:`p^{deb}` whenever :math:`b \ne 0` (SPEC §1.13).
    """
    u = np.tanh(np.asarray(delta) / 2)
    t = np.tanh(np.asarray(order_effect) / 2)
    return 0.5 + 0.5 * u * (1 - t**2) / (1 - u**2 * t**2)


def pairwise_probabilities(estimate: Estimate, prob: float = 0.95) -> pd.DataFrame:
    r"""Debiased, order-averaged and order-specific probabilities for every judge and pair.

    Intervals by the delta method on the logit scale (``wald-logit``) from the estimate's
    covariance of :math:`(s_{ki}, s_{kj}, b_k)`.

    Returns
    -------
    DataFrame
        One row per (judge, item_i, item_j) with i before j in label order: ``delta``
        (:math:`s_{ki} - s_{kj}`), ``p_debiased`` with ``p_debiased_lower/upper``,
        ``p_averaged`` with ``p_averaged_lower/upper``, ``p_i_first``, ``p_i_second``.
    """
    check_prob(prob)
    s = estimate.params["ability"]
    judges = [str(j) for j in s.coords["judge"].values]
    items = [str(i) for i in s.coords["item"].values]
    n = len(items)
    pos = {t: r for r, t in enumerate(estimate.terms)}
    rows = []
    ii, jj = np.triu_indices(n, 1)
    for k, judge in enumerate(judges):
        sk = np.asarray(s.values[k], dtype=np.float64)
        bk = float(estimate.params["order_effect"].values[k])
        a_idx = np.array([pos[f"ability[{judge}, {it}]"] for it in items])
        b_idx = pos[f"order_effect[{judge}]"]
        cov_s = estimate.cov[np.ix_(a_idx, a_idx)]
        cov_sb = estimate.cov[a_idx, b_idx]
        var_b = estimate.cov[b_idx, b_idx]
        delta = sk[ii] - sk[jj]
        var_d = cov_s[ii, ii] + cov_s[jj, jj] - 2 * cov_s[ii, jj]
        cov_db = cov_sb[ii] - cov_sb[jj]
        p_deb = debiased_probability(delta)
        se_deb = p_deb * (1 - p_deb) * np.sqrt(np.clip(var_d, 0, None))
        p_plus, p_minus = expit(delta + bk), expit(delta - bk)
        p_avg = (p_plus + p_minus) / 2
        g_d = (p_plus * (1 - p_plus) + p_minus * (1 - p_minus)) / 2
        g_b = (p_plus * (1 - p_plus) - p_minus * (1 - p_minus)) / 2
        se_avg = np.sqrt(np.clip(g_d**2 * var_d + 2 * g_d * g_b * cov_db + g_b**2 * var_b, 0,
                                 None))
        lo_d, hi_d = wald_interval(p_deb, se_deb, prob, "wald-logit")
        lo_a, hi_a = wald_interval(p_avg, se_avg, prob, "wald-logit")
        rows.append(pd.DataFrame({
            "judge": judge, "item_i": np.asarray(items)[ii], "item_j": np.asarray(items)[jj],
            "delta": delta, "p_debiased": p_deb, "p_debiased_lower": lo_d,
            "p_debiased_upper": hi_d, "p_averaged": p_avg, "p_averaged_lower": lo_a,
            "p_averaged_upper": hi_a, "p_i_first": p_plus, "p_i_second": p_minus,
        }))
    out = pd.concat(rows, ignore_index=True)
    out["prob"] = prob
    return out


# ------------------------------------------------------------------------- baseline (§1.12)
def pooled(data: Comparisons, *, information: Literal["expected", "observed", "sandwich"]
           = "expected") -> Estimate:
    """DIAL's order-agnostic "Pooled" baseline: one BTL on all judges and both orders collapsed.

    The LLM-only part of SPEC §1.12's Pooled (before its human rescaling): the centred BTL MLE on
    :math:`n_{ij} = \\sum_{k,a} n^{(a)}_{kij}`. It is the unweighted judge-discrimination twin
    (:func:`bayescal.frequentist.judge_discrimination_btl.fit` with ``discrimination=False``),
    returned under method ``"pooled-mle"``. Under unbalanced display orders it is biased for
    every judge's debiased scores (DIAL §6.1), which is what it is there to show.

    Returns
    -------
    Estimate
        ``ability[item]`` (sum zero).
    """
    from bayescal.frequentist import judge_discrimination_btl

    if data.n_items < 2:
        raise DataError("the pooled BTL needs at least two items")
    est = judge_discrimination_btl.fit(data, discrimination=False, information=information)
    return dataclasses.replace(est, method="pooled-mle")
