"""Validated, integer-coded, cell-aggregated inputs.

Every model and twin in bayescal sees data through these containers: they validate the user's
frame before anything is fitted (a :class:`DataError` names the row, column or label and the
fix), code labels as integers while keeping the labels as coordinates, and reduce raw rows to
sufficient statistics so that fitting cost does not grow with the number of raw rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["Comparisons", "DataError", "LabelNormalizationWarning", "Labels", "Ratings"]

_MAX_LISTED = 5


class DataError(ValueError):
    """Input data that cannot be used as given; the message says where and how to fix it.

    ``argument`` names the function argument the error concerns (e.g. ``"outcome"``), when one
    does, so that a front end such as the command line can name its own option for it.
    """

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument


class LabelNormalizationWarning(UserWarning):
    """Labels were rewritten to one canonical text (whitespace, number format); says which."""


def _rows(index: pd.Index, mask: NDArray[np.bool_]) -> str:
    """Name the first offending rows of a frame by their index labels."""
    bad = list(index[mask][:_MAX_LISTED])
    more = int(mask.sum()) - len(bad)
    text = ", ".join(repr(b) for b in bad)
    return f"{text} (and {more} more)" if more > 0 else text


class _DefaultColumn(str):
    """A column name left at its default: only such a column may be absent from the frame.

    A distinct ``str`` subclass (never interned), so ``judge="judge"`` passed by the caller is
    a plain string and a request for that column, while the untouched default is this object.
    """

    __slots__ = ()


def _near_headers(columns: Iterable[object], name: str) -> list[object]:
    """Headers equal to ``name`` up to surrounding whitespace and case (a likely slip)."""
    key = str(name).strip().casefold()
    return [c for c in columns if c != name and str(c).strip().casefold() == key]


def _column_problems(
    df: pd.DataFrame, named: Mapping[str, str | Sequence[str] | None]
) -> list[tuple[str, str, list[object]]]:
    """``(argument, column, near headers)`` for every named column the frame lacks.

    A column left at its default (:class:`_DefaultColumn`) may be absent, unless a header equals
    it up to spaces and case: that column was most likely meant, and ignoring it would pool
    silently. The command line formats the same problems with its own option names.
    """
    problems = []
    for argument, names in named.items():
        if names is None:
            continue
        for name in [names] if isinstance(names, str) else list(names):
            if name in df.columns:
                continue
            near = _near_headers(df.columns, name)
            if isinstance(name, _DefaultColumn) and not near:
                continue
            problems.append((argument, name, near))
    return problems


def _missing_columns_error(
    df: pd.DataFrame, problems: list[tuple[str, str, list[object]]], advice: str
) -> DataError:
    parts = []
    for argument, name, near in problems:
        hint = (f"; {', '.join(map(repr, near))} differs only by surrounding spaces or case"
                if near else "")
        parts.append(f"{argument!r} (looked for column {name!r}{hint})")
    defaults = [(a, near) for a, name, near in problems if isinstance(name, _DefaultColumn)]
    if defaults:
        advice = " ".join(f"Pass {a}={near[0]!r} to use that column, or {a}=None to do "
                          "without it." for a, near in defaults)
    return DataError(
        f"missing column(s) {', '.join(parts)}; the frame has {list(df.columns)}. {advice}",
        argument=problems[0][0],
    )


def _canonical(value: object) -> str:
    """One text per label: equal numbers get one text (1 and 1.0 -> '1'; 1.5 -> '1.5') and text
    loses surrounding whitespace."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return str(int(v)) if v.is_integer() else repr(v)
    return str(value).strip()


