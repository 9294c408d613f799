"""Posterior and Wald intervals side by side.

``compare(post, mle, prob=0.95)`` gives one row per term and a block of columns per method,
plus, for every pair of methods with intervals, the width ratio and the overlap, and, when the
truth is known (simulations), whether each interval covers it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescal.schema import resolve_prob, term_labels
from bayescal.summary import summarize

__all__ = ["compare", "method_name", "named_results", "truth_series"]


def truth_series(truth: xr.Dataset | Mapping[str, float] | pd.Series) -> pd.Series:
    """True values by term label, from a Dataset (as returned by ``bayescal.simulate``) or a map."""
    if isinstance(truth, xr.Dataset):
        parts = {}
        for name, da in truth.data_vars.items():
            labels = term_labels(str(name), da)
            parts.update(zip(labels, np.asarray(da.values, dtype=float).ravel(), strict=True))
        return pd.Series(parts, dtype=float)
    return pd.Series(dict(truth), dtype=float)


def method_name(result: Any) -> str:
    """The method label of a fit: ``bayescal_method`` of a DataTree, ``method`` of an Estimate."""
    if isinstance(result, xr.DataTree):
        return str(result.attrs.get("bayescal_method", "nuts"))
    name = getattr(result, "method", None)
    if name is None:
        raise TypeError(f"not a bayescal result: {type(result).__name__}; pass a DataTree from "
                        "bayescal.fit or an Estimate from a frequentist twin")
    return str(name)


def named_results(results: tuple[Any, ...], named: Mapping[str, Any], *,
                  caller: str = "leaderboard") -> dict[str, Any]:
    """Fits by name, as :func:`bayescal.compare` names them (method, then ``_2``, ``_3``...)."""
    out: dict[str, Any] = {}
    for res in results:
        base = name = method_name(res)
        k = 2
        while name in out:
            name, k = f"{base}_{k}", k + 1
        out[name] = res
    for name, res in named.items():
        if name in out:
            raise ValueError(f"two fits are named {name!r}; pass distinct keyword names")
        method_name(res)
        out[name] = res
    if not out:
        raise ValueError(f"{caller} needs at least one fit")
    return out


def compare(
    *results: Any,
    prob: float | None = None,
    ci_prob: float | None = None,
    truth: xr.Dataset | Mapping[str, float] | pd.Series | None = None,
    reference: str | None = None,
    **named: Any,
) -> pd.DataFrame:
    """Compare intervals from several fits of the same quantities.

    Parameters
    ----------
    *results : DataTree or Estimate
        Fits named by their method (``nuts``, ``map``, ``mle``, ...).
    prob : float
        Interval probability, passed to every summary.
    truth : Dataset or mapping, optional
        True values (simulations); adds ``truth`` and ``covers_<method>`` columns. Coverage is
        a nullable boolean: missing (``pd.NA``) for a term without a true value or without an
        interval from that method.
    reference : str, optional
        The method every other interval is compared with (default: the last fit that has
        intervals, e.g. the MLE in ``compare(post, mle)``).
    **named : DataTree or Estimate
        Fits under a name of your choice, e.g. ``compare(weighted=mle, pooled=mle_u)``.

    Returns
    -------
    DataFrame
        Index ``term``; ``parameter``; per method ``<m>_estimate``, ``<m>_se``, ``<m>_lower``,
        ``<m>_upper``; per other interval method ``width_ratio_<m>/<reference>`` (width of m
        over width of the reference) and ``overlap_<m>/<reference>`` (length of the
        intersection over the shorter interval). Terms missing from a method are left empty
        for that method.
    """
    prob = resolve_prob(prob, ci_prob)
    tables = {name: summarize(res, prob)
              for name, res in named_results(results, named, caller="compare").items()}
    order = list(dict.fromkeys(t for table in tables.values() for t in table.index))
    out = pd.DataFrame(index=pd.Index(order, name="term"))
    parameter = pd.Series(index=out.index, dtype=object)
    for table in tables.values():
        parameter = parameter.fillna(table["parameter"].reindex(out.index))
    out["parameter"] = parameter
    with_intervals = []
    for name, table in tables.items():
        t = table.reindex(out.index)
        has_intervals = bool((table["interval"] != "none").any())
        # a point estimate (MAP) gets one column, not three empty ones
        for col in ("estimate", "se", "lower", "upper") if has_intervals else ("estimate",):
            out[f"{name}_{col}"] = t[col].astype(float)
        if has_intervals:
            with_intervals.append(name)
    if reference is not None and reference not in with_intervals:
        raise ValueError(f"reference {reference!r} is not a fit with intervals: {with_intervals}")
    b = reference if reference is not None else (with_intervals[-1] if with_intervals else None)
    for a in [m for m in with_intervals if m != b]:
        wa = out[f"{a}_upper"] - out[f"{a}_lower"]
        wb = out[f"{b}_upper"] - out[f"{b}_lower"]
        out[f"width_ratio_{a}/{b}"] = wa / wb
        inter = (np.minimum(out[f"{a}_upper"], out[f"{b}_upper"])
                 - np.maximum(out[f"{a}_lower"], out[f"{b}_lower"])).clip(lower=0)
        out[f"overlap_{a}/{b}"] = inter / np.minimum(wa, wb)
    if truth is not None:
        true = truth_series(truth).reindex(out.index)
        out["truth"] = true
        for name in with_intervals:
            lower, upper = out[f"{name}_lower"], out[f"{name}_upper"]
            # no truth or no interval for a term: coverage is unknown, not False
            known = true.notna() & lower.notna() & upper.notna()
            covers = pd.Series(pd.NA, index=out.index, dtype="boolean")
            covers[known] = (lower[known] <= true[known]) & (true[known] <= upper[known])
            out[f"covers_{name}"] = covers
    return out
