r"""Monotone ordinal calibration map: the numpy twin of :mod:`bayescal.models.score_calibration`.

The Bayesian counterpart of streaming quantile matching (Subasic, Rabinovich and Chen 2026,
arXiv:2611.00447): a model of the human score given the judge's level, from the anchors (items
scored by both). The human score H of an item whose judge gave level j follows a
cumulative-logit model :math:`P(H \le k \mid J = j) = \sigma(c_k - \beta_j)` with ordered
cutpoints :math:`c_1 < \dots < c_{K-1}` and a non-decreasing judge-level effect
:math:`\beta_1 = 0,\ \beta_j = \sum_{l<j} e^{\delta_l}` (so a higher judge level never lowers
the calibrated distribution stochastically). The free chart x, shared with the PyMC model, is
``cutpoint_first`` (:math:`c_1`), ``cutpoint_log_gap`` (:math:`g_k = \log(c_{k+1} - c_k)`) and
``log_increment`` (:math:`\delta_l`). The likelihood is multinomial over the K × K cell counts
:math:`n_{jh}` (judge level, human level) of the anchors
(:meth:`bayescal.data.Ratings.rating_counts`).

Derivatives are analytic: with :math:`F_{jk} = \sigma(\eta_{jk})`,
:math:`\eta_{jk} = c_k - \beta_j`, :math:`\partial F = F(1-F)\,\partial\eta` and
:math:`\partial^2 F = F(1-F)(1-2F)\,\partial\eta\,\partial\eta^\top + F(1-F)\,\partial^2\eta`,
where :math:`\partial^2\eta` is diagonal (each :math:`c_k`, :math:`\beta_j` is a sum of
exponentials of single coordinates); the cell probabilities are
:math:`p_{jh} = F_{jh} - F_{j,h-1}`.

Covariance of x (``information=``, resolved by :func:`bayescal.frequentist.covariance.request`
before fitting; the reported parameters get theirs by the delta method):

``expected``
    :math:`I^{-1}`, :math:`I = \sum_j n_j \sum_h \partial p_{jh}\,\partial p_{jh}^\top / p_{jh}`
    (the multinomial Fisher information given each judge level's anchor count :math:`n_j`).
    The default: ``information="auto"`` resolves to it.
``observed``
    Minus the Hessian of the log-likelihood,
    :math:`-\sum_{jh} n_{jh}(\partial^2 p_{jh}/p_{jh} - \partial p_{jh}\,\partial p_{jh}^\top
    / p_{jh}^2)`: statsmodels' ``OrderedModel`` reports this one.
``sandwich``
    :math:`H^{-1} J H^{-1}` with the observed bread H and the per-anchor meat
    :math:`J = \sum_{jh} n_{jh} s_{jh} s_{jh}^\top`, :math:`s_{jh} = \partial\log p_{jh}`
    (HC0): valid when the cumulative-logit form is wrong.
``cluster``
    Not offered: a :class:`~bayescal.data.Ratings` anchor is one unit and the cell counts keep
    no cluster key, so :func:`~bayescal.frequentist.covariance.request` refuses it.

With a ``penalty`` the bread includes the prior's curvature. Never imports PyMC.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import expit, gammaln, logsumexp

from bayescal.data import Ratings
from bayescal.frequentist import covariance
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.priors import check_prior_sd
from bayescal.schema import term_labels

__all__ = ["INFORMATION", "PriorsLike", "anchor_information", "fit", "loglik",
           "posterior_predictive", "probabilities"]

#: The covariance kinds :func:`fit` offers (``"auto"`` resolves to ``"expected"``).
INFORMATION = ("expected", "observed", "sandwich")

_FREE = ("cutpoint_first", "cutpoint_log_gap", "log_increment")
# A free coordinate below this (a cutpoint gap or level increment under ~6e-6) is on the
# boundary: adjacent levels whose anchors are out of order.
_LOG_FLOOR = -12.0
# The smallest number of scale points of an ordinal model (2 points is a binary problem).
_MIN_POINTS = 3


def _unpack(params: Mapping[str, ArrayLike]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cutpoints (K−1) and level effects (K) from the free chart."""
    first = float(np.asarray(params["cutpoint_first"]))
    gaps = np.exp(np.asarray(params["cutpoint_log_gap"], dtype=np.float64))
    cut = first + np.concatenate([[0.0], np.cumsum(gaps)])
    inc = np.exp(np.asarray(params["log_increment"], dtype=np.float64))
    return cut, np.concatenate([[0.0], np.cumsum(inc)])


