"""Ratings (the input of Subasic et al. 2026) and the llm-rubric loader: bad input is refused
naming the item."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayescal import datasets
from bayescal.data import DataError, Ratings
from tests.conftest import shared_data_dir


def test_valid_ratings_keep_scores_labels_and_groups() -> None:
    r = Ratings.from_arrays([1, 5, 3], [2, np.nan, 4], scale=(1, 5), items=["a", "b", "c"],
                            groups={"dataset": ["x", "x", "y"]})
    assert r.n == 3 and r.rated.tolist() == [True, False, True]
    assert list(r.levels) == [1, 2, 3, 4, 5]
    parts = r.by_group()
    assert set(parts) == {("x",), ("y",)} and list(parts[("x",)].index) == ["a", "b"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"judge": [1, 6, 3], "human": [1, 2, 3]}, r"off the declared scale 1\.\.5 for items 'b'"),
        ({"judge": [1, 2, 3], "human": [0, 2, 3]}, r"human score off the declared scale.*'a'"),
        ({"judge": [1, 2.5, 3], "human": [1, 2, 3]}, r"not an integer for items 'b'"),
        ({"judge": [1, 2, 3], "human": [1, 2, 3], "groups": {"g": ["u", "", "v"]}},
         r"group key 'g' is missing or empty for items 'b'"),
        ({"judge": [1, 2, 3], "human": [1, 2, 3], "groups": {"g": ["u", None, "v"]}},
         r"items 'b'"),
    ],
)
def test_bad_scores_and_groups_name_the_item(kwargs: dict, match: str) -> None:
    with pytest.raises(DataError, match=match):
        Ratings.from_arrays(scale=(1, 5), items=["a", "b", "c"], **kwargs)


def test_bad_distributions_name_the_item() -> None:
    """Catches a validator that checks only the first row, or accepts mass that sums to 0.9."""
    good = np.full((3, 4), 0.25)
    with pytest.raises(DataError, match=r"sum to 1.*items 'c'"):
        bad = good.copy()
        bad[2] = [0.2, 0.2, 0.2, 0.3]
        Ratings.from_arrays(None, [1, 2, 3], scale=(1, 4), judge_dist=bad, items=list("abc"))
    with pytest.raises(DataError, match=r"negative mass for items 'b'"):
        bad = good.copy()
        bad[1] = [-0.1, 0.35, 0.5, 0.25]
        Ratings.from_arrays(None, [1, 2, 3], scale=(1, 4), judge_dist=bad, items=list("abc"))
    with pytest.raises(DataError, match=r"items x 4 array"):
        Ratings.from_arrays(None, [1, 2, 3], scale=(1, 4), judge_dist=good[:, :3])


def test_distribution_rounding_is_renormalised_and_mode_is_the_point_score() -> None:
    w = np.array([[0.1, 0.2, 0.6, 0.1 + 2e-6], [0.7, 0.1, 0.1, 0.1]])
    r = Ratings.from_arrays(None, [3, 1], scale=(1, 4), judge_dist=w)
    np.testing.assert_allclose(r.judge_dist.sum(axis=1), 1.0, atol=1e-15)
    assert r.judge.tolist() == [3.0, 1.0]


def test_scale_and_frame_errors() -> None:
    with pytest.raises(DataError, match="two integers a < b"):
        Ratings.from_arrays([1], [1], scale=(5, 1))
    with pytest.raises(DataError, match=r"missing column\(s\) \['score'\]"):
        Ratings.from_frame(pd.DataFrame({"judge": [1]}), scale=(1, 5), human="score")
    words = pd.DataFrame({"id": ["p", "q"], "judge": [1, "good"], "human": [2, 3]})
    with pytest.raises(DataError, match=r"column 'judge' must hold numbers; items 'q'"):
        Ratings.from_frame(words, scale=(1, 5), item="id")
    df = pd.DataFrame({"id": ["p", "q"], "judge": [1, 2], "human": [2, 7]})
    with pytest.raises(DataError, match="items 'q'"):
        Ratings.from_frame(df, scale=(1, 5), item="id")


def test_group_without_human_scores_is_refused() -> None:
    r = Ratings.from_arrays([1, 2], [1, np.nan], scale=(1, 5), groups={"g": ["a", "b"]})
    with pytest.raises(DataError, match=r"group \{'g': 'b'\} has no human score"):
        r.by_group()


def test_llm_rubric_loader() -> None:
    root = shared_data_dir()
    if root is None or not (root / "llm-rubric").is_dir():
        pytest.skip("llm-rubric not found: set BAYESCAL_DATA")
    with pytest.warns(UserWarning, match="dropped 306 of 2007 rows with no human score"):
        df = datasets.llm_rubric(root)
    assert len(df) == 1701 and df["item"].nunique() == 223
    assert set(df["human"]) == {1, 2, 3, 4} and set(df["judge"]) <= {1, 2, 3, 4}
    np.testing.assert_allclose(df[datasets.RUBRIC_PROBS].sum(axis=1), 1.0, atol=1e-5)
    q0 = df[df["criterion"] == "Q0"]
    r = Ratings.from_frame(q0, scale=(1, 4), judge_dist=datasets.RUBRIC_PROBS, judge="judge",
                           item="item")
    assert r.n == 223 and r.judge_dist is not None
