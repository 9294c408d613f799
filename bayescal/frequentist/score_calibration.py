r"""Monotone ordinal calibration map (the Bayesian counterpart of seed 003): the numpy twin.

The human score H of an item whose judge gave level j follows a cumulative-logit model
:math:`P(H \le k \mid J = j) = \sigma(c_k - \beta_j)` with ordered cutpoints
:math:`c_1 < \dots < c_{K-1}` and a non-decreasing judge-level effect
:math:`\beta_1 = 0,\ \beta_j = \sum_{l<j} e^{\delta_l}` (so a higher judge level never lowers
the calibrated distribution stochastically). The free chart, shared with the PyMC model, is
``cutpoint_first`` (:math:`c_1`), ``cutpoint_log_gap`` (:math:`\log(c_{k+1} - c_k)`) and
``log_increment`` (:math:`\delta_l`). The likelihood is multinomial over the K × K cell counts
(judge level, human level) of the anchors. Never imports PyMC.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import expit, gammaln

from bayescal.data import DataError, Ratings
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.schema import term_labels

__all__ = ["PriorsLike", "cell_counts", "fit", "loglik", "probabilities"]

_FREE = ("cutpoint_first", "cutpoint_log_gap", "log_increment")


def cell_counts(ratings: Ratings) -> NDArray[np.int64]:
    """K × K counts of (judge level, human level) over the human-rated items."""
    if ratings.scale[1] - ratings.scale[0] < 2:
        raise DataError("the ordinal calibration model needs a scale of at least 3 points; a "
                        "2-point scale is a binary-label problem (bayescal.frequentist.judge_mean)")
    rated = ratings.rated
    if not rated.any():
        raise DataError("no item has a human score: the calibration model needs anchors")
    k = ratings.scale[1] - ratings.scale[0] + 1
    j = ratings.judge[rated].astype(np.int64) - ratings.scale[0]
    h = ratings.human[rated].astype(np.int64) - ratings.scale[0]
    return np.bincount(j * k + h, minlength=k * k).reshape(k, k)


def _unpack(params: Mapping[str, ArrayLike]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cutpoints (K−1) and level effects (K) from the free chart."""
    first = float(np.asarray(params["cutpoint_first"]))
    gaps = np.exp(np.asarray(params["cutpoint_log_gap"], dtype=np.float64))
    cut = first + np.concatenate([[0.0], np.cumsum(gaps)])
    inc = np.exp(np.asarray(params["log_increment"], dtype=np.float64))
    return cut, np.concatenate([[0.0], np.cumsum(inc)])


def probabilities(params: Mapping[str, ArrayLike]) -> NDArray[np.float64]:
    """``P(H = k | J = j)``, shape (K, K): rows judge levels, columns human levels."""
    cut, effect = _unpack(params)
    cdf = expit(cut[None, :] - effect[:, None])
    k = len(effect)
    return np.diff(np.concatenate([np.zeros((k, 1)), cdf, np.ones((k, 1))], axis=1), axis=1)


def _loglik_counts(params: Mapping[str, ArrayLike], counts: NDArray[np.int64]) -> float:
    rows = counts.sum(axis=1) > 0
    c = counts[rows]
    p = probabilities(params)[rows]
    # floor at 1e-300: far from the optimum a cell probability can underflow to 0
    logp = np.where(c > 0, np.log(np.maximum(np.where(c > 0, p, 1.0), 1e-300)), 0.0)
    coef = gammaln(c.sum(axis=1) + 1) - gammaln(c + 1).sum(axis=1)
    return float(np.sum(coef) + np.sum(c * logp))


def loglik(params: Mapping[str, ArrayLike], ratings: Ratings) -> float:
    """Multinomial log-likelihood of the anchors' human scores given their judge levels."""
    return _loglik_counts(params, cell_counts(ratings))


class PriorsLike(Protocol):
    """Normal prior scales on the free chart (``models.score_calibration.Priors`` fits)."""

    cutpoint_sd: float | None
    gap_log_sd: float | None
    increment_log_mean: float
    increment_log_sd: float | None


def _log_prior(x: NDArray[np.float64], k: int, priors: PriorsLike) -> float:
    """Normal log-densities (up to constants) of the free chart; a None scale is flat."""
    out = 0.0
    for block, mean, sd in ((x[:1], 0.0, priors.cutpoint_sd),
                            (x[1: k - 1], 0.0, priors.gap_log_sd),
                            (x[k - 1:], priors.increment_log_mean, priors.increment_log_sd)):
        if sd is not None:
            out -= float(np.sum((block - mean) ** 2)) / (2 * sd * sd)
    return out


