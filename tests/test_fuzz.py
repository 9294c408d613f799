"""Fuzzed inputs: random frames through every constructor, twin and PyMC ``build``.

Each case must end in a result with finite estimates or in one of the library's own errors
(``DataError`` and its subclass ``IdentificationError``, ``MLEBoundaryError``,
``EstimatorUndefined``); a traceback from numpy, pandas, scipy or PyTensor, or a NaN estimate
returned as if it were a number, fails. Hypothesis runs derandomized without a database, so CI
sees the same examples on every run. The regression tests at the end pin the failures the fuzzer
found.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayescal.calibration.protocol import default_methods
from bayescal.data import Comparisons, DataError, Labels, Ratings
from bayescal.frequentist import judge_discrimination_btl as jdb_twin
from bayescal.frequentist import judge_mean
from bayescal.frequentist import misclassification as mis_twin
from bayescal.frequentist import order_effect_btl as oe_twin
from bayescal.frequentist import score_calibration as sc_twin
from bayescal.frequentist._core import Estimate, MLEBoundaryError

OWN_ERRORS = (DataError, MLEBoundaryError, judge_mean.EstimatorUndefined)

# pure numpy/scipy paths get more examples than PyMC builds (a build compiles nothing, but
# constructing a model graph is still ~50-200 ms)
FAST = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
BUILD = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# a small pool of odd labels so that collisions (1 vs 1.0 vs "1", "a" vs " a") are frequent
ODD_LABELS = ["a", " a", "b ", "c", 1, 1.0, "1", 2, 2.5, "é", "模型", "", "  ", None,
              float("nan"), True]
NICE_LABELS = ["a", "b", "c", "d"]


def _finite_estimate(est: Estimate) -> None:
    """A returned estimate has finite point estimates and a non-NaN covariance."""
    assert isinstance(est, Estimate)
    for name, da in est.params.data_vars.items():
        vals = np.asarray(da.values, dtype=np.float64)
        assert np.all(np.isfinite(vals)), f"{est.method}: non-finite estimate {name}={vals}"
    assert not np.any(np.isnan(est.cov)), f"{est.method}: NaN in the covariance"


def _run(fn, *args, **kwargs):
    """Call ``fn``; the library's own errors end the case (returned as None)."""
    try:
        return fn(*args, **kwargs)
    except OWN_ERRORS:
        return None


# ----------------------------------------------------------------------------- Comparisons
@st.composite
def comparison_frames(draw: st.DrawFn, odd: bool = True) -> tuple[pd.DataFrame, bool]:
    pool = ODD_LABELS if odd else NICE_LABELS
    n_items = draw(st.integers(1, 5))
    items = draw(st.lists(st.sampled_from(pool), min_size=n_items, max_size=n_items))
    n = draw(st.integers(1, 10))
    a = draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from(items), min_size=n, max_size=n))
    outcome_pool: list[object] = [0, 1, 0.5]
    if odd:
        outcome_pool += ["tie", "model_a", "b", 0.3, 2, None, "x"]
    all_ties = draw(st.booleans())
    outcome = [0.5] * n if all_ties else draw(
        st.lists(st.sampled_from(outcome_pool), min_size=n, max_size=n))
    df = pd.DataFrame({"item_a": a, "item_b": b, "outcome": outcome})
    if draw(st.booleans()):
        jpool = ["j1", "j2", " j1", 1, None] if odd else ["j1", "j2"]
        df["judge"] = draw(st.lists(st.sampled_from(jpool), min_size=n, max_size=n))
    if draw(st.booleans()):
        opool = [1, -1, 0, None] if odd else [1, -1]
        df["order"] = draw(st.lists(st.sampled_from(opool), min_size=n, max_size=n))
    if draw(st.booleans()):
        cpool = [1, 2, 1e9, 1e-9, 0.5, 3] + ([0, -1, None] if odd else [])
        df["count"] = draw(st.lists(st.sampled_from(cpool), min_size=n, max_size=n))
    dup = draw(st.integers(0, 2))
    if dup:
        df = pd.concat([df] * (dup + 1), ignore_index=True)
    return df, draw(st.booleans())


def _comparisons(df: pd.DataFrame, fractional: bool) -> Comparisons | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(Comparisons.from_frame, df, fractional=fractional)


def _comparison_twins(data: Comparisons) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kwargs in ({}, {"discrimination": False}, {"information": "sandwich"}):
            est = _run(jdb_twin.fit, data, **kwargs)
            if est is not None:
                _finite_estimate(est)
        est = _run(oe_twin.fit, data)
        if est is not None:
            _finite_estimate(est)


