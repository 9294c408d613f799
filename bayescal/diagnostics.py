"""Sampler diagnostics on identified quantities: R-hat, ESS, divergences, E-BFMI.

Thresholds follow ArviZ 1's ``diagnose``: rank-normalised split R-hat ≤ 1.01, bulk and tail
ESS ≥ 100 per chain, no divergent transitions, E-BFMI ≥ 0.3 in every chain.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["DiagnosticWarning", "diagnose"]

RHAT_MAX = 1.01
ESS_PER_CHAIN = 100
EBFMI_MIN = 0.3


class DiagnosticWarning(UserWarning):
    """A sampler diagnostic failed: the posterior summaries may not be trustworthy."""


def _extreme(values: np.ndarray, reduce: Callable[[np.ndarray], float]) -> float:
    """Max/min over the finite entries; NaN (a failed check) when none is finite (one chain)."""
    finite = values[np.isfinite(values)]
    return float(reduce(finite)) if finite.size else float("nan")


def diagnose(
    result: xr.DataTree,
    *,
    var_names: Iterable[str] | None = None,
    rhat_max: float = RHAT_MAX,
    ess_min: float | None = None,
    warn: bool = True,
) -> pd.DataFrame:
    """Check a NUTS posterior and say, per variable, whether it passes.

    Parameters
    ----------
    result : xarray.DataTree
        From :func:`bayescal.fit` with ``method="nuts"``.
    var_names : iterable of str, optional
        Variables to check (default: every posterior variable except those named ``*_free``,
        which bayescal models use for unidentified coordinates such as rotation-dependent
        factors; the rest are the model's identified quantities, listed as
        ``bayescal.registry.get(stem).identified`` and pinned equal by the contract test).
    rhat_max : float
        Largest acceptable R-hat.
    ess_min : float, optional
        Smallest acceptable bulk and tail ESS (default 100 per chain).
    warn : bool
        Issue a :class:`DiagnosticWarning` naming every failed check.

    Returns
    -------
    DataFrame
        Index (``parameter``, ``check``); columns ``value``, ``threshold``, ``ok``. Checks:
        ``r_hat_max``, ``ess_bulk_min``, ``ess_tail_min`` per variable; ``divergences`` and
        ``ebfmi_min`` for the sampler.

    Raises
    ------
    ValueError
        For a MAP result (one draw has nothing to diagnose), or a name in ``var_names`` that
        is not a posterior variable.
    """
    if result.attrs.get("bayescal_view") == "estimate":
        raise ValueError("diagnose needs NUTS draws; this is Estimate.to_datatree's view of a "
                         "Wald estimate, whose pseudo-draws have no R-hat or ESS to check")
    post = result["posterior"].to_dataset()
    n_chains, n_draws = post.sizes.get("chain", 1), post.sizes.get("draw", 1)
    if n_draws < 4 or result.attrs.get("bayescal_method") == "map":
        raise ValueError("diagnose needs NUTS draws; a MAP result has a single draw")
    names = list(var_names) if var_names is not None else [
        str(v) for v in post.data_vars if not str(v).endswith("_free")]
    missing = [n for n in names if n not in post.data_vars]
    if missing:
        raise ValueError(f"var_names {missing} are not posterior variables; the posterior has "
                         f"{sorted(map(str, post.data_vars))}")
    post = post[names]
    threshold_ess = ess_min if ess_min is not None else ESS_PER_CHAIN * n_chains
    # arviz_stats, not the arviz metapackage: the latter also imports arviz_plots and
    # matplotlib, seconds that a MAP fit or a --help should not pay
    import arviz_stats as azs

    # entries fixed by construction (the zero first level effect of an ordinal model) have zero
    # variance: their R-hat and ESS are 0/0, skipped by _extreme; a variable with no finite
    # entry still fails below
    with np.errstate(invalid="ignore", divide="ignore"):
        rhat = azs.rhat(post)
        bulk = azs.ess(post, method="bulk")
        tail = azs.ess(post, method="tail")
    rows = []
    for name in names:
        rows.append((name, "r_hat_max", _extreme(rhat[name].values, np.max), rhat_max, "max"))
        rows.append((name, "ess_bulk_min", _extreme(bulk[name].values, np.min), threshold_ess,
                     "min"))
        rows.append((name, "ess_tail_min", _extreme(tail[name].values, np.min), threshold_ess,
                     "min"))
    if "sample_stats" in result.children:
        stats = result["sample_stats"].to_dataset()
        if "diverging" in stats:
            rows.append(("sampler", "divergences", float(stats["diverging"].sum()), 0.0, "max"))
        if "energy" in stats and n_chains * n_draws > 1:
            energy = stats["energy"].values
            ebfmi = np.square(np.diff(energy, axis=1)).mean(axis=1) / energy.var(axis=1)
            rows.append(("sampler", "ebfmi_min", float(ebfmi.min()), EBFMI_MIN, "min"))
    table = pd.DataFrame(rows, columns=["parameter", "check", "value", "threshold", "kind"])
    passes = np.where(
        table["kind"] == "max",
        table["value"] <= table["threshold"],
        table["value"] >= table["threshold"],
    )
    # a NaN statistic (e.g. a constant variable) is a failure, never a silent pass
    table["ok"] = passes & table["value"].notna()
    table = table.drop(columns="kind").set_index(["parameter", "check"])
    failed = table[~table["ok"]]
    if warn and len(failed):
        shown = "; ".join(
            f"{p} {c} = {v:.5g} (threshold {t:g})"
            for (p, c), v, t in zip(failed.index, failed["value"], failed["threshold"], strict=True)
        )
        warnings.warn(
            f"sampler diagnostics failed: {shown}. Run longer chains, raise target_accept, or "
            "check identification before trusting the intervals.",
            DiagnosticWarning,
            stacklevel=2,
        )
    return table
