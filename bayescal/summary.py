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

from bayescal.schema import SAMPLE_DIMS, resolve_prob, term_labels

if TYPE_CHECKING:
    from bayescal.frequentist._core import Estimate

__all__ = ["summarize"]



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
        mean = da.mean(SAMPLE_DIMS).values.ravel()
        if n_samples > 1:
            q = da.quantile([0.5 - prob / 2, 0.5 + prob / 2], dim=SAMPLE_DIMS)
            lower = q.isel(quantile=0).values.ravel()
            upper = q.isel(quantile=1).values.ravel()
            se = da.std(SAMPLE_DIMS, ddof=1).values.ravel()
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
    result: xr.DataTree | Estimate, prob: float | None = None, *,
    ci_prob: float | None = None, var_names: Iterable[str] | None = None
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
    prob = resolve_prob(prob, ci_prob)
    if isinstance(result, xr.DataTree) and result.attrs.get("bayescal_view") == "estimate":
        # Estimate.to_datatree's view: the Estimate's own Wald table, not its pseudo-draws'
        from bayescal.frequentist._core import Estimate

        result = Estimate.from_dataset(result["bayescal_estimate"].to_dataset(),
                                       source="the Estimate view")
    elif isinstance(result, xr.DataTree):
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
