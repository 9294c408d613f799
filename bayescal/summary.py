"""One tidy interval table for every method.

``summarize(result, prob)`` turns a posterior (NUTS), a mode (MAP) or a frequentist
:class:`~bayescal.frequentist.Estimate` into the same schema:

index ``term`` (ArviZ-style label such as ``ability[gpt-4]``), columns ``parameter``, ``method``,
``estimate``, ``se``, ``lower``, ``upper``, ``prob``, ``interval``.

Posterior intervals are equal-tailed quantiles computed here with xarray (never ArviZ defaults).
This module imports neither PyMC nor ArviZ, so the frequentist twins can use it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, logit
from scipy.stats import norm

if TYPE_CHECKING:
    from bayescal.frequentist._core import Estimate

__all__ = ["COLUMNS", "check_prob", "summarize", "term_labels", "wald_interval"]

COLUMNS = ["parameter", "method", "estimate", "se", "lower", "upper", "prob", "interval"]
_SAMPLE_DIMS = ("chain", "draw")


def term_labels(name: str, da: xr.DataArray) -> list[str]:
    """ArviZ-style labels (``name[a, b]``) for every element of ``da`` in C order."""
    dims = [d for d in da.dims if d not in _SAMPLE_DIMS]
    if not dims:
        return [name]
    values = [
        [str(v) for v in (da.coords[d].values if d in da.coords else range(da.sizes[d]))]
        for d in dims
    ]
    grids = np.meshgrid(*[np.arange(len(v)) for v in values], indexing="ij")
    flat = [g.ravel() for g in grids]
    return [
        f"{name}[{', '.join(values[a][flat[a][e]] for a in range(len(dims)))}]"
        for e in range(flat[0].size)
    ]


def wald_interval(
    estimate: ArrayLike, se: ArrayLike, prob: float, kind: str = "wald"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wald interval ``estimate ± z se`` on the natural, logit or log scale.

    ``se`` is always the standard error on the natural scale.

    * ``wald``: ``estimate ± z se``.
    * ``wald-logit`` (probabilities): the estimate is clamped to [1e-6, 1 - 1e-6] and the
      standard error is carried to the logit scale by the delta method, se / (θ(1 - θ))
      (seed 001, §2.3); an estimate of exactly 0 or 1 stays inside its interval.
    * ``wald-log`` (positive parameters such as a discrimination γ): ``exp(log θ ± z se/θ)``,
      with se(log θ) = se/θ by the delta method. The interval stays positive and always
      contains θ; a non-positive estimate is refused (it is not on this scale).
    """
    check_prob(prob)
    est = np.asarray(estimate, dtype=np.float64)
    s = np.asarray(se, dtype=np.float64)
    z = norm.ppf(0.5 + prob / 2)
    if kind == "wald":
        return est - z * s, est + z * s
    if kind == "wald-logit":
        t = np.clip(est, 1e-6, 1 - 1e-6)
        half = z * s / (t * (1 - t))
        lower, upper = expit(logit(t) - half), expit(logit(t) + half)
        # an estimate on the edge of [0, 1] (a Rogan-Gladen estimate clipped to 1) is moved by
        # the clamp; the interval is widened to keep it rather than exclude it by 1e-6
        inside = (est >= 0) & (est <= 1)
        return (np.where(inside, np.minimum(lower, est), lower),
                np.where(inside, np.maximum(upper, est), upper))
    if kind == "wald-log":
        if not np.all(est > 0):
            raise ValueError(
                f"a 'wald-log' interval needs a positive estimate, got {est[~(est > 0)].tolist()}"
            )
        half = z * s / est
        with np.errstate(over="ignore"):  # an se far above θ gives (0, inf): honest, not an error
            return est * np.exp(-half), est * np.exp(half)
    raise ValueError(f"unknown interval kind {kind!r}; use 'wald', 'wald-logit' or 'wald-log'")


def check_prob(prob: float) -> None:
    """Raise ValueError unless 0 < prob < 1 (an interval probability, not a percentage)."""
    if not 0 < prob < 1:
        raise ValueError(f"prob must lie strictly between 0 and 1, got {prob!r}")


def _posterior_table(
    result: xr.DataTree, prob: float, var_names: Iterable[str] | None
) -> pd.DataFrame:
    post = result["posterior"].to_dataset()
    method = str(result.attrs.get("bayescal_method", "nuts"))
    names = list(var_names) if var_names is not None else [
        v for v in post.data_vars if not str(v).endswith(("__", "_free"))
    ]
    n_samples = post.sizes.get("chain", 1) * post.sizes.get("draw", 1)
    frames = []
    for name in names:
        da = post[name]
        labels = term_labels(name, da)
        mean = da.mean(_SAMPLE_DIMS).values.ravel()
        if n_samples > 1:
            q = da.quantile([0.5 - prob / 2, 0.5 + prob / 2], dim=_SAMPLE_DIMS)
            lower = q.isel(quantile=0).values.ravel()
            upper = q.isel(quantile=1).values.ravel()
            se = da.std(_SAMPLE_DIMS, ddof=1).values.ravel()
            kind = "eti"
        else:
            lower = upper = se = np.full(mean.shape, np.nan)
            kind = "none"
        frames.append(
            pd.DataFrame(
                {
                    "term": labels,
                    "parameter": name,
                    "method": method,
                    "estimate": mean,
                    "se": se,
                    "lower": lower,
                    "upper": upper,
                    "prob": prob if kind != "none" else np.nan,
                    "interval": kind,
                }
            )
        )
    return pd.concat(frames).set_index("term")


def summarize(
    result: xr.DataTree | Estimate, prob: float = 0.95, *, var_names: Iterable[str] | None = None
) -> pd.DataFrame:
    """Tidy interval table for a posterior, a MAP mode or a frequentist Estimate.

    Parameters
    ----------
    result : xarray.DataTree or Estimate
        From :func:`bayescal.fit` (NUTS: equal-tailed posterior intervals; MAP: point only,
        ``interval = "none"``) or from a twin's ``fit`` (Wald intervals).
    prob : float
        Interval probability, e.g. 0.95. Always explicit; no library default is used.
    var_names : iterable of str, optional
        Variables to include (default: every posterior variable, or every Estimate parameter).

    Returns
    -------
    DataFrame
        Index ``term``; columns ``parameter, method, estimate, se, lower, upper, prob, interval``.
    """
    check_prob(prob)
    if isinstance(result, xr.DataTree):
        return _posterior_table(result, prob, var_names)
    summary: Any = getattr(result, "summary", None)
    if summary is None:
        raise TypeError(
            f"cannot summarize a {type(result).__name__}; pass a DataTree from bayescal.fit or "
            "an Estimate from a frequentist twin"
        )
    table: pd.DataFrame = summary(prob)
    if var_names is not None:
        table = table[table["parameter"].isin(list(var_names))]
    return table
