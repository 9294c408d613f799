r"""Frequentist twin of DIAL's judge-specific order-effect BTL (model (1)).

DIAL: "Position-Debiased LLM Judges with Adaptive Human Preference Calibration" (2026). Model
(1): judge k prefers the canonical item i over j, shown in order a (+1: i shown first, -1:
second), with probability

.. math:: p^{(a)}_{kij} = \sigma(s_{ki} - s_{kj} + a\,b_k),\qquad 1_N^\top s_k = 0 .

Ties are half a win each way, as in DIAL, so with ties the likelihood is a quasi-likelihood.
Judges share no parameter, so the MLE is one logistic regression per judge on the design
:math:`[D_k C, z_k]` (C an orthonormal sum-zero basis), solved by Newton's method on cells.

With comparison features (``Comparisons.from_frame(features=...)``) the logit gains a
judge-specific effect of the feature differences (a generalisation of DIAL's model (1)),
:math:`\eta = s_{ki} - s_{kj} + a\,b_k + \beta_k^\top(x_i - x_j)`, and the design gains the
columns :math:`X_k`; :func:`bayescal.identify.require_features_identified` refuses a feature
whose effect the design cannot separate (named).

Covariance (``information=``, :mod:`bayescal.frequentist.covariance`):

* ``expected`` / ``observed``: the inverse Fisher information :math:`H^{-1}`, :math:`H =
  \sum_c n_c p_c(1-p_c) x_c x_c^\top`; with the canonical logit link and η linear in the
  parameters the observed information equals it exactly;
* ``sandwich``: :math:`H^{-1}(\sum_c x_c x_c^\top \sum_{t\in c}(y_t - p_c)^2) H^{-1}`,
  independent verdicts (HC0; the DIAL authors' "iid" intervals for b);
* ``cluster``: :math:`H^{-1} M H^{-1}` with :math:`M = c\sum_g S_g S_g^\top` over the total
  scores :math:`S_g` of the clusters of a key: the data's own (a battle judged by several
  judges: then the judges' estimates are correlated and the covariance has cross-judge
  blocks), ``"judge_pair"`` (judge x unordered pair, both display orders pooled: DIAL's
  cell-clustered intervals, robust to pair-level overdispersion) or ``"pair"``. ``c =
  G/(G-1)`` (CR1, default); DIAL's authors use ``correction="CR0"`` (c = 1);
* ``auto`` (default): ``cluster`` when the data carry a key, else ``sandwich`` with ties or
  soft outcomes, else ``expected``; the resolved kind is recorded in ``Estimate.info``.

Before fitting, :func:`bayescal.identify.require_order_effect_mle` checks display order is
recorded, each judge's design has rank N (DIAL Prop. 1) and no judge's MLE is infinite.

``fit(..., ties="davidson")`` fits Davidson's (1970, JASA 65) trinomial tie model instead: a
tie parameter :math:`\nu_k` per judge, :math:`P(\text{win}, \text{tie}, \text{loss})
\propto (e^{\eta/2}, \nu_k, e^{-\eta/2})` with the order effect (and the feature term)
inside :math:`\eta`. Its logits are linear in :math:`(\theta_k, \log\nu_k)`, so each judge's
log-likelihood is concave and its observed information equals the expected one; Newton's
method per judge as above. A full likelihood: ``"auto"`` resolves to ``expected``;
``observed`` and ``sandwich`` are offered, ``cluster`` refused
(:func:`~bayescal.frequentist.covariance.davidson_request`).

See ``models/order_effect_btl.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit, ndtr, softmax

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.data.comparisons import ClusterRecords
from bayescal.frequentist import covariance
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.frequentist.features import (
    feature_effect_contrasts,
    feature_effect_param,
    feature_penalty_sd,
    feature_sums,
)
from bayescal.frequentist.covariance import Information
from bayescal.identify import (
    require_features_identified,
    require_order,
    require_order_effect_mle,
    require_tie_parameters,
)
from bayescal.priors import check_prior_sd
from bayescal.schema import resolve_prob, term_labels, wald_interval

__all__ = [
    "debiased_probability",
    "feature_effect_contrasts",
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

_MAX_ITER = 100
_GRAD_TOL = 1e-11  # on the per-verdict average score
_RUNAWAY = 50.0


class PriorsLike(Protocol):
    """Prior scales of the model's ``Priors`` (the twin never imports PyMC)."""

    ability_sd: float | None
    order_effect_sd: float | None
    feature_effect_sd: float | None


