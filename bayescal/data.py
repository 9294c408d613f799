"""Validated, integer-coded, cell-aggregated inputs.

Every model and twin in bayescal sees data through these containers: they validate the user's
frame before anything is fitted (a :class:`DataError` names the row, column or label and the
fix), code labels as integers while keeping the labels as coordinates, and reduce raw rows to
sufficient statistics so that fitting cost does not grow with the number of raw rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["Comparisons", "DataError", "Labels"]

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
    clusters : tuple of str
        Cluster labels (empty without a cluster key); only clusters with verdicts are kept.
    cluster_code, cluster_cell : ndarray of int
        One record per non-empty (cluster, cell): its cluster (indexes ``clusters``) and its
        cell (indexes the cell arrays).
    cluster_count, cluster_wins : ndarray of float
        Verdicts and wins of item i per record; summed over a cell's records they give
        ``count`` and ``wins``.
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
    # cluster-level sufficient statistics (empty without a cluster key); see from_frame(cluster=)
    clusters: tuple[str, ...] = ()
    cluster_code: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    cluster_cell: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    cluster_count: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    cluster_wins: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

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
        cluster: str | None = None,
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
        cluster : str, optional
            Column of a cluster key (a battle or question id) for cluster-robust intervals
            (``information="cluster"`` in the twins): verdicts sharing a key may be dependent,
            different keys are independent. The column must exist. Cells are unchanged; the
            (cluster, cell) sums are kept in ``cluster_code``, ``cluster_cell``,
            ``cluster_count`` and ``cluster_wins`` with labels ``clusters``.

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
        items = tuple(sorted(set(a.unique()) | set(b.unique())))
        if len(items) < 2:
            raise DataError(f"only one item ({items[0]!r}) appears; a ranking needs at least two")
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
        judges = tuple(sorted(k_lab.unique())) if k_lab is not None else ("judge",)
        unknown = [h for h in humans if h not in judges]
        if unknown:
            raise DataError(f"humans={unknown} are not judges in the data; judges are {judges}")
        codes = pd.Index(items)
        ia = codes.get_indexer(a).astype(np.int64)
        ib = codes.get_indexer(b).astype(np.int64)
        kk = (pd.Index(judges).get_indexer(k_lab).astype(np.int64) if k_lab is not None
              else np.zeros(len(df), np.int64))
        cells = cls._aggregate(items, judges, kk, ia, ib, o, n, y, tuple(humans))
        if cluster is None:
            return cells
        if cluster not in df.columns:
            raise DataError(
                f"cluster column {cluster!r} is not in the frame; the frame has "
                f"{list(df.columns)}. Name an existing column (e.g. a battle or question id)."
            )
        na = df[cluster].isna().to_numpy(bool)
        if na.any():
            raise DataError(
                f"cluster column {cluster!r} has missing values in rows {_rows(df.index, na)}; "
                "every verdict needs a cluster key (give singletons their own key)"
            )
        return _with_clusters(cells, df[cluster].astype(str).to_numpy(), kk, ia, ib, o, n, y)

    @classmethod
    def from_codes(
        cls,
        items: Sequence[str],
        judges: Sequence[str],
        *,
        judge: ArrayLike,
        item_a: ArrayLike,
        item_b: ArrayLike,
        outcome: ArrayLike,
        order: ArrayLike | None = None,
        count: ArrayLike | None = None,
        humans: Sequence[str] = (),
        cluster: ArrayLike | None = None,
    ) -> Comparisons:
        """Build from integer codes (fast path for simulations; codes index ``items``/``judges``).

        ``cluster`` (optional) is a cluster key per row, as in :meth:`from_frame`.

        Raises
        ------
        DataError
            Codes out of range, a self-comparison, or an outcome outside [0, 1].
        """
        ia = np.asarray(item_a, dtype=np.int64)
        ib = np.asarray(item_b, dtype=np.int64)
        k = np.asarray(judge, dtype=np.int64)
        y = np.asarray(outcome, dtype=np.float64)
        n = np.ones(len(ia)) if count is None else np.asarray(count, dtype=np.float64)
        o = np.zeros(len(ia), np.int64) if order is None else np.asarray(order, dtype=np.int64)
        if len(ia) == 0:
            raise DataError("there are no comparisons")
        if len(items) < 2:
            raise DataError(f"only {len(items)} item(s) {list(items)}; a ranking needs two")
        if not (len(ia) == len(ib) == len(k) == len(y) == len(n) == len(o)):
            raise DataError("judge, item_a, item_b, outcome, order and count differ in length")
        bad = (ia < 0) | (ia >= len(items)) | (ib < 0) | (ib >= len(items))
        bad |= (k < 0) | (k >= len(judges))
        if bad.any():
            raise DataError(f"codes out of range at positions {np.flatnonzero(bad)[:5].tolist()}")
        if (ia == ib).any():
            raise DataError(f"self-comparison at positions {np.flatnonzero(ia == ib)[:5].tolist()}")
        if not np.all((y >= 0) & (y <= 1)):
            raise DataError("outcome must lie in [0, 1]")
        cells = cls._aggregate(
            tuple(items), tuple(judges), k, ia, ib, o, n, y, tuple(humans)
        )
        if cluster is None:
            return cells
        labels = np.asarray(cluster).astype(str)
        if labels.shape != ia.shape:
            raise DataError(f"cluster has {labels.size} keys for {len(ia)} comparisons")
        return _with_clusters(cells, labels, k, ia, ib, o, n, y)

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
        out = _cells(
            self.items, labels, humans, k, self.item_i, self.item_j, o,
            self.count, self.wins, self.wins_sq,
        )
        if not self.clusters:
            return out
        moved = _cell_index(out, k, self.item_i, self.item_j, o)
        return _cluster_sums(out, self.clusters, self.cluster_code, moved[self.cluster_cell],
                             self.cluster_count, self.cluster_wins)

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
        out = Comparisons(
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
        if not self.clusters:
            return out
        kept = mask[self.cluster_cell]
        new_index = np.cumsum(mask) - 1
        return _cluster_sums(out, self.clusters, self.cluster_code[kept],
                             new_index[self.cluster_cell[kept]], self.cluster_count[kept],
                             self.cluster_wins[kept])

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
            + (f", {len(self.clusters)} clusters" if self.clusters else "")
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


def _cell_key(
    n_items: int, k: NDArray[np.int64], i: NDArray[np.int64], j: NDArray[np.int64],
    o: NDArray[np.int64],
) -> NDArray[np.int64]:
    # the same key as _cells: order shifted from {-1, 0, 1} to {0, 1, 2}
    return ((k * n_items + i) * n_items + j) * 3 + (o + 1)


def _cell_index(
    cells: Comparisons, k: NDArray[np.int64], i: NDArray[np.int64], j: NDArray[np.int64],
    o: NDArray[np.int64],
) -> NDArray[np.int64]:
    """Index into ``cells`` of each canonical (judge, i, j, order) record."""
    keys = _cell_key(cells.n_items, cells.judge, cells.item_i, cells.item_j, cells.order)
    want = _cell_key(cells.n_items, k, i, j, o)
    sort = np.argsort(keys, kind="stable")
    pos = np.minimum(np.searchsorted(keys[sort], want), len(keys) - 1)
    index = sort[pos]
    if not np.array_equal(keys[index], want):
        raise AssertionError("a cluster record has no cell; the aggregation is inconsistent")
    return index.astype(np.int64)


def _with_clusters(
    cells: Comparisons,
    labels: NDArray[np.str_],
    k: NDArray[np.int64],
    ia: NDArray[np.int64],
    ib: NDArray[np.int64],
    o: NDArray[np.int64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
) -> Comparisons:
    """Attach (cluster, cell) sums of raw rows to ``cells`` (rows flipped as in _aggregate)."""
    flip = ia > ib
    cell = _cell_index(cells, k, np.where(flip, ib, ia), np.where(flip, ia, ib),
                       np.where(flip, -o, o))
    clusters, code = np.unique(labels, return_inverse=True)
    return _cluster_sums(cells, tuple(str(c) for c in clusters), code.astype(np.int64), cell,
                         n, n * np.where(flip, 1.0 - y, y))


def _cluster_sums(
    cells: Comparisons,
    clusters: tuple[str, ...],
    code: NDArray[np.int64],
    cell: NDArray[np.int64],
    count: NDArray[np.float64],
    wins: NDArray[np.float64],
) -> Comparisons:
    """Sum records into one per (cluster, cell); clusters left without verdicts are dropped.

    Dropping matters: the number of clusters G enters the small-sample factor G / (G - 1).
    """
    key = code * cells.n_cells + cell
    uniq, inv = np.unique(key, return_inverse=True)
    g, c = np.divmod(uniq, cells.n_cells)
    used, g_new = np.unique(g, return_inverse=True)
    return replace(
        cells,
        clusters=tuple(clusters[u] for u in used),
        cluster_code=g_new.astype(np.int64),
        cluster_cell=c.astype(np.int64),
        cluster_count=np.bincount(inv, weights=count),
        cluster_wins=np.bincount(inv, weights=wins),
    )


def _as_judge_matrix(
    values: ArrayLike, name: str, judges: Sequence[str] | None
) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"{name} must be a vector (one judge) or an items x judges matrix")
    if judges is not None and arr.shape[1] != len(judges):
        raise DataError(
            f"{name} has {arr.shape[1]} judge column(s) but {len(judges)} judge name(s) were given"
        )
    return arr


@dataclass(frozen=True)
class Labels:
    """Human labels on a calibration set and judge labels on every item (seed 001).

    The calibration set (m items) has the human label Y and the judge label(s) Ŷ; the test set
    (n items) has only Ŷ; N = n + m. Several judges label the same items as columns of
    ``yhat_cal`` / ``yhat_test``. Values may be binary, discrete or continuous; estimators that
    need binary labels check it (:meth:`require_binary`).

    Attributes
    ----------
    y_cal : ndarray, shape (m,)
    yhat_cal : ndarray, shape (m, K)
    yhat_test : ndarray, shape (n, K)
    judges : tuple of str
    cal_index, test_index : pandas.Index
        Row labels of the calibration and test items, used in error messages.
    """

    y_cal: NDArray[np.float64]
    yhat_cal: NDArray[np.float64]
    yhat_test: NDArray[np.float64]
    judges: tuple[str, ...]
    cal_index: pd.Index
    test_index: pd.Index

    @classmethod
    def from_arrays(
        cls,
        y_cal: ArrayLike,
        yhat_cal: ArrayLike,
        yhat_test: ArrayLike,
        *,
        judges: Sequence[str] | None = None,
    ) -> Labels:
        """Labels from arrays.

        Parameters
        ----------
        y_cal : array, shape (m,)
            Human labels of the calibration items.
        yhat_cal : array, shape (m,) or (m, K)
            Judge labels of the calibration items (one column per judge).
        yhat_test : array, shape (n,) or (n, K)
            Judge labels of the test items.
        judges : sequence of str, optional
            Judge names (default ``judge``, or ``judge_0..`` for several).

        Raises
        ------
        DataError
            Missing values, length mismatch, an empty calibration or test set, or a judge
            count that differs between the two sets.
        """
        y = np.asarray(y_cal, dtype=np.float64)
        if y.ndim != 1:
            raise DataError(f"y_cal must be a vector, got shape {y.shape}")
        hc = _as_judge_matrix(yhat_cal, "yhat_cal", judges)
        ht = _as_judge_matrix(yhat_test, "yhat_test", judges)
        if hc.shape[0] != y.shape[0]:
            raise DataError(
                f"length mismatch: y_cal has {y.shape[0]} items but yhat_cal has {hc.shape[0]}; "
                "both describe the same calibration items"
            )
        if hc.shape[1] != ht.shape[1]:
            raise DataError(
                f"yhat_cal has {hc.shape[1]} judge(s) but yhat_test has {ht.shape[1]}"
            )
        k = hc.shape[1]
        names = tuple(judges) if judges is not None else (
            ("judge",) if k == 1 else tuple(f"judge_{i}" for i in range(k)))
        return cls._checked(y, hc, ht, names, pd.RangeIndex(len(y)), pd.RangeIndex(len(ht)))

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        human: str = "human",
        judge: str | Sequence[str] = "judge",
        labelled: str | None = None,
    ) -> Labels:
        """Labels from a frame with one row per item.

        Parameters
        ----------
        df : DataFrame
        human : str
            Column of human labels (read on labelled rows only).
        judge : str or sequence of str
            Column(s) of judge labels, one per judge.
        labelled : str, optional
            Boolean column marking the calibration rows. Default: rows whose human label is
            present.

        Raises
        ------
        DataError
            Missing columns, a non-boolean mask, missing judge labels, or an empty split.
        """
        cols = [judge] if isinstance(judge, str) else list(judge)
        needed = [human, *cols] + ([labelled] if labelled is not None else [])
        missing = [c for c in needed if c not in df.columns]
        if missing:
            raise DataError(
                f"missing column(s) {missing}; the frame has {list(df.columns)}. Name the columns "
                "with human=..., judge=..., labelled=..."
            )
        if labelled is not None:
            mask_raw = df[labelled]
            if not pd.api.types.is_bool_dtype(mask_raw):
                if mask_raw.isna().any() or not mask_raw.isin([0, 1, True, False]).all():
                    bad = (~mask_raw.isin([0, 1, True, False]) | mask_raw.isna()).to_numpy(bool)
                    raise DataError(
                        f"column {labelled!r} must be True/False (calibration item or not); rows "
                        f"{_rows(df.index, bad)} have {list(mask_raw[bad][:_MAX_LISTED])}"
                    )
            mask = mask_raw.astype(bool).to_numpy()
        else:
            mask = df[human].notna().to_numpy(bool)
        cal, test = df[mask], df[~mask]
        y = pd.to_numeric(cal[human], errors="coerce")
        bad = y.isna().to_numpy(bool)
        if bad.any():
            raise DataError(
                f"column {human!r} must hold a number on every labelled row; rows "
                f"{_rows(cal.index, bad)} have {list(cal[human][bad][:_MAX_LISTED])}"
            )
        hc = cal[cols].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
        ht = test[cols].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
        return cls._checked(y.to_numpy(np.float64), hc, ht, tuple(cols), cal.index, test.index)

    @classmethod
    def random_split(
        cls,
        df: pd.DataFrame,
        *,
        human: str = "human",
        judge: str | Sequence[str] = "judge",
        fraction: float,
        random_seed: int | np.random.Generator | None = None,
    ) -> Labels:
        """Labels from a fully human-labelled frame, keeping the human label on a random subset.

        The calibration set is a simple random sample of ``round(fraction * len(df))`` rows
        (seed 001 §6: 10% calibration, the rest treated as unlabelled); the other rows' human
        labels are not used.

        Parameters
        ----------
        df : DataFrame
        human, judge : str
            Columns, as in :meth:`from_frame`.
        fraction : float
            Share of rows that keep their human label, in (0, 1).
        random_seed : int or Generator, optional
        """
        if not 0 < fraction < 1:
            raise DataError(f"fraction must lie strictly between 0 and 1, got {fraction!r}")
        rng = np.random.default_rng(random_seed)
        mask = np.zeros(len(df), dtype=bool)
        mask[rng.choice(len(df), size=round(fraction * len(df)), replace=False)] = True
        return cls.from_frame(df.assign(_labelled=mask), human=human, judge=judge,
                              labelled="_labelled")

    @classmethod
    def _checked(
        cls,
        y: NDArray[np.float64],
        hc: NDArray[np.float64],
        ht: NDArray[np.float64],
        judges: tuple[str, ...],
        cal_index: pd.Index,
        test_index: pd.Index,
    ) -> Labels:
        if len(y) == 0:
            raise DataError("the calibration set is empty: at least one human label is needed")
        if len(ht) == 0:
            raise DataError("the test set is empty: there are no judge-only items to use")
        for name, arr, index in (("y_cal", y[:, None], cal_index), ("yhat_cal", hc, cal_index),
                                 ("yhat_test", ht, test_index)):
            bad = ~np.isfinite(arr)
            if bad.any():
                rows = bad.any(axis=1)
                cols = [judges[c] for c in np.flatnonzero(bad.any(axis=0))] if name != "y_cal" \
                    else ["human"]
                raise DataError(
                    f"{name} has missing or non-numeric values (judge {cols}) in rows "
                    f"{_rows(index, rows)}; drop those items or fill them"
                )
        return cls(y, hc, ht, judges, cal_index, test_index)

    # ------------------------------------------------------------------ views
    @property
    def m(self) -> int:
        """Calibration items (human-labelled)."""
        return len(self.y_cal)

    @property
    def n(self) -> int:
        """Test items (judge labels only)."""
        return len(self.yhat_test)

    @property
    def n_judges(self) -> int:
        """Number of judges K."""
        return len(self.judges)

    def judge(self, name: str | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """One judge's labels ``(yhat_cal, yhat_test)``; the only judge when ``name`` is None."""
        if name is None:
            if self.n_judges != 1:
                raise DataError(
                    f"there are {self.n_judges} judges {list(self.judges)}; name one (judge=...)"
                )
            k = 0
        elif name in self.judges:
            k = self.judges.index(name)
        else:
            raise DataError(f"unknown judge {name!r}; judges are {list(self.judges)}")
        return self.yhat_cal[:, k], self.yhat_test[:, k]

    def select(self, judges: Sequence[str]) -> Labels:
        """The same items with only the named judges' columns, in that order."""
        unknown = [j for j in judges if j not in self.judges]
        if unknown or not judges:
            raise DataError(f"unknown judge(s) {unknown}; judges are {list(self.judges)}")
        cols = [self.judges.index(j) for j in judges]
        return Labels(self.y_cal, self.yhat_cal[:, cols], self.yhat_test[:, cols], tuple(judges),
                      self.cal_index, self.test_index)

    def is_binary(self) -> bool:
        """All human and judge labels are 0 or 1."""
        return all(np.isin(a, (0.0, 1.0)).all() for a in (self.y_cal, self.yhat_cal,
                                                           self.yhat_test))

    def require_binary(self) -> None:
        """Raise :class:`DataError` naming the first non-binary labels."""
        for name, arr, index in (("human label (y_cal)", self.y_cal[:, None], self.cal_index),
                                 ("judge label (yhat_cal)", self.yhat_cal, self.cal_index),
                                 ("judge label (yhat_test)", self.yhat_test, self.test_index)):
            bad = ~np.isin(arr, (0.0, 1.0))
            if bad.any():
                rows = bad.any(axis=1)
                raise DataError(
                    f"{name} must be 0 or 1 for this estimator; rows {_rows(index, rows)} have "
                    f"{sorted(set(arr[bad].tolist()))[:_MAX_LISTED]}. Binarise the labels, or use "
                    "an estimator for continuous labels."
                )

    def __repr__(self) -> str:
        return (f"Labels(m={self.m} calibration, n={self.n} test items; "
                f"judges={list(self.judges)})")