def _split(x: NDArray[np.float64], k: int) -> dict[str, NDArray[np.float64]]:
    return {"cutpoint_first": x[0], "cutpoint_log_gap": x[1: k - 1],
            "log_increment": x[k - 1:]}


def _derived(x: NDArray[np.float64], k: int, levels: NDArray[np.float64]) -> NDArray[np.float64]:
    """cutpoints, level effects and calibrated means stacked."""
    params = _split(x, k)
    cut, effect = _unpack(params)
    return np.concatenate([cut, effect, probabilities(params) @ levels])


def fit(ratings: Ratings, penalty: PriorsLike | None = None) -> Estimate:
    """Maximum-likelihood fit with Wald intervals (delta method from the free chart).

    Parameters
    ----------
    ratings : Ratings
    penalty : Priors, optional
        Add the Normal log-priors of ``models.score_calibration.Priors``: the optimum is then
        the Bayesian model's MAP (``penalized-mle``; tested equal), which exists on any anchor
        set, including small ones where levels are missing.

    Returns
    -------
    Estimate
        ``cutpoint[threshold]``, ``level_effect[judge_level]``, ``calibrated_mean[judge_level]``
        (:math:`\\sum_k v_k P(H = v_k | J = j)`), all with Wald intervals; ``info["free"]``
        holds the free-chart optimum.

    Raises
    ------
    MLEBoundaryError
        A judge or human level no anchor has (its effect or cutpoint is not identified), or an
        optimum on the boundary (two adjacent judge levels whose anchors are out of order get
        equal effects, an increment of 0). The Bayesian model (``models.score_calibration``)
        stays proper there through its priors.
    """
    counts = cell_counts(ratings)
    k = counts.shape[0]
    levels = np.arange(ratings.scale[0], ratings.scale[1] + 1).astype(np.float64)
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

    def nll(x: NDArray[np.float64]) -> float:
        prior = 0.0 if penalty is None else _log_prior(x, k, penalty)
        return -_loglik_counts(_split(x, k), counts) - prior

    res = minimize(nll, x0, method="BFGS", options={"gtol": 1e-8, "maxiter": 5000})
    res = minimize(nll, res.x, method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 20000})
    x = res.x
    if penalty is None and (x[1:] < -12).any():
        raise MLEBoundaryError(
            "the monotone MLE is on the boundary: a cutpoint gap or a judge-level increment "
            f"collapses to 0 (free optimum {np.round(x, 2).tolist()}); the anchors put adjacent "
            "judge levels out of order. Use the Bayesian model or isotonic regression."
        )
    hess = _hessian(nll, x)
    try:
        cov_free = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        raise MLEBoundaryError("the observed information is singular at the MLE") from None
    jac = _jacobian(lambda z: _derived(z, k, levels), x)
    cov = jac @ cov_free @ jac.T
    est = _derived(x, k, levels)
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
    # level_effect[1] is fixed at 0: its Wald interval is degenerate by construction
    return Estimate(method="mle" if penalty is None else "penalized-mle", params=ds, cov=cov,
                    terms=terms, interval={name: "wald" for name in ds.data_vars},
                    loglik=-float(res.fun), converged=bool(res.success),
                    info={"free": _split(x, k), "n_anchors": int(counts.sum())})


def _hessian(f: object, x: NDArray[np.float64], h: float = 1e-4) -> NDArray[np.float64]:
    """Central second differences (the function is smooth and cheap)."""
    n = len(x)
    out = np.empty((n, n))
    for a in range(n):
        for b in range(a, n):
            e_a, e_b = np.eye(n)[a] * h, np.eye(n)[b] * h
            val = (f(x + e_a + e_b) - f(x + e_a - e_b) - f(x - e_a + e_b)  # type: ignore[operator]
                   + f(x - e_a - e_b)) / (4 * h * h)  # type: ignore[operator]
            out[a, b] = out[b, a] = val
    return out


def _jacobian(g: object, x: NDArray[np.float64], h: float = 1e-6) -> NDArray[np.float64]:
    step = np.eye(len(x)) * h
    cols = [(g(x + step[i]) - g(x - step[i])) / (2 * h)  # type: ignore[operator]
            for i in range(len(x))]
    return np.column_stack(cols)
