"""Comparisons and Labels: validation before fitting, lossless aggregation, identification."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_expit

from bayescal import identify
from bayescal.data import Comparisons, DataError, Labels


def frame(**cols: list) -> pd.DataFrame:
    base = {"item_a": ["x", "y", "z"], "item_b": ["y", "z", "x"], "outcome": [1.0, 0.0, 0.5]}
    base.update(cols)
    return pd.DataFrame(base)


# ---------------------------------------------------------------- bad input, before fitting
@pytest.mark.parametrize(
    ("df", "kwargs", "match"),
    [
        (pd.DataFrame(columns=["item_a", "item_b", "outcome"]), {}, "empty"),
        (frame().drop(columns="outcome"), {}, r"missing column.*'outcome'.*keyword"),
        (frame().rename(columns={"item_a": "model_a"}), {}, r"looked for column 'item_a'"),
        (frame(outcome=[1.0, np.nan, 0.0]), {}, r"'outcome' has missing values in rows 1"),
        (frame(outcome=[1.0, 2.0, 0.0]), {}, r"must lie in \[0, 1\].*rows 1"),
        (frame(outcome=[1.0, "maybe", 0.0]), {}, r"neither a number.*rows 1.*'maybe'"),
        (frame(item_b=["y", "y", "x"]), {}, r"self-comparison in rows 1"),
        (frame(order=[1, 0, -1]), {}, r"'order' must be \+1.*rows 1"),
        (frame(count=[1, 0, 2]), {}, r"'count' must be a positive.*rows 1"),
        (frame(count=[1, -3, 2]), {}, r"rows 1"),
        (frame(judge=["a", "b", "a"]), {"humans": ["crowd"]}, r"humans=\['crowd'\]"),
    ],
)
def test_bad_input_is_refused_with_a_located_message(df, kwargs, match):
    with pytest.raises(DataError, match=match):
        Comparisons.from_frame(df, **kwargs)


def test_a_single_item_is_refused():
    df = pd.DataFrame({"item_a": ["x", "x"], "item_b": ["x", "x"], "outcome": [1.0, 0.0]})
    with pytest.raises(DataError, match="only one item"):
        Comparisons.from_frame(df)
    with pytest.raises(DataError, match="only 1 item"):
        Comparisons.from_codes(["x"], ["j"], judge=[0], item_a=[0], item_b=[0], outcome=[1.0])


def test_data_error_is_a_value_error():
    assert issubclass(DataError, ValueError)


def test_keyword_mapping_and_verdict_words():
    df = pd.DataFrame(
        {
            "model_a": ["gpt", "gpt", "claude", "llama"],
            "model_b": ["claude", "llama", "llama", "gpt"],
            "winner": ["model_a", "llama", "tie", "b"],
            "who": ["j1", "j1", "j2", "j2"],
        }
    )
    data = Comparisons.from_frame(df, item_a="model_a", item_b="model_b", outcome="winner",
                                  judge="who")
    cells = data.to_frame().set_index(["judge", "item_i", "item_j"])
    # canonical orientation: items sorted, so (claude, gpt) keeps gpt's win as a loss of claude
    assert cells.loc[("j1", "claude", "gpt"), "wins"] == 0.0
    assert cells.loc[("j1", "gpt", "llama"), "wins"] == 0.0  # llama won
    assert cells.loc[("j2", "claude", "llama"), "wins"] == 0.5  # tie
    assert cells.loc[("j2", "gpt", "llama"), "wins"] == 1.0  # 'b' = item_b = gpt won


def test_flip_changes_outcome_and_order_together():
    df = pd.DataFrame({"item_a": ["b", "a"], "item_b": ["a", "b"], "outcome": [1.0, 1.0],
                       "order": [1, 1]})
    cells = Comparisons.from_frame(df).to_frame().set_index("order")
    # row 0: b shown first beat a -> canonical (a, b): a lost, a displayed second
    assert cells.loc[-1, "wins"] == 0.0
    assert cells.loc[1, "wins"] == 1.0


def test_aggregation_is_lossless(rng):
    n_rows = 3000
    items = np.array(["m0", "m1", "m2", "m3", "m4"])
    i = rng.integers(0, 5, n_rows)
    j = (i + rng.integers(1, 5, n_rows)) % 5
    df = pd.DataFrame(
        {
            "item_a": items[i],
            "item_b": items[j],
            "judge": rng.choice(["a", "b", "c"], n_rows),
            "order": rng.choice([-1, 1], n_rows),
            "outcome": rng.choice([0.0, 0.5, 1.0], n_rows),
        }
    )
    data = Comparisons.from_frame(df)
    s = rng.normal(size=5)
    gamma = dict(zip("abc", np.exp(rng.normal(size=3)), strict=True))
    b = dict(zip("abc", rng.normal(size=3), strict=True))
    code = {m: k for k, m in enumerate(items)}
    # row-level Bernoulli log-likelihood with a judge scale and an order effect
    eta_rows = np.array([gamma[k] * (s[code[a]] - s[code[c]]) + o * b[k]
                         for a, c, k, o in zip(df.item_a, df.item_b, df.judge, df.order,
                                               strict=True)])
    y = df.outcome.to_numpy()
    ll_rows = np.sum(y * log_expit(eta_rows) + (1 - y) * log_expit(-eta_rows))
    g = np.array([gamma[k] for k in data.judges])
    bb = np.array([b[k] for k in data.judges])
    eta = g[data.judge] * (s[data.item_i] - s[data.item_j]) + data.order * bb[data.judge]
    ll_cells = np.sum(data.wins * log_expit(eta) + (data.count - data.wins) * log_expit(-eta))
    np.testing.assert_allclose(ll_cells, ll_rows, rtol=1e-12)
    assert data.n_rows == n_rows
    assert data.n_cells <= 3 * 10 * 2
    flipped = df.item_a.to_numpy() > df.item_b.to_numpy()
    np.testing.assert_allclose(data.wins_sq.sum(), np.sum(np.where(flipped, 1 - y, y) ** 2))
    pooled = data.collapse(order=True, judges=True)
    assert pooled.n_cells == 10 and pooled.count.sum() == n_rows
    np.testing.assert_allclose(pooled.wins.sum(), data.wins.sum())


def test_count_column_equals_repeated_rows():
    rep = pd.DataFrame({"item_a": ["x", "x", "x", "y"], "item_b": ["y", "y", "y", "x"],
                        "outcome": [1.0, 1.0, 0.5, 1.0]})
    agg = pd.DataFrame({"item_a": ["x", "x", "y"], "item_b": ["y", "y", "x"],
                        "outcome": [1.0, 0.5, 1.0], "count": [2, 1, 1]})
    a, b = Comparisons.from_frame(rep), Comparisons.from_frame(agg)
    np.testing.assert_array_equal(a.count, b.count)
    np.testing.assert_array_equal(a.wins, b.wins)
    np.testing.assert_array_equal(a.wins_sq, b.wins_sq)


def test_subset_keeps_named_judges():
    data = Comparisons.from_frame(frame(judge=["h", "l", "h"]), humans=["h"])
    sub = data.subset(["h"])
    assert sub.judges == ("h",) and sub.humans == ("h",) and sub.n_rows == 2
    with pytest.raises(DataError, match="unknown judge"):
        data.subset(["nobody"])


# ---------------------------------------------------------------- identification
def test_components_and_zermelo_name_the_items():
    df = pd.DataFrame({"item_a": ["a", "b", "c", "d"], "item_b": ["b", "c", "a", "e"],
                       "outcome": [1.0, 1.0, 1.0, 1.0]})
    ident = identify.check(Comparisons.from_frame(df))
    assert not ident.connected
    assert ident.components == [("a", "b", "c"), ("d", "e")]
    assert ident.never_lose == ("d",) and ident.never_win == ("e",)
    with pytest.raises(identify.IdentificationError, match=r"2 components: \{a, b, c\}; \{d, e\}"):
        identify.require_mle(Comparisons.from_frame(df))


def test_zermelo_strong_connectivity():
    # a 3-cycle of wins: strongly connected, the MLE exists (all scores equal)
    cycle = pd.DataFrame({"item_a": ["a", "b", "c"], "item_b": ["b", "c", "a"],
                          "outcome": [1.0, 1.0, 1.0]})
    assert identify.check(Comparisons.from_frame(cycle)).mle_exists
    # a chain a > b > c: a never loses, c never wins
    chain = pd.DataFrame({"item_a": ["a", "b"], "item_b": ["b", "c"], "outcome": [1.0, 1.0]})
    ident = identify.check(Comparisons.from_frame(chain))
    assert not ident.mle_exists and ident.never_lose == ("a",) and ident.never_win == ("c",)
    with pytest.raises(identify.IdentificationError, match=r"\['a'\] never lose"):
        identify.require_mle(Comparisons.from_frame(chain))
    # a tie counts both ways: a tie between a and c closes the cycle
    tied = pd.concat([chain, pd.DataFrame({"item_a": ["a"], "item_b": ["c"], "outcome": [0.5]})])
    assert identify.check(Comparisons.from_frame(tied)).mle_exists


def test_two_groups_that_never_lose_to_each_other_are_named():
    # {a, b} cycle and {c, d} cycle, a beats c only: no item is unbeaten, yet no MLE
    df = pd.DataFrame({"item_a": ["a", "b", "c", "d", "a"], "item_b": ["b", "a", "d", "c", "c"],
                       "outcome": [1.0, 1.0, 1.0, 1.0, 1.0]})
    ident = identify.check(Comparisons.from_frame(df))
    assert ident.connected and not ident.mle_exists
    assert not ident.never_lose and not ident.never_win
    assert "{a, b}" in ident.no_mle_message() and "{c, d}" in ident.no_mle_message()


def test_per_judge_components():
    df = frame(judge=["j1", "j1", "j2"])
    ident = identify.check(Comparisons.from_frame(df))
    assert ident.judge_components["j1"] == [("x", "y", "z")]
    assert ident.judge_components["j2"] == [("x", "z"), ("y",)]


def test_judge_components_are_computed_when_first_read(monkeypatch):
    """``check`` leaves the per-judge components until ``judge_components`` is read (the MLE
    checks never read them), and then computes them once. Catches them computed eagerly
    again (30-45 ms of every judge-aware fit at 300-1,000 items) or on every read."""
    calls = []
    real = identify._judge_components
    monkeypatch.setattr(identify, "_judge_components", lambda d: calls.append(1) or real(d))
    ident = identify.check(Comparisons.from_frame(frame(judge=["j1", "j1", "j2"])))
    assert not calls
    assert ident.judge_components["j1"] == [("x", "y", "z")]
    assert ident.judge_components["j2"] == [("x", "z"), ("y",)]
    assert len(calls) == 1


def test_discrimination_checks_read_each_judges_own_cells():
    """Each judge's reason comes from its own cells when a judge without verdicts sits between
    others (an empty segment of the judge-sorted cells). Catches segment sums given the empty
    judge's start (reduceat then returns the next judge's first value), or a judge's first
    pair read from a neighbour's segment."""
    df = pd.DataFrame({
        "item_a": ["x", "y", "x", "x", "x", "x", "y", "y"],
        "item_b": ["y", "z", "z", "z", "z", "y", "z", "z"],
        "outcome": [1.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5],
        "judge": ["a", "a", "a", "b", "b", "c", "c", "c"]})
    base = Comparisons.from_frame(df)
    # insert a judge without verdicts before "b": codes 1, 2 move to 2, 3 (judge "b", on one
    # pair, then has a neighbour on both sides)
    data = Comparisons(**{**base.__dict__, "judges": ("a", "idle", "b", "c"),
                          "judge": np.where(base.judge >= 1, base.judge + 1, base.judge)})
    reasons = identify.discrimination_not_identified(data)
    assert set(reasons) == {"idle", "b", "c"}
    assert reasons["idle"].startswith("has no verdicts")
    assert "2 verdicts, all on one pair" in reasons["b"] and "('x' over 'z')" in reasons["b"]
    assert reasons["c"].startswith("gave only ties (3)")


