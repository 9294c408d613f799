"""Fuzzed inputs: random frames through every constructor, twin and PyMC ``build``.

Each case must end in a result with finite estimates or in one of the library's own errors
(``DataError`` and its subclass ``IdentificationError``, ``MLEBoundaryError``,
``EstimatorUndefined``); a traceback from numpy, pandas, scipy or PyTensor, or a NaN estimate
returned as if it were a number, fails. Hypothesis runs derandomized without a database, so CI
sees the same examples on every run; a numpy RuntimeWarning (overflow, 0/0) escaping the library
also fails. The regression tests at the end pin the failures the fuzzer
found.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bayescal.calibration.protocol import default_methods
from bayescal.data import Comparisons, DataError, Labels, Ratings
from bayescal.frequentist import judge_discrimination_btl as jdb_twin
from bayescal.frequentist import judge_mean
from bayescal.frequentist import misclassification as mis_twin
from bayescal.frequentist import order_effect_btl as oe_twin
from bayescal.frequentist import score_calibration as sc_twin
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.models import judge_discrimination_btl as jdb
from bayescal.models import misclassification as mis
from bayescal.models import order_effect_btl as oe
from bayescal.models import score_calibration as sc

OWN_ERRORS = (DataError, MLEBoundaryError, judge_mean.EstimatorUndefined)

# pure numpy/scipy paths get more examples than PyMC builds (a build compiles nothing, but
# constructing a model graph is still ~50-200 ms)
FAST = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
# every calibrator refits per example (some take ~100 ms), so fewer examples
RATINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
BUILD = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# Labels that are odd but valid (normalised with a warning: whitespace, 1 vs 1.0 vs "1",
# unicode, bools) and labels that are invalid (missing, blank). Each example draws which odd
# kinds it contains, so most examples get past validation and reach the estimators.
ODD_LABELS = [" a", "b ", "c", 1, 1.0, "1", 2, 2.5, "é", "模型", True, "a", "x y", "Ω", -3,
              "0.5", 1e9]
BAD_LABELS = [None, float("nan"), "", "  "]
NICE_LABELS = ["a", "b", "c", "d", "e"]


def _finite_estimate(est: Estimate) -> None:
    """A returned estimate has finite point estimates and a non-NaN covariance."""
    assert isinstance(est, Estimate)
    for name, da in est.params.data_vars.items():
        vals = np.asarray(da.values, dtype=np.float64)
        assert np.all(np.isfinite(vals)), f"{est.method}: non-finite estimate {name}={vals}"
    # a term reported without an interval (e.g. the low-rank factors when their sign is not
    # determined) carries NaN covariance rows by design; every other term must be finite
    shown_terms = np.array([est.interval.get(t.split("[", 1)[0], "wald") != "none"
                            for t in est.terms], dtype=bool)
    cov = est.cov[np.ix_(shown_terms, shown_terms)]
    assert not np.any(np.isnan(cov)), f"{est.method}: NaN in the covariance"
    table = est.summary()
    shown = table[table["interval"] != "none"]
    numbers = shown[["estimate", "se", "lower", "upper"]].to_numpy(np.float64)
    assert not np.any(np.isnan(numbers)), f"{est.method}: NaN in an interval row\n{shown}"


def _quiet() -> None:
    """Inside ``warnings.catch_warnings()``: the library's warnings (label normalisation,
    identification, few clusters, no anchors) are silenced, but a numpy RuntimeWarning
    (overflow, 0/0) is an error: it marks a computation the library did not guard."""
    warnings.simplefilter("ignore")
    warnings.simplefilter("error", RuntimeWarning)


def _check_model(model: object) -> None:
    """A built model (build only: compiling a log density per example costs ~1-6 s) has a
    finite initial point and finite observed data."""
    if model is None:
        return
    assert isinstance(model, pm.Model)
    for name, value in model.initial_point().items():
        assert np.all(np.isfinite(value)), f"initial point {name}={value}"
    for rv in model.observed_RVs:
        data = model.rvs_to_values[rv].data if hasattr(model.rvs_to_values[rv], "data") else None
        if data is not None:
            assert np.all(np.isfinite(np.asarray(data, dtype=np.float64))), f"observed {rv.name}"


def _run(fn, *args, **kwargs):
    """Call ``fn``; the library's own errors end the case (returned as None)."""
    name = f"{getattr(fn, '__module__', '').rsplit('.', 1)[-1]}.{fn.__qualname__}"
    try:
        out = fn(*args, **kwargs)
    except OWN_ERRORS as err:
        event(f"{name}: {type(err).__name__}")
        return None
    except ValueError as err:
        # the shared covariance rules refuse with a ValueError (a singular cluster meat)
        tb = err.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None or tb.tb_frame.f_globals.get("__name__") != "bayescal.frequentist.covariance":
            raise
        event(f"{name}: covariance refusal")
        return None
    event(f"{name}: result")
    return out


