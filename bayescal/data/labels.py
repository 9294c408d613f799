"""Human and judge labels of a mean under a noisy judge (Chen et al. 2026, arXiv:2601.05420)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayescal.data.normalize import (
    _MAX_LISTED,
    DataError,
    _column_problems,
    _missing_columns_error,
    _rows,
)

__all__ = ["Labels", "positive_coding"]


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