def _require_params(params: Mapping[str, ArrayLike], data: Comparisons) -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    s = np.asarray(params["ability"], dtype=np.float64)
    b = np.asarray(params["order_effect"], dtype=np.float64)
    if s.shape != (data.n_judges, data.n_items) or b.shape != (data.n_judges,):
        raise ValueError(
            f"ability must have shape (judges, items) = {(data.n_judges, data.n_items)} and "
            f"order_effect shape ({data.n_judges},); got {s.shape} and {b.shape}"
        )
    beta = feature_effect_param(params, data)
    return s, b, beta


def _eta(s: NDArray[np.float64], b: NDArray[np.float64], beta: NDArray[np.float64],
         data: Comparisons) -> NDArray[np.float64]:
    k = data.judge
    eta = s[k, data.item_i] - s[k, data.item_j] + data.order * b[k]
    if data.n_features:
        eta = eta + np.einsum("cf,cf->c", data.features, beta[k])
    return eta


def _check_ties(ties: str) -> None:
    if ties not in ("half", "davidson"):
        raise ValueError(f"ties must be 'half' or 'davidson', got {ties!r}")


def loglik(params: Mapping[str, ArrayLike], data: Comparisons, *, ties: str = "half") -> float:
    r"""Log-likelihood (kernel) of model (1) at ``params``.

    Parameters
    ----------
    params : mapping
        ``ability`` (judges x items, :math:`S`) and ``order_effect`` (judges, :math:`b`);
        with comparison features also ``feature_effect`` (judges x features, :math:`\beta`);
        with ``ties="davidson"`` also ``tie`` (judges, :math:`\nu`, positive).
    data : Comparisons
        With display order recorded.
    ties : {"half", "davidson"}
        ``"half"``: a tie is half a win each way. ``"davidson"``: Davidson's (1970) trinomial
        log-likelihood :math:`\sum_c [(w_c - l_c)\eta_c/2 + t_c\log\nu_k - n_c\log(e^{\eta_c/2}
        + e^{-\eta_c/2} + \nu_k)]` over the wins, ties and losses of item i.

    Returns
    -------
    float
        :math:`\sum_c [y_c\log\sigma(\eta_c) + (n_c - y_c)\log\sigma(-\eta_c)]` with
        :math:`\eta_c = s_{ki} - s_{kj} + a_c b_k + \beta_k^\top x_c`: the sum of per-verdict
        Bernoulli log-likelihoods (a tie is y = 1/2), equal on cells and on raw rows (or the
        Davidson sum above, also per verdict, no multinomial coefficient).
    """
    _check_ties(ties)
    require_order(data)
    s, b, beta = _require_params(params, data)
    eta = _eta(s, b, beta, data)
    if ties == "half":
        return float(np.sum(data.wins * log_expit(eta)
                            + (data.count - data.wins) * log_expit(-eta)))
    nu = np.asarray(params["tie"], dtype=np.float64)
    if nu.shape != (data.n_judges,) or not np.all(nu > 0):
        raise ValueError(f"tie must be {data.n_judges} positive values (one per judge); "
                         f"got {nu!r}")
    wins, tied, losses = data.outcome_counts()
    log_nu = np.log(nu)[data.judge]
    log_d = np.logaddexp(np.logaddexp(eta / 2, -eta / 2), log_nu)
    return float(np.sum((wins - losses) * eta / 2 + tied * log_nu
                        - (wins + tied + losses) * log_d))


def gradient(params: Mapping[str, ArrayLike], data: Comparisons) -> dict[str, NDArray[np.float64]]:
    """Analytic gradient of :func:`loglik` in the raw coordinates (S, b[, β]).

    Returns
    -------
    dict
        ``ability`` (judges x items) and ``order_effect`` (judges); with comparison features
        also ``feature_effect`` (judges x features).
    """
    require_order(data)
    s, b, beta = _require_params(params, data)
    r = data.wins - data.count * expit(_eta(s, b, beta, data))
    n, kk = data.n_items, data.n_judges
    flat_i = data.judge * n + data.item_i
    flat_j = data.judge * n + data.item_j
    g_s = (np.bincount(flat_i, r, kk * n) - np.bincount(flat_j, r, kk * n)).reshape(kk, n)
    out = {"ability": g_s, "order_effect": np.bincount(data.judge, r * data.order, kk)}
    if data.n_features:
        out["feature_effect"] = feature_sums(data.judge, r, data.features, kk)
    return out