# ----------------------------------------------------------------------------- Comparisons
@st.composite
def comparison_frames(draw: st.DrawFn, odd: bool = True) -> tuple[pd.DataFrame, bool]:
    """A verdict frame; with ``odd`` each kind of oddity is switched on per example."""
    flag = (lambda: draw(st.integers(0, 3)) == 0) if odd else (lambda: False)
    pool = ODD_LABELS if odd and draw(st.booleans()) else NICE_LABELS
    if flag():
        pool = pool + BAD_LABELS
    n_items = draw(st.integers(1, 5))
    # distinct raw values (by repr, so 1, 1.0 and "1" may all appear and then coincide)
    items = draw(st.lists(st.sampled_from(pool), min_size=n_items, max_size=n_items,
                          unique_by=repr))
    n = draw(st.integers(1, 10))
    first = draw(st.lists(st.integers(0, n_items - 1), min_size=n, max_size=n))
    # the second item differs in position (labels may still coincide after normalisation)
    step = draw(st.lists(st.integers(1, max(n_items - 1, 1)), min_size=n, max_size=n))
    a = [items[i] for i in first]
    b = [items[(i + d) % n_items] for i, d in zip(first, step, strict=True)]
    fractional = draw(st.booleans())
    outcome_pool: list[object] = [0, 1, 0.5]
    if fractional:
        outcome_pool += [0.3, 0.99]
    if flag():
        outcome_pool += ["tie", "model_a", "b", "draw", 2, None, "x", -0.1]
    if draw(st.integers(0, 4)) == 0:
        outcome = [0.5] * n  # all ties
    else:
        outcome = draw(st.lists(st.sampled_from(outcome_pool), min_size=n, max_size=n))
    df = pd.DataFrame({"item_a": a, "item_b": b, "outcome": outcome})
    if draw(st.booleans()):
        jpool = ["j1", "j2"] + ([" j1", 1, 1.0, "1"] if odd else [])
        if flag():
            jpool += [None, ""]
        df["judge"] = draw(st.lists(st.sampled_from(jpool), min_size=n, max_size=n))
    if draw(st.booleans()):
        opool: list[object] = [1, -1] + ([0, None, "1"] if flag() else [])
        df["order"] = draw(st.lists(st.sampled_from(opool), min_size=n, max_size=n))
    if draw(st.booleans()):
        cpool: list[object] = [1, 2, 1e9, 3] + ([1e-9, 0.5] if fractional else [])
        if flag():
            cpool += [0, -1, None, 1.5, np.inf]
        df["count"] = draw(st.lists(st.sampled_from(cpool), min_size=n, max_size=n))
    if draw(st.integers(0, 3)) == 0:
        cpool2: list[object] = ["q1", "q2", 3, " q1"] + ([None] if flag() else [])
        df["battle"] = draw(st.lists(st.sampled_from(cpool2), min_size=n, max_size=n))
    dup = draw(st.integers(0, 2))
    if dup:
        df = pd.concat([df] * (dup + 1), ignore_index=True)
    return df, fractional


