"""Pairwise verdicts in the layouts of the field's tools, mapped to the tidy columns.

A layout is recognised from a table's columns (:data:`LAYOUTS`, one entry per layout: its name,
the columns that identify it, the mapper); a table with the tidy columns ``item_a``,
``item_b``, ``outcome`` is read as it is. A mapper adds the tidy columns
(``item_a``, ``item_b``, ``outcome`` = P(item_a preferred), ``judge``, and ``order`` = +1 when
item_a was displayed first, -1 when second, where the layout records it) and keeps the file's
own columns, so that a cluster key such as ``question_id`` can be named as it is in the file.
Records without a verdict (an ``error`` or ``unknown`` answer) are dropped with a
:class:`DroppedRecordsWarning` that says how many, why and by which judge; a verdict value
outside the layout's vocabulary is refused, naming the records.

FastChat MT-Bench pairwise judgments (``fastchat``; Zheng et al. 2023, the ``llm_judge``
``model_judgment/*_pair.jsonl`` files). Each record is two games on one question and turn:
game 1 shows ``model_1`` first, game 2 shows ``model_2`` first, and both winners are recorded
in model terms (``model_1``, ``model_2``, ``tie``, ``error``). The record becomes two verdicts
with item_a = ``model_1``: ``order`` +1 (game 1) and -1 (game 2), so display-order effects are
identified by every judge. ``tie`` is a half win; ``error`` (no parsable verdict) is dropped.
FastChat's own summary calls a record whose two games disagree ``inconsistent`` and counts it
as a tie; here the two games stay two verdicts, which is what an order-effect model needs (the
disagreement is the order effect). The judge is FastChat's (model, prompt) pair joined as
``gpt-4/pair-v2``. Records of single-answer grading (with ``m1_score``) carry one verdict
derived from two scores, not two display orders: they become one verdict without an order.

Chatbot Arena battle records (``arena``; ``model_a``, ``model_b``, ``winner``, optionally
``judge`` and ``question_id``; also the MT-Bench human judgments). ``winner`` ``model_a`` -> 1,
``model_b`` -> 0, ``tie`` and ``tie (bothbad)`` -> 1/2 (both bad is still no preference).
model_a is the response shown first (left), so ``order`` is +1. ``question_id`` (one
conversation) is the natural cluster key: ``cluster="question_id"``.

AlpacaEval annotations (``alpaca_eval``; ``generator_1``, ``generator_2``, ``preference``,
``annotator``). ``preference`` 1 means output_1 preferred, 2 output_2, 1.5 (or the older 0) a
draw, and a value in between the weighted annotators' probability: outcome = 2 - preference
(soft outcomes need ``fractional=True``). AlpacaEval randomises the display order and does not
record it: no ``order``. A missing preference (a failed annotation) is dropped.

The judge-comparison records of Xu, Tan, Wu, Zhou 2026, arXiv:2601.21817 (``judge_aware``;
``question_id``, ``model_a``, ``model_b``, ``judge_model``, ``judge_preferred_model``,
``judge_confidence``). ``judge_preferred_model`` ``a`` -> 1, ``b`` -> 0, ``c`` (tie) -> 1/2;
``unknown`` or missing (the judge gave no verdict) is dropped, as the authors' code does.
Their request scripts show model_a in slot A, first: ``order`` +1.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayescal.data.normalize import _MAX_LISTED, DataError, _canonical, _numbers, _rows

__all__ = ["LAYOUTS", "TIDY_COLUMNS", "DroppedRecordsWarning", "Layout", "as_verdicts",
           "detect_layout", "layout_names"]

TIDY_COLUMNS = ("item_a", "item_b", "outcome")


class DroppedRecordsWarning(UserWarning):
    """Records without a verdict were dropped while mapping a layout; says how many and why."""


@dataclass(frozen=True)
class Layout:
    """One verdict layout: its name, the columns that identify it, and its mapper.

    ``to_verdicts(frame, name)`` returns the frame with the tidy columns added (``name`` is
    the file, for messages); rows keep the index of their records.
    """

    name: str
    title: str
    columns: tuple[str, ...]
    to_verdicts: Callable[[pd.DataFrame, str], pd.DataFrame]

    def sniff(self, columns: Sequence[object]) -> bool:
        """True when a table with these columns has this layout."""
        return set(self.columns) <= set(columns)


def _words(
    values: pd.Series, vocabulary: Mapping[str, float], dropped: Sequence[str], column: str,
    name: str,
) -> pd.Series:
    """A verdict column mapped through ``vocabulary`` (case-insensitive, once per distinct
    value); values in ``dropped`` and missing cells give NaN (the caller drops them), others
    are refused naming the records."""
    codes, uniques = pd.factorize(values)
    meaning = np.full(len(uniques) + 1, np.nan)
    unknown = []
    for u, v in enumerate(uniques):
        key = _canonical(v).lower()
        if key in vocabulary:
            meaning[u] = vocabulary[key]
        elif key not in dropped:
            unknown.append(u)
    if unknown:
        rows = np.isin(codes, unknown)
        raise DataError(
            f"{name}: column {column!r} has values {[uniques[u] for u in unknown[:_MAX_LISTED]]} "
            f"in records {_rows(values.index, rows)}; this layout knows "
            f"{sorted(vocabulary)} (and {sorted(dropped)} for no verdict)", argument="outcome")
    return pd.Series(meaning[codes], index=values.index)


def _drop_missing(df: pd.DataFrame, name: str, why: str) -> pd.DataFrame:
    missing = df["outcome"].isna().to_numpy(bool)
    if missing.any():
        by_judge = (df.loc[missing, "judge"].value_counts().to_dict() if "judge" in df
                    else {})
        warnings.warn(
            f"{name}: dropped {int(missing.sum())} of {len(df)} verdicts {why}"
            + (f"; by judge: {by_judge}" if by_judge else ""),
            DroppedRecordsWarning, stacklevel=2)
    return df.loc[~missing]


def _judge_label(value: object) -> object:
    """FastChat's judge is a (model, prompt) list: one label ``model/prompt``."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "/".join(str(v) for v in value)
    return value