# ---------------------------------------------------------------- Labels (Chen et al. 2026)
def test_labels_from_arrays_and_frame():
    lab = Labels.from_arrays([1, 0, 1], [1, 1, 0], [0, 1, 1, 1])
    assert (lab.m, lab.n, lab.judges) == (3, 4, ("judge",))
    assert lab.is_binary()
    df = pd.DataFrame({"h": [1, None, 0, None], "a": [1, 0, 1, 1], "b": [0, 0, 1, 1],
                       "cal": [True, False, True, False]})
    lab2 = Labels.from_frame(df, human="h", judge=["a", "b"], labelled="cal")
    assert lab2.judges == ("a", "b") and lab2.m == 2
    np.testing.assert_array_equal(lab2.judge("b")[1], [0, 1])
    with pytest.raises(DataError, match="name one"):
        lab2.judge()


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([], [], [1, 0]), "calibration set is empty"),
        (([1, 0], [1, 0], []), "test set is empty"),
        (([1, 0, 1], [1, 0], [1]), "length mismatch"),
        (([1, np.nan], [1, 0], [1]), r"y_cal has missing.*rows 1"),
        (([1, 0], [1, 0], [1, np.nan]), r"yhat_test has missing.*rows 1"),
    ],
)
def test_labels_bad_input(args, match):
    with pytest.raises(DataError, match=match):
        Labels.from_arrays(*args)