def _comparisons(df: pd.DataFrame, fractional: bool) -> Comparisons | None:
    with warnings.catch_warnings():
        _quiet()
        cluster = "battle" if "battle" in df.columns else None
        return _run(Comparisons.from_frame, df, fractional=fractional, cluster=cluster)


def _comparison_twins(data: Comparisons) -> None:
    with warnings.catch_warnings():
        _quiet()
        for kwargs in ({}, {"discrimination": False}, {"information": "sandwich"},
                       {"penalty": jdb.Priors()}) + (
                           ({"information": "cluster"},) if data.clusters else ()):
            est = _run(jdb_twin.fit, data, **kwargs)
            if est is not None:
                _finite_estimate(est)
        for kwargs in ({}, {"penalty": oe.Priors()}) + (
                ({"information": "cluster"},) if data.clusters else ()):
            est = _run(oe_twin.fit, data, **kwargs)
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
    ia = data.draw(st.lists(st.integers(0, n_items - 1), min_size=n, max_size=n))
    step = data.draw(st.lists(st.integers(1, n_items - 1), min_size=n, max_size=n))
    ib = [(i + d) % n_items for i, d in zip(ia, step, strict=True)]
    if data.draw(st.integers(0, 4)) == 0:  # an out-of-range code or a self-comparison
        ib[0] = data.draw(st.sampled_from([-1, n_items, ia[0]]))
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
    df, fractional = case
    data = _comparisons(df, fractional)
    if data is None:
        return
    with warnings.catch_warnings():
        _quiet()
        for fn in (jdb.build, oe.build):
            _check_model(_run(fn, data))


# ----------------------------------------------------------------------------- Labels
# kinds of label sets: binary, discrete/continuous, extreme, and invalid (missing, text)
LABEL_POOLS = {
    "binary": [0, 1],
    "discrete": [0, 1, 2, 0.5],
    "extreme": [0, 1, 1e9, -1e9, 1e-300],
    "invalid": [0, 1, np.nan, None, "yes", " 0", "1"],
}


@st.composite
def label_arrays(draw: st.DrawFn, odd: bool = True) -> tuple:
    kind = draw(st.sampled_from(list(LABEL_POOLS) if odd else ["binary"]))
    pool = LABEL_POOLS[kind]
    m = draw(st.integers(0 if odd else 1, 10))
    n = draw(st.integers(0 if odd else 1, 10))
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
        _quiet()
        for judge in labels.judges:
            table = _run(judge_mean.estimate, labels, judge=judge)
            if table is not None:
                undefined = ~np.isfinite(table["estimate"].to_numpy(np.float64))
                assert (table.loc[undefined, "note"].astype(str).str.len() > 0).all(), \
                    f"NaN estimate without a reason:\n{table}"
        for kwargs in ({}, {"algorithm": "em"}, {"penalty": mis.Priors()}):
            est = _run(mis_twin.fit, labels, **kwargs)
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
    pool = LABEL_POOLS[data.draw(st.sampled_from(list(LABEL_POOLS)))]
    # None/NaN in the human column marks a test item, so the human column also draws them
    df = pd.DataFrame({
        "human": data.draw(st.lists(st.sampled_from([*pool, None]), min_size=n, max_size=n)),
        "judge": data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)),
    })
    labelled = None
    if data.draw(st.booleans()):
        mask_pool: list[object] = [True, False, 0, 1]
        if data.draw(st.integers(0, 3)) == 0:
            mask_pool += [None, "x"]
        df["lab"] = data.draw(st.lists(st.sampled_from(mask_pool), min_size=n, max_size=n))
        labelled = "lab"
    labels = _run(Labels.from_frame, df, labelled=labelled)
    if labels is not None:
        _label_twins(labels)


@BUILD
@given(label_arrays(odd=False))
def test_fuzz_misclassification_build(case: tuple) -> None:
    """The misclassification PyMC build on random binary labels: own error or a finite model."""
    labels = _labels_from_arrays(*case)
    if labels is None:
        return
    with warnings.catch_warnings():
        _quiet()
        _check_model(_run(mis.build, labels))


