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

__all__ = ["LabelPatterns", "Labels", "positive_coding"]

# Bit-packing counts the patterns of K binary judges (and the human label) with one bincount
# over 2^(K + 1) codes; above this many codes the table would be mostly empty, so the packed
# codes are counted by sorting instead (still one integer per item, not a row of K).
_MAX_BINCOUNT_CODES = 1 << 20
# One int64 code per item holds the human label and up to 62 judges' bits.
_MAX_PACKED_JUDGES = 62


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
class LabelPatterns:
    """Distinct label patterns with their item counts: the sufficient statistics of the items.

    Calibration patterns (human label and every judge's label) come first, then test patterns
    (judge labels only), each block in lexicographic order of (human label, judge labels).
    Built by :meth:`Labels.patterns`; the misclassification model and its twin both read it.

    Attributes
    ----------
    judges : tuple of str
    yhat : ndarray, shape (P, K)
        Judge labels of each pattern.
    y : ndarray, shape (P,)
        Human label of a calibration pattern; 0 (unused) for a test pattern.
    test : ndarray of bool, shape (P,)
        True for test patterns (human label not seen).
    count : ndarray, shape (P,)
        Items with this pattern.
    m, n : int
        Calibration and test items.
    """

    judges: tuple[str, ...]
    yhat: NDArray[np.float64]
    y: NDArray[np.float64]
    test: NDArray[np.bool_]
    count: NDArray[np.float64]
    m: int
    n: int

    @property
    def n_judges(self) -> int:
        """Number of judges K."""
        return len(self.judges)

    @property
    def names(self) -> list[str]:
        """Readable pattern labels: ``y=1 yhat=011`` (calibration), ``yhat=011`` (test).

        Non-binary labels are written with commas: ``y=0.5 yhat=1,3``.
        """
        binary = bool(np.isin(self.yhat, (0.0, 1.0)).all())
        sep = "" if binary else ","
        bits = [sep.join(f"{b:g}" for b in row) for row in self.yhat]
        return [f"yhat={b}" if t else f"y={y:g} yhat={b}"
                for b, t, y in zip(bits, self.test, self.y, strict=True)]

    @property
    def n_calibration_positive(self) -> int:
        """Calibration items with Y = 1."""
        return int(self.count[~self.test & (self.y == 1)].sum())

    def calibration_accuracy(
        self, smoothing: float = 0.0
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each judge's specificity and sensitivity from the calibration patterns alone.

        ``(N_00 + s)/(m_0 + 2s)`` and ``(N_11 + s)/(m_1 + 2s)`` per judge, with ``smoothing``
        s pseudo-items of each label (0: the raw proportions, NaN for an absent human class).
        """
        cal = ~self.test
        c, y, yhat = self.count[cal], self.y[cal], self.yhat[cal]
        m1, m0 = c @ y, c @ (1 - y)
        with np.errstate(divide="ignore", invalid="ignore"):
            q1 = ((c * y) @ yhat + smoothing) / (m1 + 2 * smoothing)
            q0 = ((c * (1 - y)) @ (1 - yhat) + smoothing) / (m0 + 2 * smoothing)
        return np.asarray(q0, dtype=np.float64), np.asarray(q1, dtype=np.float64)

    def calibration_kappa(self) -> NDArray[np.float64]:
        """Each judge's κ̂ = q̂0 + q̂1 - 1 from the calibration patterns (NaN without a class)."""
        q0, q1 = self.calibration_accuracy()
        out: NDArray[np.float64] = q0 + q1 - 1
        return out

    # The three checks below are facts of the patterns that the misclassification model and its
    # twin both act on (the twin refuses, the Bayesian model warns): they live here so that
    # neither imports the other.
    def unidentified(self) -> str | None:
        r"""Why one judge's parameters are not identified by these labels; or None.

        With one judge the test items identify only :math:`p = P(\hat Y = 1)`. Without a
        calibration item with Y = 1 nothing else informs the sensitivity (without Y = 0, the
        specificity), so the likelihood is maximised along a ridge or at a boundary. Likewise
        :math:`\theta = (1-p)\mu_0 + p\mu_1` with :math:`\mu_b = P(Y = 1 \mid \hat Y = b)`,
        and only calibration items with :math:`\hat Y = b` inform :math:`\mu_b`: test items
        with a judge label no calibration item has leave θ on a ridge. With several judges
        the test patterns carry more moments (a latent-class model), so the check is left to
        the fit's boundary and information checks.
        """
        if self.n_judges != 1:
            return None
        m1 = self.n_calibration_positive
        if not 0 < m1 < self.m:
            name, seen, unseen = ("sensitivity", 0, 1) if m1 == 0 else ("specificity", 1, 0)
            return (
                f"no calibration item has human label Y = {unseen} (all {self.m} are {seen}), "
                f"so the {name} of judge {self.judges[0]!r} is not identified: with one judge "
                f"the test items identify only P(Ŷ = 1), one number shared by the prevalence "
                f"and the {name}"
            )
        # one judge: θ = P(Ŷ=0) P(Y=1 | Ŷ=0) + P(Ŷ=1) P(Y=1 | Ŷ=1), and only calibration items
        # with Ŷ = b inform P(Y=1 | Ŷ=b); test items with that label leave θ on a ridge
        label = self.yhat[:, 0]
        for b in (0.0, 1.0):
            n_cal = int(self.count[~self.test & (label == b)].sum())
            n_test = int(self.count[self.test & (label == b)].sum())
            if n_cal == 0 and n_test > 0:
                return (
                    f"no calibration item has judge label Ŷ = {b:g} but {n_test} test item(s) "
                    f"do, so P(Y = 1 | Ŷ = {b:g}) and with it the prevalence are not identified "
                    f"for judge {self.judges[0]!r} (the likelihood is flat along a ridge)"
                )
        return None

    def sign_unidentified(self) -> str | None:
        """Why the sign of κ (which value of Y a judge's 1 means) is not identified; or None.

        Swapping Y and 1 - Y leaves the test items' likelihood unchanged; only calibration
        items of both classes tell the two orientations apart. Without them a likelihood with
        κ of either sign has two mirrored maxima (label switching).
        """
        m1 = self.n_calibration_positive
        if 0 < m1 < self.m:
            return None
        seen = 0 if m1 == 0 else 1
        return (
            f"no calibration item has human label Y = {1 - seen} (all {self.m} are {seen}), so "
            "with kappa='nonzero' the sign of each judge's κ = q0 + q1 - 1 (whether its 1 means "
            "Y = 1 or Y = 0) is not identified: swapping Y and 1 - Y leaves the test items' "
            "likelihood unchanged"
        )

    def negative_kappa(self) -> str | None:
        """Why κ > 0 conflicts with these labels (judges with calibration κ̂ < 0); or None."""
        flipped = [f"{j!r} (κ̂ = {v:.3g})"
                   for j, v in zip(self.judges, self.calibration_kappa(), strict=True) if v < 0]
        if not flipped:
            return None
        return (
            f"kappa='positive' forces κ = q0 + q1 - 1 > 0, but the calibration labels give "
            f"κ̂ < 0 for judge(s) {', '.join(flipped)}: the data say these judges' labels run "
            "against Y, and the constrained estimate will sit at or near κ = 0. Use the "
            "default kappa='nonzero' unless they are known to beat chance."
        )


@dataclass(frozen=True)
class Labels:
    """Human labels on a calibration set and judge labels on every item (Chen et al. 2026).

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
        (the real-data design of Chen et al. 2026: 10% calibration, the rest treated as
        unlabelled); the other rows' human labels are not used.

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

    def patterns(self, judges: Sequence[str] | None = None, *, binary: bool = True
                 ) -> LabelPatterns:
        """Counts of the distinct label patterns (calibration first, then test).

        Parameters
        ----------
        judges : sequence of str, optional
            Judges to keep, in this order (default: all).
        binary : bool
            Require 0/1 labels (default; the misclassification model's statistics). Binary
            labels are counted by packing each item's labels into one integer and one
            ``np.bincount`` (about 3 ms per million items, against a second or more for
            ``np.unique(axis=0)`` over the rows). ``binary=False`` accepts any values and
            counts distinct rows.

        Raises
        ------
        DataError
            An unknown or repeated judge name; with ``binary=True``, labels that are not 0/1
            (naming the rows).
        """
        names = tuple(self.judges) if judges is None else tuple(judges)
        unknown = [j for j in names if j not in self.judges]
        if unknown or not names:
            raise DataError(f"unknown judge(s) {unknown}; judges are {list(self.judges)}")
        if len(set(names)) != len(names):
            raise DataError(f"judges {list(names)} name a judge twice")
        chosen = self.select(names)
        if binary:
            chosen.require_binary()
        if binary and len(names) <= _MAX_PACKED_JUDGES:
            (cal_y, cal_yhat, cal_c), (_, test_yhat, test_c) = (
                _packed_patterns(chosen.y_cal, chosen.yhat_cal),
                _packed_patterns(None, chosen.yhat_test))
        else:
            cal_y, cal_yhat, cal_c = _row_patterns(chosen.y_cal, chosen.yhat_cal)
            _, test_yhat, test_c = _row_patterns(None, chosen.yhat_test)
        return LabelPatterns(
            judges=names,
            yhat=np.vstack([cal_yhat, test_yhat]),
            y=np.concatenate([cal_y, np.zeros(len(test_c))]),
            test=np.concatenate([np.zeros(len(cal_c), bool), np.ones(len(test_c), bool)]),
            count=np.concatenate([cal_c, test_c]),
            m=self.m,
            n=self.n,
        )

    def is_binary(self) -> bool:
        """All human and judge labels are 0 or 1."""
        return all(_is_01(a).all() for a in (self.y_cal, self.yhat_cal, self.yhat_test))

    def require_binary(self) -> None:
        """Raise :class:`DataError` naming the first non-binary labels."""
        for name, arr, index in (("human label (y_cal)", self.y_cal[:, None], self.cal_index),
                                 ("judge label (yhat_cal)", self.yhat_cal, self.cal_index),
                                 ("judge label (yhat_test)", self.yhat_test, self.test_index)):
            bad = ~_is_01(arr)
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


def _is_01(values: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Element-wise: the value is 0 or 1 (two comparisons; np.isin sorts, ~5x slower)."""
    out: NDArray[np.bool_] = (values == 0) | (values == 1)
    return out


def _packed_patterns(
    y: NDArray[np.float64] | None, yhat: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Distinct rows of binary (y, yhat) with counts, by packing each row into one integer.

    The human label is the most significant bit and judge 0 the next, so increasing codes are
    the lexicographic order of the rows (the order ``np.unique(axis=0)`` gives).
    """
    k = yhat.shape[1]
    width = k + (y is not None)
    weights = np.left_shift(np.int64(1), np.arange(k - 1, -1, -1, dtype=np.int64))
    code = yhat.astype(np.int64) @ weights
    if y is not None:
        code += y.astype(np.int64) << np.int64(k)
    if (1 << width) <= _MAX_BINCOUNT_CODES:
        tally = np.bincount(code, minlength=1 << width)
        uniq = np.flatnonzero(tally)
        counts = tally[uniq]
    else:
        uniq, counts = np.unique(code, return_counts=True)
    bits = (uniq[:, None] >> np.arange(width - 1, -1, -1, dtype=np.int64)) & 1
    bits = bits.astype(np.float64)
    human = bits[:, 0] if y is not None else np.zeros(len(uniq))
    return human, bits[:, width - k:], counts.astype(np.float64)


def _row_patterns(
    y: NDArray[np.float64] | None, yhat: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Distinct rows of any-valued (y, yhat) with counts, in lexicographic order."""
    rows = yhat if y is None else np.column_stack([y, yhat])
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    human = uniq[:, 0] if y is not None else np.zeros(len(uniq))
    return human, uniq[:, (y is not None):], counts.astype(np.float64)


# ---------------------------------------------------------------------- positive=
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