def _design(data: Comparisons, mask: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Rows x_c = (C_i - C_j, a_c, x_i - x_j) of one judge's cells in the free chart (u, b, β)."""
    basis = zero_sum_basis(data.n_items)
    columns = [basis[data.item_i[mask]] - basis[data.item_j[mask]],
               data.order[mask].astype(np.float64)]
    if data.n_features:
        columns.append(data.features[mask])
    return np.column_stack(columns)


def _ascend(
    theta: NDArray[np.float64],
    objective: Callable[[NDArray[np.float64]], float],
    derivatives: Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]],
) -> tuple[NDArray[np.float64], int, bool]:
    """Damped Newton ascent of a concave per-verdict objective (both tie kernels use it).

    The objective is concave, so a Newton step halved until the objective does not decrease
    converges from any start; ``derivatives`` returns the per-verdict gradient and negative
    Hessian, and the gradient is driven below 1e-11. Returns the estimate, the iterations and
    convergence (False after a run past ``_RUNAWAY``, where the MLE does not exist).
    """
    value = objective(theta)
    for it in range(1, _MAX_ITER + 1):
        grad, hess = derivatives(theta)
        if np.max(np.abs(grad)) < _GRAD_TOL:
            return theta, it, True
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


def _newton(
    x: NDArray[np.float64], n: NDArray[np.float64], y: NDArray[np.float64],
    prec: NDArray[np.float64],
) -> tuple[NDArray[np.float64], int, bool]:
    """Maximise the (penalised) concave logistic log-likelihood of one judge, from zero."""
    scale = 1.0 / n.sum()

    def objective(t: NDArray[np.float64]) -> float:
        eta = x @ t
        return float(np.sum(y * log_expit(eta) + (n - y) * log_expit(-eta))
                     - 0.5 * np.sum(prec * t**2)) * scale

    def derivatives(t: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        p = expit(x @ t)
        grad = (x.T @ (y - n * p) - prec * t) * scale
        return grad, ((x * (n * p * (1 - p))[:, None]).T @ x + np.diag(prec)) * scale

    return _ascend(np.zeros(x.shape[1]), objective, derivatives)


def _newton_davidson(
    x: NDArray[np.float64], counts: NDArray[np.float64], prec: NDArray[np.float64],
    lam0: float,
) -> tuple[NDArray[np.float64], int, bool, tuple[NDArray[np.float64], ...]]:
    """Maximise one judge's (penalised) Davidson log-likelihood by Newton steps.

    The parameters are (θ, λ), λ = log ν last; the cell's logits (η/2, λ, -η/2) with η = xθ
    are linear in them, so the objective is concave and its Hessian does not involve the
    outcomes. ``counts`` holds (wins, ties, losses) per cell in its rows. Returns the
    estimate, the iterations, convergence and the cell probabilities (p_w, p_t, p_l).
    """
    wins, ties, losses = counts
    n = wins + ties + losses
    start = np.zeros(x.shape[1] + 1)
    start[-1] = lam0
    scale = 1.0 / n.sum()

    def logits(t: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        eta = x @ t[:-1]
        return eta, np.stack([eta / 2, np.full_like(eta, t[-1]), -eta / 2], axis=1)

    def objective(t: NDArray[np.float64]) -> float:
        eta, cell = logits(t)
        log_d = np.logaddexp.reduce(cell, axis=1)
        ll = np.sum((wins - losses) * eta / 2 + ties * t[-1] - n * log_d)
        return float(ll - 0.5 * np.sum(prec * t**2)) * scale

    def derivatives(t: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        p_w, p_t, p_l = softmax(logits(t)[1], axis=1).T
        r_eta = (wins - losses) / 2 - n * (p_w - p_l) / 2
        grad = np.append(x.T @ r_eta, np.sum(ties - n * p_t)) - prec * t
        hess = _davidson_information(x, n, (p_w, p_t, p_l)) + np.diag(prec)
        return grad * scale, hess * scale

    theta, it, ok = _ascend(start, objective, derivatives)
    return theta, it, ok, tuple(softmax(logits(theta)[1], axis=1).T)


def _davidson_information(
    x: NDArray[np.float64], n: NDArray[np.float64], p: tuple[NDArray[np.float64], ...]
) -> NDArray[np.float64]:
    """Σ_c n_c J_cᵀ Bᵀ(diag p_c - p_c p_cᵀ)B J_c in (θ, λ): J_c = blockdiag(x_c, 1),
    B = [[½, 0], [0, 1], [-½, 0]] (one judge's expected = observed information)."""
    p_w, p_t, p_l = p
    diff = p_w - p_l
    a = n * (p_w + p_l - diff**2) / 4
    b = -n * p_t * diff / 2
    dim = x.shape[1] + 1
    out = np.zeros((dim, dim))
    out[:-1, :-1] = (x * a[:, None]).T @ x
    out[:-1, -1] = out[-1, :-1] = x.T @ b
    out[-1, -1] = np.sum(n * p_t * (1 - p_t))
    return out


def _davidson_scores(
    x: NDArray[np.float64], counts: NDArray[np.float64], p: tuple[NDArray[np.float64], ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One score row per (cell, outcome) in (θ, λ), outcome o's B ᵀ(e_o - p) carried by J_c,
    and its weight, the cell's count of that outcome: the sandwich meat is their weighted Gram."""
    p_w, p_t, p_l = p
    diff = p_w - p_l
    u_eta = ((1 - diff) / 2, -diff / 2, -(1 + diff) / 2)  # win, tie, loss
    u_lam = (-p_t, 1 - p_t, -p_t)
    rows = [np.column_stack([x * ue[:, None], ul]) for ue, ul in zip(u_eta, u_lam, strict=True)]
    return np.concatenate(rows), np.concatenate(list(counts))


def fit(
    data: Comparisons,
    *,
    information: Information = "auto",
    cluster: str | None = None,
    correction: str | None = None,
    penalty: PriorsLike | None = None,
    ties: str = "half",
) -> Estimate:
    """Per-judge maximum likelihood of DIAL's order-effect BTL (model (1)) with Wald covariance.

    Parameters
    ----------
    data : Comparisons
        Verdicts with display order recorded for every cell.
    information : {"auto", "expected", "observed", "sandwich", "cluster"}
        Covariance kind (:mod:`bayescal.frequentist.covariance`): inverse Fisher information
        (expected = observed for this logit model), the independent-verdict sandwich (HC0), or
        the cluster-robust sandwich over a key. ``"auto"`` (default): ``cluster`` when the data
        carry a key (or ``cluster=`` is given), else ``sandwich`` when they hold ties or soft
        outcomes, else ``expected``.
    cluster : str, optional
        Cluster key for ``information="cluster"``: the data's own key (the column given to
        ``Comparisons.from_frame(cluster=...)``; the default), ``"judge_pair"`` (judge x
        unordered pair, both display orders pooled: DIAL's cells) or ``"pair"``.
    correction : {"CR1", "CR0"}, optional
        Small-sample factor G/(G-1) of the cluster meat (``"CR1"``, default) or none
        (``"CR0"``, the DIAL authors' convention).
    penalty : Priors, optional
        Add the Gaussian log prior of :class:`bayescal.models.order_effect_btl.Priors`
        (sum-zero normal on each judge's scores, normal on b_k); the optimum is then the MAP of
        :func:`bayescal.models.order_effect_btl.build`. ``None`` gives the MLE. With
        ``ties="davidson"`` its ``tie_sd`` adds a Normal(0, tie_sd) prior on each log ν_k.
    ties : {"half", "davidson"}
        ``"half"`` (DIAL's): a tie is half a win each way, a quasi-likelihood with ties.
        ``"davidson"``: Davidson's (1970) trinomial likelihood with a tie parameter ν_k per
        judge (``tie`` in the estimate, interval on the log scale). A full likelihood, so
        ``"auto"`` resolves to ``expected`` (equal to ``observed`` here); ``sandwich`` is
        offered; ``cluster`` is refused (the cluster records carry wins and counts, not each
        record's ties). Refused when the data hold no tie, or a judge never or only tied
        (:func:`bayescal.identify.require_tie_parameters`).

    Returns
    -------
    Estimate
        ``ability`` (judge x item, :math:`s_{ki}`, sum zero per judge), ``order_effect``
        (judge, :math:`b_k`) and, with comparison features, ``feature_effect`` (judge x
        feature, :math:`\\beta_k`), with Davidson ties ``tie`` (judge, :math:`\\nu_k`), method
        ``"mle"`` (or ``"penalized-mle"``). ``info`` holds the
        resolved covariance request (``information``, ``cluster``, ``correction``,
        ``information_reason``), the per-judge verdict counts and ``n_clusters``.

    Raises
    ------
    ValueError
        Before fitting: an unknown kind, key or correction, ``cluster=``/``correction=`` with a
        kind that uses no key, ``"cluster"`` without a key, a judge whose verdicts fall in no
        more clusters than its N (+ F with features) parameters, or, for a key whose clusters
        hold several judges' verdicts, no more clusters than the K N (K (N + F)) parameters
        (:func:`~bayescal.frequentist.covariance.check_cluster_counts`).
    DataError
        Display order missing for some cells (named).
    IdentificationError
        A judge with a disconnected graph, an order effect confounded with its scores (no
        cycle with a nonzero signed order sum; the witness or reason is named), an
        infinite MLE (separation), or a comparison feature whose effect is not identified
        (:func:`bayescal.identify.require_features_identified`, judge and feature named).

    Warns
    -----
    FewClustersWarning
        A judge whose verdicts fall in fewer than max(30, 5 N) clusters (max(30, 5 K N) for a
        key whose clusters hold several judges).
    """
    _check_ties(ties)
    davidson = ties == "davidson"
    request = covariance.pairwise_request(ties, information, cluster=cluster,
                                          correction=correction, data=data,
                                          model="order_effect_btl")
    empty = [k for k in data.judges if not np.any(data.judge == data.judges.index(k))]
    if empty:
        raise DataError(f"judge(s) {empty} have no comparisons; drop them with "
                        "Comparisons.subset before fitting")
    n_items, n_judges = data.n_items, data.n_judges
    records = None
    if request.kind == "cluster":
        records = data.cluster_records(request.cluster)
        judge_of = data.judge[records.cell]
        per_judge = [np.unique(records.code[judge_of == k]).size for k in range(n_judges)]
        # each judge's block rests on the clusters its verdicts fall in (its scores sum to zero
        # over them at the MLE, so it needs more than its N + F parameters); when a cluster
        # holds several judges' verdicts the meat couples the judges, and cross-judge
        # contrasts (b_k - b_k') rest on all G clusters at once: the whole vector then needs
        # more than K (N + F)
        n_par = n_items + data.n_features  # free parameters per judge
        groups = [(f"judge {data.judges[k]!r}", per_judge[k], n_par) for k in range(n_judges)]
        if sum(per_judge) > records.n_clusters:
            groups.append(("all judges jointly", records.n_clusters, n_judges * n_par))
        covariance.check_cluster_counts(groups, key=str(request.cluster))
    n_feat = data.n_features
    feature_sd = feature_penalty_sd(penalty)
    penalized = penalty is not None and (penalty.ability_sd is not None
                                         and penalty.order_effect_sd is not None
                                         and (feature_sd is not None or n_feat == 0))
    if davidson:
        # a tie penalises |η| like a half win each way, so the half-win separation check (a
        # tied cell counted as mixed) is Davidson's too; ν_k's own boundaries are checked here
        require_tie_parameters(data)
        tie_sd = getattr(penalty, "tie_sd", None) if penalty is not None else None
        check_prior_sd("tie_sd", tie_sd)
    if penalized:
        require_order(data)
    else:
        require_order_effect_mle(data)
    require_features_identified(data)
    basis = zero_sum_basis(n_items)
    # free chart per judge: θ_k = (u_k, b_k, β_k[, λ_k = log ν_k]); η's design spans the first
    dim = n_items + n_feat + davidson
    n_eta = n_items + n_feat
    prec = np.zeros(dim)
    if penalty is not None:
        if penalty.ability_sd is not None:
            prec[:n_items - 1] = 1.0 / penalty.ability_sd**2
        if penalty.order_effect_sd is not None:
            prec[n_items - 1] = 1.0 / penalty.order_effect_sd**2
        if feature_sd is not None:
            prec[n_items:n_eta] = 1.0 / feature_sd**2
        if davidson and tie_sd is not None:
            prec[-1] = 1.0 / tie_sd**2
    s = np.zeros((n_judges, n_items))
    b = np.zeros(n_judges)
    beta = np.zeros((n_judges, n_feat))
    lam = np.zeros(n_judges)
    # raw (s_k, b_k, β_k[, log ν_k]) = T θ_k with T = blockdiag(C, 1, I_F[, 1])
    t = np.zeros((n_items + 1 + n_feat + davidson, dim))
    t[:n_items, :n_items - 1] = basis
    t[n_items:, n_items - 1:] = np.eye(1 + n_feat + davidson)
    x = np.zeros((data.n_cells, n_eta))  # design row of each cell in its judge's chart
    p = np.zeros(data.n_cells)
    inv = np.zeros((n_judges, dim, dim))
    outcomes = np.stack(data.outcome_counts()) if davidson else None
    scores: list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]] = []
    iterations, converged = [], []
    for k in range(n_judges):
        mask = data.judge == k
        x[mask] = _design(data, mask)
        n, y = data.count[mask], data.wins[mask]
        if davidson:
            assert outcomes is not None
            counts = outcomes[:, mask]
            # at η = 0, P(tie) = ν/(2 + ν): start ν at the judge's tie odds 2t/(w + l)
            lam0 = float(np.log(2 * counts[1].sum() / (counts[0] + counts[2]).sum()))
            theta, its, ok, probs = _newton_davidson(x[mask], counts, prec, lam0)
        else:
            theta, its, ok = _newton(x[mask], n, y, prec)
        iterations.append(its)
        converged.append(ok)
        if not ok:
            raise MLEBoundaryError(
                f"judge {data.judges[k]!r}: Newton's method did not converge in {its} "
                "iterations (estimates running to infinity); use the MAP or NUTS fit"
            )
        if davidson:
            # expected = observed information (logits linear in (θ, λ)), plus the prior's
            bread = _davidson_information(x[mask], counts.sum(axis=0), probs) + np.diag(prec)
            if request.kind == "sandwich":
                rows, weight = _davidson_scores(x[mask], counts, probs)
                scores.append((rows, weight, np.tile(np.flatnonzero(mask), 3)))
            lam[k] = theta[-1]
        else:
            p[mask] = expit(x[mask] @ theta)
            # expected = observed information (canonical link, η linear in θ), plus the prior's
            bread = (x[mask] * (n * p[mask] * (1 - p[mask]))[:, None]).T @ x[mask] + np.diag(prec)
        inv[k] = np.linalg.inv(bread)
        s[k] = basis @ theta[:n_items - 1]
        b[k] = theta[n_items - 1]
        beta[k] = theta[n_items:n_eta]
    outcome_scores = None
    if scores:
        outcome_scores = tuple(np.concatenate(part) for part in zip(*scores, strict=True))
    cov = _covariance(data, request.kind, t, x, p, inv, records, str(request.correction),
                      outcome_scores)
    params = {"ability": s, "order_effect": b}
    if n_feat:
        params["feature_effect"] = beta
    if davidson:
        params["tie"] = np.exp(lam)
        # delta method: d ν / d log ν = ν
        dpar = np.concatenate([np.ones(cov.shape[0] - n_judges), params["tie"]])
        cov = cov * np.outer(dpar, dpar)
    ll = loglik(params, data, ties=ties)
    info = {"optimizer": "Newton per judge", "iterations": iterations,
            "converged": bool(all(converged)), **request.as_info(),
            "n_clusters": None if records is None else records.n_clusters, "ties": ties}
    return _estimate(data, params, cov, ll, penalty, info)


def _covariance(
    data: Comparisons, kind: str, t: NDArray[np.float64], x: NDArray[np.float64],
    p: NDArray[np.float64], inv: NDArray[np.float64], records: ClusterRecords | None,
    correction: str,
    outcome_scores: tuple[NDArray[np.float64], ...] | None = None,
) -> NDArray[np.float64]:
    """Covariance of (S, b[, β][, log ν]) from the per-judge inverse breads ``inv`` (free
    chart θ_k).

    In the stacked free coordinates (θ_1, ..., θ_K) the bread is block diagonal (judges share
    no parameter), and so is the meat except under a key whose clusters hold several judges'
    verdicts; sparse blocks keep the cost linear in judges. ``outcome_scores`` (Davidson's
    sandwich) holds one score row per (cell, outcome), its weight and its cell.
    """
    n_judges, dim = inv.shape[0], inv.shape[1]
    n_items, n_feat = data.n_items, data.n_features
    n_tie = t.shape[0] - (n_items + 1 + n_feat)  # 1 with Davidson's log ν_k, else 0
    # raw parameter order: ability[judge, item] row-major, order_effect[judge], then
    # feature_effect[judge, feature] row-major[, then log tie[judge]]
    raw_rows = np.concatenate([np.arange(n_judges)[:, None] * n_items + np.arange(n_items),
                               n_judges * n_items + np.arange(n_judges)[:, None],
                               n_judges * (n_items + 1) + np.arange(n_judges)[:, None] * n_feat
                               + np.arange(n_feat),
                               n_judges * (n_items + 1 + n_feat)
                               + np.arange(n_judges)[:, None] * np.ones(n_tie, np.int64)],
                              axis=1)
    r_idx = np.repeat(raw_rows[:, :, None], dim, axis=2)  # (judge, raw row, free column)
    c_idx = np.broadcast_to(np.arange(n_judges)[:, None, None] * dim + np.arange(dim),
                            r_idx.shape)
    chart = sp.csr_array((np.broadcast_to(t, r_idx.shape).ravel(),
                          (r_idx.ravel(), c_idx.ravel())),
                         shape=(n_judges * t.shape[0], n_judges * dim))
    offset = np.arange(n_judges)[:, None, None] * dim
    bread_inv = sp.csr_array((inv.ravel(), (np.broadcast_to(offset + np.arange(dim)[:, None],
                                                            inv.shape).ravel(),
                                            np.broadcast_to(offset + np.arange(dim),
                                                            inv.shape).ravel())),
                             shape=(n_judges * dim, n_judges * dim))
    if kind in ("expected", "observed"):
        free = bread_inv
    elif outcome_scores is not None:
        rows, weight, cell_of = outcome_scores
        cols = data.judge[cell_of, None] * dim + np.arange(dim)
        design = sp.csr_array((rows.ravel(), (np.repeat(np.arange(len(rows)), dim),
                                              cols.ravel())),
                              shape=(len(rows), n_judges * dim))
        meat = covariance.weighted_gram(design, weight)
        free = bread_inv @ (bread_inv @ meat).T
    else:
        # each cell's score row sits in its judge's block of columns
        cols = data.judge[:, None] * dim + np.arange(dim)
        if kind == "sandwich":
            # Σ_t (y_t - p)² within a cell from its sums of y and y² (ties make y² ≠ y)
            sq = data.wins_sq - 2 * p * data.wins + data.count * p**2
            design = sp.csr_array((x.ravel(), (np.repeat(np.arange(data.n_cells), dim),
                                               cols.ravel())),
                                  shape=(data.n_cells, n_judges * dim))
            meat = covariance.weighted_gram(design, sq)
        else:
            assert records is not None
            cell = records.cell
            r = records.wins - records.count * p[cell]
            scores = sp.csr_array(((x[cell] * r[:, None]).ravel(),
                                   (np.repeat(np.arange(len(cell)), dim), cols[cell].ravel())),
                                  shape=(len(cell), n_judges * dim))
            meat = covariance.cluster_meat(scores, records.code, correction=correction)
        free = bread_inv @ (bread_inv @ meat).T  # B⁻¹ M B⁻¹, B⁻¹ symmetric
    cov = chart @ (chart @ free).T
    cov = cov.toarray() if sp.issparse(cov) else np.asarray(cov)
    return np.asarray((cov + cov.T) / 2, dtype=np.float64)


def _estimate(
    data: Comparisons,
    params: dict[str, NDArray[np.float64]],
    cov: NDArray[np.float64],
    ll: float,
    penalty: PriorsLike | None,
    info: dict[str, Any],
) -> Estimate:
    judges = list(data.judges)
    arrays = {
        "ability": xr.DataArray(params["ability"], dims=("judge", "item"),
                                coords={"judge": judges, "item": list(data.items)}),
        "order_effect": xr.DataArray(params["order_effect"], dims="judge",
                                     coords={"judge": judges}),
    }
    if "feature_effect" in params:
        arrays["feature_effect"] = xr.DataArray(
            params["feature_effect"], dims=("judge", "feature"),
            coords={"judge": judges, "feature": list(data.feature_names)})
    if "tie" in params:
        arrays["tie"] = xr.DataArray(params["tie"], dims="judge", coords={"judge": judges})
    ds = xr.Dataset(arrays)
    terms = tuple(label for name, da in ds.data_vars.items()
                  for label in term_labels(str(name), da))
    n_k = np.bincount(data.judge, data.count, data.n_judges)
    return Estimate(
        method="mle" if penalty is None else "penalized-mle",
        params=ds,
        cov=cov,
        terms=terms,
        # ν > 0: its interval is formed on the log scale, where it cannot cross 0
        interval={name: "wald-log" if name == "tie" else "wald" for name in ds.data_vars},
        loglik=ll,
        converged=bool(info["converged"]),
        info={**info, "n_verdicts": float(data.n_rows), "humans": list(data.humans),
              "n_verdicts_per_judge": dict(zip(data.judges, n_k.tolist(), strict=True))},
    )


# ----------------------------------------------------------------------- Wald tests (DIAL App. B.3)
def _holm(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values."""
    m = len(p)
    order = np.argsort(p)
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def order_effect_tests(estimate: Estimate, *, pairwise: bool = True) -> pd.DataFrame:
    r"""Wald tests of DIAL App. B.3: :math:`H_0: b_k = 0` and :math:`H_0: b_k = b_{k'}`.

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


# -------------------------------------------------------------------- probabilities (DIAL App. B.2)
def order_probability(delta: ArrayLike, order_effect: ArrayLike, order: ArrayLike) -> NDArray:
    r"""Order-specific probability :math:`p^{(a)} = \sigma(\Delta + a b)` (model (1))."""
    return expit(np.asarray(delta) + np.asarray(order) * np.asarray(order_effect))


def debiased_probability(delta: ArrayLike) -> NDArray:
    r"""Position-debiased probability :math:`p^{deb} = \sigma(\Delta)` (DIAL Sec. 3.1).

    :math:`\Delta = s_{ki} - s_{kj}`, the judge's score difference with the order term removed.
    """
    return expit(np.asarray(delta))


def order_averaged_probability(delta: ArrayLike, order_effect: ArrayLike) -> NDArray:
    r"""Order-averaged probability :math:`p^{avg} = (p^{(+1)} + p^{(-1)})/2` (DIAL Sec. 3.1)."""
    d, b = np.asarray(delta), np.asarray(order_effect)
    return (expit(d + b) + expit(d - b)) / 2


def order_averaged_identity(delta: ArrayLike, order_effect: ArrayLike) -> NDArray:
    r"""DIAL identity (B.1): :math:`p^{avg} = \tfrac12 + \tfrac{u}{2}\,\frac{1-t^2}{1-u^2t^2}`.

    With :math:`u = \tanh(\Delta/2)` (so :math:`2p^{deb} - 1 = u`) and :math:`t = \tanh(b/2)`;
    the attenuation factor :math:`(1-t^2)/(1-u^2t^2) \le 1` shows :math:`p^{avg}` is pulled
    towards 1/2 relative to :math:`p^{deb}` whenever :math:`b \ne 0`.
    """
    u = np.tanh(np.asarray(delta) / 2)
    t = np.tanh(np.asarray(order_effect) / 2)
    return 0.5 + 0.5 * u * (1 - t**2) / (1 - u**2 * t**2)


def pairwise_probabilities(estimate: Estimate, prob: float | None = None, *,
                           ci_prob: float | None = None) -> pd.DataFrame:
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
    prob = resolve_prob(prob, ci_prob)  # ci_prob: ArviZ's name; default 0.95
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


# ------------------------------------------------------------------------- baseline (DIAL Sec. 6)
def pooled(
    data: Comparisons,
    *,
    information: Information = "auto",
    cluster: str | None = None,
    correction: str | None = None,
) -> Estimate:
    """DIAL's order-agnostic "Pooled" baseline: one BTL on all judges and both orders collapsed.

    The LLM-only part of DIAL's Pooled (before its human rescaling): the centred BTL MLE on
    :math:`n_{ij} = \\sum_{k,a} n^{(a)}_{kij}`. It is the unweighted judge-discrimination twin
    (:func:`bayescal.frequentist.judge_discrimination_btl.fit` with ``discrimination=False``,
    which takes ``information``, ``cluster`` and ``correction`` with the same meanings),
    returned under method ``"pooled-mle"``. Under unbalanced display orders it is biased for
    every judge's debiased scores (DIAL Sec. 6.1), which is what it is there to show.

    Returns
    -------
    Estimate
        ``ability[item]`` (sum zero).
    """
    from bayescal.frequentist import judge_discrimination_btl

    est = judge_discrimination_btl.fit(data, discrimination=False, information=information,
                                       cluster=cluster, correction=correction)
    return dataclasses.replace(est, method="pooled-mle")