def test_labels_require_binary_names_rows():
    lab = Labels.from_arrays([1, 0], [1, 0], [0, 2, 1])
    assert not lab.is_binary()
    with pytest.raises(DataError, match=r"yhat_test.*rows 1.*\[2\.0\]"):
        lab.require_binary()


def test_labels_random_split_keeps_the_requested_share():
    df = pd.DataFrame({"human": np.arange(50) % 2, "judge": np.arange(50) % 3 == 0})
    lab = Labels.random_split(df, human="human", judge="judge", fraction=0.2, random_seed=3)
    assert (lab.m, lab.n) == (10, 40)
    again = Labels.random_split(df, human="human", judge="judge", fraction=0.2, random_seed=3)
    assert list(lab.cal_index) == list(again.cal_index)
    with pytest.raises(DataError, match="fraction"):
        Labels.random_split(df, fraction=1.5)


# ---------------------------------------------------------------- issue 6: no silent wrong answers
@pytest.mark.parametrize(
    ("kwargs", "column"),
    [({"judge": "rater"}, "rater"), ({"order": "shown_first"}, "shown_first"),
     ({"count": "N"}, "N"), ({"judge": "judge"}, "judge"), ({"count": "count"}, "count")],
)
def test_a_named_column_that_is_absent_is_refused(kwargs, column):
    """Catches a named judge/order/count column being ignored: judge='rater' on a frame without
    'rater' pooled every judge into one and count='N' counted rows. Passing the default name
    explicitly (judge='judge') is a request too: it must exist."""
    df = frame(who=["p", "q", "p"])
    with pytest.raises(DataError, match=rf"looked for column '{column}'.*the frame has "
                                        r"\['item_a', 'item_b', 'outcome', 'who'\]"):
        Comparisons.from_frame(df, **kwargs)
    # left at its default, an optional column may be absent (one judge, no order, count 1)
    data = Comparisons.from_frame(df)
    assert data.judges == ("judge",) and data.n_rows == 3 and not data.has_order


