"""Seeded data-generating processes with known truth, one per model (the papers' designs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit

from bayescal.data import Comparisons

__all__ = ["judge_discrimination_btl", "judge_discrimination_truth"]


def judge_discrimination_truth(
    n_items: int,
    n_judges: int,
    *,
    log_discrimination_sd: float = 0.5,
    random_seed: int | None = None,
) -> xr.Dataset:
    """Draw a true (ability, discrimination) for seed 002's simulations (SPEC §3.5).

    ``ability`` ~ N(0, 1) centred (Σ s = 0); ``log discrimination`` ~ N(0, sd²) centred
    (Σ log γ = 0), so some judges are near-noise and some sharp.

    Returns
    -------
    xarray.Dataset
        ``ability`` (item) and ``discrimination`` (judge), labelled ``model_00``…, ``judge_00``….
    """
    rng = np.random.default_rng(random_seed)
    s = rng.normal(size=n_items)
    alpha = rng.normal(scale=log_discrimination_sd, size=n_judges)
    return xr.Dataset(
        {
            "ability": ("item", s - s.mean()),
            "discrimination": ("judge", np.exp(alpha - alpha.mean())),
        },
        coords={
            "item": [f"model_{i:02d}" for i in range(n_items)],
            "judge": [f"judge_{k:02d}" for k in range(n_judges)],
        },
    )


def judge_discrimination_btl(
    truth: xr.Dataset,
    n_comparisons: int,
    *,
    random_seed: int | None = None,
    as_frame: bool = False,
) -> pd.DataFrame | Comparisons:
    """Simulate seed 002's design: T comparisons with (i, j, k) uniform over all triples.

    Parameters
    ----------
    truth : Dataset
        ``ability`` (item) and ``discrimination`` (judge), e.g. from
        :func:`judge_discrimination_truth`.
    n_comparisons : int
        T.
    random_seed : int, optional
    as_frame : bool
        Return the tidy frame (``item_a, item_b, judge, outcome``) instead of
        :class:`~bayescal.data.Comparisons` (the frame costs string labels for every row).

    Returns
    -------
    Comparisons or DataFrame
        Outcomes :math:`Y \\sim \\mathrm{Bernoulli}(\\sigma(\\gamma_k(s_i - s_j)))`.
    """
    s = np.asarray(truth["ability"].values, dtype=np.float64)
    gamma = np.asarray(truth["discrimination"].values, dtype=np.float64)
    rng = np.random.default_rng(random_seed)
    n_items, n_judges = len(s), len(gamma)
    i = rng.integers(0, n_items, n_comparisons)
    j = (i + rng.integers(1, n_items, n_comparisons)) % n_items  # uniform over j != i
    k = rng.integers(0, n_judges, n_comparisons)
    y = (rng.random(n_comparisons) < expit(gamma[k] * (s[i] - s[j]))).astype(np.float64)
    items = [str(v) for v in truth["item"].values]
    judges = [str(v) for v in truth["judge"].values]
    if as_frame:
        return pd.DataFrame(
            {
                "item_a": np.asarray(items, dtype=object)[i],
                "item_b": np.asarray(items, dtype=object)[j],
                "judge": np.asarray(judges, dtype=object)[k],
                "outcome": y,
            }
        )
    return Comparisons.from_codes(items, judges, judge=k, item_a=i, item_b=j, outcome=y)


