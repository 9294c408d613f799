r"""Curvature (sandwich) adjustment of posterior draws: a posterior whose spread is the twin's.

A generalised posterior :math:`\pi(\theta)\exp\{-n\,q(\theta)\}` (a power posterior, a
quasi-likelihood, a model with dependent data) concentrates around the minimiser
:math:`\hat\theta` of :math:`q` with covariance close to :math:`H^{-1}/n`, the inverse curvature
of :math:`q`. The sampling covariance of :math:`\hat\theta` is the sandwich
:math:`\Sigma_S = H^{-1} V H^{-1}/n`, with :math:`V` the variance of the score (the "meat").
The two agree only when :math:`V = H` (a correctly specified, untempered likelihood of
independent data); otherwise the credible intervals are not confidence intervals of
:math:`\hat\theta`'s target (Müller 2013, "Risk of Bayesian inference in misspecified models,
and the sandwich covariance matrix", Econometrica 81).

:func:`adjust_to_sandwich` maps the draws linearly (the open-faced adjustment of Ribatet,
Cooley and Davison 2012, "Bayesian inference from composite likelihoods, with an application
to spatial extremes", Statistica Sinica 22, applied to the draws as in Müller 2013):

.. math:: \tilde\theta = \bar\theta + A(\theta - \bar\theta),\qquad
          A = \Sigma_S^{1/2}\,\Sigma_P^{-1/2},

:math:`\bar\theta` and :math:`\Sigma_P` the draws' mean and covariance, symmetric square roots.
Then :math:`A\Sigma_P A^\top = \Sigma_S`: the adjusted draws keep the posterior's centre (its
prior shrinkage, its location) and take the twin's spread exactly. Both covariances may be
singular along the same linear constraints (sum-zero scores): the roots are taken on the
posterior's support, and a sandwich with variance outside it is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from bayescal.schema import term_labels

if TYPE_CHECKING:
    from bayescal.frequentist._core import Estimate

__all__ = ["adjust_to_sandwich"]

# relative size below which an eigenvalue is a linear constraint of the draws (sum-zero scores:
# about 1e-30 of the largest in double precision), not a direction with spread
_NULL_REL = 1e-10


def adjust_to_sandwich(posterior: xr.DataTree, estimate: Estimate, *,
                       var_names: Iterable[str] | None = None) -> xr.DataTree:
    r"""Posterior draws moved to the twin's covariance: :math:`\bar\theta + A(\theta-\bar\theta)`.

    :math:`A = \Sigma_S^{1/2}\Sigma_P^{-1/2}` with :math:`\Sigma_S` the Estimate's covariance of
    the adjusted quantities and :math:`\Sigma_P` the draws' covariance (Müller 2013; Ribatet,
    Cooley and Davison 2012; module docstring). The adjusted draws have mean
    :math:`\bar\theta` and covariance :math:`\Sigma_S` exactly (to float error).

    Parameters
    ----------
    posterior : xarray.DataTree
        NUTS draws from :func:`bayescal.fit` (or a cut posterior).
    estimate : Estimate
        The twin's fit of the same model and data at the same setting (for human calibration:
        the same λ and the covariance kind wanted, ``information="cluster"`` for DIAL's).
    var_names : iterable of str, optional
        Quantities to adjust, jointly. Default: every identified posterior variable (not
        ``*_free``, as :func:`bayescal.diagnose` checks) that the Estimate also reports.

    Returns
    -------
    xarray.DataTree
        The posterior with only the adjusted variables in ``posterior`` (the others were not
        adjusted and would not match them); ``log_likelihood`` and ``posterior_predictive``
        dropped (they belong to the raw draws); ``sample_stats`` kept (the sampler ran on the
        raw posterior). Attrs: ``bayescal_method`` (``"<method> (sandwich-adjusted)"``, the
        ``method`` column of :func:`bayescal.summarize`), ``bayescal_adjusted`` (``"sandwich"``),
        ``bayescal_adjusted_to`` (the Estimate's method, λ and what its covariance is) and
        ``bayescal_sd_ratio`` (JSON: the raw posterior sd over the Estimate's SE, per term).

    Raises
    ------
    ValueError
        A MAP result or an Estimate view (no draws); no quantity in common; a quantity whose
        Estimate interval is not on the parameter scale (``wald-logit``/``wald-log``); element
        labels (coordinates) that differ between the two; fewer draws than adjusted
        elements; an Estimate covariance that is not finite, symmetric and positive
        semi-definite, or that has variance along a direction in which every draw is the same
        (another model's or another constraint's covariance).
    """
    if posterior.attrs.get("bayescal_view") == "estimate":
        raise ValueError("adjust_to_sandwich needs posterior draws; this is "
                         "Estimate.to_datatree's Wald view")
    if posterior.attrs.get("bayescal_method") == "map":
        raise ValueError("adjust_to_sandwich needs posterior draws; a MAP result has one draw")
    if posterior.attrs.get("bayescal_adjusted"):
        raise ValueError("these draws are already sandwich-adjusted")
    post = posterior["posterior"].to_dataset()
    names = _names(post, estimate, var_names)
    index = {t: i for i, t in enumerate(estimate.terms)}
    columns, rows = [], []
    for name in names:
        kind = estimate.interval.get(name, "wald")
        if kind != "wald":
            raise ValueError(f"{name!r} has {kind!r} intervals in the Estimate: its covariance "
                             "is not on the scale of the draws; adjust parameter-scale "
                             "quantities only")
        mine = term_labels(name, post[name])
        theirs = term_labels(name, estimate.params[name])
        if mine != theirs:
            diff = next((f"{a!r} vs {b!r}" for a, b in zip(mine, theirs, strict=False)
                         if a != b), f"{len(mine)} elements vs {len(theirs)}")
            raise ValueError(f"{name!r}: the posterior's and the Estimate's elements differ "
                             f"({diff}); fit both to the same data and model")
        da = post[name].transpose("chain", "draw", ...)
        columns.append(da.values.reshape(da.sizes["chain"] * da.sizes["draw"], -1))
        rows += [index[t] for t in theirs]
    X = np.concatenate(columns, axis=1)
    n, p = X.shape
    if n <= p:
        raise ValueError(f"{n} draws cannot estimate the covariance of {p} elements; draw more "
                         "or adjust fewer var_names")
    sigma_s = _checked_covariance(np.asarray(estimate.cov, np.float64)[np.ix_(rows, rows)])
    centre = X.mean(axis=0)
    sigma_p = np.cov(X, rowvar=False, ddof=1).reshape(p, p)
    A = _transform(sigma_s, sigma_p)
    Y = centre + (X - centre) @ A.T
    se = np.sqrt(np.clip(np.diag(sigma_s), 0, None))
    sd = np.sqrt(np.diag(sigma_p))
    labels = [lab for name in names for lab in term_labels(name, post[name])]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = {lab: float(r) for lab, r in zip(labels, sd / se, strict=True)
                 if np.isfinite(r)}
    out_vars, start = {}, 0
    for name in names:
        da = post[name].transpose("chain", "draw", ...)
        size = int(np.prod(da.shape[2:], dtype=int))
        out_vars[name] = da.copy(data=Y[:, start:start + size].reshape(da.shape))
        start += size
    tree = posterior.copy()
    for group in ("log_likelihood", "posterior_predictive"):
        if group in tree.children:
            del tree[group]
    tree["posterior"] = xr.DataTree(xr.Dataset(out_vars, attrs=post.attrs))
    method = str(posterior.attrs.get("bayescal_method", "nuts"))
    lam = estimate.info.get("llm_weight")
    target = f"{estimate.method}" + (f" at λ = {lam:g}" if lam is not None else "")
    what = estimate.info.get("intervals") or estimate.info.get("information", "its covariance")
    tree.attrs = {**posterior.attrs, "bayescal_method": f"{method} (sandwich-adjusted)",
                  "bayescal_adjusted": "sandwich",
                  "bayescal_adjusted_to": f"{target}: {what}",
                  "bayescal_sd_ratio": json.dumps(ratio)}
    return tree


def _names(post: xr.Dataset, estimate: Estimate, var_names: Iterable[str] | None) -> list[str]:
    if var_names is None:
        names = [str(v) for v in post.data_vars if not str(v).endswith(("_free", "__"))
                 and str(v) in estimate.params.data_vars]
        if not names:
            raise ValueError(f"the posterior {sorted(map(str, post.data_vars))} and the Estimate "
                             f"{sorted(map(str, estimate.params.data_vars))} share no "
                             "identified quantity")
        return names
    names = list(dict.fromkeys(var_names))
    unidentified = [v for v in names if v.endswith("_free")]
    if unidentified:
        raise ValueError(f"{unidentified} are not identified (names ending in _free); adjust "
                         "identified quantities only")
    missing = [v for v in names if v not in post.data_vars or v not in estimate.params.data_vars]
    if missing:
        raise ValueError(f"var_names {missing} are not in both the posterior and the Estimate")
    return names


def _checked_covariance(cov: np.ndarray) -> np.ndarray:
    """The sandwich, refused unless finite, symmetric and positive semi-definite."""
    if not np.all(np.isfinite(cov)):
        raise ValueError("the Estimate's covariance has non-finite entries")
    scale = max(float(np.abs(cov).max()), 1e-300)
    if np.abs(cov - cov.T).max() > 1e-8 * scale:
        raise ValueError("the Estimate's covariance is not symmetric")
    cov = (cov + cov.T) / 2
    low = float(np.linalg.eigvalsh(cov).min())
    if low < -1e-8 * scale:
        raise ValueError(f"the Estimate's covariance is not positive semi-definite (eigenvalue "
                         f"{low:.3g}); no normal spread has it")
    return cov


def _transform(sigma_s: np.ndarray, sigma_p: np.ndarray) -> np.ndarray:
    """A = Σ_S^{1/2} Σ_P^{-1/2} on the draws' support (Σ_P's pseudo-inverse root)."""
    vals_p, vecs_p = np.linalg.eigh(sigma_p)
    support = vals_p > _NULL_REL * max(float(vals_p.max()), 1e-300)
    null = vecs_p[:, ~support]
    if null.size:
        # the draws do not move along these directions (linear constraints such as sum-zero
        # scores): the sandwich must not either, or A could not give it that variance
        leak = float(np.linalg.norm(null.T @ sigma_s @ null, 2))
        top = max(float(np.linalg.eigvalsh(sigma_s).max()), 1e-300)
        if leak > 1e-8 * top:
            raise ValueError(
                f"the Estimate's covariance has variance {leak:.3g} (largest {top:.3g}) along "
                f"{null.shape[1]} direction(s) in which every draw is the same: the two do not "
                "describe the same constrained parameters (another model, chart or data)")
    vals_s, vecs_s = np.linalg.eigh(sigma_s)
    root_s = (vecs_s * np.sqrt(np.clip(vals_s, 0, None))) @ vecs_s.T
    keep = vecs_p[:, support]
    inv_root_p = (keep / np.sqrt(vals_p[support])) @ keep.T
    return root_s @ inv_root_p
