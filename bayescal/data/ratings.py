"""Judge and human scores on one integer scale (Subasic et al. 2026, arXiv:2611.00447)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayescal.data.normalize import _MAX_LISTED, DataError, _rows

__all__ = ["Ratings"]


_DIST_SUM_TOL = 1e-5


@dataclass(frozen=True)
class Ratings:
    """Judge and human scores on one declared integer scale (Subasic et al. 2026).

    Each item carries a judge point score ``j ∈ {a..b}`` or a judge predictive distribution
    ``w_i`` over the K = b − a + 1 scale points (softmax over rating tokens, or a histogram of
    repeated samples), a human score ``h ∈ {a..b}`` (missing for items that are only to
    be calibrated), and optional group keys (dataset, attribute, judge). Build it with
    :meth:`from_arrays` or :meth:`from_frame`; both validate before anything is fitted.

    Attributes
    ----------
    scale : tuple of int
        ``(a, b)``, the lowest and highest scale point.
    judge : ndarray, shape (n,)
        Judge point score; for distribution-only items the distribution's most likely level
        (argmax, first on ties).
    judge_dist : ndarray, shape (n, K), or None
        Judge predictive distribution over ``a..b`` (rows sum to 1), when given.
    human : ndarray, shape (n,)
        Human score; NaN where the item has none.
    groups : DataFrame
        One column per group key (may have no columns), indexed like the items.
    index : pandas.Index
        Item labels, used in error messages.
    """

    scale: tuple[int, int]
    judge: NDArray[np.float64]
    judge_dist: NDArray[np.float64] | None
    human: NDArray[np.float64]
    groups: pd.DataFrame
    index: pd.Index

    @classmethod
    def from_arrays(
        cls,
        judge: ArrayLike | None,
        human: ArrayLike | None,
        *,
        scale: tuple[int, int],
        judge_dist: ArrayLike | None = None,
        groups: pd.DataFrame | dict[str, ArrayLike] | None = None,
        items: Sequence[object] | None = None,
    ) -> Ratings:
        """Ratings from arrays.

        Parameters
        ----------
        judge : array, shape (n,), optional
            Judge point scores (integers on the scale). May be None when ``judge_dist`` is given.
        human : array, shape (n,), optional
            Human scores (integers on the scale; NaN = not rated). None: no item is rated.
        scale : (int, int)
            Declared scale ``(a, b)`` with ``a < b``.
        judge_dist : array, shape (n, K), optional
            Judge predictive distribution over the K scale points.
        groups : DataFrame or dict, optional
            Group keys, one column per key.
        items : sequence, optional
            Item labels (default 0..n−1).

        Raises
        ------
        DataError
            A score off the scale, a non-integer score, a distribution that has negative mass or
            does not sum to 1 (within 1e−5), a missing group key, or mismatched lengths; the
            message names the item.
        """
        lo, hi = _checked_scale(scale)
        if judge is None and judge_dist is None:
            raise DataError("give judge scores (judge=...) or judge distributions (judge_dist=...)")
        n = len(np.atleast_1d(np.asarray(judge if judge is not None else judge_dist)))
        index = pd.Index(list(items)) if items is not None else pd.RangeIndex(n)
        if len(index) != n:
            raise DataError(f"{len(index)} item labels for {n} items")
        if n == 0:
            raise DataError("there are no items")
        dist = None
        if judge_dist is not None:
            dist = _checked_dists(judge_dist, lo, hi, index)
        if judge is not None:
            j = _checked_scores(judge, lo, hi, index, "judge score", allow_missing=False)
            if dist is not None and len(j) != len(dist):
                raise DataError(f"judge has {len(j)} items but judge_dist has {len(dist)}")
        else:
            assert dist is not None
            j = lo + np.argmax(dist, axis=1).astype(np.float64)
        if human is None:
            h = np.full(n, np.nan)
        else:
            h = _checked_scores(human, lo, hi, index, "human score", allow_missing=True)
            if len(h) != n:
                raise DataError(f"judge has {n} items but human has {len(h)}")
        g = pd.DataFrame(groups if groups is not None else {}, index=None)
        if len(g.columns) and len(g) != n:
            raise DataError(f"groups has {len(g)} rows for {n} items")
        g = g.reset_index(drop=True).set_axis(index) if len(g.columns) else \
            pd.DataFrame(index=index)
        for col in g.columns:
            key = g[col]
            empty = (key.isna() | (key.astype("string").str.strip() == "")).to_numpy(bool)
            if empty.any():
                raise DataError(
                    f"group key {col!r} is missing or empty for items {_rows(index, empty)}; every "
                    "item needs a group (fill it, or drop the items)"
                )
        return cls((lo, hi), j, dist, h, g, index)

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        scale: tuple[int, int],
        judge: str | None = "judge",
        human: str | None = "human",
        judge_dist: Sequence[str] | None = None,
        groups: Sequence[str] = (),
        item: str | None = None,
    ) -> Ratings:
        """Ratings from a frame with one row per item.

        Parameters
        ----------
        df : DataFrame
        scale : (int, int)
        judge, human : str or None
            Columns of judge and human scores (None: not given; a missing human score = unrated).
            With ``judge_dist`` and ``judge=None`` the point score is the distribution's mode.
        judge_dist : sequence of str, optional
            K columns holding the judge's probability of each scale point, in scale order.
        groups : sequence of str
            Group-key columns (dataset, attribute, judge, ...).
        item : str, optional
            Column of item labels (default: the frame's index).
        """
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"expected a pandas DataFrame, got {type(df).__name__}")
        wanted = [c for c in (judge, human, item, *(judge_dist or ()), *groups) if c is not None]
        missing = [c for c in wanted if c not in df.columns]
        if missing:
            raise DataError(
                f"missing column(s) {missing}; the frame has {list(df.columns)}. Name the columns "
                "with judge=..., human=..., judge_dist=[...], groups=[...], item=..."
            )
        index = pd.Index(df[item].tolist() if item is not None else list(df.index))
        for col in (c for c in (judge, human, *(judge_dist or ())) if c is not None):
            raw = df[col]
            bad = (raw.notna() & pd.to_numeric(raw, errors="coerce").isna()).to_numpy(bool)
            if bad.any():
                raise DataError(
                    f"column {col!r} must hold numbers; items {_rows(index, bad)} have "
                    f"{raw[bad].head(_MAX_LISTED).tolist()}"
                )
        items = list(index)
        return cls.from_arrays(
            None if judge is None else pd.to_numeric(df[judge], errors="coerce").to_numpy(float),
            None if human is None else pd.to_numeric(df[human], errors="coerce").to_numpy(float),
            scale=scale,
            judge_dist=None if judge_dist is None else df[list(judge_dist)].to_numpy(np.float64),
            groups=df[list(groups)].reset_index(drop=True) if groups else None,
            items=items,
        )

    # ------------------------------------------------------------------ views
    @property
    def n(self) -> int:
        """Number of items."""
        return len(self.judge)

    @property
    def levels(self) -> NDArray[np.int64]:
        """The scale points ``a..b``."""
        return np.arange(self.scale[0], self.scale[1] + 1)

    @property
    def rated(self) -> NDArray[np.bool_]:
        """Items with a human score (the anchors)."""
        return ~np.isnan(self.human)

    def rating_counts(self, *, min_points: int = 2) -> NDArray[np.int64]:
        """K × K counts of (judge level, human level) over the human-rated items (anchors).

        Rows are judge point scores ``a..b``, columns human scores ``a..b``: the sufficient
        statistics of any model of the human score given the judge level (the monotone
        ordinal calibration model and its twin both read them).

        Parameters
        ----------
        min_points : int
            The fewest scale points the caller's model accepts.

        Raises
        ------
        DataError
            A scale with fewer than ``min_points`` points, or no human-rated item.
        """
        k = self.scale[1] - self.scale[0] + 1
        if k < min_points:
            hint = ("; a 2-point scale is a binary-label problem (bayescal.frequentist.judge_mean)"
                    if k == 2 else "")
            raise DataError(f"this model needs a scale of at least {min_points} points, got "
                            f"{self.scale[0]}..{self.scale[1]}{hint}")
        rated = self.rated
        if not rated.any():
            raise DataError("no item has a human score: a calibration model needs anchors")
        j = self.judge[rated].astype(np.int64) - self.scale[0]
        h = self.human[rated].astype(np.int64) - self.scale[0]
        return np.bincount(j * k + h, minlength=k * k).reshape(k, k)

    def take(self, positions: ArrayLike) -> Ratings:
        """The items at integer ``positions``, in that order."""
        pos = np.asarray(positions, dtype=np.int64)
        dist = None if self.judge_dist is None else self.judge_dist[pos]
        return Ratings(self.scale, self.judge[pos], dist, self.human[pos],
                       self.groups.iloc[pos], self.index[pos])

    def by_group(self, keys: Sequence[str] | None = None) -> dict[tuple[object, ...], Ratings]:
        """Split into one Ratings per group (all group keys by default).

        Raises
        ------
        DataError
            An unknown key, or a group whose items have no human score (nothing to calibrate on).
        """
        keys = list(self.groups.columns) if keys is None else list(keys)
        unknown = [k for k in keys if k not in self.groups.columns]
        if unknown:
            raise DataError(f"unknown group key(s) {unknown}; keys are {list(self.groups.columns)}")
        if not keys:
            return {(): self}
        out: dict[tuple[object, ...], Ratings] = {}
        codes = self.groups[keys].astype(str).agg("\x1f".join, axis=1).to_numpy()
        for code in dict.fromkeys(codes):
            pos = np.flatnonzero(codes == code)
            key = tuple(self.groups[keys].iloc[pos[0]])
            part = self.take(pos)
            if not part.rated.any():
                raise DataError(f"group {dict(zip(keys, key, strict=True))} has no human score")
            out[key] = part
        return out

    def __repr__(self) -> str:
        kind = "distributions" if self.judge_dist is not None else "point scores"
        return (f"Ratings(n={self.n} items, {int(self.rated.sum())} human-rated; scale "
                f"{self.scale[0]}..{self.scale[1]}; judge {kind}; "
                f"groups={list(self.groups.columns)})")


def _checked_scale(scale: tuple[int, int]) -> tuple[int, int]:
    try:
        lo, hi = scale
    except (TypeError, ValueError):
        raise DataError(f"scale must be a pair (lowest, highest), got {scale!r}") from None
    if float(lo) != int(lo) or float(hi) != int(hi) or int(lo) >= int(hi):
        raise DataError(f"scale must be two integers a < b, got {scale!r}")
    return int(lo), int(hi)


def _checked_scores(
    values: ArrayLike, lo: int, hi: int, index: pd.Index, what: str, *, allow_missing: bool
) -> NDArray[np.float64]:
    """Scores as floats; integers on ``lo..hi`` (NaN allowed only when ``allow_missing``)."""
    try:
        x = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise DataError(f"{what}s must be numbers") from None
    if len(x) != len(index):
        raise DataError(f"{len(x)} {what}s for {len(index)} items")
    missing = np.isnan(x)
    if missing.any() and not allow_missing:
        raise DataError(f"{what} is missing for items {_rows(index, missing)}")
    off = ~missing & ((x < lo) | (x > hi) | ~np.isfinite(x))
    if off.any():
        raise DataError(
            f"{what} off the declared scale {lo}..{hi} for items {_rows(index, off)}: "
            f"{x[off][:_MAX_LISTED].tolist()}. Declare the right scale or fix the scores."
        )
    frac = ~missing & (x != np.round(x))
    if frac.any():
        raise DataError(
            f"{what} is not an integer for items {_rows(index, frac)}: "
            f"{x[frac][:_MAX_LISTED].tolist()}; the scale {lo}..{hi} is integer. For a judge, pass "
            "its predictive distribution (judge_dist=...) instead of an expected score; for "
            "continuous scores use bayescal.calibration.ContinuousSQM."
        )
    return x


def _checked_dists(dist: ArrayLike, lo: int, hi: int, index: pd.Index) -> NDArray[np.float64]:
    """Rows summing to 1 within 1e−5 (renormalised exactly), non-negative, K = hi − lo + 1 wide."""
    w = np.asarray(dist, dtype=np.float64)
    k = hi - lo + 1
    if w.ndim != 2 or w.shape[1] != k:
        raise DataError(f"judge_dist must be an items x {k} array (one column per scale point "
                        f"{lo}..{hi}), got shape {w.shape}")
    if len(w) != len(index):
        raise DataError(f"judge_dist has {len(w)} rows for {len(index)} items")
    bad = ~np.isfinite(w).all(axis=1)
    if bad.any():
        raise DataError(f"judge_dist has missing values for items {_rows(index, bad)}")
    neg = (w < 0).any(axis=1)
    if neg.any():
        raise DataError(f"judge_dist has negative mass for items {_rows(index, neg)}")
    total = w.sum(axis=1)
    off = np.abs(total - 1.0) > _DIST_SUM_TOL
    if off.any():
        raise DataError(
            f"judge_dist rows must sum to 1 (within {_DIST_SUM_TOL:g}); items {_rows(index, off)} "
            f"sum to {np.round(total[off][:_MAX_LISTED], 6).tolist()}"
        )
    return w / total[:, None]