def test_a_header_with_stray_spaces_or_case_gets_a_hint():
    """Catches a 'judge ' / 'Judge' header being silently ignored (pooling every judge): the
    default column is absent, but a header equal up to spaces and case is there."""
    with pytest.raises(DataError, match=r"'judge '.*differs only by surrounding spaces or case"):
        Comparisons.from_frame(frame().assign(**{"judge ": ["p", "q", "p"]}))
    with pytest.raises(DataError, match=r"'rater'.*'Rater'.*differs only by"):
        Comparisons.from_frame(frame().assign(Rater=["p", "q", "p"]), judge="rater")
    df = pd.DataFrame({"human ": [1, None], "judge": [1, 0]})
    with pytest.raises(DataError, match=r"'human '.*differs only by surrounding spaces or case"):
        Labels.from_frame(df)


def test_labels_that_differ_by_spaces_or_number_format_are_one_item():
    """Catches 'gpt-4 ' and 'gpt-4' becoming two items, and an integer item_a column with a
    float item_b column giving items '1' and '1.0': one item each, said in one warning."""
    from bayescal.data import LabelNormalizationWarning

    df = pd.DataFrame({"item_a": ["gpt-4 ", "claude", " gpt-4"], "item_b": ["claude", "gpt-4", "x"],
                       "judge": [" j", "j", "j"], "outcome": [1.0, 0.0, 1.0]})
    with pytest.warns(LabelNormalizationWarning) as caught:
        data = Comparisons.from_frame(df)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "'gpt-4 '" in text and "' gpt-4'" in text and "' j'" in text
    assert "'item_a': 2 labels in 2 rows" in text and "'judge': 1 label in 1 row" in text
    assert data.items == ("claude", "gpt-4", "x") and data.judges == ("j",)
    assert issubclass(LabelNormalizationWarning, UserWarning)
    numeric = pd.DataFrame({"item_a": [1, 2, 3, 2], "item_b": [2.0, 1.5, 1.0, 1.0],
                            "judge": [7.0, 7.0, 8.0, 7.0], "outcome": [1.0, 0.0, 0.5, 1.0]})
    with pytest.warns(LabelNormalizationWarning, match=r"2\.0 -> '2' \(number written once\)"):
        data = Comparisons.from_frame(numeric, outcome_kind="code")  # item 1 and outcome 1
    assert data.items == ("1", "1.5", "2", "3") and data.judges == ("7", "8")
    cells = data.to_frame().set_index(["judge", "item_i", "item_j"])
    assert cells.loc[("7", "1", "2"), "count"] == 2  # int 1 vs 2.0 and int 2 vs 1.0: one pair