# ----------------------------------------------------------------------------- Ratings
SCALES = [(1, 5), (0, 1), (1, 3), (-2, 2), (0, 10)]


@st.composite
def ratings_cases(draw: st.DrawFn, odd: bool = True) -> tuple:
    flag = (lambda: draw(st.integers(0, 3)) == 0) if odd else (lambda: False)
    scale = draw(st.sampled_from(SCALES + ([(1, 1), (5, 1), (1.5, 3)] if flag() else [])))
    lo, hi = scale
    n = draw(st.integers(0 if odd else 1, 12))
    # a narrow band of levels makes single-level and single-anchor sets frequent
    on = list(range(int(lo), int(hi) + 1))
    band = on[: draw(st.integers(1, len(on)))] if on else on
    jpool = band + ([np.nan, 2.5, hi + 1] if flag() else [])
    hpool = on + [np.nan] + ([lo - 1, 2.5, 1e9] if flag() else [])
    judge = draw(st.lists(st.sampled_from(jpool), min_size=n, max_size=n)) if jpool else []
    human = draw(st.lists(st.sampled_from(hpool), min_size=n, max_size=n))
    return scale, judge, human


def _ratings(scale, judge, human, text: bool = False) -> Ratings | None:
    if not text or len(judge) != len(human):
        return _run(Ratings.from_arrays, np.asarray(judge, float), np.asarray(human, float),
                    scale=scale)
    # through a frame, with scores written as text (" 3", "3.0") and one unreadable value
    df = pd.DataFrame({"judge": [f" {v}" for v in judge], "human": [
        None if (isinstance(v, float) and np.isnan(v)) else f"{v} " for v in human]})
    if len(df) % 4 == 3:
        df.loc[df.index[1], "human"] = "n/a"
    return _run(Ratings.from_frame, df, scale=scale)


@RATINGS
@given(ratings_cases(), st.booleans())
def test_fuzz_ratings_twin_and_calibrators(case: tuple, text: bool) -> None:
    """Ratings with off-scale, fractional, missing scores through the twin and every calibrator.

    Catches: a single anchor or a single judge level giving a 0/0 slope (NaN predictions), an
    off-scale score reaching ``np.bincount`` as a negative index (numpy ValueError), the score
    calibration MLE returning NaN cutpoints on a set with one human level.
    """
    scale, judge, human = case
    ratings = _ratings(scale, judge, human, text)
    if ratings is None:
        return
    with warnings.catch_warnings():
        _quiet()
        for penalty in (None, sc.Priors()):
            est = _run(sc_twin.fit, ratings, penalty=penalty)
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


@RATINGS
@given(st.sampled_from(SCALES), st.integers(0, 8), st.data())
def test_fuzz_ratings_distributions(scale: tuple[int, int], n: int, data: st.DataObject) -> None:
    """Judge predictive distributions (point masses, uniform, off by 1e-7, negative, NaN,
    all-zero rows) through Ratings and the distribution methods (predictive SQM, contrastive
    rollout). Catches: an all-zero or point-mass row dividing 0/0 into NaN predictions."""
    k = scale[1] - scale[0] + 1
    rows = [np.eye(k)[0], np.eye(k)[-1], np.full(k, 1 / k), np.eye(k)[0] * (1 + 1e-7)]
    if data.draw(st.integers(0, 3)) == 0:
        rows += [np.zeros(k), np.r_[-0.1, 1.1, np.zeros(k - 2)], np.full(k, np.nan)]
    dist = np.array([data.draw(st.sampled_from(rows)) for _ in range(n)]).reshape(n, k)
    human = data.draw(st.lists(st.sampled_from([*range(scale[0], scale[1] + 1), np.nan]),
                               min_size=n, max_size=n))
    ratings = _run(Ratings.from_arrays, None, np.asarray(human, float), scale=scale,
                   judge_dist=dist)
    if ratings is None:
        return
    assert np.all(np.isfinite(ratings.judge))
    rated = ratings.rated
    with warnings.catch_warnings():
        _quiet()
        for name in ("sqm_predictive", "sqm_predictive_upper", "contrastive_rollout"):
            cal = default_methods()[name](ratings.scale)
            if _run(cal.fit, ratings.judge_dist[rated], ratings.human[rated]) is None:
                continue
            pred = _run(cal.predict, ratings.judge_dist)
            if pred is not None:
                assert np.all(np.isfinite(pred)), f"{name}: non-finite predictions {pred}"