def _shown(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _coded_labels(
    s: pd.Series, column: str, argument: str
) -> tuple[NDArray[np.int64], list[str], str | None]:
    """Codes of a label column into its distinct labels, those labels made canonical, and a
    note of what normalisation changed (None if nothing).

    Labels are coded once per distinct value (``pd.factorize``), so normalising costs nothing
    per row; missing values were refused before.
    """
    codes, uniques = pd.factorize(s)
    raw = list(uniques)
    labels = [_canonical(v) for v in raw]
    blank = [u for u, lab in enumerate(labels) if lab == ""]
    if blank:
        raise DataError(
            f"column {column!r} has blank labels in rows {_rows(s.index, np.isin(codes, blank))}; "
            "drop or fill those rows",
            argument=argument,
        )
    changed = [u for u, (v, lab) in enumerate(zip(raw, labels, strict=True)) if str(v) != lab]
    if not changed:
        return codes.astype(np.int64, copy=False), labels, None
    n_rows = int(np.bincount(codes, minlength=len(raw))[changed].sum())
    examples = ", ".join(f"{_shown(raw[u])} -> {labels[u]!r}" for u in changed[:_MAX_LISTED])
    more = f" and {len(changed) - _MAX_LISTED} more" if len(changed) > _MAX_LISTED else ""
    note = (f"column {column!r}: {len(changed)} label{'s' if len(changed) > 1 else ''} in "
            f"{n_rows} row{'s' if n_rows > 1 else ''} ({examples}{more})")
    return codes.astype(np.int64, copy=False), labels, note


def _recode(
    codes: NDArray[np.int64], labels: list[str], index: pd.Index
) -> NDArray[np.int64]:
    """Codes into a column's distinct labels -> codes into ``index`` (the sorted label set)."""
    return index.get_indexer(labels).astype(np.int64)[codes]


_TIE_WORDS = frozenset({"tie", "draw", "equal", "tie (bothbad)", "both_bad", "bothbad", "c"})
_A_WORDS = frozenset({"a", "model_a", "item_a", "left", "first"})
_B_WORDS = frozenset({"b", "model_b", "item_b", "right", "second"})


def _outcome_values(
    raw: pd.Series,
    ia: NDArray[np.int64],
    ib: NDArray[np.int64],
    items: tuple[str, ...],
    column: str,
) -> NDArray[np.float64]:
    """Turn an outcome column into P(item_a preferred): numbers or verdict words.

    Verdict words accepted (case-insensitive): the winning item's label, ``a``/``model_a``/
    ``left``/``first`` for item_a, ``b``/``model_b``/``right``/``second`` for item_b, and
    ``tie``/``draw`` for a tie (0.5). Words are read once per distinct value, not per row.
    """
    if pd.api.types.is_bool_dtype(raw) or pd.api.types.is_numeric_dtype(raw):
        return raw.to_numpy(dtype=np.float64)
    codes, uniques = pd.factorize(raw)
    value = np.full(len(uniques), np.nan)  # meaning as a number or a verdict word
    named = np.full(len(uniques), -1, np.int64)  # code of the item the value names
    item_code = {lab: c for c, lab in enumerate(items)}
    for u, v in enumerate(uniques):
        if isinstance(v, (bool, np.bool_, int, float, np.number)):
            value[u] = float(v)
            continue
        text = str(v).strip()
        lower = text.lower()
        if lower in _A_WORDS:
            value[u] = 1.0
        elif lower in _B_WORDS:
            value[u] = 0.0
        elif lower in _TIE_WORDS:
            value[u] = 0.5
        else:
            try:
                value[u] = float(text)
            except ValueError:
                pass
        named[u] = item_code.get(text, -1)
    out = value[codes]
    if (named >= 0).any():
        winner = named[codes]
        by_label = np.where(ia == winner, 1.0, np.where(ib == winner, 0.0, np.nan))
        label_rows = winner >= 0
        clash = label_rows & ~np.isnan(out) & (by_label != out)
        if clash.any():
            raise DataError(
                f"column {column!r} holds values that are both an item's label and a verdict word "
                f"or number with another meaning (rows {_rows(raw.index, clash)}: "
                f"{sorted(set(raw[clash].head(_MAX_LISTED).astype(str)))}); use 'model_a' / "
                "'model_b' / 'tie' or 1 / 0 / 0.5 instead",
                argument="outcome",
            )
        stray = label_rows & np.isnan(by_label)
        if stray.any():
            raise DataError(
                f"column {column!r} names an item that is neither item_a nor item_b of its row "
                f"(rows {_rows(raw.index, stray)}: "
                f"{sorted(set(raw[stray].head(_MAX_LISTED).astype(str)))})",
                argument="outcome",
            )
        out = np.where(label_rows, by_label, out)
    unknown = np.isnan(out)
    if unknown.any():
        examples = sorted(set(raw[unknown].head(_MAX_LISTED).astype(str)))
        raise DataError(
            f"column {column!r} has verdicts that are neither a number in [0, 1] nor a known word "
            f"(rows {_rows(raw.index, unknown)}: {examples}). Use 1 / 0 / 0.5, the winning item's "
            "label, 'model_a' / 'model_b', or 'tie'.",
            argument="outcome",
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
        judge: str | None = _DefaultColumn("judge"),
        order: str | None = _DefaultColumn("order"),
        count: str | None = _DefaultColumn("count"),
        humans: Sequence[str] = (),
        fractional: bool = False,
        cluster: str | None = None,
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

        Returns
        -------
        Comparisons

        Raises
        ------
        DataError
            Empty frame, a missing column, missing values, blank labels, an outcome other than
            0, 1/2, 1 (outside [0, 1] with ``fractional``), a self-comparison, an order other
            than +1/-1, a count that is not a positive whole number (not positive with
            ``fractional``), fewer than two items, or a human label that is not a judge.

        Warns
        -----
        LabelNormalizationWarning
            When labels (items, judges) were rewritten: surrounding whitespace is removed and
            equal numbers get one text (an integer 1 and a float 1.0 are both item ``"1"``).

        Notes
        -----
        Verdict words (case-insensitive): the winning item's label, ``model_a``/``a``/``left``
        for item_a, ``model_b``/``b``/``right`` for item_b, ``tie``/``draw`` for a tie.
        """
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if len(df) == 0:
            raise DataError("the frame is empty: there are no comparisons to fit")
        named = {"item_a": item_a, "item_b": item_b, "outcome": outcome, "judge": judge,
                 "order": order, "count": count, "cluster": cluster}
        problems = _column_problems(df, named)
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
        ia = _recode(codes_a, labels_a, item_index)
        ib = _recode(codes_b, labels_b, item_index)
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
            kk = _recode(codes_k, labels_k, pd.Index(judges))
        else:
            note_k, judges, kk = None, ("judge",), np.zeros(len(df), np.int64)
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
                "labels normalised (surrounding whitespace removed; equal numbers written once, "
                f"1.0 as '1'): {'; '.join(notes)}. Clean the labels to silence this warning.",
                LabelNormalizationWarning,
                stacklevel=2,
            )
        unknown = [h for h, c in zip(humans, human_labels, strict=True) if c not in judges]
        if unknown:
            raise DataError(f"humans={unknown} are not judges in the data; judges are {judges}",
                            argument="humans")
        y = _outcome_values(df[outcome], ia, ib, items, outcome)
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
            o_raw = pd.to_numeric(df[present["order"]], errors="coerce").to_numpy(np.float64)
            bad = ~np.isin(o_raw, (1.0, -1.0))
            if bad.any():
                raise DataError(
                    f"column {present['order']!r} must be +1 (item_a displayed first) or -1 "
                    f"(displayed second); rows {_rows(df.index, bad)} have "
                    f"{list(df[present['order']][bad][:_MAX_LISTED])}",
                    argument="order",
                )
            o = o_raw.astype(np.int64)
        else:
            o = np.zeros(len(df), dtype=np.int64)
        if "count" in present:
            n = pd.to_numeric(df[present["count"]], errors="coerce").to_numpy(np.float64)
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
            n = np.ones(len(df))
        cells = cls._aggregate(items, judges, kk, ia, ib, o, n, y, human_labels)
        if cluster is None:
            return cells
        keys = np.asarray(labels_c, dtype=object)[codes_c].astype(str)
        return _with_clusters(cells, keys, kk, ia, ib, o, n, y)

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
            Codes out of range, a self-comparison, an outcome other than 0, 1/2, 1 (outside
            [0, 1] with ``fractional``), a count that is not a positive whole number, or an
            order other than -1, 0, +1.
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
        soft = ~((y == 0.0) | (y == 1.0) | (y == 0.5))
        if not fractional and soft.any():
            raise DataError(f"outcome must be 0, 1/2 or 1 (soft outcomes need fractional=True); "
                            f"positions {np.flatnonzero(soft)[:5].tolist()} are not")
        bad = ~np.isfinite(n) | (n <= 0) | ((not fractional) & (n != np.floor(n)))
        if bad.any():
            raise DataError(f"count must be a positive {'number' if fractional else 'whole number'}"
                            f"; positions {np.flatnonzero(bad)[:5].tolist()} are not")
        bad = ~np.isin(o, (-1, 0, 1))
        if bad.any():
            raise DataError(f"order must be +1, -1 or 0 (not recorded); positions "
                            f"{np.flatnonzero(bad)[:5].tolist()} are not")
        cells = cls._aggregate(
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
        return _with_clusters(cells, keys, k, ia, ib, o, n, y)

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
    key = _cell_key(n_items, k, i, j, o)
    uniq, inv = _unique_inverse(key, len(judges) * n_items * n_items * 3)
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


def _unique_inverse(
    key: NDArray[np.int64], size: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.unique(key, return_inverse=True)`` for keys in [0, size).

    When the key space is small against the rows (seed 002: 18 x 45 x 45 x 3 cells for a
    million rows) a presence table replaces the sort, which dominated aggregation.
    """
    if size > 4 * len(key) + (1 << 20):
        return np.unique(key, return_inverse=True)
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    uniq = np.flatnonzero(seen)
    slot = np.zeros(size, dtype=np.int64)
    slot[uniq] = np.arange(len(uniq))
    return uniq, slot[key]


def _cell_key(
    n_items: int, k: NDArray[np.int64], i: NDArray[np.int64], j: NDArray[np.int64],
    o: NDArray[np.int64],
) -> NDArray[np.int64]:
    # one integer key per cell; order is shifted from {-1, 0, 1} to {0, 1, 2}
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


def _float_array(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """``values`` as floats; a value that is not a number is a DataError naming its position."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        flat = np.asarray(values, dtype=object).ravel()
        bad = pd.to_numeric(pd.Series(flat), errors="coerce").isna() & pd.Series(flat).notna()
        where = np.flatnonzero(bad.to_numpy(bool))
        raise DataError(
            f"{name} must hold numbers; positions {where[:_MAX_LISTED].tolist()} (flattened) "
            f"have {flat[where[:_MAX_LISTED]].tolist()}. Code the labels as numbers, or pass "
            "positive=... for a two-valued label"
        ) from None


def _as_judge_matrix(
    values: ArrayLike, name: str, judges: Sequence[str] | None
) -> NDArray[np.float64]:
    arr = _float_array(values, name)
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
        positive: object | None = None,
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
        positive : optional
            For a binary human label not coded 0/1 (1/2, ±1, "yes"/"no"): the value meaning
            Y = 1; see :func:`positive_coding`.

        Raises
        ------
        DataError
            Missing values, length mismatch, an empty calibration or test set, or a judge
            count that differs between the two sets.
        """
        if positive is not None:
            y_cal, yhat_cal, yhat_test = _arrays_with_positive(y_cal, yhat_cal, yhat_test,
                                                               positive)
        y = _float_array(y_cal, "y_cal")
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
        positive: object | None = None,
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
        positive : optional
            For a binary human label not coded 0/1 (1/2, ±1, "yes"/"no"): the value meaning
            Y = 1; see :func:`positive_coding`.

        Raises
        ------
        DataError
            Missing columns, a non-boolean mask, missing judge labels, or an empty split.
        """
        cols = [judge] if isinstance(judge, str) else list(judge)
        problems = _column_problems(df, {"human": human, "judge": cols, "labelled": labelled})
        if problems:
            raise _missing_columns_error(
                df, problems, "Name the columns with human=..., judge=..., labelled=..."
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
        if positive is not None:
            df = _frame_with_positive(df, human, cols, mask, positive)
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


# ---------------------------------------------------------------------- positive= (seed 001)
def positive_coding(
    human: ArrayLike, positive: object
) -> tuple[NDArray[np.float64], set[object]]:
    """Map a two-valued human label to 0/1: ``positive`` -> 1, the other value -> 0.

    Missing values stay missing (NaN). Returns the mapped labels and the set of the codes
    (``positive`` and the other value). Judge columns whose every value is one of these codes
    are coded the same way by ``Labels.from_arrays`` / ``from_frame``; other judge columns
    (scores, ratings) are left as they are.

    Raises
    ------
    DataError
        More than two distinct human values, or two of which none equals ``positive``.
    """
    values = pd.Series(np.asarray(human, dtype=object).ravel())
    present = values[values.notna()]
    codes = list(pd.unique(present))
    shown = sorted(codes, key=str)[:_MAX_LISTED]
    if len(codes) > 2:
        raise DataError(
            f"positive={positive!r} codes a binary human label as 0/1, but the human labels "
            f"have {len(codes)} distinct values (first: {shown}); a label with more than two "
            "values is not binary. Map it yourself (e.g. rating >= 4) or leave it numeric."
        )
    if positive not in codes and len(codes) == 2:
        raise DataError(
            f"positive={positive!r} is not one of the human label values {shown}; "
            "name the value that means Y = 1 (mind the type: 2 vs '2')"
        )
    mapped = np.where(values.isna(), np.nan, (values == positive).astype(np.float64))
    return mapped.astype(np.float64), {*codes, positive}


def _coded_like(values: pd.Series, codes: set[object], positive: object) -> pd.Series:
    """A judge column in the human coding becomes 0/1; any other column is returned as is."""
    present = values[values.notna()]
    if len(present) and present.isin(list(codes)).all():
        return values.map(lambda v: np.nan if pd.isna(v) else float(v == positive))
    return values


def _arrays_with_positive(
    y_cal: ArrayLike, yhat_cal: ArrayLike, yhat_test: ArrayLike, positive: object
) -> tuple[NDArray[np.float64], NDArray[np.float64] | ArrayLike, NDArray[np.float64] | ArrayLike]:
    y, codes = positive_coding(y_cal, positive)
    hc, ht = np.asarray(yhat_cal, dtype=object), np.asarray(yhat_test, dtype=object)
    if hc.ndim != ht.ndim or hc.ndim not in (1, 2):
        return y, yhat_cal, yhat_test  # the shape checks of from_arrays report it
    two_d = hc.ndim == 2
    hc2, ht2 = (hc, ht) if two_d else (hc[:, None], ht[:, None])
    if hc2.shape[1] != ht2.shape[1]:
        return y, yhat_cal, yhat_test
    out_c, out_t = [], []
    for k in range(hc2.shape[1]):
        both = pd.Series(np.concatenate([hc2[:, k], ht2[:, k]]))
        coded = _coded_like(both, codes, positive).to_numpy()
        out_c.append(coded[: len(hc2)])
        out_t.append(coded[len(hc2):])
    new_c, new_t = np.column_stack(out_c), np.column_stack(out_t)
    return y, (new_c if two_d else new_c[:, 0]), (new_t if two_d else new_t[:, 0])


def _frame_with_positive(
    df: pd.DataFrame, human: str, judges: Sequence[str], mask: NDArray[np.bool_],
    positive: object,
) -> pd.DataFrame:
    out = df.copy()
    y, codes = positive_coding(df.loc[mask, human].to_numpy(), positive)
    human_col = pd.Series(np.nan, index=df.index, dtype=np.float64)
    human_col[mask] = y
    out[human] = human_col
    for col in judges:
        out[col] = _coded_like(df[col], codes, positive)
    return out


# ---------------------------------------------------------------------------------- seed 003
_DIST_SUM_TOL = 1e-5


@dataclass(frozen=True)
class Ratings:
    """Judge and human scores on one declared integer scale (seed 003, SPEC §4.1).

    Each item carries a judge point score ``j ∈ {a..b}`` or a judge predictive distribution
    ``w_i`` over the K = b − a + 1 scale points (softmax over rating tokens, or a histogram of
    repeated samples; §4.4), a human score ``h ∈ {a..b}`` (missing for items that are only to
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