def test_clean_labels_give_no_warning_and_blank_labels_are_refused():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Comparisons.from_frame(frame(judge=["a", "b", "a"]))
        Comparisons.from_frame(pd.DataFrame({"item_a": [1, 2], "item_b": [2, 3],
                                             "outcome": [1, 0]}))
    with pytest.raises(DataError, match=r"'item_b'.*blank.*rows 1"):
        Comparisons.from_frame(frame(item_b=["y", "  ", "x"]))


@pytest.mark.parametrize(
    ("cols", "match"),
    [
        ({"outcome": [1.0, 0.3, 0.0]}, r"'outcome'.*0, 1/2 or 1.*rows 1.*0\.3.*fractional=True"),
        ({"outcome": ["1", "0.3", "tie"]}, r"'outcome'.*rows 1.*0\.3"),
        ({"count": [1, 0.3, 2]}, r"'count'.*positive whole number.*rows 1.*0\.3"),
        ({"count": [1, 2.5, 2]}, r"'count'.*rows 1.*2\.5"),
        ({"count": [1, 0, 2]}, r"'count'.*rows 1"),
        ({"count": [1, -2, 2]}, r"'count'.*rows 1"),
        ({"count": [1, np.inf, 2]}, r"'count'.*rows 1"),
        ({"count": [1, np.nan, 2]}, r"'count' has missing values in rows 1"),
    ],
)
def test_soft_outcomes_and_fractional_counts_are_refused(cols, match):
    """Catches outcome=0.3 or count=0.3 being fitted as if they were verdicts: a Bernoulli/
    binomial likelihood needs outcomes in {0, 1/2, 1} and whole counts."""
    with pytest.raises(DataError, match=match):
        Comparisons.from_frame(frame(**cols))


def test_fractional_outcomes_and_counts_need_an_explicit_opt_in():
    df = frame(outcome=[1.0, 0.3, 0.0], count=[1, 0.5, 2])
    data = Comparisons.from_frame(df, fractional=True)
    cells = data.to_frame().set_index(["item_i", "item_j"])
    # row 1 is (y, z) with y preferred with weight 0.3 and half a verdict
    assert cells.loc[("y", "z"), "count"] == 0.5
    np.testing.assert_allclose(cells.loc[("y", "z"), "wins"], 0.15)
    np.testing.assert_allclose(cells.loc[("y", "z"), "wins_sq"], 0.5 * 0.09)
    for bad in (frame(outcome=[1.0, 1.3, 0.0]), frame(count=[1, 0, 2])):
        with pytest.raises(DataError, match="rows 1"):
            Comparisons.from_frame(bad, fractional=True)