@FAST
@given(comparison_frames())
def test_fuzz_comparisons_twins(case: tuple[pd.DataFrame, bool]) -> None:
    """Odd labels, ties, duplicates, 1e9 and 1e-9 counts, missing order: own error or result.

    Catches: a label normalisation that lets NaN or "" through as an item, a count of 1e9
    overflowing the information matrix to NaN, an all-ties or disconnected data set reaching
    the optimizer and returning NaN scores instead of an IdentificationError.
    """
    df, fractional = case
    data = _comparisons(df, fractional)
    if data is not None:
        assert np.all(np.isfinite(data.count)) and np.all(data.count > 0)
        _comparison_twins(data)


@FAST
@given(st.integers(2, 5), st.integers(1, 3), st.integers(1, 12), st.data())
def test_fuzz_comparisons_from_codes(n_items: int, n_judges: int, n: int,
                                     data: st.DataObject) -> None:
    """Integer codes (the simulation path): extreme counts, fractional, orders of 0/±1.

    Catches: a weight of 1e9 or 1e-9 giving a singular information that is inverted to NaN.
    """
    codes = st.lists(st.integers(-1, n_items), min_size=n, max_size=n)
    ia, ib = data.draw(codes), data.draw(codes)
    k = data.draw(st.lists(st.integers(0, n_judges - 1), min_size=n, max_size=n))
    fractional = data.draw(st.booleans())
    y = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 0.25] if fractional else
                                           [0.0, 0.5, 1.0]), min_size=n, max_size=n))
    count = data.draw(st.lists(st.sampled_from([1.0, 3.0, 1e9] + ([1e-9, 0.5] if fractional
                                                                  else [])),
                               min_size=n, max_size=n))
    order = data.draw(st.one_of(st.none(), st.lists(st.sampled_from([-1, 1]), min_size=n,
                                                    max_size=n)))
    items = [f"i{c}" for c in range(n_items)]
    judges = [f"k{c}" for c in range(n_judges)]
    comp = _run(Comparisons.from_codes, items, judges, judge=k, item_a=ia, item_b=ib,
                outcome=y, order=order, count=count, fractional=fractional)
    if comp is not None:
        _comparison_twins(comp)


@BUILD
@given(comparison_frames(odd=False))
def test_fuzz_comparisons_build(case: tuple[pd.DataFrame, bool]) -> None:
    """PyMC builds of both BTL models on random (clean-labelled) frames: own error or a model.

    Catches: a build that hands PyTensor an empty or mis-shaped cell array (a shape error from
    PyTensor instead of a DataError naming the problem).
    """
    from bayescal.models import judge_discrimination_btl as jdb
    from bayescal.models import order_effect_btl as oe

    df, fractional = case
    data = _comparisons(df, fractional)
    if data is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (jdb.build, oe.build):
            model = _run(fn, data)
            if model is not None:
                lp = model.compile_logp()(model.initial_point())
                assert np.isfinite(lp), f"{fn.__module__}: log density {lp} at the initial point"


# ----------------------------------------------------------------------------- Labels
LABEL_VALUES = [0, 1, 0.5, 2, -1, 1e9, np.nan, None, "1", "yes", " 0"]


@st.composite
def label_arrays(draw: st.DrawFn, odd: bool = True) -> tuple:
    pool = LABEL_VALUES if odd else [0, 1]
    m = draw(st.integers(0 if odd else 1, 8))
    n = draw(st.integers(0 if odd else 1, 8))
    k = draw(st.integers(1, 2))
    y = draw(st.lists(st.sampled_from(pool), min_size=m, max_size=m))
    hc = [draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k)) for _ in range(m)]
    ht = [draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k)) for _ in range(n)]
    return y, hc, ht


def _labels_from_arrays(y, hc, ht) -> Labels | None:
    try:
        return _run(Labels.from_arrays, np.array(y, dtype=object), np.array(hc, dtype=object),
                    np.array(ht, dtype=object))
    except (TypeError, ValueError) as err:
        # np.asarray(..., float) on "yes" raises ValueError before the library sees the data
        if isinstance(err, DataError):
            raise
        pytest.fail(f"Labels.from_arrays leaked {type(err).__name__}: {err}")


def _label_twins(labels: Labels) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for judge in labels.judges:
            table = _run(judge_mean.estimate, labels, judge=judge)
            if table is not None:
                undefined = ~np.isfinite(table["estimate"].to_numpy(np.float64))
                assert (table.loc[undefined, "note"].astype(str).str.len() > 0).all(), \
                    f"NaN estimate without a reason:\n{table}"
        est = _run(mis_twin.fit, labels)
        if est is not None:
            _finite_estimate(est)


@FAST
@given(label_arrays())
def test_fuzz_labels_from_arrays(case: tuple) -> None:
    """Odd label values (NaN, None, strings, 1e9, 0.5) through from_arrays and every twin.

    Catches: a string label reaching ``np.asarray(float)`` and leaking a numpy ValueError, an
    estimator returning NaN with no note, the misclassification MLE on a degenerate set
    returning NaN rates instead of refusing.
    """
    labels = _labels_from_arrays(*case)
    if labels is not None:
        _label_twins(labels)


