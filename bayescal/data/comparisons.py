"""Pairwise verdicts: validated, integer-coded and aggregated to cells (judge, pair, order)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayescal.data.normalize import (
    _MAX_LISTED,
    DataError,
    LabelNormalizationWarning,
    _canonical,
    _coded_labels,
    _column_problems,
    _DefaultColumn,
    _missing_columns_error,
    _numbers,
    _rows,
)

__all__ = ["BUILTIN_CLUSTER_KEYS", "ClusterRecords", "Comparisons"]


_TIE_WORDS = frozenset({"tie", "draw", "equal", "tie (bothbad)", "both_bad", "bothbad", "c"})
_A_WORDS = frozenset({"a", "model_a", "item_a", "left", "first"})
_B_WORDS = frozenset({"b", "model_b", "item_b", "right", "second"})


OUTCOME_KINDS = ("auto", "code", "winner")


def _code_meaning(text: str) -> float:
    """What a text means as a verdict code: a number, or a verdict word; NaN if neither."""
    lower = text.lower()
    if lower in _A_WORDS:
        return 1.0
    if lower in _B_WORDS:
        return 0.0
    if lower in _TIE_WORDS:
        return 0.5
    try:
        value = float(text)
    except ValueError:
        return np.nan
    return value if np.isfinite(value) else np.nan


def _is_number(text: str) -> bool:
    try:
        return bool(np.isfinite(float(text)))
    except ValueError:
        return False


def _outcome_values(
    raw: pd.Series,
    ia: NDArray[np.int64],
    ib: NDArray[np.int64],
    items: tuple[str, ...],
    column: str,
    kind: str = "auto",
) -> NDArray[np.float64]:
    """Turn an outcome column into P(item_a preferred): verdict codes or the winner's label.

    ``kind="code"``: numbers (1 = item_a preferred, 0 = item_b, 0.5 = tie) and verdict words
    (case-insensitive): ``a``/``model_a``/``item_a``/``left``/``first`` for item_a,
    ``b``/``model_b``/``item_b``/``right``/``second`` for item_b, ``tie``/``draw``/
    ``tie (bothbad)`` for a tie. ``kind="winner"``: the winning item's label (item_a -> 1,
    item_b -> 0) or a tie word. ``kind="auto"``: each distinct value is read as whichever of
    the two it can be; a value that is both an item label and a code (items ``1``, ``2`` and an
    outcome ``1``) is refused unless both readings agree on every row. Values are read once per
    distinct value, not per row.
    """
    if kind not in OUTCOME_KINDS:
        raise DataError(f"outcome_kind must be one of {list(OUTCOME_KINDS)}, got {kind!r}",
                        argument="outcome_kind")
    numeric = pd.api.types.is_bool_dtype(raw) or pd.api.types.is_numeric_dtype(raw)
    if numeric and kind != "winner" and (
            kind == "code" or not any(_is_number(x) for x in items)):
        return raw.to_numpy(dtype=np.float64)  # no item label can equal a number
    codes, uniques = pd.factorize(raw)
    value = np.full(len(uniques), np.nan)  # meaning as a verdict code
    named = np.full(len(uniques), -1, np.int64)  # code of the item the value names
    item_code = {lab: c for c, lab in enumerate(items)}
    for u, v in enumerate(uniques):
        text = _canonical(v)
        if kind != "winner":
            value[u] = (float(v) if isinstance(v, (bool, np.bool_, int, float, np.number))
                        else _code_meaning(text))
        if kind != "code":
            named[u] = item_code.get(text, -1)
            if kind == "winner" and named[u] < 0 and text.lower() in _TIE_WORDS:
                value[u] = 0.5
    out = value[codes]
    label_rows = named[codes] >= 0
    if label_rows.any():
        winner = named[codes]
        by_label = np.where(ia == winner, 1.0, np.where(ib == winner, 0.0, np.nan))
        ambiguous = label_rows & ~np.isnan(out)
        differ = ambiguous & (by_label != out)  # a NaN by_label differs too
        if differ.any():
            both = sorted({_canonical(v) for u, v in enumerate(uniques)
                           if named[u] >= 0 and not np.isnan(value[u])})
            first = int(np.flatnonzero(differ)[0])
            raise DataError(
                f"column {column!r} holds values that are both an item's label and a verdict "
                f"code ({both[:_MAX_LISTED]}), and the two readings differ in rows "
                f"{_rows(raw.index, differ)} (e.g. row {raw.index[first]!r}: item_a "
                f"{items[ia[first]]!r}, item_b {items[ib[first]]!r}, outcome "
                f"{_canonical(raw.iloc[first])!r}). Say which is meant: outcome_kind='code' "
                "(1 = item_a preferred, 0 = item_b, 0.5 = tie) or outcome_kind='winner' (the "
                "value is the winning item's label), or write the verdicts as 'model_a' / "
                "'model_b' / 'tie'.",
                argument="outcome",
            )
        stray = label_rows & np.isnan(by_label) & np.isnan(out)
        if stray.any():
            raise DataError(
                f"column {column!r} names an item that is neither item_a nor item_b of its row "
                f"(rows {_rows(raw.index, stray)}: "
                f"{sorted(set(raw[stray].head(_MAX_LISTED).astype(str)))})",
                argument="outcome",
            )
        out = np.where(label_rows & np.isnan(out), by_label, out)
    unknown = np.isnan(out)
    if unknown.any():
        examples = sorted(set(raw[unknown].head(_MAX_LISTED).astype(str)))
        expected = {"auto": "neither a number in [0, 1], a known word nor an item's label",
                    "code": "neither a number in [0, 1] nor a known word (outcome_kind='code')",
                    "winner": "neither an item's label nor a tie word (outcome_kind='winner')"}
        raise DataError(
            f"column {column!r} has verdicts that are {expected[kind]} (rows "
            f"{_rows(raw.index, unknown)}: {examples}). Use 1 / 0 / 0.5, the winning item's "
            "label, 'model_a' / 'model_b', or 'tie'.",
            argument="outcome",
        )
    return out


def _whole(values: ArrayLike, name: str) -> NDArray[np.int64]:
    """Integer codes, refusing what a cast to int would silently change (0.7 -> 0, NaN)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False).ravel()
    if arr.dtype.kind != "f":
        raise DataError(f"{name} must be integer codes, got values of type {arr.dtype}",
                        argument=name)
    bad = ~np.isfinite(arr) | (arr != np.round(arr))
    if bad.any():
        where = np.flatnonzero(bad.ravel())
        raise DataError(f"{name} must be whole numbers (integer codes); positions "
                        f"{where[:_MAX_LISTED].tolist()} have "
                        f"{arr.ravel()[where[:_MAX_LISTED]].tolist()}", argument=name)
    return arr.astype(np.int64).ravel()