def test_valid_string_frame_gives_the_same_cells_as_integer_codes():
    """The fast label coding must give cells identical to the integer-code path."""
    from bayescal import simulate

    truth = simulate.judge_discrimination_truth(7, 3, random_seed=5)
    df = simulate.judge_discrimination_btl(truth, 5000, random_seed=6, as_frame=True)
    direct = simulate.judge_discrimination_btl(truth, 5000, random_seed=6)
    data = Comparisons.from_frame(df)
    assert data.items == direct.items and data.judges == direct.judges
    for f in ("judge", "item_i", "item_j", "order", "count", "wins", "wins_sq"):
        np.testing.assert_array_equal(getattr(data, f), getattr(direct, f))


def test_from_codes_refuses_soft_outcomes_fractional_counts_and_bad_orders():
    """Catches the integer fast path accepting outcome 0.3, count 0.5 or an order of 2 (which
    would also collide with another cell's key)."""
    base = {"judge": [0, 0], "item_a": [0, 1], "item_b": [1, 2], "outcome": [1.0, 0.0]}
    for change, match in (({"outcome": [1.0, 0.3]}, r"0, 1/2 or 1.*positions \[1\]"),
                          ({"count": [1.0, 0.5]}, r"whole number.*positions \[1\]"),
                          ({"count": [1.0, 0.0]}, r"positions \[1\]"),
                          ({"order": [1, 2]}, r"order.*positions \[1\]")):
        with pytest.raises(DataError, match=match):
            Comparisons.from_codes(["a", "b", "c"], ["j"], **{**base, **change})
    soft = Comparisons.from_codes(["a", "b", "c"], ["j"], **{**base, "outcome": [1.0, 0.3]},
                                  count=[1.0, 0.5], fractional=True)
    np.testing.assert_allclose(soft.wins, [1.0, 0.15])


# ------------------------------------------------------------------ issue 15: labels as text
def test_invisible_unicode_differences_are_one_label_and_said():
    """Catches café in NFC and NFD, a zero-width space (U+200B, U+200C, U+200D, U+2060,
    U+FEFF) or a non-breaking / other Unicode space splitting one item or judge into two,
    and a warning that does not say what changed (the changes are invisible)."""
    from bayescal.data import LabelNormalizationWarning

    nfc, nfd = "caf\u00e9", "cafe\u0301"
    zero = ["gpt\u200b", "gpt\u200c", "gpt\u200d", "gpt\u2060", "\ufeffgpt"]
    df = pd.DataFrame({"item_a": [nfc, nfd, *zero, "a\u00a0b", "a\u2009b", "a\u3000b"],
                       "item_b": ["x"] * 10, "judge": [f"j\u00a0{k % 2}" for k in range(10)],
                       "outcome": [1.0] * 10})
    with pytest.warns(LabelNormalizationWarning) as caught:
        data = Comparisons.from_frame(df)
    assert data.items == ("a b", "café", "gpt", "x") and data.judges == ("j 0", "j 1")
    text = str(caught[0].message)
    assert "'cafe\\u0301' -> 'café' (Unicode composed (NFC))" in text
    assert "'gpt\\u200b' -> 'gpt' (zero-width character removed)" in text
    assert "(Unicode space made ordinary)" in text and "'judge'" in text
    # text is never number-normalised; numbers are (a float 1.0 and an int 1 are one label)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text_labels = Comparisons.from_frame(pd.DataFrame(
            {"item_a": ["1", "01", "1.0"], "item_b": ["x", "x", "x"],
             "outcome": ["model_a", "model_b", "tie"]}))
    assert text_labels.items == ("01", "1", "1.0", "x")


