"""Tables people read: the leaderboard of items with intervals and ranks per method.

``leaderboard(mle, post)`` puts every method's ability interval and rank interval side by side,
one row per item, best first. It is the table the ``bayescal`` command prints and the one
:func:`bayescal.plots.leaderboard` draws. Nothing here imports PyMC or ArviZ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import xarray as xr

from bayescal.compare import method_name, named_results, truth_series
from bayescal.contrasts import Scale, elo_scale, ranks
from bayescal.schema import resolve_prob
from bayescal.summary import summarize

if TYPE_CHECKING:
    from bayescal.frequentist._core import Estimate

__all__ = ["format_leaderboard", "leaderboard", "method_name", "named_results"]


def leaderboard(
    *results: xr.DataTree | Estimate,
    prob: float | None = None,
    ci_prob: float | None = None,
    parameter: str = "ability",
    judge: str | None = None,
    sort_by: str | None = None,
    truth: xr.Dataset | Mapping[str, float] | pd.Series | None = None,
    draws: int = 4000,
    random_seed: int | None = 0,
    scale: Scale = "logit",
    **named: xr.DataTree | Estimate,
) -> pd.DataFrame:
    """Items ranked best first, with each method's ability interval and rank interval.

    Parameters
    ----------
    *results : DataTree or Estimate
        Fits of the same items, named by their method (``mle``, ``map``, ``nuts``...).
    prob : float
        Probability of the ability and rank intervals.
    parameter : str
        The score to rank (``ability``: s of Xu et al. 2026).
    judge : str, optional
        For judge-specific scores, the judge whose scores are ranked.
    sort_by : str, optional
        Method whose estimate orders the rows (default: the first fit).
    truth : Dataset or mapping, optional
        True scores (simulations): adds ``truth`` and ``truth_rank``.
    draws, random_seed : int
        Wald-normal draws behind an Estimate's rank interval (:func:`bayescal.ranks`).
    scale : {"logit", "elo"}
        Display scale of the estimates, bounds and truth. ``"elo"`` applies
        :func:`bayescal.elo_scale` with its defaults, R = 1000 + (400 / ln 10) s: 400 points
        are 10 : 1 odds and 1000 is the average item (the scores sum to zero). The map is
        increasing, so equal-tailed posterior bounds and Wald bounds carry over exactly and
        the ranks do not change; the table gets a column ``scale`` (``"elo"``) and
        ``attrs["scale"]``. Only for log-odds scores.
    **named : DataTree or Estimate
        Fits under names of your choice.

    Returns
    -------
    DataFrame
        Index ``term`` (``ability[gpt-4]``), sorted by the ``sort_by`` estimate, descending;
        column ``item`` (the label); per method ``<m>_estimate``, ``<m>_lower``,
        ``<m>_upper`` (posterior equal-tailed or Wald; a MAP mode has the estimate only),
        ``<m>_rank`` (rank of the estimate, 1 = best), ``<m>_rank_lower``,
        ``<m>_rank_upper`` (equal-tailed rank interval from posterior draws or Wald-normal
        draws; absent for a mode); with ``scale="elo"`` the column ``scale``.
    """
    prob = resolve_prob(prob, ci_prob)
    if scale not in ("logit", "elo"):
        raise ValueError(f"scale must be 'logit' or 'elo', got {scale!r}")
    fits = named_results(results, named)
    if sort_by is not None and sort_by not in fits:
        raise ValueError(f"sort_by {sort_by!r} is not one of the fits: {list(fits)}")
    key = sort_by if sort_by is not None else next(iter(fits))
    blocks = []
    for name, res in fits.items():
        rk = ranks(res, parameter=parameter, judge=judge, prob=prob, draws=draws,
                   random_seed=random_seed)
        table = summarize(res, prob, var_names=[parameter])
        terms = _terms(parameter, rk.index, judge)
        missing = [t for t in terms if t not in table.index]
        if missing:
            raise KeyError(f"{name}: no summary rows {missing[:3]} for {parameter!r}")
        rows = table.loc[terms]
        block = pd.DataFrame({"item": list(rk.index),
                              f"{name}_estimate": rows["estimate"].to_numpy()}, index=terms)
        if bool((rows["interval"] != "none").any()):
            block[f"{name}_lower"] = rows["lower"].to_numpy()
            block[f"{name}_upper"] = rows["upper"].to_numpy()
        block[f"{name}_rank"] = rk["rank"].to_numpy()
        if rk["source"].iloc[0] != "none":
            block[f"{name}_rank_lower"] = rk["rank_lower"].to_numpy()
            block[f"{name}_rank_upper"] = rk["rank_upper"].to_numpy()
        blocks.append(block)
    out = blocks[0]
    for block in blocks[1:]:
        if set(block["item"]) != set(out["item"]):
            raise ValueError("the fits rank different items; compare fits of the same data")
        out = out.join(block.drop(columns="item"), how="left")
    if truth is not None:
        true = truth_series(truth).reindex(out.index)
        out["truth"] = true.to_numpy()
        order = (-true).rank(method="first")
        out["truth_rank"] = order.to_numpy()
    out.index.name = "term"
    if scale == "elo":
        values = [c for c in out.columns if c == "truth" or (
            c.endswith(("_estimate", "_lower", "_upper")) and not c.endswith(
                ("_rank_lower", "_rank_upper")))]
        out[values] = elo_scale(out[values])
        out["scale"] = "elo"
    out = out.sort_values(f"{key}_estimate", ascending=False, kind="stable")
    out.attrs["scale"] = scale
    return out


def _terms(parameter: str, items: pd.Index, judge: str | None) -> list[str]:
    """Summary labels of the ranked elements: ``ability[x]`` or ``ability[judge, x]``."""
    if judge is None:
        return [f"{parameter}[{item}]" for item in items]
    return [f"{parameter}[{judge}, {item}]" for item in items]


def format_leaderboard(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Text view of :func:`leaderboard`: ``estimate [lower, upper]`` and ``rank [lo, hi]``."""
    methods = [c[: -len("_estimate")] for c in table.columns if c.endswith("_estimate")]
    view = pd.DataFrame({"item": table["item"]}, index=table.index)
    for m in methods:
        est, lo, hi = (table.get(f"{m}_{c}") for c in ("estimate", "lower", "upper"))
        view[m] = [_cell(e, a, b, f".{digits}f") for e, a, b in
                   zip(est, _or_nan(lo, est), _or_nan(hi, est), strict=True)]
        rank = table[f"{m}_rank"]
        view[f"{m} rank"] = [_cell(r, a, b, ".0f") for r, a, b in
                             zip(rank, _or_nan(table.get(f"{m}_rank_lower"), rank),
                                 _or_nan(table.get(f"{m}_rank_upper"), rank), strict=True)]
    if "truth" in table:
        view["truth"] = table["truth"].map(lambda v: f"{v:.{digits}f}")
        view["truth rank"] = table["truth_rank"].map(lambda v: f"{v:.0f}")
    return view.set_index("item")


def _or_nan(column: pd.Series | None, like: pd.Series) -> pd.Series:
    return column if column is not None else pd.Series(np.nan, index=like.index)


def _cell(value: float, lower: float, upper: float, fmt: str) -> str:
    if pd.isna(value):
        return ""
    if pd.isna(lower) or pd.isna(upper):
        return format(value, fmt)
    return f"{value:{fmt}} [{lower:{fmt}}, {upper:{fmt}}]"