@BUILD
@given(ratings_cases(odd=False))
def test_fuzz_score_calibration_build(case: tuple) -> None:
    """The score-calibration PyMC build on random anchors: own error or a finite model."""
    ratings = _ratings(*case)
    if ratings is None:
        return
    with warnings.catch_warnings():
        _quiet()
        _check_model(_run(sc.build, ratings))


# ----------------------------------------------------------------------------- regressions
@pytest.mark.parametrize("where", ["y_cal", "yhat_cal", "yhat_test"])
def test_labels_from_arrays_text_label_is_data_error(where: str) -> None:
    """Found by the fuzzer: a text label ("yes") in an array leaked numpy's ValueError from
    ``np.asarray(float)``; it must be a DataError naming the array and the position."""
    args = {"y_cal": [0, 1], "yhat_cal": [0, 1], "yhat_test": [1, 0, 1]}
    args[where] = [*args[where][:-1], "yes"]
    with pytest.raises(DataError, match=rf"{where} must hold numbers; positions \[\d\]"):
        Labels.from_arrays(args["y_cal"], args["yhat_cal"], args["yhat_test"])


def test_order_effect_cluster_too_few_pairs_is_refused_with_reason() -> None:
    """Found by the fuzzer: one judge with a single (judge, pair) cluster and
    ``information="cluster"`` raised a bare ValueError from the meat; the refusal of a singular
    clustered covariance is the shared rule's, naming the key, the counts and the judge."""
    df = pd.DataFrame({"item_a": ["a", "a", "a", "b"], "item_b": ["b", "b", "b", "a"],
                       "outcome": [0.5, 0.5, 0.5, 0.5], "order": [1, 1, 1, 1]})
    data = Comparisons.from_frame(df)
    with pytest.raises(ValueError, match=r"by 'judge_pair' is singular: 1 clusters for 2 "
                                         r"parameters \(judge 'judge'\)"):
        oe_twin.fit(data, information="cluster", cluster="judge_pair")