@pytest.mark.parametrize("as_text", [False, True], ids=["numbers", "strings"])
def test_outcome_that_is_both_an_item_label_and_a_code_is_refused(as_text):
    """Catches numeric items with a winner-label outcome read one way without comment: items
    1 and 2 with outcome 1 in a row where item_a is 2 means 'item_a won' as a code but 'item 1
    (= item_b) won' as a label. Today the number path took the code silently while the same
    data as strings raised; both now refuse and say how to resolve it."""
    df = pd.DataFrame({"item_a": [1, 2, 1, 3], "item_b": [2, 1, 3, 2], "outcome": [1, 1, 3, 2]})
    if as_text:
        df = df.astype(str)
    with pytest.raises(DataError, match=r"both an item's label and a verdict code.*rows 1.*"
                                        r"outcome_kind='code'.*outcome_kind='winner'") as err:
        Comparisons.from_frame(df.iloc[:2])
    assert err.value.argument == "outcome"
    winner = Comparisons.from_frame(df, outcome_kind="winner")
    words = df.assign(outcome=["model_a", "model_b", "model_b", "model_b"])
    same = Comparisons.from_frame(words)
    for f in ("item_i", "item_j", "count", "wins"):
        np.testing.assert_array_equal(getattr(winner, f), getattr(same, f))
    code = Comparisons.from_frame(df.iloc[:2], outcome_kind="code")
    np.testing.assert_array_equal(code.wins, [1.0])  # each row item_a won: 1 of 2 for item 1
    np.testing.assert_array_equal(code.count, [2.0])
    with pytest.raises(DataError, match=r"must lie in \[0, 1\].*rows 2, 3"):
        Comparisons.from_frame(df, outcome_kind="code")  # 3 and 2 are no codes
    with pytest.raises(DataError, match="outcome_kind must be one of"):
        Comparisons.from_frame(df, outcome_kind="label")


def test_outcome_codes_with_numeric_items_are_read_when_both_readings_agree():
    """A frame whose every ambiguous value means the same either way stays accepted (no
    refusal where no answer could be wrong)."""
    df = pd.DataFrame({"item_a": [1, 3, 1], "item_b": [2, 0, 0], "outcome": [1, 0, 1]})
    data = Comparisons.from_frame(df)  # outcome 1 where item_a is 1; 0 where item_b is 0
    np.testing.assert_array_equal(data.wins, [0.0, 1.0, 1.0])  # cells (0,1), (0,3), (1,2)


def test_from_codes_refuses_what_an_integer_cast_would_change():
    """Catches code 0.7 cast to item 0, order 0.5 cast to 'not recorded', and humans that are
    no judge accepted (the calibration would then have no human sample)."""
    base = {"judge": [0, 0], "item_a": [0, 1], "item_b": [1, 2], "outcome": [1.0, 0.0]}
    for change, match in (({"item_a": [0.7, 1]}, r"item_a must be whole numbers.*\[0\].*0\.7"),
                          ({"judge": [0, np.nan]}, r"judge must be whole numbers.*\[1\]"),
                          ({"order": [1, 0.5]}, r"order must be whole numbers.*0\.5"),
                          ({"humans": ["human"]}, r"humans=\['human'\] are not judges"),
                          ({"item_b": ["1", "2"]}, r"item_b must be integer codes")):
        with pytest.raises(DataError, match=match):
            Comparisons.from_codes(["a", "b", "c"], ["j"], **{**base, **change})
    with pytest.raises(DataError, match=r"items repeat the label\(s\) \['a'\]"):
        Comparisons.from_codes(["a", "a", "c"], ["j"], **base)
    ok = Comparisons.from_codes(["a", "b", "c"], ["j", "h"], **base, order=[1.0, -1.0],
                                humans=["h"])
    assert ok.humans == ("h",) and ok.has_order


@pytest.mark.parametrize("keys", [[0, 0, 3, 3, 3, 7, 9, 9], [4, 1, 4, 0, 9, 1], [5], [2, 2, 2]])
def test_unique_inverse_is_numpy_unique(keys):
    """The cell aggregation's unique keys and inverse equal ``np.unique``'s, for keys already
    in order (grouped by runs) and unordered. Catches a run's index off by one (the cumulative
    count not started at 0) or a run started where the key repeats."""
    from bayescal.data.comparisons import _unique_inverse

    key = np.array(keys, dtype=np.int64)
    uniq, inv = _unique_inverse(key, 16)
    want_uniq, want_inv = np.unique(key, return_inverse=True)
    np.testing.assert_array_equal(uniq, want_uniq)
    np.testing.assert_array_equal(inv, want_inv)


