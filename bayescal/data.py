"""Validated, integer-coded, cell-aggregated inputs.

Every model and twin in bayescal sees data through these containers: they validate the user's
frame before anything is fitted (a :class:`DataError` names the row, column or label and the
fix), code labels as integers while keeping the labels as coordinates, and reduce raw rows to
sufficient statistics so that fitting cost does not grow with the number of raw rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["Comparisons", "DataError"]

_MAX_LISTED = 5


class DataError(ValueError):
    """Input data that cannot be used as given; the message says where and how to fix it."""


def _rows(index: pd.Index, mask: NDArray[np.bool_]) -> str:
    """Name the first offending rows of a frame by their index labels."""
    bad = list(index[mask][:_MAX_LISTED])
    more = int(mask.sum()) - len(bad)
    text = ", ".join(repr(b) for b in bad)
    return f"{text} (and {more} more)" if more > 0 else text


_TIE_WORDS = frozenset({"tie", "draw", "equal", "tie (bothbad)", "both_bad", "bothbad", "c"})
_A_WORDS = frozenset({"a", "model_a", "item_a", "left", "first"})
_B_WORDS = frozenset({"b", "model_b", "item_b", "right", "second"})


def _outcome_values(
    raw: pd.Series, item_a: pd.Series, item_b: pd.Series, column: str
) -> NDArray[np.float64]:
    """Turn an outcome column into P(item_a preferred): numbers in [0, 1] or verdict words.

    Verdict words accepted (case-insensitive): the winning item's label, ``a``/``model_a``/
    ``left``/``first`` for item_a, ``b``/``model_b``/``right``/``second`` for item_b, and
    ``tie``/``draw`` for a tie (0.5).
    """
    if pd.api.types.is_bool_dtype(raw):
        return raw.to_numpy(dtype=np.float64)
    if pd.api.types.is_numeric_dtype(raw):
        return raw.to_numpy(dtype=np.float64)
    text = raw.astype("string").str.strip()
    lower = text.str.lower()
    out = np.full(len(raw), np.nan)
    out[lower.isin(_A_WORDS).fillna(False).to_numpy(bool)] = 1.0
    out[lower.isin(_B_WORDS).fillna(False).to_numpy(bool)] = 0.0
    out[lower.isin(_TIE_WORDS).fillna(False).to_numpy(bool)] = 0.5
    out[(text == item_a.astype("string")).fillna(False).to_numpy(bool)] = 1.0
    out[(text == item_b.astype("string")).fillna(False).to_numpy(bool)] = 0.0
    numeric = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    out = np.where(np.isnan(out), numeric, out)
    unknown = np.isnan(out) & text.notna().to_numpy(bool)
    if unknown.any():
        examples = sorted(set(text[unknown].head(_MAX_LISTED)))
        raise DataError(
            f"column {column!r} has verdicts that are neither a number in [0, 1] nor a known word "
            f"(rows {_rows(raw.index, unknown)}: {examples}). Use 1 / 0 / 0.5, the winning item's "
            "label, 'model_a' / 'model_b', or 'tie'."
        )
    return out


@dataclass(frozen=True)
class Comparisons:
    """Pairwise verdicts aggregated to cells (judge, item i, item j, order) with i < j.

    Build it with :meth:`from_frame`. Each cell carries the number of verdicts ``count``
    (:math:`n_{kij}^{(a)}`), the wins of item i ``wins`` (:math:`y`; a tie is half a win each
    way) and the sum of squared outcomes ``wins_sq`` (needed by sandwich variances, because
    ties make the within-cell outcomes non-binary).

    Attributes
    ----------
    items, judges : tuple of str
        Labels; integer codes index these tuples (items are sorted, so code order is label order).
    judge, item_i, item_j : ndarray of int
        Cell codes, with ``item_i < item_j`` (canonical orientation).
    order : ndarray of int
        +1 if item i was displayed first, -1 if second (DIAL's ``a``), 0 when not recorded.
    count, wins, wins_sq : ndarray of float
        Per-cell sufficient statistics.
    humans : tuple of str
        Judges marked as human.
    n_rows : int
        Raw verdicts (the sum of ``count``).
    """

    items: tuple[str, ...]
    judges: tuple[str, ...]
    judge: NDArray[np.int64]
    item_i: NDArray[np.int64]
    item_j: NDArray[np.int64]
    order: NDArray[np.int64]
    count: NDArray[np.float64]
    wins: NDArray[np.float64]
    wins_sq: NDArray[np.float64]
    humans: tuple[str, ...] = ()
    n_rows: float = field(default=0.0)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        item_a: str = "item_a",
        item_b: str = "item_b",
        outcome: str = "outcome",
        judge: str | None = "judge",
        order: str | None = "order",
        count: str | None = "count",
        humans: Sequence[str] = (),
    ) -> Comparisons:
        """Validate a tidy frame of verdicts and aggregate it to cells.

        Parameters
        ----------
        df : DataFrame
            One row per verdict (or per group of identical verdicts with ``count``).
        item_a, item_b, outcome, judge, order, count : str
            Column names. ``outcome`` is P(item_a preferred): 1.0, 0.0, 0.5 for a tie (or
            verdict words, see notes). ``judge``, ``order`` and ``count`` are optional: when the
            named column is absent (or the argument is None) there is one judge ``"judge"``, no
            recorded order, and a count of one per row.
        humans : sequence of str
            Judge labels that are human raters.

        Returns
        -------
        Comparisons

        Raises
        ------
        DataError
            Empty frame, missing columns, missing values, an outcome outside [0, 1], a
            self-comparison, an order other than +1/-1, a non-positive count, fewer than two
            items, or a human label that is not a judge.

        Notes
        -----
        Verdict words (case-insensitive): the winning item's label, ``model_a``/``a``/``left``
        for item_a, ``model_b``/``b``/``right`` for item_b, ``tie``/``draw`` for a tie.
        """
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if len(df) == 0:
            raise DataError("the frame is empty: there are no comparisons to fit")
        required = {"item_a": item_a, "item_b": item_b, "outcome": outcome}
        missing = [f"{name!r} (looked for column {col!r})" for name, col in required.items()
                   if col not in df.columns]
        if missing:
            raise DataError(
                f"missing column(s) {', '.join(missing)}; the frame has {list(df.columns)}. "
                "Name the columns with keyword arguments, e.g. "
                "Comparisons.from_frame(df, item_a='model_a', item_b='model_b', outcome='winner')."
            )
        optional = {"judge": judge, "order": order, "count": count}
        present = {k: c for k, c in optional.items() if c is not None and c in df.columns}
        used = [item_a, item_b, outcome, *present.values()]
        for col in used:
            na = df[col].isna().to_numpy(bool)
            if na.any():
                raise DataError(
                    f"column {col!r} has missing values in rows {_rows(df.index, na)}; "
                    "drop or fill those rows before building Comparisons"
                )
        a = df[item_a].astype(str)
        b = df[item_b].astype(str)
        same = (a == b).to_numpy(bool)
        if same.any():
            raise DataError(
                f"self-comparison in rows {_rows(df.index, same)}: {item_a!r} equals {item_b!r} "
                f"(e.g. {a[same].iloc[0]!r}); a verdict needs two different items, drop those rows"
            )
        y = _outcome_values(df[outcome], a, b, outcome)
        bad = ~np.isfinite(y) | (y < 0) | (y > 1)
        if bad.any():
            raise DataError(
                f"column {outcome!r} must lie in [0, 1] (1 = item_a preferred, 0 = item_b, "
                f"0.5 = tie); rows {_rows(df.index, bad)} have {list(y[bad][:_MAX_LISTED])}"
            )
        if "order" in present:
            o_raw = pd.to_numeric(df[present["order"]], errors="coerce").to_numpy(np.float64)
            bad = ~np.isin(o_raw, (1.0, -1.0))
            if bad.any():
                raise DataError(
                    f"column {present['order']!r} must be +1 (item_a displayed first) or -1 "
                    f"(displayed second); rows {_rows(df.index, bad)} have "
                    f"{list(df[present['order']][bad][:_MAX_LISTED])}"
                )
            o = o_raw.astype(np.int64)
        else:
            o = np.zeros(len(df), dtype=np.int64)
        if "count" in present:
            n = pd.to_numeric(df[present["count"]], errors="coerce").to_numpy(np.float64)
            bad = ~np.isfinite(n) | (n <= 0)
            if bad.any():
                raise DataError(
                    f"column {present['count']!r} must be a positive number of verdicts; rows "
                    f"{_rows(df.index, bad)} have {list(n[bad][:_MAX_LISTED])}"
                )
        else:
            n = np.ones(len(df))
        k_lab = df[present["judge"]].astype(str) if "judge" in present else None
        items = tuple(sorted(set(a.unique()) | set(b.unique())))
        if len(items) < 2:
            raise DataError(f"only one item ({items[0]!r}) appears; a ranking needs at least two")
        judges = tuple(sorted(k_lab.unique())) if k_lab is not None else ("judge",)
        unknown = [h for h in humans if h not in judges]
        if unknown:
            raise DataError(f"humans={unknown} are not judges in the data; judges are {judges}")
        codes = pd.Index(items)
        ia = codes.get_indexer(a).astype(np.int64)
        ib = codes.get_indexer(b).astype(np.int64)
        kk = (pd.Index(judges).get_indexer(k_lab).astype(np.int64) if k_lab is not None
              else np.zeros(len(df), np.int64))
        return cls._aggregate(items, judges, kk, ia, ib, o, n, y, tuple(humans))

    @classmethod
    def _aggregate(
        cls,
        items: tuple[str, ...],
        judges: tuple[str, ...],
        k: NDArray[np.int64],
        ia: NDArray[np.int64],
        ib: NDArray[np.int64],
        o: NDArray[np.int64],
        n: NDArray[np.float64],
        y: NDArray[np.float64],
        humans: tuple[str, ...],
    ) -> Comparisons:
        """Sum rows into canonical cells; flipping a row flips its outcome and its order."""
        flip = ia > ib
        y = np.where(flip, 1.0 - y, y)
        return _cells(
            items,
            judges,
            humans,
            k,
            np.where(flip, ib, ia),
            np.where(flip, ia, ib),
            np.where(flip, -o, o),
            n,
            n * y,
            n * y * y,
        )

    # ------------------------------------------------------------------ views
    @property
    def n_items(self) -> int:
        """Number of items N."""
        return len(self.items)

    @property
    def n_judges(self) -> int:
        """Number of judges K."""
        return len(self.judges)

    @property
    def n_cells(self) -> int:
        """Number of non-empty cells."""
        return len(self.count)

    @property
    def has_order(self) -> bool:
        """True when display order was recorded for every verdict."""
        return bool(np.all(self.order != 0))

    @property
    def coords(self) -> dict[str, list[str]]:
        """Coordinates for PyMC models and xarray results (``item``, ``judge``)."""
        return {"item": list(self.items), "judge": list(self.judges)}

    def collapse(self, *, order: bool = True, judges: bool = False) -> Comparisons:
        """Pool cells over display order and/or judges (sufficient statistics stay exact).

        Parameters
        ----------
        order : bool
            Merge the two display orders of a (judge, pair) cell.
        judges : bool
            Merge all judges into one judge ``"pooled"``.
        """
        k = np.zeros_like(self.judge) if judges else self.judge
        o = np.zeros_like(self.order) if order else self.order
        labels = ("pooled",) if judges else self.judges
        humans = tuple(h for h in self.humans if h in labels)
        return _cells(
            self.items, labels, humans, k, self.item_i, self.item_j, o,
            self.count, self.wins, self.wins_sq,
        )

    def subset(self, judges: Iterable[str]) -> Comparisons:
        """Keep only the cells of the named judges (labels are re-coded)."""
        keep = list(judges)
        unknown = [j for j in keep if j not in self.judges]
        if unknown:
            raise DataError(f"unknown judge(s) {unknown}; judges are {self.judges}")
        old = np.array([self.judges.index(j) for j in keep])
        mask = np.isin(self.judge, old)
        if not mask.any():
            raise DataError(f"judges {keep} have no comparisons")
        remap = np.full(self.n_judges, -1, np.int64)
        remap[old] = np.arange(len(keep))
        return Comparisons(
            items=self.items,
            judges=tuple(keep),
            judge=remap[self.judge[mask]],
            item_i=self.item_i[mask],
            item_j=self.item_j[mask],
            order=self.order[mask],
            count=self.count[mask],
            wins=self.wins[mask],
            wins_sq=self.wins_sq[mask],
            humans=tuple(h for h in self.humans if h in keep),
            n_rows=float(self.count[mask].sum()),
        )

    def to_frame(self) -> pd.DataFrame:
        """The cells as a labelled frame (one row per cell, labels not codes)."""
        return pd.DataFrame(
            {
                "judge": np.asarray(self.judges, dtype=object)[self.judge],
                "item_i": np.asarray(self.items, dtype=object)[self.item_i],
                "item_j": np.asarray(self.items, dtype=object)[self.item_j],
                "order": self.order,
                "count": self.count,
                "wins": self.wins,
                "wins_sq": self.wins_sq,
            }
        )

    def __repr__(self) -> str:
        return (
            f"Comparisons({self.n_rows:g} verdicts in {self.n_cells} cells; "
            f"{self.n_items} items, {self.n_judges} judges"
            + (f", humans={list(self.humans)}" if self.humans else "")
            + (", display order recorded" if self.has_order else "")
            + ")"
        )


def _cells(
    items: tuple[str, ...],
    judges: tuple[str, ...],
    humans: tuple[str, ...],
    k: NDArray[np.int64],
    i: NDArray[np.int64],
    j: NDArray[np.int64],
    o: NDArray[np.int64],
    count: NDArray[np.float64],
    wins: NDArray[np.float64],
    wins_sq: NDArray[np.float64],
) -> Comparisons:
    """Sum per-row (or per-cell) statistics into one cell per (judge, i, j, order)."""
    n_items = len(items)
    # one integer key per cell; order is shifted from {-1, 0, 1} to {0, 1, 2}
    key = ((k * n_items + i) * n_items + j) * 3 + (o + 1)
    uniq, inv = np.unique(key, return_inverse=True)
    rest, oo = np.divmod(uniq, 3)
    rest, jj = np.divmod(rest, n_items)
    kk, ii = np.divmod(rest, n_items)
    cnt = np.bincount(inv, weights=count)
    return Comparisons(
        items=items,
        judges=judges,
        judge=kk.astype(np.int64),
        item_i=ii.astype(np.int64),
        item_j=jj.astype(np.int64),
        order=(oo - 1).astype(np.int64),
        count=cnt,
        wins=np.bincount(inv, weights=wins),
        wins_sq=np.bincount(inv, weights=wins_sq),
        humans=humans,
        n_rows=float(cnt.sum()),
    )