def probabilities(params: Mapping[str, ArrayLike]) -> NDArray[np.float64]:
    """``P(H = h | J = j)``, shape (K, K): rows judge levels, columns human levels."""
    x = np.concatenate([np.ravel(np.asarray(params[name], dtype=np.float64)) for name in _FREE])
    return _probabilities_batch(x[None, :], np.size(params["log_increment"]) + 1)[0]


def _probabilities_batch(x: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """``P(H = h | J = j)`` for S points of the free chart (S, 2K − 2): shape (S, K, K)."""
    s = len(x)
    cut = x[:, :1] + np.concatenate([np.zeros((s, 1)), np.cumsum(np.exp(x[:, 1: k - 1]), 1)], 1)
    effect = np.concatenate([np.zeros((s, 1)), np.cumsum(np.exp(x[:, k - 1:]), 1)], 1)
    cdf = expit(cut[:, None, :] - effect[:, :, None])
    pad = np.zeros((s, k, 1))
    return np.diff(np.concatenate([pad, cdf, pad + 1], axis=2), axis=2)


def _split(x: NDArray[np.float64], k: int) -> dict[str, NDArray[np.float64]]:
    return {"cutpoint_first": x[0], "cutpoint_log_gap": x[1: k - 1],
            "log_increment": x[k - 1:]}


def _vector(params: Mapping[str, ArrayLike], k: int) -> NDArray[np.float64]:
    x = np.concatenate([np.ravel(np.asarray(params[name], dtype=np.float64)) for name in _FREE])
    if x.shape != (2 * k - 2,):
        raise ValueError(f"params need cutpoint_first (1), cutpoint_log_gap ({k - 2}) and "
                         f"log_increment ({k - 1}) for a {k}-point scale; got {x.size} values")
    return x


@dataclass(frozen=True)
class _Cells:
    """Cell probabilities and their first and second derivatives in the free chart x."""

    p: NDArray[np.float64]  # (K, K)
    dp: NDArray[np.float64]  # (K, K, d)
    d2p: NDArray[np.float64]  # (K, K, d, d)
    dcut: NDArray[np.float64]  # (K - 1, d): ∂c_k/∂x
    deffect: NDArray[np.float64]  # (K, d): ∂β_j/∂x


def _cells(x: NDArray[np.float64], k: int) -> _Cells:
    d = len(x)
    gaps, incs = np.exp(x[1: k - 1]), np.exp(x[k - 1:])
    # c_k = c_1 + Σ_{l<k} e^{g_l}; β_j = Σ_{l<j} e^{δ_l}: lower-triangular sums of exponentials
    lower_c = np.tril(np.ones((k - 1, k - 2)), -1)
    lower_b = np.tril(np.ones((k, k - 1)), -1)
    dcut = np.zeros((k - 1, d))
    dcut[:, 0] = 1.0
    dcut[:, 1: k - 1] = lower_c * gaps
    deffect = np.zeros((k, d))
    deffect[:, k - 1:] = lower_b * incs
    cut = x[0] + np.concatenate([[0.0], np.cumsum(gaps)])
    effect = np.concatenate([[0.0], np.cumsum(incs)])
    eta = cut[None, :] - effect[:, None]  # (K, K - 1)
    deta = dcut[None, :, :] - deffect[:, None, :]  # (K, K - 1, d)
    # the second derivatives of c_k and β_j are diagonal and equal to the first (e^{g} terms)
    d2eta_diag = deta.copy()
    d2eta_diag[:, :, 0] = 0.0
    f = expit(eta)
    f1, f2 = f * (1 - f), f * (1 - f) * (1 - 2 * f)
    dF = f1[..., None] * deta
    d2F = f2[..., None, None] * deta[..., :, None] * deta[..., None, :]
    idx = np.arange(d)
    d2F[..., idx, idx] += f1[..., None] * d2eta_diag
    pad = np.zeros((k, 1))
    F = np.concatenate([pad, f, pad + 1], axis=1)
    dFp = np.concatenate([np.zeros((k, 1, d)), dF, np.zeros((k, 1, d))], axis=1)
    d2Fp = np.concatenate([np.zeros((k, 1, d, d)), d2F, np.zeros((k, 1, d, d))], axis=1)
    return _Cells(np.diff(F, axis=1), np.diff(dFp, axis=1), np.diff(d2Fp, axis=1), dcut,
                  deffect)


def _loglik_counts(x: NDArray[np.float64], counts: NDArray[np.int64]) -> float:
    k = counts.shape[0]
    p = probabilities(_split(x, k))
    # floor at 1e-300: far from the optimum a cell probability can underflow to 0
    logp = np.where(counts > 0, np.log(np.maximum(np.where(counts > 0, p, 1.0), 1e-300)), 0.0)
    coef = gammaln(counts.sum(axis=1) + 1) - gammaln(counts + 1).sum(axis=1)
    return float(np.sum(coef) + np.sum(counts * logp))


def loglik(params: Mapping[str, ArrayLike], data: Ratings) -> float:
    r"""Multinomial log-likelihood of the anchors' human scores given their judge levels.

    Parameters
    ----------
    params : mapping
        The free chart: ``cutpoint_first``, ``cutpoint_log_gap`` (K − 2), ``log_increment``
        (K − 1).
    data : Ratings
        Anchors (items without a human score are ignored).

    Returns
    -------
    float
        :math:`\sum_j [\log n_j! - \sum_h \log n_{jh}! + \sum_h n_{jh}\log p_{jh}]`, with the
        multinomial coefficients (as ``pm.Multinomial``).
    """
    counts = data.rating_counts(min_points=_MIN_POINTS)
    return _loglik_counts(_vector(params, counts.shape[0]), counts)


class PriorsLike(Protocol):
    """Normal prior scales on the free chart (``models.score_calibration.Priors`` fits)."""

    cutpoint_sd: float | None
    gap_log_sd: float | None
    increment_log_mean: float
    increment_log_sd: float | None


def _prior_terms(
    x: NDArray[np.float64], k: int, priors: PriorsLike | None
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Normal log-densities (up to constants) of the free chart, their gradient and (diagonal)
    Hessian; a None scale is flat."""
    value, grad, hess = 0.0, np.zeros_like(x), np.zeros_like(x)
    if priors is None:
        return value, grad, hess
    for block, mean, sd in ((slice(0, 1), 0.0, priors.cutpoint_sd),
                            (slice(1, k - 1), 0.0, priors.gap_log_sd),
                            (slice(k - 1, None), priors.increment_log_mean,
                             priors.increment_log_sd)):
        if sd is not None:
            z = x[block] - mean
            value -= float(np.sum(z**2)) / (2 * sd * sd)
            grad[block] = -z / (sd * sd)
            hess[block] = -1.0 / (sd * sd)
    return value, grad, hess


def _score_terms(
    cells: _Cells, counts: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-cell scores s = ∂ log p (cells with anchors), their counts, and the gradient."""
    seen = counts > 0
    scores = cells.dp[seen] / cells.p[seen][:, None]
    n = counts[seen].astype(np.float64)
    return scores, n, n @ scores


def _observed(cells: _Cells, counts: NDArray[np.int64]) -> NDArray[np.float64]:
    seen = counts > 0
    n, p = counts[seen].astype(np.float64), cells.p[seen]
    dp, d2p = cells.dp[seen], cells.d2p[seen]
    hess = np.einsum("c,cab->ab", n / p, d2p) - np.einsum("c,ca,cb->ab", n / p**2, dp, dp)
    return np.asarray(-hess, dtype=np.float64)


def _expected(cells: _Cells, counts: NDArray[np.int64]) -> NDArray[np.float64]:
    rows = counts.sum(axis=1).astype(np.float64)
    inside = cells.p > 0
    weight = np.where(inside, rows[:, None] / np.where(inside, cells.p, 1.0), 0.0)
    return np.asarray(np.einsum("jh,jha,jhb->ab", weight, cells.dp, cells.dp), dtype=np.float64)


def anchor_information(
    estimate: Estimate,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Expected information of one more anchor at each judge level, and the means' Jacobian.

    At the estimate's free-chart point x, an anchor whose judge gave level j adds
    :math:`I_j = \sum_h \partial p_{jh}\,\partial p_{jh}^\top / p_{jh}` (the multinomial
    Fisher information of one human score given J = j); ``expected`` information of an anchor
    set is :math:`\sum_j n_j I_j`. The calibrated mean at level j is
    :math:`m_j = \sum_h v_h p_{jh}`, with gradient :math:`\partial m_j = \sum_h v_h
    \partial p_{jh}`.

    Parameters
    ----------
    estimate : Estimate
        A :func:`fit` result (its ``info["free"]`` holds x).

    Returns
    -------
    (ndarray (K, d, d), ndarray (K, d))
        :math:`I_j` per judge level and :math:`\partial m_j` per judge level, in the free chart.
    """
    free = estimate.info.get("free")
    if free is None or "calibrated_mean" not in estimate.params:
        raise ValueError("anchor_information needs a score-calibration fit (its info['free'])")
    k = estimate.params.sizes["judge_level"]
    x = _vector(free, k)
    cells = _cells(x, k)
    levels = np.asarray([float(v) for v in estimate.params["judge_level"].values])
    inside = cells.p > 0
    weight = np.where(inside, 1.0 / np.where(inside, cells.p, 1.0), 0.0)
    per_level = np.einsum("jh,jha,jhb->jab", weight, cells.dp, cells.dp)
    return per_level, np.einsum("jha,h->ja", cells.dp, levels)


def fit(
    data: Ratings,
    *,
    information: covariance.Information = "auto",
    cluster: str | None = None,
    correction: str | None = None,
    penalty: PriorsLike | None = None,
) -> Estimate:
    r"""Maximum-likelihood fit with Wald intervals (delta method from the free chart).

    Parameters
    ----------
    data : Ratings
        Anchors (judge point score and human score); items without a human score are ignored.
    information : {"auto", "expected", "observed", "sandwich"}
        Covariance kind of the free chart (module docstring); ``"auto"`` (default) resolves to
        ``"expected"``. ``"cluster"`` is refused: anchors carry no cluster key.
    cluster, correction : None
        Only for ``information="cluster"``, which this model does not offer; naming either is
        an error, never ignored.
    penalty : Priors, optional
        Add the Normal log-priors of ``models.score_calibration.Priors``: the optimum is then
        the Bayesian model's MAP (``penalized-mle``; tested equal), which exists on any anchor
        set, including small ones where levels are missing. The bread includes the prior's
        curvature.

    Returns
    -------
    Estimate
        ``cutpoint[threshold]``, ``level_effect[judge_level]``, ``calibrated_mean[judge_level]``
        (:math:`\sum_h v_h P(H = v_h | J = j)`), all with Wald intervals; ``info["free"]``
        holds the free-chart optimum; ``converged`` is the trust-region optimizer's verdict.

    Raises
    ------
    ValueError
        An unknown or unavailable ``information``, or ``cluster``/``correction`` given.
    DataError
        A scale of fewer than 3 points, or no anchor.
    MLEBoundaryError
        A judge or human level no anchor has (its effect or cutpoint is not identified), or an
        optimum on the boundary (two adjacent judge levels whose anchors are out of order get
        equal effects, an increment of 0). The Bayesian model (``models.score_calibration``)
        stays proper there through its priors.
    """
    req = covariance.request(information, cluster=cluster, correction=correction,
                             supported=INFORMATION, model="the score-calibration model")
    if penalty is not None:
        for name in ("cutpoint_sd", "gap_log_sd", "increment_log_sd"):
            check_prior_sd(f"penalty.{name}", getattr(penalty, name))
    counts = data.rating_counts(min_points=_MIN_POINTS)
    k = counts.shape[0]
    levels = data.levels.astype(np.float64)
    for axis, who in ((1, "judge"), (0, "human")) if penalty is None else ():
        missing = levels[counts.sum(axis=axis) == 0]
        if len(missing):
            raise MLEBoundaryError(
                f"no anchor has {who} level(s) {missing.astype(int).tolist()}: their "
                f"{'level effects' if who == 'judge' else 'cutpoints'} are not identified, so "
                "the MLE does not exist; use the Bayesian model (its priors make it proper) or "
                "more anchors"
            )
    rows = counts.sum(axis=1) > 0
    emp = (counts[rows] @ levels) / counts[rows].sum(axis=1)
    slope = max(np.polyfit(levels[rows], emp, 1)[0], 0.1) if rows.sum() > 1 else 1.0
    x0 = np.concatenate([[-1.5], np.zeros(k - 2), np.full(k - 1, np.log(slope))])
    n_anchors = int(counts.sum())

    # the objective per anchor, so that the optimizer's tolerances do not scale with n
    def nll(x: NDArray[np.float64]) -> float:
        return -(_loglik_counts(x, counts) + _prior_terms(x, k, penalty)[0]) / n_anchors

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        g = _score_terms(_cells(x, k), counts)[2] + _prior_terms(x, k, penalty)[1]
        return -g / n_anchors

    def hess(x: NDArray[np.float64]) -> NDArray[np.float64]:
        h = _observed(_cells(x, k), counts) - np.diag(_prior_terms(x, k, penalty)[2])
        return h / n_anchors

    # gtol is per anchor: below ~1e-10 the trust region's model can no longer predict an
    # improvement in double precision, and 1e-9 moves x by ~1e-8
    boundary = ("the monotone MLE is on the boundary: a cutpoint gap or a judge-level "
                "increment collapses to 0 (free optimum {}); the anchors put adjacent judge "
                "levels out of order. Use the Bayesian model or isotonic regression.")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        try:
            res = minimize(nll, x0, jac=grad, hess=hess, method="trust-exact",
                           options={"gtol": 1e-9, "maxiter": 1000})
        except ValueError as err:  # a step towards the boundary made a cell probability 0
            if penalty is not None or "infs or NaNs" not in str(err):
                raise
            raise MLEBoundaryError(
                boundary.format("not finite: the optimizer ran off it")) from None
    x = res.x
    if penalty is None and (x[1:] < _LOG_FLOOR).any():
        raise MLEBoundaryError(boundary.format(np.round(x, 2).tolist()))
    cells = _cells(x, k)
    prior_curvature = -np.diag(_prior_terms(x, k, penalty)[2])
    observed = _observed(cells, counts) + prior_curvature
    try:
        if req.kind == "expected":
            cov_free = np.linalg.inv(_expected(cells, counts) + prior_curvature)
        elif req.kind == "observed":
            cov_free = np.linalg.inv(observed)
        else:
            scores, n, _ = _score_terms(cells, counts)
            cov_free = covariance.sandwich(observed, covariance.weighted_gram(scores, n))
    except np.linalg.LinAlgError:
        raise MLEBoundaryError(f"the {req.kind} information is singular at the MLE") from None
    cov_free = (cov_free + cov_free.T) / 2
    # delta method: cutpoints, level effects and calibrated means are functions of x
    jac = np.vstack([cells.dcut, cells.deffect, np.einsum("jha,h->ja", cells.dp, levels)])
    cov = jac @ cov_free @ jac.T
    cut, effect = _unpack(_split(x, k))
    est = np.concatenate([cut, effect, cells.p @ levels])
    thr = [f"{int(a)}|{int(a) + 1}" for a in levels[:-1]]
    lv = [str(int(v)) for v in levels]
    ds = xr.Dataset({
        "cutpoint": xr.DataArray(est[: k - 1], dims="threshold", coords={"threshold": thr}),
        "level_effect": xr.DataArray(est[k - 1: 2 * k - 1], dims="judge_level",
                                     coords={"judge_level": lv}),
        "calibrated_mean": xr.DataArray(est[2 * k - 1:], dims="judge_level",
                                        coords={"judge_level": lv}),
    })
    terms = tuple(t for name, da in ds.data_vars.items() for t in term_labels(str(name), da))
    # level_effect[lowest] is fixed at 0: its Wald interval is degenerate by construction
    return Estimate(method="mle" if penalty is None else "penalized-mle", params=ds, cov=cov,
                    terms=terms, interval={name: "wald" for name in ds.data_vars},
                    loglik=_loglik_counts(x, counts), converged=bool(res.success),
                    info={**req.as_info(),
                          "free": {name: np.asarray(v).tolist() for name, v in
                                   _split(x, k).items()},
                          "n_anchors": n_anchors, "optimizer": "trust-exact",
                          "optimizer_message": str(res.message), "iterations": int(res.nit)})



def _log_prior_batch(x: NDArray[np.float64], k: int, priors: PriorsLike) -> NDArray[np.float64]:
    """The Normal log-priors of :func:`_prior_terms` (same constants dropped) at S points."""
    value = np.zeros(len(x))
    for block, mean, sd in ((slice(0, 1), 0.0, priors.cutpoint_sd),
                            (slice(1, k - 1), 0.0, priors.gap_log_sd),
                            (slice(k - 1, None), priors.increment_log_mean,
                             priors.increment_log_sd)):
        if sd is not None:
            value -= np.sum((x[:, block] - mean) ** 2, axis=1) / (2 * sd * sd)
    return value


#: Below this effective sample size the importance-sampled predictive warns: a probability's
#: posterior sd is at most 0.5, so at 100 its Monte Carlo standard error is at most 0.05.
_MIN_ESS = 100
_T_DF = 5  # the proposal's degrees of freedom: tails heavier than the Laplace approximation's


def posterior_predictive(
    data: Ratings, *, priors: PriorsLike, draws: int = 4000, random_seed: int | None = None
) -> tuple[NDArray[np.float64], float]:
    r"""Posterior predictive calibrated distribution, :math:`E[P(H = h \mid J = j) \mid y]`.

    The plug-in :func:`probabilities` at the MAP ignores the uncertainty of the cutpoints and
    level effects, and its central sets are too narrow on few anchors (the card's coverage
    table). This integrates it out: self-normalised importance sampling of the posterior of
    ``models.score_calibration`` (likelihood × ``priors``) from a multivariate t (5 df) at the
    penalized optimum with the inverse curvature as scale, adapted once to the weighted
    draws' mean and covariance. It is the PyMC model's posterior mean of
    ``calibrated_probability`` computed without a sampler (tested against NUTS).

    Parameters
    ----------
    data : Ratings
        Anchors.
    priors : Priors
        The model's priors (``models.score_calibration.Priors()``); a flat block is refused,
        since the posterior may then be improper.
    draws : int
        Proposal draws per stage (default 4000).
    random_seed : int, optional

    Returns
    -------
    pmf : array (K, K)
        Rows judge levels, columns human levels; rows sum to 1.
    ess : float
        Kish's effective sample size of the final weights.

    Warns
    -----
    UserWarning
        When the effective sample size is below 100: the predictive is noisy; use the PyMC
        model's NUTS posterior (``calibration_table`` / ``predictive_sets``) instead.
    """
    for name in ("cutpoint_sd", "gap_log_sd", "increment_log_sd"):
        if getattr(priors, name) is None:
            raise ValueError(f"priors.{name} is None (flat): the posterior may be improper; "
                             "posterior_predictive needs proper priors")
    if isinstance(draws, bool) or int(draws) != draws or draws < 100:
        raise ValueError(f"draws must be an integer of at least 100, got {draws!r}")
    counts = data.rating_counts(min_points=_MIN_POINTS)
    k = counts.shape[0]
    est = fit(data, information="observed", penalty=priors)
    x = _vector(est.info["free"], k)
    cells = _cells(x, k)
    scale = np.linalg.inv(_observed(cells, counts) - np.diag(_prior_terms(x, k, priors)[2]))
    rng = np.random.default_rng(random_seed)
    from scipy.stats import multivariate_t  # scipy.stats costs ~1 s to import: not at load

    for stage in range(2):
        proposal = multivariate_t(x, (scale + scale.T) / 2, df=_T_DF, seed=rng)
        sample = proposal.rvs(int(draws))
        p = _probabilities_batch(sample, k)
        logpost = np.sum(counts[None] * np.log(np.maximum(p, 1e-300)), axis=(1, 2))
        logw = logpost + _log_prior_batch(sample, k, priors) - proposal.logpdf(sample)
        w = np.exp(logw - logsumexp(logw))
        if stage == 0:
            # moment-match the proposal to the weighted draws (a t's scale is cov·(ν−2)/ν)
            x = w @ sample
            centred = sample - x
            scale = (centred.T * w) @ centred * (_T_DF - 2) / _T_DF
    ess = float(1.0 / np.sum(w**2))
    if ess < _MIN_ESS:
        warnings.warn(f"posterior_predictive: importance-sampling effective sample size "
                      f"{ess:.0f} of {int(draws)} draws (< {_MIN_ESS}): the predictive is noisy; "
                      "use more draws or the PyMC model's NUTS posterior "
                      "(models.score_calibration.predictive_sets)", UserWarning, stacklevel=2)
    return np.einsum("s,sjh->jh", w, p), ess