@pytest.mark.parametrize("shuffle", [False, True])
def test_collapse_of_cells_without_order_keeps_them(shuffle):
    """Pooling display order over cells that recorded none returns the same cells in key order
    with each cell's index, whether the cells come in key order (nothing summed or decoded) or
    not. Catches the shortcut taken for cells out of key order (cells then left unsorted, the
    index no longer the position), or its arrays out of step with each other."""
    df = frame(item_a=["x", "y", "x", "z"], item_b=["y", "z", "z", "x"],
               outcome=[1.0, 0.0, 0.5, 1.0], judge=["j1", "j2", "j1", "j2"])
    cells = Comparisons.from_frame(df)
    perm = np.arange(cells.n_cells)[::-1] if shuffle else np.arange(cells.n_cells)
    fields = ("judge", "item_i", "item_j", "order", "count", "wins", "wins_sq")
    data = Comparisons(**{**cells.__dict__, **{f: getattr(cells, f)[perm] for f in fields}})
    out = data.collapse(order=True)
    for f in fields:
        np.testing.assert_array_equal(getattr(out, f), getattr(cells, f))
    np.testing.assert_array_equal(data.collapse_index(order=True), np.argsort(perm))
    assert out.n_rows == cells.n_rows


def _graph_facts_from_the_cell_list(data: Comparisons):
    """Components, win components, never-lose and never-win items straight from the cells
    (sparse edge lists), the check's independent side."""
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import connected_components

    n, losses = data.n_items, data.count - data.wins

    def groups(src, dst, **kw):
        graph = coo_array((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
        _, labels = connected_components(graph, **kw)
        named = [tuple(data.items[i] for i in np.flatnonzero(labels == g))
                 for g in np.unique(labels)]
        return sorted(named, key=lambda g: (-len(g), g))

    beat_i, beat_j = data.wins > 0, losses > 0
    win = groups(np.r_[data.item_i[beat_i], data.item_j[beat_j]],
                 np.r_[data.item_j[beat_i], data.item_i[beat_j]], directed=True,
                 connection="strong")
    wins = np.bincount(data.item_i, data.wins, n) + np.bincount(data.item_j, losses, n)
    games = np.bincount(data.item_i, data.count, n) + np.bincount(data.item_j, data.count, n)
    def named(mask):
        return tuple(data.items[i] for i in np.flatnonzero(mask & (games > 0)))

    return (groups(data.item_i, data.item_j, directed=False), win,
            named(games - wins <= 0), named(wins <= 0))


@pytest.mark.parametrize(("n_items", "n_verdicts", "zero_cell"),
                         [(60, 80, False), (200, 300, False), (30, 2000, False), (60, 80, True)])
def test_check_equals_the_graphs_of_the_cell_list(n_items, n_verdicts, zero_cell):
    """The check's per-pair tables (win graph, comparison graph as its weak components, item
    totals) give the components, win components and never-lose / never-win items of the cell
    list, on sparse designs (disconnected, no MLE) and with a cell of no verdicts, which joins
    the comparison graph but not the win graph. Catches the win graph's transpose dropped
    (losses as wins of the first item), the totals summed over the wrong axis, or the weak
    components used when a cell without verdicts links what no win does."""
    from bayescal import simulate

    truth = simulate.judge_discrimination_truth(n_items, 3, random_seed=n_items)
    data = simulate.judge_discrimination_btl(truth, n_verdicts, random_seed=n_verdicts)
    if zero_cell:
        # a cell with no verdicts joining the two largest components
        first, second = (data.items.index(c[0]) for c in identify.components(data)[:2])
        i, j = min(first, second), max(first, second)
        data = Comparisons(**{**data.__dict__, **{
            f: np.r_[getattr(data, f), v] for f, v in
            [("judge", 0), ("item_i", i), ("item_j", j), ("order", 0), ("count", 0.0),
             ("wins", 0.0), ("wins_sq", 0.0)]}})
    ident = identify.check(data)
    got = (ident.components, ident.win_components, ident.never_lose, ident.never_win)
    assert got == _graph_facts_from_the_cell_list(data)
