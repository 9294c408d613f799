r"""Contrasts, win probabilities and ranks of abilities, for any result.

The headline output of the papers is a leaderboard: differences of abilities
:math:`s_i - s_j` with intervals, the probability that item i beats item j,
:math:`\sigma(s_i - s_j)`, and the rank of each item with its uncertainty. These functions
compute all three from any result, with the interval each method earns:

* a frequentist :class:`~bayescal.frequentist.Estimate`: Wald intervals from
  :math:`L\hat\Sigma L^\top` (the covariance term :math:`-2\,\mathrm{cov}(s_i, s_j)` included);
  rank intervals from draws of the Wald normal :math:`N(\hat\theta, \hat\Sigma)`, labelled
  ``"wald-normal draws"``;
* a posterior from :func:`bayescal.fit` (NUTS): equal-tailed posterior intervals of
  :math:`L s` over the draws, posterior ranks;
* a MAP mode: the point value only (interval ``"none"``): a mode carries no uncertainty.

Abilities are on the log-odds scale; :func:`elo_scale` (or ``scale="elo"``) converts them to
the Elo-style display scale of public leaderboards. Nothing here imports PyMC or ArviZ.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from bayescal.schema import COLUMNS, resolve_prob, term_labels, wald_interval

if TYPE_CHECKING:
    from bayescal.frequentist._core import Estimate

__all__ = ["contrasts", "elo_scale", "ranks", "win_probabilities"]

Scale = Literal["logit", "elo"]

_SAMPLE_DIMS = ("chain", "draw")
_BLOCK = 2**22  # draws x contrasts evaluated at once (32 MB)
RANK_COLUMNS = ["item", "method", "estimate", "rank", "rank_median", "rank_lower",
                "rank_upper", "prob", "source"]


def elo_scale(values: Any, *, scale: float = 400.0, base: float = 10.0,
              anchor: float = 1000.0) -> Any:
    r"""Convert log-odds abilities to the Elo-style display scale of public leaderboards.

    :math:`R = \text{anchor} + \frac{\text{scale}}{\ln(\text{base})}\, s`, so that
    :math:`\sigma(s_i - s_j) = 1 / (1 + \text{base}^{-(R_i - R_j)/\text{scale}})`: with the
    defaults a 400-point gap means 10 : 1 odds (about 173.7 points per logit), as on Chatbot
    Arena. Differences and standard errors scale by the same factor without the anchor;
    use ``anchor=0`` for them.

    Parameters
    ----------
    values : array-like, Series, DataFrame or DataArray
        Abilities s on the log-odds scale (the models' sum-zero scores, so the anchor is the
        rating of an average item).
    scale, base : float
        ``scale`` points correspond to odds of ``base`` : 1.
    anchor : float
        Rating of s = 0.

    Returns
    -------
    Same type as ``values`` (a float ndarray for lists and scalars).
    """
    if not (np.isfinite(scale) and scale > 0 and np.isfinite(base) and base > 1):
        raise ValueError(f"elo_scale needs scale > 0 and base > 1, got scale={scale!r}, "
                         f"base={base!r}")
    factor = scale / np.log(base)
    if not isinstance(values, (np.ndarray, pd.Series, pd.DataFrame, xr.DataArray)):
        values = np.asarray(values, dtype=np.float64)
    return anchor + factor * values


class _Abilities:
    """The selected ability vector of a result: a Wald normal, draws, or a point."""

    def __init__(self, result: xr.DataTree | Estimate, parameter: str, judge: str | None):
        self.kind: Literal["estimate", "draws", "point"]
        self.cov: NDArray[np.float64] | None = None
        self.draws: NDArray[np.float64] | None = None
        if isinstance(result, xr.DataTree):
            if "posterior" not in result.children:
                raise TypeError("the DataTree has no 'posterior' group; pass a result of "
                                "bayescal.fit")
            post = result["posterior"].to_dataset()
            da = _variable(post, parameter)
            da = _select_judge(da, parameter, judge, extra=_SAMPLE_DIMS)
            self.labels = _element_labels(parameter, da, judge)
            self.items = [str(v) for v in da.coords["item"].values] if "item" in da.coords \
                else [str(v) for v in range(da.sizes["item"])]
            stacked = da.transpose("chain", "draw", "item").values
            values = np.asarray(stacked, dtype=np.float64).reshape(-1, da.sizes["item"])
            self.method = str(result.attrs.get("bayescal_method", "nuts"))
            if values.shape[0] > 1:
                self.kind, self.draws = "draws", values
                self.point = values.mean(axis=0)
            else:
                self.kind, self.point = "point", values[0]
        else:
            params = getattr(result, "params", None)
            if params is None or not hasattr(result, "cov"):
                raise TypeError(f"cannot take contrasts of a {type(result).__name__}; pass a "
                                "DataTree from bayescal.fit or an Estimate from a twin")
            da = _variable(params, parameter)
            labels_all = term_labels(parameter, da)
            where = {t: k for k, t in enumerate(result.terms)}
            position = xr.DataArray(np.array([where[t] for t in labels_all]).reshape(da.shape),
                                    dims=da.dims, coords=da.coords)
            position = _select_judge(position, parameter, judge, extra=())
            da = _select_judge(da, parameter, judge, extra=())
            idx = np.asarray(position.transpose("item").values, dtype=np.int64)
            self.labels = _element_labels(parameter, da, judge)
            self.items = [str(v) for v in da.coords["item"].values]
            self.point = np.asarray(da.transpose("item").values, dtype=np.float64)
            self.method = result.method
            if result.interval.get(parameter, "wald") == "none":
                self.kind = "point"
            else:
                self.kind = "estimate"
                self.cov = np.asarray(result.cov, dtype=np.float64)[np.ix_(idx, idx)]
                if not np.all(np.isfinite(self.cov)):
                    raise ValueError(f"the Estimate's covariance of {parameter!r} is not finite; "
                                     "no Wald contrast is available")
        if not np.all(np.isfinite(self.point)):
            raise ValueError(f"{parameter!r} has non-finite values in this result")


def _variable(ds: xr.Dataset, parameter: str) -> xr.DataArray:
    if parameter not in ds.data_vars:
        raise KeyError(f"the result has no parameter {parameter!r}; it has "
                       f"{sorted(map(str, ds.data_vars))}")
    da = ds[parameter]
    if "item" not in da.dims:
        raise ValueError(f"{parameter!r} has dims {da.dims}, without an 'item' dim: contrasts, "
                         "win probabilities and ranks are defined over items")
    return da


def _select_judge(da: xr.DataArray, parameter: str, judge: str | None,
                  extra: tuple[str, ...]) -> xr.DataArray:
    """Select ``judge`` for ``parameter[judge, item]``; refuse any other unselected dim."""
    if judge is not None:
        if "judge" not in da.dims:
            raise ValueError(f"judge={judge!r} was given, but {parameter!r} has no judge dim "
                             f"(dims {da.dims})")
        judges = [str(v) for v in da.coords["judge"].values]
        if str(judge) not in judges:
            raise KeyError(f"judge {judge!r} is not in {parameter!r}; judges are {judges}")
        da = da.isel(judge=judges.index(str(judge)))
    other = [d for d in da.dims if d not in (*extra, "item")]
    if other:
        hint = (" pass judge=<label> to pick one judge's scores" if "judge" in other else "")
        raise ValueError(f"{parameter!r} has dims {other} besides 'item';{hint}")
    return da


def _element_labels(parameter: str, da: xr.DataArray, judge: str | None) -> list[str]:
    items = [str(v) for v in (da.coords["item"].values if "item" in da.coords
                              else range(da.sizes["item"]))]
    prefix = f"{judge}, " if judge is not None else ""
    return [f"{parameter}[{prefix}{item}]" for item in items]


def _contrast_matrix(matrix: pd.DataFrame | ArrayLike | None,
                     ab: _Abilities) -> tuple[NDArray[np.float64], list[str]]:
    n = len(ab.items)
    if matrix is None:
        i, j = np.triu_indices(n, k=1)
        mat = np.zeros((i.size, n))
        mat[np.arange(i.size), i] = 1.0
        mat[np.arange(i.size), j] = -1.0
        return mat, [f"{ab.labels[a]} - {ab.labels[b]}" for a, b in zip(i, j, strict=True)]
    if isinstance(matrix, pd.DataFrame):
        unknown = [c for c in matrix.columns if str(c) not in ab.items]
        if unknown:
            raise KeyError(f"contrast columns {unknown} are not items of the result; items are "
                           f"{ab.items}")
        frame = matrix.rename(columns=str).reindex(columns=ab.items, fill_value=0.0)
        mat = frame.to_numpy(dtype=np.float64)
        names = [str(r) for r in matrix.index]
    else:
        mat = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
        if mat.ndim != 2 or mat.shape[1] != n:
            raise ValueError(f"a contrast matrix needs {n} columns (one per item, in the order "
                             f"{ab.items}), got shape {np.shape(matrix)}")
        names = [_describe(row, ab.labels) for row in mat]
    if not np.all(np.isfinite(mat)):
        raise ValueError("the contrast matrix has non-finite entries")
    if len(set(names)) != len(names):
        raise ValueError("contrast names (the matrix's index) must be unique")
    off = np.abs(mat.sum(axis=1)) > 1e-9 * np.maximum(np.abs(mat).sum(axis=1), 1.0)
    if off.any():
        warnings.warn(
            f"contrasts {[names[r] for r in np.flatnonzero(off)]} have coefficients that do not "
            "sum to zero: they depend on the model's identification constraint (sum-zero "
            "abilities), not on the data alone",
            UserWarning, stacklevel=3,
        )
    return mat, names


def _describe(row: NDArray[np.float64], labels: list[str]) -> str:
    parts = []
    for coef, label in zip(row, labels, strict=True):
        if coef == 0:
            continue
        sign = "-" if coef < 0 else "+"
        mag = "" if abs(coef) == 1 else f"{abs(coef):g}·"
        parts.append(f"{sign} {mag}{label}")
    if not parts:
        return "0"
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _elo_factor(scale: Scale) -> float:
    if scale == "logit":
        return 1.0
    if scale == "elo":
        return float(elo_scale(1.0, anchor=0.0))
    raise ValueError(f"scale must be 'logit' or 'elo', got {scale!r}")


def contrasts(
    result: xr.DataTree | Estimate,
    matrix: pd.DataFrame | ArrayLike | None = None,
    *,
    parameter: str = "ability",
    judge: str | None = None,
    prob: float | None = None,
    ci_prob: float | None = None,
    random_seed: int | None = 0,
    scale: Scale = "logit",
) -> pd.DataFrame:
    r"""Linear contrasts :math:`L s` of abilities with intervals, in the summary schema.

    Parameters
    ----------
    result : Estimate or xarray.DataTree
        A twin's Estimate (Wald: :math:`\mathrm{se} = \sqrt{\mathrm{diag}(L\hat\Sigma
        L^\top)}`), a NUTS posterior (equal-tailed intervals of the draws of :math:`L s`,
        ``se`` = posterior sd) or a MAP mode (point only, interval ``"none"``).
    matrix : DataFrame or array, optional
        Rows are contrasts. A DataFrame has named rows and item labels as columns (items left
        out get coefficient 0); an array has one column per item in the result's item order.
        Default: every pairwise difference :math:`s_i - s_j`, i < j, with terms such as
        ``ability[a] - ability[b]``. Rows whose coefficients do not sum to zero depend on the
        sum-zero constraint and draw a warning.
    parameter : str
        The score vector (default ``ability``; dims ``item`` or ``(judge, item)``).
    judge : str, optional
        For ``parameter[judge, item]``: the judge whose row is contrasted (required there).
    prob : float
        Interval probability.
    random_seed : int, optional
        Not used: contrasts are deterministic given the result (Wald or the stored draws). It
        is accepted so ``contrasts`` and :func:`ranks` share one call signature.
    scale : {"logit", "elo"}
        ``"elo"`` multiplies estimates, standard errors and bounds by :func:`elo_scale`'s
        factor (400 / ln 10 ≈ 173.7 points per logit); the table's ``attrs["scale"]`` says which.

    Returns
    -------
    DataFrame
        Index ``term``; columns ``parameter, method, estimate, se, lower, upper, prob,
        interval`` (``wald``, ``eti`` or ``none``).
    """
    prob = resolve_prob(prob, ci_prob)
    del random_seed
    factor = _elo_factor(scale)
    ab = _Abilities(result, parameter, judge)
    mat, names = _contrast_matrix(matrix, ab)
    estimate = mat @ ab.point
    nan = np.full(len(names), np.nan)
    if ab.kind == "estimate":
        assert ab.cov is not None
        se = np.sqrt(np.clip(np.einsum("ri,ij,rj->r", mat, ab.cov, mat), 0.0, None))
        lower, upper = wald_interval(estimate, se, prob, "wald")
        kind = "wald"
    elif ab.kind == "draws":
        assert ab.draws is not None
        se, lower, upper = np.empty(len(names)), np.empty(len(names)), np.empty(len(names))
        # all pairs of 200 items over 4000 draws would be 640 MB at once: go in blocks
        step = max(1, _BLOCK // len(ab.draws))
        for start in range(0, len(names), step):
            block = slice(start, start + step)
            values = ab.draws @ mat[block].T
            se[block] = values.std(axis=0, ddof=1)
            lower[block], upper[block] = np.quantile(
                values, [0.5 - prob / 2, 0.5 + prob / 2], axis=0)
        kind = "eti"
    else:
        se, lower, upper, kind = nan, nan, nan, "none"
    table = pd.DataFrame(
        {"term": names, "parameter": parameter, "method": ab.method,
         "estimate": factor * estimate, "se": factor * se, "lower": factor * lower,
         "upper": factor * upper, "prob": prob if kind != "none" else np.nan,
         "interval": kind},
    ).set_index("term")[COLUMNS]
    table.attrs["scale"] = scale
    return table


def win_probabilities(
    result: xr.DataTree | Estimate, *, parameter: str = "ability", judge: str | None = None
) -> pd.DataFrame:
    r"""Matrix of :math:`P(i \succ j) = \sigma(s_i - s_j)`, items as index (i) and columns (j).

    For a posterior the entry is the posterior mean of :math:`\sigma(s_i - s_j)` (the
    posterior predictive win probability); for an Estimate or a MAP it is the plug-in value at
    the point estimate. In the judge-discrimination BTL this is the win probability for a
    judge of discrimination γ = 1 (the geometric mean judge). The diagonal is 1/2.
    """
    ab = _Abilities(result, parameter, judge)
    n = len(ab.items)
    if ab.kind == "draws":
        assert ab.draws is not None
        # one row at a time: draws x items, never draws x items x items
        out = np.empty((n, n))
        for i in range(n):
            out[i] = expit(ab.draws[:, [i]] - ab.draws).mean(axis=0)
        np.fill_diagonal(out, 0.5)
    else:
        out = expit(ab.point[:, None] - ab.point[None, :])
    return pd.DataFrame(out, index=pd.Index(ab.items, name="item"),
                        columns=pd.Index(ab.items, name="opponent"))


def _rank_draws(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """Rank of every item in every draw (1 = highest ability)."""
    return np.argsort(np.argsort(-values, axis=-1, kind="stable"), axis=-1) + 1


def _wald_draws(ab: _Abilities, draws: int, random_seed: int | None) -> NDArray[np.float64]:
    """Draws from N(θ̂, Σ̂); Σ̂ is singular on sum-zero scores, so sample through its eigenbasis."""
    assert ab.cov is not None
    eigval, eigvec = np.linalg.eigh((ab.cov + ab.cov.T) / 2)
    root = eigvec * np.sqrt(np.clip(eigval, 0.0, None))
    rng = np.random.default_rng(random_seed)
    return ab.point + rng.standard_normal((draws, len(ab.point))) @ root.T


def ranks(
    result: xr.DataTree | Estimate,
    *,
    parameter: str = "ability",
    judge: str | None = None,
    prob: float | None = None,
    ci_prob: float | None = None,
    draws: int = 4000,
    random_seed: int | None = 0,
    scale: Scale = "logit",
) -> pd.DataFrame:
    """Rank of each item (1 = best) with its distribution and an equal-tailed rank interval.

    Parameters
    ----------
    result : Estimate or xarray.DataTree
        NUTS posterior: ranks of every posterior draw (``source = "posterior"``). Estimate:
        ranks of ``draws`` draws from the Wald normal N(θ̂, Σ̂) (``source = "wald-normal
        draws"``, an approximation to the sampling distribution of the ranks). MAP: the rank
        of the mode only (``source = "none"``, no interval).
    parameter, judge : str
        As in :func:`contrasts`.
    prob : float
        Probability of the rank interval.
    draws : int
        Number of Wald-normal draws (Estimate only; a posterior uses all its draws).
    random_seed : int, optional
        Seed of the Wald-normal draws.
    scale : {"logit", "elo"}
        Display scale of the ``estimate`` column (:func:`elo_scale` with its defaults).

    Returns
    -------
    DataFrame
        Index item label, sorted by ``rank``; columns ``item, method, estimate`` (the ability
        estimate: posterior mean, θ̂ or the mode), ``rank`` (rank of the estimate),
        ``rank_median, rank_lower, rank_upper`` (quantiles of the rank distribution, taken as
        observed ranks so that P(rank_lower ≤ rank ≤ rank_upper) ≥ prob), ``prob, source``.
    """
    prob = resolve_prob(prob, ci_prob)
    if int(draws) != draws or draws < 2:
        raise ValueError(f"draws must be an integer ≥ 2, got {draws!r}")
    _elo_factor(scale)
    ab = _Abilities(result, parameter, judge)
    point_rank = _rank_draws(ab.point[None, :])[0]
    if ab.kind == "point":
        source = "none"
        median = lower = upper = np.full(len(ab.items), np.nan)
    else:
        if ab.kind == "draws":
            assert ab.draws is not None
            source, sample = "posterior", ab.draws
        else:
            source, sample = "wald-normal draws", _wald_draws(ab, int(draws), random_seed)
        r = _rank_draws(sample)
        # inverted-CDF quantiles are attained ranks: no interpolated "rank 1.5"
        median = np.quantile(r, 0.5, axis=0, method="inverted_cdf").astype(np.float64)
        lower = np.quantile(r, 0.5 - prob / 2, axis=0, method="inverted_cdf").astype(np.float64)
        upper = np.quantile(r, 0.5 + prob / 2, axis=0, method="inverted_cdf").astype(np.float64)
    estimate = ab.point if scale == "logit" else elo_scale(ab.point)
    table = pd.DataFrame(
        {"item": ab.items, "method": ab.method, "estimate": estimate, "rank": point_rank,
         "rank_median": median, "rank_lower": lower, "rank_upper": upper,
         "prob": prob if source != "none" else np.nan, "source": source},
        index=pd.Index(ab.items),
    )[RANK_COLUMNS].sort_values("rank", kind="stable")
    table.attrs["scale"] = scale
    return table