def _fastchat(df: pd.DataFrame, name: str) -> pd.DataFrame:
    base = df.assign(item_a=df["model_1"], item_b=df["model_2"])
    if "judge" in df:
        base["judge"] = df["judge"].map(_judge_label)
    vocabulary = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5}
    single = (df["m1_score"].notna().to_numpy(bool) if "m1_score" in df
              else np.zeros(len(df), bool))
    if single.any() and not single.all():
        raise DataError(
            f"{name}: records {_rows(df.index, single)} are single-answer gradings (m1_score) "
            f"and records {_rows(df.index, ~single)} pairwise games; read them as two files")
    g1 = _words(df["g1_winner"], vocabulary, ("error",), "g1_winner", name)
    if single.all():
        out = base.assign(outcome=g1)
        return _drop_missing(out, name, "whose grading gave no verdict (g1_winner 'error')")
    g2 = _words(df["g2_winner"], vocabulary, ("error",), "g2_winner", name)
    games = pd.concat([base.assign(outcome=g1, order=1), base.assign(outcome=g2, order=-1)])
    games = games.sort_index(kind="stable")  # the two games of a record side by side
    return _drop_missing(games, name, "whose game gave no parsable verdict ('error')")


def _arena(df: pd.DataFrame, name: str) -> pd.DataFrame:
    vocabulary = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
    outcome = _words(df["winner"], vocabulary, (), "winner", name)
    if outcome.isna().any():
        raise DataError(f"{name}: column 'winner' is empty in records "
                        f"{_rows(df.index, outcome.isna().to_numpy(bool))}; every battle needs "
                        "a verdict (drop those records)", argument="outcome")
    return df.assign(item_a=df["model_a"], item_b=df["model_b"], outcome=outcome, order=1)