def test_spline_eif_knot_next_to_an_end_knot() -> None:
    """Found by the fuzzer: judge labels 0 and 1e-300 beside -1e9 put an interior knot at 0,
    within 1e-300 of the upper end knot; the natural-spline basis divided by ~0, giving 0/0
    (RuntimeWarning) and a LinAlgError from lstsq ("SVD did not converge") as the eif row's
    note. Knots closer than a relative 1e-8 of the range to an end are dropped (df falls, with
    the existing warning), so the EIF is the linear one here and finite."""
    labels = Labels.from_arrays([0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, -1e9, 1e-300], [0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        est = judge_mean.eif(labels, regression="spline")
    assert est.info["knots"] == [-1e9, 1e-300]
    assert np.isfinite(float(est.params["prevalence"]))


def test_singular_information_message_with_huge_count() -> None:
    """Found by the fuzzer: a cell of 1e9 verdicts beside a judge whose cells are all ties made
    the information singular; the IdentificationError's message computed a condition number
    eig_max / 1e-300, which overflowed (RuntimeWarning) and printed "inf". The message now
    gives the eigenvalue range."""
    from bayescal.identify import IdentificationError

    data = Comparisons.from_codes(
        ["i0", "i1"], ["k0", "k1"], judge=[0, 0, 0, 0, 0, 1, 1, 0], item_a=[0] * 8,
        item_b=[1] * 8, outcome=[0, 0, 0, 0, 0, 0, 0.5, 0.5], count=[1] * 7 + [1e9])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(IdentificationError, match="eigenvalues from"):
            jdb_twin.fit(data)


# ----------------------------------------------------------------------------- DIAL twins
# the low-rank judge model and the human calibration fit per example (tens of ms to ~1 s on
# the larger draws), so fewer examples
DIAL = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@st.composite
def dial_llm(draw: st.DrawFn) -> Comparisons | None:
    """LLM verdicts by codes, mostly inside Condition 3 (K ≥ 2, N ≥ 3) so that the optimizer
    is reached: all-ties judges, 1e9 and 1e-9 counts, one display order only, unseen items."""
    if draw(st.booleans()):
        # a complete design (every judge, pair and display order), so that the optimizer and
        # the covariances are reached in most examples; the outcomes still vary
        n_items, n_judges = draw(st.integers(3, 4)), draw(st.integers(2, 3))
        i, j = np.triu_indices(n_items, 1)
        i, j = np.r_[i, j], np.r_[j, i]
        ia, ib = np.tile(i, n_judges).tolist(), np.tile(j, n_judges).tolist()
        k = np.repeat(np.arange(n_judges), i.size).tolist()
        n = len(ia)
    else:
        n_items = draw(st.integers(2, 5))
        n_judges = draw(st.integers(1, 3))
        n = draw(st.integers(1, 16))
        ia = draw(st.lists(st.integers(0, n_items - 1), min_size=n, max_size=n))
        step = draw(st.lists(st.integers(1, n_items - 1), min_size=n, max_size=n))
        ib = [(i + d) % n_items for i, d in zip(ia, step, strict=True)]
        k = draw(st.lists(st.integers(0, n_judges - 1), min_size=n, max_size=n))
    fractional = draw(st.booleans())
    y = ([0.5] * n if draw(st.integers(0, 4)) == 0 else
         draw(st.lists(st.sampled_from([0.0, 0.5, 0.5, 1.0] + ([0.25] if fractional else [])),
                       min_size=n, max_size=n)))
    count = draw(st.lists(st.sampled_from([1.0, 3.0, 1e9] + ([1e-9] if fractional else [])),
                          min_size=n, max_size=n))
    order = draw(st.lists(st.sampled_from([-1, 1] if draw(st.booleans()) else [1]),
                          min_size=n, max_size=n))
    dup = draw(st.integers(0, 2))
    return _run(Comparisons.from_codes, [f"i{c}" for c in range(n_items)],
                [f"k{c}" for c in range(n_judges)], judge=k * (dup + 1), item_a=ia * (dup + 1),
                item_b=ib * (dup + 1), outcome=y * (dup + 1), order=order * (dup + 1),
                count=count * (dup + 1), fractional=fractional)


@DIAL
@given(dial_llm(), st.booleans())
def test_fuzz_low_rank_judges_twin(llm: Comparisons | None, order_effects: bool) -> None:
    """The low-rank judge MLE (r = 1) on random verdicts: own error or finite estimates.

    Catches: a judge whose verdicts are all ties or all one way (separated) reaching the
    optimizer and coming back with NaN/inf loadings instead of an IdentificationError or
    MLEBoundaryError, a 1e9 count overflowing the information matrix, too few cells for the
    parameters leaking a LinAlgError.
    """
    if llm is None:
        return
    from bayescal.frequentist import low_rank_judges as lr_twin

    with warnings.catch_warnings():
        _quiet()
        est = _run(lr_twin.fit, llm, rank=1, order_effects=order_effects)
        if est is not None:
            _finite_estimate(est)


@DIAL
@given(dial_llm(), st.integers(1, 10), st.data())
def test_fuzz_human_calibration_twin(llm: Comparisons | None, m: int,
                                     data: st.DataObject) -> None:
    """DIAL's calibrated human scores at a fixed λ (1, and the ∞ / 0 endpoints) and by GACV over
    {∞, 1, 0} on random LLM and human verdicts: own error or finite estimates.

    Catches: a human item the LLMs never judged indexing out of range (IndexError), human
    comparisons of a single pair or a separated human set giving NaN/inf human scores instead
    of an IdentificationError or MLEBoundaryError, an all-ties LLM judge leaking a LinAlgError.
    """
    if llm is None:
        return
    from bayescal.frequentist import human_calibration as hc_twin

    n_items = llm.n_items + (data.draw(st.integers(0, 3)) == 0)  # an item the LLMs lack
    ia = data.draw(st.lists(st.integers(0, n_items - 1), min_size=m, max_size=m))
    step = data.draw(st.lists(st.integers(1, max(n_items - 1, 1)), min_size=m, max_size=m))
    ib = [(i + d) % n_items for i, d in zip(ia, step, strict=True)]
    if any(a == b for a, b in zip(ia, ib, strict=True)):
        return  # a single item: from_codes' own refusal is fuzzed elsewhere
    items = list(llm.items) + ([] if n_items == llm.n_items else ["unseen"])
    y = data.draw(st.lists(st.sampled_from([0.0, 1.0, 0.5, 0.5]), min_size=m, max_size=m))
    human = _run(Comparisons.from_codes, items, ["human"], judge=[0] * m, item_a=ia,
                 item_b=ib, outcome=y)
    if human is None:
        return
    joined = Comparisons.concat([llm, human], humans=["human"])
    weight = data.draw(st.sampled_from([1.0, np.inf, 0.0, "gacv"]))
    with warnings.catch_warnings():
        _quiet()
        if weight == "gacv":
            out = _run(hc_twin.gacv, joined, grid_values=[np.inf, 1.0, 0.0])
            if out is not None:
                table, est = out
                assert table["selected"].sum() == 1
                assert (table["admissible"] | (table["reason"].str.len() > 0)).all()
                _finite_estimate(est)
        else:
            est = _run(hc_twin.fit, joined, llm_weight=weight)
            if est is not None:
                _finite_estimate(est)


def test_human_calibration_one_human_verdict_is_data_error() -> None:
    """Found by the fuzzer: a single human verdict (n_h = 1) reached GACV's tr(H⁻J)/(n_h − 1)
    and raised a bare ZeroDivisionError; it is refused up front as a DataError."""
    from bayescal.frequentist import human_calibration as hc_twin

    llm = Comparisons.from_codes(["i0", "i1", "i2"], ["k0", "k1"], judge=[0], item_a=[0],
                                 item_b=[1], outcome=[0.0], order=[1])
    human = Comparisons.from_codes(["i0", "i1", "i2"], ["human"], judge=[0], item_a=[0],
                                   item_b=[1], outcome=[0.0])
    with pytest.raises(DataError, match="needs more than one"):
        hc_twin.fit(Comparisons.concat([llm, human], humans=["human"]), llm_weight=np.inf)


@pytest.mark.parametrize("weight", [1.0, np.inf])
def test_human_calibration_unidentified_llm_is_identification_error(weight: float) -> None:
    """Found by the fuzzer: one LLM cell for two judges and three items (far fewer cells than
    the judges' model has parameters) leaked numpy's LinAlgError ("Singular matrix") from the
    GACV trace at finite λ and from the anchored covariance at λ = ∞; the LLM-only twin's
    cell-count refusal now applies here too."""
    from bayescal.frequentist import human_calibration as hc_twin
    from bayescal.identify import IdentificationError

    llm = Comparisons.from_codes(["i0", "i1", "i2"], ["k0", "k1"], judge=[0], item_a=[0],
                                 item_b=[1], outcome=[0.0], order=[1])
    human = Comparisons.from_codes(["i0", "i1", "i2"], ["human"], judge=[0, 0], item_a=[0, 0],
                                   item_b=[1, 1], outcome=[0.0, 1.0])
    with pytest.raises(IdentificationError, match="1 LLM comparison cells for 6 free"):
        hc_twin.fit(Comparisons.concat([llm, human], humans=["human"]), llm_weight=weight)