BUILTIN_CLUSTER_KEYS = {
    "judge_pair": "judge x unordered item pair, both display orders pooled (DIAL's cells)",
    "pair": "unordered item pair, all judges and display orders pooled",
}


@dataclass(frozen=True)
class ClusterRecords:
    """Verdict sums per non-empty (cluster, cell) of one cluster key.

    Attributes
    ----------
    key : str
        The key's name (a column of the user's frame, or a built-in key).
    labels : tuple of str
        Cluster labels; ``code`` indexes them.
    code, cell : ndarray of int
        Per record: its cluster and its cell (an index into the cells it was made from).
    count, wins : ndarray of float
        Per record: verdicts and wins of item i. Summed over a cell's records they give the
        cell's ``count`` and ``wins``.
    """

    key: str
    labels: tuple[str, ...]
    code: NDArray[np.int64]
    cell: NDArray[np.int64]
    count: NDArray[np.float64]
    wins: NDArray[np.float64]

    @property
    def n_clusters(self) -> int:
        """Number of clusters G with at least one verdict."""
        return int(np.unique(self.code).size)


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
    cluster_key : str or None
        Name of the cluster key the data carry (the ``cluster`` column of :meth:`from_frame`;
        ``"cluster"`` from :meth:`from_codes`), None without one.
    cluster_count, cluster_wins : ndarray of float
        Verdicts and wins of item i per record; summed over a cell's records they give
        ``count`` and ``wins``.
    feature_names : tuple of str
        Names of the comparison features (empty without features).
    features : ndarray of float
        (cells x features): each cell's feature differences :math:`x_i - x_j` in the canonical
        orientation (item i minus item j). With features a cell is a distinct (judge, i, j,
        order, x): cells stay sufficient statistics where the features take few values, and
        number at most the verdicts where they are continuous.
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
    cluster_key: str | None = None
    cluster_code: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    cluster_cell: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    cluster_count: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    cluster_wins: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    # per-cell feature differences x_i - x_j (empty without features); see from_frame(features=)
    feature_names: tuple[str, ...] = ()
    features: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 0)))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        item_a: str = "item_a",
        item_b: str = "item_b",
        outcome: str = "outcome",
        judge: str | None = _DefaultColumn("judge"),
        order: str | None = _DefaultColumn("order"),
        count: str | None = _DefaultColumn("count"),
        humans: Sequence[str] = (),
        fractional: bool = False,
        cluster: str | None = None,
        outcome_kind: str = "auto",
        features: Mapping[str, tuple[str, str]] | Sequence[tuple[str, str]] | None = None,
    ) -> Comparisons:
        """Validate a tidy frame of verdicts and aggregate it to cells.

        Parameters
        ----------
        df : DataFrame
            One row per verdict (or per group of identical verdicts with ``count``).
        item_a, item_b, outcome, judge, order, count : str
            Column names. ``outcome`` is P(item_a preferred): 1, 0, or 1/2 for a tie (or
            verdict words, see notes). ``judge``, ``order`` and ``count`` are optional: left at
            their defaults, an absent column means one judge ``"judge"``, no recorded order and
            a count of one per row; ``None`` does without the column. A column named by the
            caller must exist (even ``judge="judge"``).
        humans : sequence of str
            Judge labels that are human raters.
        fractional : bool
            Accept soft outcomes anywhere in [0, 1] and positive non-integer counts, read as
            frequency weights (a count of 0.5 is half a verdict). The likelihood is then a
            quasi-likelihood: each row adds count × outcome to the wins of item_a, and the
            sandwich variance (``information="sandwich"``) uses the per-cell sum of
            count × outcome² (``wins_sq``), so soft outcomes get their own spread; the expected
            and observed informations still assume verdicts.
        cluster : str, optional
            Column of a cluster key (a battle or question id) for cluster-robust intervals
            (``information="cluster"`` in the twins): verdicts sharing a key may be dependent,
            different keys are independent. The column must exist. Cells are unchanged; the
            (cluster, cell) sums are kept in ``cluster_code``, ``cluster_cell``,
            ``cluster_count`` and ``cluster_wins`` with labels ``clusters``.
        outcome_kind : {"auto", "code", "winner"}
            How ``outcome`` is read: ``"code"``, a verdict code (a number, or a word such as
            ``model_a``, see notes); ``"winner"``, the winning item's label (or a tie word);
            ``"auto"`` (default), whichever of the two each value can be. A value that is both
            (items labelled ``1`` and ``2`` and an outcome ``1``: item_a preferred, or item
            ``"1"``?) is refused in ``"auto"`` unless both readings agree on every row.
        features : mapping of name to (column_a, column_b), or sequence of (column_a, column_b)
            Comparison features: per row, the feature of item_a's answer and of item_b's
            (already transformed by the user, e.g. log lengths for a log length ratio). The
            cells carry the differences ``x_a - x_b``, turned to ``x_i - x_j`` with the
            canonical orientation, in :attr:`features`; a sequence names each feature by the
            two columns' common stem (``loglen_a``, ``loglen_b``: ``loglen``), else
            ``"column_a-column_b"``. Values must be finite numbers.

        Returns
        -------
        Comparisons

        Raises
        ------
        DataError
            Empty frame, a missing column, missing values, blank labels, an outcome other than
            0, 1/2, 1 (outside [0, 1] with ``fractional``), an outcome that is both an item's
            label and a code with readings that differ (``outcome_kind``), a self-comparison,
            an order other than +1/-1, a count that is not a positive whole number (not
            positive with ``fractional``), fewer than two items, a human label that is not
            a judge, a feature column that is missing or not a finite number, or two features
            with one name.

        Warns
        -----
        LabelNormalizationWarning
            When labels (items, judges, cluster keys) were rewritten, each with the reason:
            surrounding whitespace removed; Unicode composed (NFC: ``café`` typed with a
            combining accent is ``café``); zero-width characters removed; Unicode spaces made
            ordinary; a number written once (an integer 1 and a float 1.0 are both ``"1"``).
            Text is never read as a number: ``"007"`` and ``"7"`` are two items.

        Notes
        -----
        Verdict words (case-insensitive): the winning item's label, ``model_a``/``a``/``left``
        for item_a, ``model_b``/``b``/``right`` for item_b, ``tie``/``draw`` for a tie.
        Outcomes, orders and counts may be numbers or text (a file read as text): text is
        parsed once per distinct value, and a text that is not a number is refused by row.
        """
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if len(df) == 0:
            raise DataError("the frame is empty: there are no comparisons to fit")
        named = {"item_a": item_a, "item_b": item_b, "outcome": outcome, "judge": judge,
                 "order": order, "count": count, "cluster": cluster}
        feature_columns = _feature_columns(features)
        problems = _column_problems(
            df, {**named, "features": [c for pair in feature_columns.values() for c in pair]})
        if problems:
            raise _missing_columns_error(
                df, problems, "Name the columns with keyword arguments, e.g. "
                "Comparisons.from_frame(df, item_a='model_a', item_b='model_b', outcome='winner')."
            )
        present = {k: c for k, c in named.items() if c is not None and c in df.columns}
        for argument, col in present.items():
            na = df[col].isna().to_numpy(bool)
            if na.any():
                raise DataError(
                    f"column {col!r} has missing values in rows {_rows(df.index, na)}; "
                    "drop or fill those rows before building Comparisons",
                    argument=argument,
                )
        codes_a, labels_a, note_a = _coded_labels(df[item_a], item_a, "item_a")
        codes_b, labels_b, note_b = _coded_labels(df[item_b], item_b, "item_b")
        items = tuple(sorted(set(labels_a) | set(labels_b)))
        if len(items) < 2:
            raise DataError(f"only one item ({items[0]!r}) appears; a ranking needs at least two")
        item_index = pd.Index(items)
        ia = _compact_recode(codes_a, labels_a, item_index)
        ib = _compact_recode(codes_b, labels_b, item_index)
        del codes_a, codes_b  # a million rows are 8 MB per int64 column
        same = ia == ib
        if same.any():
            raise DataError(
                f"self-comparison in rows {_rows(df.index, same)}: {item_a!r} equals {item_b!r} "
                f"(e.g. {items[ia[same][0]]!r}); a verdict needs two different items, drop those "
                "rows"
            )
        if "judge" in present:
            codes_k, labels_k, note_k = _coded_labels(df[present["judge"]], present["judge"],
                                                      "judge")
            judges = tuple(sorted(set(labels_k)))
            kk = _compact_recode(codes_k, labels_k, pd.Index(judges))
            del codes_k
        else:
            note_k, judges, kk = None, ("judge",), np.zeros(len(df), np.int8)
        if "cluster" in present:
            codes_c, labels_c, note_c = _coded_labels(df[cluster], cluster, "cluster")
        else:
            note_c = None
        notes = [n for n in (note_a, note_b, note_k, note_c) if n is not None]
        human_labels = tuple(_canonical(h) for h in humans)
        renamed = [f"{h!r} -> {c!r}" for h, c in zip(humans, human_labels, strict=True)
                   if h != c]
        if renamed:
            notes.append(f"humans: {', '.join(renamed)}")
        if notes:
            warnings.warn(
                f"labels normalised: {'; '.join(notes)}. Clean the labels to silence this "
                "warning.",
                LabelNormalizationWarning,
                stacklevel=2,
            )
        unknown = [h for h, c in zip(humans, human_labels, strict=True) if c not in judges]
        if unknown:
            raise DataError(f"humans={unknown} are not judges in the data; judges are {judges}",
                            argument="humans")
        y = _outcome_values(df[outcome], ia, ib, items, outcome, outcome_kind)
        bad = ~((y >= 0) & (y <= 1))
        if bad.any():
            raise DataError(
                f"column {outcome!r} must lie in [0, 1] (1 = item_a preferred, 0 = item_b, "
                f"0.5 = tie); rows {_rows(df.index, bad)} have "
                f"{df[outcome][bad][:_MAX_LISTED].tolist()}",
                argument="outcome",
            )
        if not fractional:
            soft = ~((y == 0.0) | (y == 1.0) | (y == 0.5))
            if soft.any():
                raise DataError(
                    f"column {outcome!r} must be 0, 1/2 or 1 (item_b preferred, tie, item_a "
                    f"preferred); rows {_rows(df.index, soft)} have "
                    f"{df[outcome][soft][:_MAX_LISTED].tolist()}. Soft outcomes (probabilities, "
                    "scores) are not verdicts; pass fractional=True to fit them as weights.",
                    argument="outcome",
                )
        if "order" in present:
            o_raw = _numbers(df[present["order"]], present["order"], refuse=False)
            bad = ~np.isin(o_raw, (1.0, -1.0))
            if bad.any():
                raise DataError(
                    f"column {present['order']!r} must be +1 (item_a displayed first) or -1 "
                    f"(displayed second); rows {_rows(df.index, bad)} have "
                    f"{list(df[present['order']][bad][:_MAX_LISTED])}",
                    argument="order",
                )
            o = o_raw.astype(np.int8)
            del o_raw
        else:
            o = None  # not recorded: no column of zeros
        if "count" in present:
            n = _numbers(df[present["count"]], present["count"], refuse=False)
            bad = ~np.isfinite(n) | (n <= 0)
            if not fractional:
                bad |= n != np.floor(n)
            if bad.any():
                raise DataError(
                    f"column {present['count']!r} must be a positive "
                    f"{'number' if fractional else 'whole number'} of verdicts; rows "
                    f"{_rows(df.index, bad)} have "
                    f"{df[present['count']][bad][:_MAX_LISTED].tolist()}"
                    + ("" if fractional else " (weights need fractional=True)"),
                    argument="count",
                )
        else:
            n = None  # one verdict per row: no column of ones
        x = _feature_differences(df, feature_columns) if feature_columns else None
        cells, row_cell = cls._aggregate(items, judges, kk, ia, ib, o, n, y, human_labels,
                                         x, tuple(feature_columns))
        if cluster is None:
            return cells
        keys = np.asarray(labels_c, dtype=object)[codes_c].astype(str)
        if row_cell is not None:
            # with features a (judge, pair, order) key no longer names one cell: use the rows'
            # own cells from the aggregation
            clusters, code = np.unique(keys, return_inverse=True)
            flip = ia > ib
            w = np.ones(len(df)) if n is None else n
            return _cluster_sums(replace(cells, cluster_key=str(cluster)),
                                 tuple(str(c) for c in clusters), code.astype(np.int64),
                                 row_cell, w, w * np.where(flip, 1.0 - y, y))
        return _with_clusters(cells, str(cluster), keys, kk, ia, ib,
                              np.zeros(len(df), np.int64) if o is None else o,
                              np.ones(len(df)) if n is None else n, y)

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
        fractional: bool = False,
        cluster: ArrayLike | None = None,
    ) -> Comparisons:
        """Build from integer codes (fast path for simulations; codes index ``items``/``judges``).

        ``fractional`` accepts soft outcomes in [0, 1] and non-integer counts, and ``cluster``
        (optional) is a cluster key per row, as in :meth:`from_frame`.

        Raises
        ------
        DataError
            Codes that are not whole numbers (0.7 is not a code) or out of range, repeated
            item or judge labels, a self-comparison, an outcome other than 0, 1/2, 1 (outside
            [0, 1] with ``fractional``), a count that is not a positive whole number, an order
            other than -1, 0, +1 (0.5 is none of them), or ``humans`` that are not judges.
        """
        ia = _whole(item_a, "item_a")
        ib = _whole(item_b, "item_b")
        k = _whole(judge, "judge")
        try:
            y = np.asarray(outcome, dtype=np.float64)
            n = None if count is None else np.asarray(count, dtype=np.float64)
        except (TypeError, ValueError):
            raise DataError("outcome and count must be numbers") from None
        o = None if order is None else _whole(order, "order")
        for what, labels in (("items", items), ("judges", judges)):
            repeated = sorted({str(x) for x in labels if list(labels).count(x) > 1})
            if repeated:
                raise DataError(f"{what} repeat the label(s) {repeated[:_MAX_LISTED]}; each "
                                "code needs its own label", argument=what.rstrip("s"))
        unknown = [h for h in humans if h not in tuple(judges)]
        if unknown:
            raise DataError(f"humans={unknown} are not judges; judges are {tuple(judges)}",
                            argument="humans")
        if len(ia) == 0:
            raise DataError("there are no comparisons")
        if len(items) < 2:
            raise DataError(f"only {len(items)} item(s) {list(items)}; a ranking needs two")
        lengths = {len(v) for v in (ia, ib, k, y, n, o) if v is not None}
        if len(lengths) > 1:
            raise DataError("judge, item_a, item_b, outcome, order and count differ in length")
        bad = (ia < 0) | (ia >= len(items)) | (ib < 0) | (ib >= len(items))
        bad |= (k < 0) | (k >= len(judges))
        if bad.any():
            raise DataError(f"codes out of range at positions {np.flatnonzero(bad)[:5].tolist()}")
        if (ia == ib).any():
            raise DataError(f"self-comparison at positions {np.flatnonzero(ia == ib)[:5].tolist()}")
        if not np.all((y >= 0) & (y <= 1)):
            raise DataError("outcome must lie in [0, 1]")
        soft = ~((y == 0.0) | (y == 1.0) | (y == 0.5))
        if not fractional and soft.any():
            raise DataError(f"outcome must be 0, 1/2 or 1 (soft outcomes need fractional=True); "
                            f"positions {np.flatnonzero(soft)[:5].tolist()} are not")
        if n is not None:
            bad = ~np.isfinite(n) | (n <= 0) | ((not fractional) & (n != np.floor(n)))
            if bad.any():
                raise DataError(
                    f"count must be a positive {'number' if fractional else 'whole number'}; "
                    f"positions {np.flatnonzero(bad)[:5].tolist()} are not")
        if o is not None:
            bad = ~np.isin(o, (-1, 0, 1))
            if bad.any():
                raise DataError(f"order must be +1, -1 or 0 (not recorded); positions "
                                f"{np.flatnonzero(bad)[:5].tolist()} are not")
        cells, _ = cls._aggregate(
            tuple(items), tuple(judges), k, ia, ib, o, n, y, tuple(humans)
        )
        if cluster is None:
            return cells
        raw = pd.Series(np.asarray(cluster, dtype=object).ravel())
        if len(raw) != len(ia):
            raise DataError(f"cluster has {len(raw)} keys for {len(ia)} comparisons")
        if raw.isna().any():
            raise DataError(f"cluster keys are missing at positions "
                            f"{np.flatnonzero(raw.isna().to_numpy())[:5].tolist()}")
        codes, labels, note = _coded_labels(raw, "cluster", "cluster")
        if note is not None:
            warnings.warn(f"cluster keys normalised: {note}", LabelNormalizationWarning,
                          stacklevel=2)
        keys = np.asarray(labels, dtype=object)[codes].astype(str)
        return _with_clusters(cells, "cluster", keys, k, ia, ib,
                              np.zeros(len(ia), np.int64) if o is None else o,
                              np.ones(len(ia)) if n is None else n, y)

    @classmethod
    def _aggregate(
        cls,
        items: tuple[str, ...],
        judges: tuple[str, ...],
        k: NDArray[np.integer],
        ia: NDArray[np.integer],
        ib: NDArray[np.integer],
        o: NDArray[np.integer] | None,
        n: NDArray[np.float64] | None,
        y: NDArray[np.float64],
        humans: tuple[str, ...],
        x: NDArray[np.float64] | None = None,
        feature_names: tuple[str, ...] = (),
    ) -> tuple[Comparisons, NDArray[np.int64] | None]:
        """Sum rows into canonical cells (i < j); flipping a row flips its outcome and order.

        ``o`` None means no order recorded (0), ``n`` None one verdict per row. Works in
        place on its own arrays, so that a frame of ten million rows costs a few row-sized
        arrays beyond itself; the inputs are not changed. With feature differences ``x``
        (rows x features, item_a minus item_b) flipping a row also negates them, a cell is a
        distinct (judge, i, j, order, x), and each row's cell index is returned with the
        cells (None without features).
        """
        n_items = len(items)
        flip = ia > ib
        # one integer per cell, ((k N + i) N + j) 3 + (order + 1), built in place
        key = k.astype(np.int64)
        key *= n_items
        key += np.minimum(ia, ib)
        key *= n_items
        key += np.maximum(ia, ib)
        key *= 3
        if o is None:
            key += 1
        else:
            key += np.where(flip, -o, o)
            key += 1
        x_cells = None
        if x is None:
            uniq, inv = _unique_inverse(key, len(judges) * n_items * n_items * 3)
        else:
            # rows sorted by (cell key, x): a sort, O(rows log rows); the key is exact in a
            # float64 (below 2^53 for any realistic number of judges and items)
            signed = np.where(flip[:, None], -x, x)
            rows, inv = np.unique(np.column_stack([key.astype(np.float64), signed]), axis=0,
                                  return_inverse=True)
            inv = inv.ravel()
            uniq, x_cells = rows[:, 0].astype(np.int64), rows[:, 1:]
        del key
        y = np.array(y, dtype=np.float64)  # a copy: the caller's column stays as it is
        np.subtract(1.0, y, out=y, where=flip)
        del flip
        size = len(uniq)
        if n is None:
            count = np.bincount(inv, minlength=size).astype(np.float64)
            wins = np.bincount(inv, weights=y, minlength=size)
            y *= y
            wins_sq = np.bincount(inv, weights=y, minlength=size)
        else:
            count = np.bincount(inv, weights=n, minlength=size)
            y_n = y * n
            wins = np.bincount(inv, weights=y_n, minlength=size)
            y_n *= y
            wins_sq = np.bincount(inv, weights=y_n, minlength=size)
        cells = _decoded_cells(items, judges, humans, uniq, count, wins, wins_sq)
        if x_cells is None:
            return cells, None
        return replace(cells, feature_names=feature_names,
                       features=np.ascontiguousarray(x_cells)), inv.astype(np.int64)

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
    def n_features(self) -> int:
        """Number of comparison features F (0 without features)."""
        return len(self.feature_names)

    @property
    def has_order(self) -> bool:
        """True when display order was recorded for every verdict."""
        return bool(np.all(self.order != 0))

    @property
    def quasi_likelihood(self) -> bool:
        """True when the half-win likelihood is a quasi-likelihood on these data.

        With ties (or soft outcomes) a verdict is not Bernoulli, so the model's variance
        p(1 - p) is not the verdicts' variance (Σ y² ≠ Σ y within a cell), and with fractional
        counts the counts are weights, not verdicts: model-based (expected, observed)
        covariances are then not valid, the sandwich is.
        """
        return bool(np.any(self.wins_sq != self.wins)
                    or np.any(self.count != np.floor(self.count)))

    @property
    def coords(self) -> dict[str, list[str]]:
        """Coordinates for PyMC models and xarray results (``item``, ``judge``)."""
        return {"item": list(self.items), "judge": list(self.judges)}

    def collapse(self, *, order: bool = True, judges: bool = False,
                 features: bool = False) -> Comparisons:
        """Pool cells over display order and/or judges (sufficient statistics stay exact).

        Parameters
        ----------
        order : bool
            Merge the two display orders of a (judge, pair) cell.
        judges : bool
            Merge all judges into one judge ``"pooled"``.
        features : bool
            Keep the comparison features: a pooled cell is then a distinct (judge, i, j[,
            order], x), so only verdicts with equal feature differences are summed (a model
            without display order but with feature effects: the judge-discrimination BTL).
            False (default) drops them: a pooled cell mixes verdicts with different feature
            values, so the result serves the models without features.
        """
        out, moved = self._pooled(order, judges, features)
        if not self.clusters:
            return out
        return _cluster_sums(replace(out, cluster_key=self.cluster_key), self.clusters,
                             self.cluster_code, moved[self.cluster_cell],
                             self.cluster_count, self.cluster_wins)

    def collapse_index(self, *, order: bool = True, judges: bool = False,
                       features: bool = False) -> NDArray[np.int64]:
        """Where each cell of these data lands in :meth:`collapse` with the same arguments.

        ``self.collapse(order=..., judges=..., features=...)`` has cells ``c``; entry ``t`` of
        the result is the index in ``c`` of cell ``t`` here. It maps (cluster, cell) records of
        :meth:`cluster_records` onto a model's pooled cells: ``index[records.cell]``.
        """
        return self._pooled(order, judges, features)[1]

    def _pooled(self, order: bool, judges: bool, features: bool
                ) -> tuple[Comparisons, NDArray[np.int64]]:
        """The pooled cells (without cluster records) and each cell's index among them."""
        k = np.zeros_like(self.judge) if judges else self.judge
        o = np.zeros_like(self.order) if order else self.order
        labels = ("pooled",) if judges else self.judges
        humans = tuple(h for h in self.humans if h in labels)
        if not (features and self.n_features):
            return _cells(self.items, labels, humans, k, self.item_i, self.item_j, o,
                          self.count, self.wins, self.wins_sq)
        # the cell key and the feature differences together name a pooled cell, as in
        # from_frame's aggregation (the key is exact in a float64)
        key = _cell_key(self.n_items, k.astype(np.int64), self.item_i, self.item_j,
                        o.astype(np.int64))
        rows, inv = np.unique(np.column_stack([key.astype(np.float64), self.features]),
                              axis=0, return_inverse=True)
        inv = inv.ravel()
        size = len(rows)
        out = _decoded_cells(self.items, labels, humans, rows[:, 0].astype(np.int64),
                             np.bincount(inv, weights=self.count, minlength=size),
                             np.bincount(inv, weights=self.wins, minlength=size),
                             np.bincount(inv, weights=self.wins_sq, minlength=size))
        return (replace(out, feature_names=self.feature_names,
                        features=np.ascontiguousarray(rows[:, 1:])), inv.astype(np.int64))

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
            feature_names=self.feature_names,
            features=self.features[mask] if self.feature_names else self.features,
        )
        if not self.clusters:
            return out
        kept = mask[self.cluster_cell]
        new_index = np.cumsum(mask) - 1
        return _cluster_sums(replace(out, cluster_key=self.cluster_key), self.clusters,
                             self.cluster_code[kept],
                             new_index[self.cluster_cell[kept]], self.cluster_count[kept],
                             self.cluster_wins[kept])

    def order_cells(self, order_effects: bool = True) -> Comparisons:
        """The cells of a model with a per-judge order effect b_k (DIAL's model (1)).

        Parameters
        ----------
        order_effects : bool
            True: the cells as they are, each with its display order a = ±1 (refused where the
            order is not recorded). False: the two display orders of each (judge, pair) pooled
            (order 0), for the order-agnostic model (DIAL-noPos).

        Comparison features are kept: with order pooled a cell is a distinct (judge, pair, x).

        Raises
        ------
        DataError
            ``order_effects`` with cells whose display order was not recorded (named).
        """
        if not order_effects:
            return self.collapse(order=True, features=True)
        missing = self.order == 0
        if missing.any():
            shown = "; ".join(
                f"judge {self.judges[self.judge[c]]!r}: {self.items[self.item_i[c]]!r} vs "
                f"{self.items[self.item_j[c]]!r}" for c in np.flatnonzero(missing)[:_MAX_LISTED])
            raise DataError(
                f"{int(missing.sum())} cell(s) have no recorded display order ({shown}); the "
                "order-effect model needs +1/-1 in the 'order' column for every verdict. Supply "
                "it, or fit the order-agnostic model (order_effects=False, DIAL-noPos).",
                argument="order")
        return self

    def calibration_cells(self, order_effects: bool = True) -> tuple[Comparisons, Comparisons]:
        """Split into the LLM judges' cells and the pooled human cells (DIAL's two samples).

        The judges marked ``humans`` are pooled into one human judge with the display orders
        pooled (DIAL's single human score vector s_h); every other judge is an LLM judge, whose
        cells are :meth:`order_cells`. Both parts keep this object's items (codes agree).

        With comparison features the cells are kept as they are (pooling would mix feature
        values), relabelled: the humans' as one judge ``"pooled"`` with order 0, and the LLM
        judges' with order 0 when ``order_effects`` is False.

        Returns
        -------
        llm, human : Comparisons
            ``human`` has the single judge ``"pooled"``.

        Raises
        ------
        DataError
            No judge is marked human, or every judge is; an item that only the humans compared
            (the calibration space is spanned by LLM scores); an LLM cell without display order
            when ``order_effects``.
        """
        if not self.humans:
            raise DataError(
                "no judge is marked human: build the data with Comparisons.from_frame(df, "
                "humans=['human']) (or Comparisons.concat([llm, human], humans=['human'])) so "
                f"that the calibration knows its human judge(s); judges are {list(self.judges)}",
                argument="humans")
        machines = [j for j in self.judges if j not in self.humans]
        if not machines:
            raise DataError(f"every judge {list(self.judges)} is marked human: the calibration "
                            "needs LLM judges too", argument="humans")
        human_mask = np.isin(self.judge, [self.judges.index(h) for h in self.humans])
        if not human_mask.any():
            raise DataError(f"the human judge(s) {list(self.humans)} have no comparisons",
                            argument="humans")
        llm = self.subset(machines)
        seen = np.zeros(self.n_items, bool)
        seen[llm.item_i] = seen[llm.item_j] = True
        by_humans = np.zeros(self.n_items, bool)
        by_humans[self.item_i[human_mask]] = by_humans[self.item_j[human_mask]] = True
        if (by_humans & ~seen).any():
            unseen = [self.items[i] for i in np.flatnonzero(by_humans & ~seen)]
            raise DataError(
                f"item(s) {unseen[:8]} are compared by the humans but by no LLM judge; the "
                "calibration space is spanned by LLM scores, so every item needs LLM verdicts. "
                "Check the labels, or drop those human comparisons.", argument="humans")
        if not self.feature_names:
            human = self.subset(list(self.humans)).collapse(order=True, judges=True)
            return llm.order_cells(order_effects), human
        # with features a cell is a distinct (judge, pair, order, x) and pooling would mix
        # feature values: relabel instead (one human judge, orders ignored; the order too when
        # it is not fitted), keeping each cell and its feature differences
        human = self.subset(list(self.humans))
        human = replace(human, judges=("pooled",), judge=np.zeros_like(human.judge),
                        order=np.zeros_like(human.order), humans=("pooled",))
        if order_effects:
            return llm.order_cells(True), human
        return replace(llm, order=np.zeros_like(llm.order)), human

    def outcome_counts(self) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                      NDArray[np.float64]]:
        """Per cell, the verdicts won, tied and lost by item i (from n, Σy and Σy²).

        With outcomes in {0, 1/2, 1}: Σy² = wins + ties/4 and Σy = wins + ties/2, so
        ties = 4(Σy − Σy²), wins = 2Σy² − Σy, losses = n − wins − ties.

        Raises
        ------
        DataError
            Soft outcomes or fractional counts (built with ``fractional=True``): the cells do
            not hold whole verdicts.
        """
        ties = 4 * (self.wins - self.wins_sq)
        wins = 2 * self.wins_sq - self.wins
        losses = self.count - wins - ties
        out = np.stack([wins, ties, losses])
        whole = np.abs(out - np.rint(out)) <= 1e-6 * np.maximum(self.count, 1.0)
        if not (whole.all() and (np.rint(out) >= 0).all()):
            raise DataError("these comparisons hold soft outcomes or fractional counts "
                            "(fractional=True): they are not whole verdicts of 0, 1/2 or 1",
                            argument="outcome")
        wins, ties, losses = np.rint(out)
        return wins, ties, losses

    def verdicts(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """One row per verdict: its cell and its outcome for item i (1, 1/2 or 0).

        Returns
        -------
        cell : ndarray of int
            Index of the verdict's cell; rows are grouped by cell (wins, ties, losses).
        outcome : ndarray of float

        Raises
        ------
        DataError
            See :meth:`outcome_counts`.
        """
        reps = np.stack(self.outcome_counts(), axis=1).astype(np.int64)
        outcome = np.repeat(np.tile([1.0, 0.5, 0.0], self.n_cells), reps.ravel())
        cell = np.repeat(np.arange(self.n_cells, dtype=np.int64), reps.sum(axis=1))
        return cell, outcome

    @classmethod
    def concat(cls, parts: Sequence[Comparisons], *, humans: Sequence[str] = ()) -> Comparisons:
        """Combine verdicts of several judges' sets into one (e.g. LLM judges and humans).

        Items and judges are the union of the parts' labels (a judge label in several parts is
        one judge); cells with the same (judge, pair, order) are summed; the humans are the
        parts' humans plus ``humans``. Verdicts without a recorded order (order 0) stay so.

        Raises
        ------
        DataError
            No parts; a name in ``humans`` that is no judge; parts with cluster keys of
            different names (or only some parts with a key); parts with comparison features.
        """
        parts = list(parts)
        if not parts or not all(isinstance(p, Comparisons) for p in parts):
            raise DataError("concat needs a list of Comparisons")
        if any(p.feature_names for p in parts):
            raise DataError("concat does not combine comparison features: build one frame with "
                            "every judge's verdicts and pass features= to "
                            "Comparisons.from_frame", argument="features")
        items = tuple(sorted(set().union(*(p.items for p in parts))))
        judges = tuple(sorted(set().union(*(p.judges for p in parts))))
        marked = tuple(sorted(set().union(*(p.humans for p in parts)) | set(humans)))
        unknown = [h for h in marked if h not in judges]
        if unknown:
            raise DataError(f"humans={unknown} are not judges in the data; judges are {judges}",
                            argument="humans")
        keys = {p.cluster_key for p in parts}
        if len(keys) > 1:
            raise DataError(f"the parts carry different cluster keys {sorted(map(str, keys))}; "
                            "give every part the same key (or none)", argument="cluster")
        item_code = {x: c for c, x in enumerate(items)}
        judge_code = {x: c for c, x in enumerate(judges)}
        rows: dict[str, list[NDArray]] = {f: [] for f in ("k", "i", "j", "o", "n", "y", "y2")}
        flips, offsets = [], [0]
        for p in parts:
            ic = np.array([item_code[x] for x in p.items], np.int64)
            jc = np.array([judge_code[x] for x in p.judges], np.int64)
            i, j = ic[p.item_i], ic[p.item_j]
            flip = i > j  # a part's canonical pair may be reversed in the union's coding
            flips.append(flip)
            rows["k"].append(jc[p.judge])
            rows["i"].append(np.where(flip, j, i))
            rows["j"].append(np.where(flip, i, j))
            rows["o"].append(np.where(flip, -p.order, p.order))
            rows["n"].append(p.count)
            rows["y"].append(np.where(flip, p.count - p.wins, p.wins))
            # Σ (1 − y)² = n − 2 Σ y + Σ y²
            rows["y2"].append(np.where(flip, p.count - 2 * p.wins + p.wins_sq, p.wins_sq))
            offsets.append(offsets[-1] + p.n_cells)
        cat = {name: np.concatenate(v) for name, v in rows.items()}
        out, moved = _cells(items, judges, marked, cat["k"], cat["i"], cat["j"], cat["o"],
                            cat["n"], cat["y"], cat["y2"])
        key = keys.pop()
        if key is None:
            return out
        labels = tuple(sorted(set().union(*(p.clusters for p in parts))))
        label_code = {x: c for c, x in enumerate(labels)}
        code, cell, count, wins = [], [], [], []
        for p, flip, start in zip(parts, flips, offsets[:-1], strict=True):
            code.append(np.array([label_code[x] for x in p.clusters], np.int64)[p.cluster_code])
            cell.append(moved[start + p.cluster_cell])
            count.append(p.cluster_count)
            wins.append(np.where(flip[p.cluster_cell], p.cluster_count - p.cluster_wins,
                                 p.cluster_wins))
        return _cluster_sums(replace(out, cluster_key=key), labels, np.concatenate(code),
                             np.concatenate(cell), np.concatenate(count), np.concatenate(wins))

    def cell_labels(self) -> list[str]:
        """A readable label per cell: ``judge: item_i vs item_j``, with ``(item_i first)`` or
        ``(item_j first)`` where the display order is recorded; unique, in cell order.

        Models use them as the ``cell`` coordinate, so that every table and log-likelihood
        group names cells by their labels, never by codes. With comparison features each label
        ends in the cell's differences, ``[loglen=0.25]``.
        """
        items = np.asarray(self.items, dtype=object)
        judges = np.asarray(self.judges, dtype=object)
        base = [f"{judges[k]}: {items[i]} vs {items[j]}"
                for k, i, j in zip(self.judge, self.item_i, self.item_j, strict=True)]
        out = [b + (f" ({items[i] if o == 1 else items[j]} first)" if o else "")
               for b, i, j, o in zip(base, self.item_i, self.item_j, self.order, strict=True)]
        if not self.feature_names:
            return out
        # repr of a float round-trips, so distinct feature values give distinct labels
        return [f"{b} [" + ", ".join(f"{f}={float(v)!r}" for f, v in
                                     zip(self.feature_names, row, strict=True)) + "]"
                for b, row in zip(out, self.features, strict=True)]

    def cluster_records(self, key: str | None = None) -> ClusterRecords:
        """(cluster, cell) records of a cluster key, for cluster-robust covariances.

        Parameters
        ----------
        key : str, optional
            The data's own key (its name, :attr:`cluster_key`; ``None`` means that key) or a
            built-in key of :data:`BUILTIN_CLUSTER_KEYS`: ``"judge_pair"`` (one cluster per
            judge and unordered pair, both display orders pooled: DIAL's cell-clustered
            sandwich) or ``"pair"`` (one per unordered pair, all judges pooled).

        Returns
        -------
        ClusterRecords
            One record per non-empty (cluster, cell), indexing this object's cells.

        Raises
        ------
        DataError
            ``key`` is neither a built-in key nor the data's own key (or the data carry none).
        """
        if key is None or (key == self.cluster_key and key not in BUILTIN_CLUSTER_KEYS):
            if not self.clusters:
                raise DataError(
                    "these comparisons carry no cluster key: build them with "
                    "Comparisons.from_frame(df, cluster='battle_id') or use a built-in key "
                    f"{sorted(BUILTIN_CLUSTER_KEYS)}", argument="cluster")
            return ClusterRecords(self.cluster_key or "cluster", self.clusters,
                                  self.cluster_code, self.cluster_cell, self.cluster_count,
                                  self.cluster_wins)
        if key not in BUILTIN_CLUSTER_KEYS:
            own = (f"the data's own key {self.cluster_key!r}" if self.cluster_key
                   else "no key of their own (Comparisons.from_frame(..., cluster=COLUMN))")
            raise DataError(
                f"unknown cluster key {key!r}: use a built-in key {sorted(BUILTIN_CLUSTER_KEYS)} "
                f"or the data's own key; these comparisons carry {own}", argument="cluster")
        judge = self.judge if key == "judge_pair" else np.zeros_like(self.judge)
        pair = (judge * self.n_items + self.item_i) * self.n_items + self.item_j
        uniq, code = np.unique(pair, return_inverse=True)
        rest, jj = np.divmod(uniq, self.n_items)
        kk, ii = np.divmod(rest, self.n_items)
        items = np.asarray(self.items, dtype=object)
        if key == "judge_pair":
            judges = np.asarray(self.judges, dtype=object)
            labels = tuple(f"{judges[k]}: {items[i]} vs {items[j]}"
                           for k, i, j in zip(kk, ii, jj, strict=True))
        else:
            labels = tuple(f"{items[i]} vs {items[j]}" for i, j in zip(ii, jj, strict=True))
        return ClusterRecords(key, labels, code.astype(np.int64),
                              np.arange(self.n_cells, dtype=np.int64), self.count, self.wins)

    def to_frame(self) -> pd.DataFrame:
        """The cells as a labelled frame (one row per cell, labels not codes; a column per
        comparison feature holds its difference x_i - x_j)."""
        return pd.DataFrame(
            {
                "judge": np.asarray(self.judges, dtype=object)[self.judge],
                "item_i": np.asarray(self.items, dtype=object)[self.item_i],
                "item_j": np.asarray(self.items, dtype=object)[self.item_j],
                "order": self.order,
                "count": self.count,
                "wins": self.wins,
                "wins_sq": self.wins_sq,
                **{f: self.features[:, c] for c, f in enumerate(self.feature_names)},
            }
        )

    def __repr__(self) -> str:
        return (
            f"Comparisons({self.n_rows:g} verdicts in {self.n_cells} cells; "
            f"{self.n_items} items, {self.n_judges} judges"
            + (f", humans={list(self.humans)}" if self.humans else "")
            + (", display order recorded" if self.has_order else "")
            + (f", {len(self.clusters)} clusters" if self.clusters else "")
            + (f", features {list(self.feature_names)}" if self.feature_names else "")
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
) -> tuple[Comparisons, NDArray[np.int64]]:
    """Sum per-row (or per-cell) statistics into one cell per (judge, i, j, order); with each
    input's index among the cells (the unique inverse: no second search for it)."""
    n_items = len(items)
    key = _cell_key(n_items, k, i, j, o)
    uniq, inv = _unique_inverse(key, len(judges) * n_items * n_items * 3)
    size = len(uniq)
    if size == len(key) and np.array_equal(uniq, key):
        # one input per cell, already in key order (pooling cells recorded without display
        # order over it): nothing to sum or to decode, and the arrays are shared, not copied
        # (Comparisons are never modified in place; a copy of a million cells costs more than
        # the rest of the pooling)
        return Comparisons(
            items=items, judges=judges, judge=k.astype(np.int64, copy=False),
            item_i=i.astype(np.int64, copy=False), item_j=j.astype(np.int64, copy=False),
            order=o.astype(np.int64, copy=False), count=count, wins=wins, wins_sq=wins_sq,
            humans=humans, n_rows=float(count.sum())), inv
    return _decoded_cells(items, judges, humans, uniq,
                          np.bincount(inv, weights=count, minlength=size),
                          np.bincount(inv, weights=wins, minlength=size),
                          np.bincount(inv, weights=wins_sq, minlength=size)), inv


def _decoded_cells(
    items: tuple[str, ...],
    judges: tuple[str, ...],
    humans: tuple[str, ...],
    uniq: NDArray[np.int64],
    count: NDArray[np.float64],
    wins: NDArray[np.float64],
    wins_sq: NDArray[np.float64],
) -> Comparisons:
    """Comparisons from sorted cell keys (:func:`_cell_key`) and their sums."""
    n_items = len(items)
    rest, oo = np.divmod(uniq, 3)
    rest, jj = np.divmod(rest, n_items)
    kk, ii = np.divmod(rest, n_items)
    return Comparisons(
        items=items,
        judges=judges,
        # the quotients are fresh int64 arrays already (a copy of each costs what the
        # division does)
        judge=kk.astype(np.int64, copy=False),
        item_i=ii.astype(np.int64, copy=False),
        item_j=jj.astype(np.int64, copy=False),
        order=(oo - 1).astype(np.int64, copy=False),
        count=count,
        wins=wins,
        wins_sq=wins_sq,
        humans=humans,
        n_rows=float(count.sum()),
    )


def _compact_recode(
    codes: NDArray[np.int64], labels: list[str], index: pd.Index
) -> NDArray[np.integer]:
    """Codes into a column's distinct labels -> codes into ``index`` (the sorted label set),
    in the smallest integer type that holds them (a quarter of the memory of int64 for up to
    32,767 labels)."""
    dtype = np.int16 if len(index) <= np.iinfo(np.int16).max else np.int32
    return index.get_indexer(labels).astype(dtype)[codes]


def _unique_inverse(
    key: NDArray[np.int64], size: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.unique(key, return_inverse=True)`` for keys in [0, size).

    When the key space is small against the rows (18 judges, 45 items: 18 x 45 x 45 x 3 cells for a
    million rows) a presence table replaces the sort, which dominated aggregation. Keys already
    in order (cells pooled over display order: the key is monotone in (judge, i, j, order)) need
    neither: a run starts wherever the key changes.
    """
    if key.size and np.all(key[1:] >= key[:-1]):
        starts = np.ones(key.size, dtype=bool)
        np.not_equal(key[1:], key[:-1], out=starts[1:])
        if starts.all():
            return key, np.arange(key.size)
        return key[starts], np.cumsum(starts) - 1
    if size > 4 * len(key) + (1 << 20):
        return np.unique(key, return_inverse=True)
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    uniq = np.flatnonzero(seen)
    slot = np.empty(size, dtype=np.int64)  # read only at the keys, every one of them set here
    slot[uniq] = np.arange(len(uniq))
    return uniq, slot[key]


def _cell_key(
    n_items: int, k: NDArray[np.int64], i: NDArray[np.int64], j: NDArray[np.int64],
    o: NDArray[np.int64],
) -> NDArray[np.int64]:
    # one integer key per cell; order is shifted from {-1, 0, 1} to {0, 1, 2}; built in one
    # array (each temporary of a million cells costs as much as the arithmetic)
    key = k * np.int64(n_items)
    key += i
    key *= n_items
    key += j
    key *= 3
    key += o
    key += 1
    return key


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
    key: str,
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
    return _cluster_sums(replace(cells, cluster_key=key), tuple(str(c) for c in clusters),
                         code.astype(np.int64), cell, n, n * np.where(flip, 1.0 - y, y))


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


def _feature_name(column_a: str, column_b: str) -> str:
    """A feature's name from its two columns: their common stem (``loglen_a``, ``loglen_b``:
    ``loglen``), else ``"column_a-column_b"``."""
    for end_a, end_b in (("_a", "_b"), ("_1", "_2"), ("a", "b")):
        if (column_a.endswith(end_a) and column_b.endswith(end_b)
                and column_a[:-len(end_a)] == column_b[:-len(end_b)] and column_a[:-len(end_a)]):
            return column_a[:-len(end_a)]
    return f"{column_a}-{column_b}"


def _feature_columns(
    features: Mapping[str, tuple[str, str]] | Sequence[tuple[str, str]] | None,
) -> dict[str, tuple[str, str]]:
    """``features=`` of :meth:`Comparisons.from_frame` as name -> (column_a, column_b)."""
    if features is None:
        return {}
    pairs = (list(features.items()) if isinstance(features, Mapping)
             else [(None, pair) for pair in features])
    out: dict[str, tuple[str, str]] = {}
    for name, pair in pairs:
        if (isinstance(pair, str) or len(pair) != 2
                or not all(isinstance(c, str) for c in pair)):
            raise DataError(f"a feature is a pair of columns (column_a, column_b) holding item_a's "
                            f"and item_b's values; got {pair!r}", argument="features")
        label = str(name) if name is not None else _feature_name(*pair)
        if label in out:
            raise DataError(f"two features are named {label!r}; name them with a mapping, "
                            "features={'name': (column_a, column_b)}", argument="features")
        out[label] = (pair[0], pair[1])
    return out


def _feature_differences(df: pd.DataFrame, columns: dict[str, tuple[str, str]]
                         ) -> NDArray[np.float64]:
    """Per row and feature, ``x_a - x_b`` (finite numbers, else a DataError naming the rows)."""
    out = np.empty((len(df), len(columns)))
    for c, (name, pair) in enumerate(columns.items()):
        values = []
        for col in pair:
            v = _numbers(df[col], col, "features", refuse=False)
            bad = ~np.isfinite(v)
            if bad.any():
                raise DataError(
                    f"feature {name!r}: column {col!r} must hold finite numbers; rows "
                    f"{_rows(df.index, bad)} have {df[col][bad][:_MAX_LISTED].tolist()}",
                    argument="features")
            values.append(v)
        out[:, c] = values[0] - values[1]
    return out