def _alpaca_eval(df: pd.DataFrame, name: str) -> pd.DataFrame:
    p = _numbers(df["preference"], "preference", "outcome",
                 what="AlpacaEval preferences (1 = output_1, 2 = output_2, 1.5 = draw)")
    p = np.where(p == 0.0, 1.5, p)  # AlpacaEval's older code for a draw
    bad = ~np.isnan(p) & ~((p >= 1.0) & (p <= 2.0))
    if bad.any():
        raise DataError(f"{name}: column 'preference' must lie in [1, 2] (1 = output_1 "
                        f"preferred, 2 = output_2, 1.5 = draw; 0 = draw in older files); "
                        f"records {_rows(df.index, bad)} have {p[bad][:_MAX_LISTED].tolist()}",
                        argument="outcome")
    out = df.assign(item_a=df["generator_1"], item_b=df["generator_2"], outcome=2.0 - p)
    if "annotator" in df:
        out["judge"] = df["annotator"]
    return _drop_missing(out, name, "without a preference (a failed annotation)")


def _judge_aware(df: pd.DataFrame, name: str) -> pd.DataFrame:
    vocabulary = {"a": 1.0, "b": 0.0, "c": 0.5}
    outcome = _words(df["judge_preferred_model"], vocabulary, ("unknown", "none", "null"),
                     "judge_preferred_model", name)
    out = df.assign(item_a=df["model_a"], item_b=df["model_b"], judge=df["judge_model"],
                    outcome=outcome, order=1)
    return _drop_missing(out, name, "with no preference ('unknown' or missing)")


LAYOUTS: tuple[Layout, ...] = (
    Layout("fastchat", "FastChat MT-Bench pairwise judgments",
           ("model_1", "model_2", "g1_winner", "g2_winner"), _fastchat),
    Layout("judge_aware", "judge comparisons of Xu et al. 2026 (arXiv:2601.21817)",
           ("model_a", "model_b", "judge_model", "judge_preferred_model"), _judge_aware),
    Layout("alpaca_eval", "AlpacaEval annotations",
           ("generator_1", "generator_2", "preference"), _alpaca_eval),
    Layout("arena", "Chatbot Arena battle records", ("model_a", "model_b", "winner"), _arena),
)
_BY_NAME = {layout.name: layout for layout in LAYOUTS}


def layout_names() -> list[str]:
    """Names of the verdict layouts, and ``tidy``."""
    return ["tidy", *_BY_NAME]


def _layout_name(name: str) -> str | None:
    key = name.strip().lower().replace("-", "_")
    return key if key == "tidy" or key in _BY_NAME else None


def detect_layout(columns: Sequence[object]) -> str:
    """The layout of a table with these columns: ``tidy`` when it has ``item_a``, ``item_b``
    and ``outcome`` (or no layout matches), else the first layout of :data:`LAYOUTS` whose
    columns it has."""
    if set(TIDY_COLUMNS) <= set(columns):
        return "tidy"
    return next((layout.name for layout in LAYOUTS if layout.sniff(columns)), "tidy")


def as_verdicts(frame: pd.DataFrame, layout: str | None = None, *, name: str = "<DataFrame>",
                ) -> tuple[pd.DataFrame, str]:
    """A table in a verdict layout as tidy verdict columns.

    Parameters
    ----------
    frame : DataFrame
    layout : str, optional
        ``tidy`` or a name of :data:`LAYOUTS`; default :func:`detect_layout`.
    name : str
        The file, for messages.

    Returns
    -------
    frame : DataFrame
        The table with ``item_a``, ``item_b``, ``outcome`` (P(item_a preferred)), ``judge``
        and ``order`` where the layout has them, and the file's own columns; a ``tidy`` table
        unchanged.
    layout : str
    """
    chosen = detect_layout(frame.columns) if layout is None else _layout_name(layout)
    if chosen is None:
        raise DataError(f"unknown layout {layout!r}; layouts are {layout_names()}",
                        argument="format")
    if chosen == "tidy":
        return frame, chosen
    spec = _BY_NAME[chosen]
    missing = [c for c in spec.columns if c not in frame.columns]
    if missing:
        raise DataError(f"{name}: the {spec.title} layout ({chosen}) needs columns {missing}; "
                        f"the table has {list(frame.columns)}", argument="format")
    return spec.to_verdicts(frame, name), chosen