@FAST
@given(st.integers(1, 12), st.data())
def test_fuzz_labels_from_frame(n: int, data: st.DataObject) -> None:
    """Frames with missing human labels (the test split), odd values and a labelled mask."""
    pool = LABEL_VALUES
    df = pd.DataFrame({
        "human": data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)),
        "judge": data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)),
    })
    labelled = None
    if data.draw(st.booleans()):
        df["lab"] = data.draw(st.lists(st.sampled_from([True, False, 0, 1, None, "x"]),
                                       min_size=n, max_size=n))
        labelled = "lab"
    labels = _run(Labels.from_frame, df, labelled=labelled)
    if labels is not None:
        _label_twins(labels)


@BUILD
@given(label_arrays(odd=False))
def test_fuzz_misclassification_build(case: tuple) -> None:
    """The misclassification PyMC build on random binary labels: own error or a finite model."""
    from bayescal.models import misclassification as mis

    labels = _labels_from_arrays(*case)
    if labels is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _run(mis.build, labels)
    if model is not None:
        lp = model.compile_logp()(model.initial_point())
        assert np.isfinite(lp), f"log density {lp} at the initial point"


# ----------------------------------------------------------------------------- Ratings
SCALES = [(1, 5), (0, 1), (1, 3), (-2, 2), (0, 10)]


@st.composite
def ratings_cases(draw: st.DrawFn, odd: bool = True) -> tuple:
    scale = draw(st.sampled_from(SCALES + ([(1, 1), (5, 1), (1.5, 3)] if odd else [])))
    lo, hi = scale
    n = draw(st.integers(0 if odd else 1, 10))
    on = list(range(int(lo), int(hi) + 1))
    pool = on + ([lo - 1, hi + 1, 2.5, np.nan, 1e9] if odd else [])
    judge = draw(st.lists(st.sampled_from(on + ([np.nan, 2.5, hi + 1] if odd else [])),
                          min_size=n, max_size=n))
    human = draw(st.lists(st.sampled_from(pool + [np.nan]), min_size=n, max_size=n))
    return scale, judge, human


def _ratings(scale, judge, human) -> Ratings | None:
    return _run(Ratings.from_arrays, np.asarray(judge, float), np.asarray(human, float),
                scale=scale)


@FAST
@given(ratings_cases())
def test_fuzz_ratings_twin_and_calibrators(case: tuple) -> None:
    """Ratings with off-scale, fractional, missing scores through the twin and every calibrator.

    Catches: a single anchor or a single judge level giving a 0/0 slope (NaN predictions), an
    off-scale score reaching ``np.bincount`` as a negative index (numpy ValueError), the score
    calibration MLE returning NaN cutpoints on a set with one human level.
    """
    scale, judge, human = case
    ratings = _ratings(scale, judge, human)
    if ratings is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _run(sc_twin.fit, ratings)
        if est is not None:
            _finite_estimate(est)
        rated = ratings.rated
        for name, factory in default_methods(distributions=False).items():
            cal = factory(ratings.scale)
            fitted = _run(cal.fit, ratings.judge[rated], ratings.human[rated])
            if fitted is None:
                continue
            pred = _run(cal.predict, ratings.judge)
            if pred is not None:
                assert np.all(np.isfinite(pred)), f"{name}: non-finite predictions {pred}"


@BUILD
@given(ratings_cases(odd=False))
def test_fuzz_score_calibration_build(case: tuple) -> None:
    """The score-calibration PyMC build on random anchors: own error or a finite model."""
    from bayescal.models import score_calibration as sc

    ratings = _ratings(*case)
    if ratings is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _run(sc.build, ratings)
    if model is not None:
        lp = model.compile_logp()(model.initial_point())
        assert math.isfinite(lp), f"log density {lp} at the initial point"


# ----------------------------------------------------------------------------- regressions
@pytest.mark.parametrize("where", ["y_cal", "yhat_cal", "yhat_test"])
def test_labels_from_arrays_text_label_is_data_error(where: str) -> None:
    """Found by the fuzzer: a text label ("yes") in an array leaked numpy's ValueError from
    ``np.asarray(float)``; it must be a DataError naming the array and the position."""
    args = {"y_cal": [0, 1], "yhat_cal": [0, 1], "yhat_test": [1, 0, 1]}
    args[where] = [*args[where][:-1], "yes"]
    with pytest.raises(DataError, match=rf"{where} must hold numbers; positions \[\d\]"):
        Labels.from_arrays(args["y_cal"], args["yhat_cal"], args["yhat_test"])
