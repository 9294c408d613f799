"""Files to containers: ``read_comparisons``, ``read_labels``, ``read_ratings``.

Each reads a file with :func:`bayescal.io.tables.read_table` (or takes a frame already read),
parses the numeric columns explicitly, and builds the container, which validates everything.
An error or warning of the container is re-raised with the file's name in front, so that a
message says which file, which rows (numbered from 1 as the file's records) and which column.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayescal.data import Comparisons, Labels, Ratings
from bayescal.data.normalize import (
    _MAX_LISTED,
    DataError,
    _canonical,
    _column_problems,
    _numbers,
    _rows,
)
from bayescal.io.tables import PathLike, Source, _file_format, read_table
from bayescal.io.verdicts import TIDY_COLUMNS, _layout_name, as_verdicts, detect_layout

__all__ = ["read_comparisons", "read_labels", "read_ratings", "read_verdicts"]

_COLUMN_ARGUMENTS = ("item_a", "item_b", "outcome", "judge", "order", "count", "cluster")


def _table(source: PathLike | pd.DataFrame, file_format: str | None
           ) -> tuple[pd.DataFrame, Source]:
    if isinstance(source, pd.DataFrame):
        return source, Source("<DataFrame>", "frame")
    return read_table(source, format=file_format)


def _split_format(format: str | None) -> tuple[str | None, str | None]:
    """``format=`` names a file format or a verdict layout: (file format, layout)."""
    if format is None:
        return None, None
    layout = _layout_name(format)
    if layout is not None:
        return None, layout
    return _file_format(format).name, None


def _about[T](name: str, call: Callable[[], T]) -> T:
    """``call()`` with its DataErrors and warnings prefixed by the file's name (the warnings
    are issued also when ``call`` fails: they may explain the error)."""
    def prefixed(text: str) -> str:
        return text if name == "<DataFrame>" or text.startswith(name) else f"{name}: {text}"

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            return call()
    except DataError as err:
        raise DataError(prefixed(str(err)), argument=err.argument) from err
    finally:
        for w in caught:
            warnings.warn(prefixed(str(w.message)), w.category, stacklevel=3)


def read_verdicts(
    source: PathLike | pd.DataFrame, *, format: str | None = None, **column_names: Any
) -> tuple[pd.DataFrame, Source]:
    """A file of pairwise verdicts as a frame in the tidy columns of ``Comparisons.from_frame``.

    Parameters
    ----------
    source : str, PathLike or DataFrame
        A file (any format of :data:`bayescal.io.FILE_FORMATS`) or a frame already read.
    format : str, optional
        A file format (``csv``, ...) or a verdict layout (``tidy``, ``fastchat``, ``arena``,
        ``alpaca_eval``, ``judge_aware``); default: both recognised from the content.
    **column_names
        The column arguments the caller will pass to ``Comparisons.from_frame`` (``item_a``,
        ``outcome``, ...). Naming ``item_a``, ``item_b`` or ``outcome`` means the table is
        tidy with those columns: no layout is looked for.

    Returns
    -------
    frame : DataFrame
        Tidy columns (``item_a``, ``item_b``, ``outcome``, ``judge``, ``order`` where the
        layout has them) and the file's own columns.
    source : Source
        The file, its file format and its layout.
    """
    name = "<DataFrame>" if isinstance(source, pd.DataFrame) else str(source)
    return _about(name, lambda: _read_verdicts(source, format, column_names))


def _read_verdicts(source: PathLike | pd.DataFrame, format: str | None,
                   column_names: dict[str, Any]) -> tuple[pd.DataFrame, Source]:
    unknown = sorted(set(column_names) - set(_COLUMN_ARGUMENTS))
    if unknown:
        raise DataError(f"unknown column argument(s) {unknown}; they are "
                        f"{list(_COLUMN_ARGUMENTS)}")
    file_format, layout = _split_format(format)
    frame, src = _table(source, file_format)
    named = [a for a in TIDY_COLUMNS if column_names.get(a) is not None]
    if layout is None:
        layout = "tidy" if named else detect_layout(frame.columns)
    elif layout != "tidy" and named:
        raise DataError(
            f"{', '.join(f'{a}=' for a in named)} names a column of a tidy table, but "
            f"format={format!r} makes the verdict columns from the file's own; drop "
            f"{', '.join(f'{a}=' for a in named)} or read the table as tidy",
            argument=named[0])
    tidy, layout = as_verdicts(frame, layout, name=src.path)
    return tidy, Source(src.path, src.file_format, layout, src.delimiter)


def read_comparisons(
    source: PathLike | pd.DataFrame, *, format: str | None = None, **options: Any
) -> Comparisons:
    """Read pairwise verdicts from a file into :class:`~bayescal.data.Comparisons`.

    Parameters
    ----------
    source : str, PathLike or DataFrame
        A CSV, TSV, JSON, JSON Lines or Parquet file in the tidy columns or a layout of
        :data:`bayescal.io.LAYOUTS` (FastChat MT-Bench judgments, Chatbot Arena battles,
        AlpacaEval annotations, the judge comparisons of Xu et al. 2026); or a frame.
    format : str, optional
        A file format or a layout name (see :func:`read_verdicts`); never required.
    **options
        Keyword arguments of :meth:`Comparisons.from_frame` (column names, ``humans``,
        ``fractional``, ``cluster``, ``outcome_kind``). Column names refer to the tidy
        columns; the file's own columns keep their names (``cluster="question_id"``).

    Returns
    -------
    Comparisons

    Raises
    ------
    DataError
        Anything :func:`read_table` or ``Comparisons.from_frame`` refuses, prefixed by the
        file; rows are numbered as the file's records, from 1.
    """
    columns = {k: v for k, v in options.items() if k in _COLUMN_ARGUMENTS}
    name = "<DataFrame>" if isinstance(source, pd.DataFrame) else str(source)

    def build() -> Comparisons:
        frame, _ = _read_verdicts(source, format, columns)
        return Comparisons.from_frame(frame, **options)

    return _about(name, build)


def _text_column(s: pd.Series) -> pd.Series:
    """Labels of a column as canonical text (once per distinct value); missing stays missing."""
    codes, uniques = pd.factorize(s)
    labels = np.array([*(_canonical(v) for v in uniques), None], dtype=object)
    return pd.Series(labels[codes], index=s.index, dtype=object)


_TRUE = frozenset({"true", "1", "1.0", "yes"})
_FALSE = frozenset({"false", "0", "0.0", "no"})


def _flags(s: pd.Series, column: str) -> pd.Series:
    """A True/False column read explicitly: booleans, 1/0, or the words true/false/yes/no."""
    if pd.api.types.is_bool_dtype(s):
        return s
    text = _text_column(s).map(lambda v: v if v is None else v.lower())
    value = text.map(lambda v: True if v in _TRUE else False if v in _FALSE else None)
    bad = value.isna().to_numpy(bool)
    if bad.any():
        raise DataError(
            f"column {column!r} must be True/False (calibration item or not); rows "
            f"{_rows(s.index, bad)} have {list(s[bad][:_MAX_LISTED])}", argument="labelled")
    return value.astype(bool)


def read_labels(
    source: PathLike | pd.DataFrame,
    *,
    format: str | None = None,
    human: str = "human",
    judge: str | Sequence[str] = "judge",
    labelled: str | None = None,
    positive: object | None = None,
) -> Labels:
    """Read human and judge labels of a mean (Chen et al. 2026, arXiv:2601.05420) from a file.

    One row per item; an empty human cell is an item without a human label. Labels are read
    as numbers (``0``/``1``, or scores), parsed explicitly: a text that is not a number is an
    error naming its rows (``NA`` is not read as missing: leave the cell empty). With
    ``positive``, a two-valued label (``yes``/``no``, ``1``/``2``) is compared as text, so
    ``positive="1"`` matches a ``1`` whether the file wrote it as text or as a number.

    Parameters
    ----------
    source : str, PathLike or DataFrame
    format : str, optional
        A file format (see :func:`read_table`).
    human, judge, labelled, positive
        As in :meth:`Labels.from_frame`; ``labelled`` may hold True/False, 1/0 or yes/no.

    Returns
    -------
    Labels
    """
    frame, src = _table(source, format)
    cols = [judge] if isinstance(judge, str) else list(judge)

    def build() -> Labels:
        if _column_problems(frame, {"human": human, "judge": cols, "labelled": labelled}):
            return Labels.from_frame(frame, human=human, judge=judge, labelled=labelled,
                                     positive=positive)  # its error names the columns
        out = frame.copy()
        if labelled is not None:
            out[labelled] = _flags(frame[labelled], labelled)
        if positive is None:
            out[human] = _numbers(frame[human], human, "human", what="numbers (leave the "
                                  "cell empty for an item without a human label)",
                                  hint="; for a two-valued label pass positive=...")
            for col in cols:
                out[col] = _numbers(frame[col], col, "judge", what="numbers",
                                    hint="; for a two-valued label pass positive=...")
            return Labels.from_frame(out, human=human, judge=judge, labelled=labelled)
        for col in dict.fromkeys([human, *cols]):
            out[col] = _text_column(frame[col])
        return Labels.from_frame(out, human=human, judge=judge, labelled=labelled,
                                 positive=_canonical(positive))

    return _about(src.path, build)


def read_ratings(
    source: PathLike | pd.DataFrame,
    *,
    scale: tuple[int, int],
    format: str | None = None,
    judge: str | None = "judge",
    human: str | None = "human",
    judge_dist: Sequence[str] | None = None,
    groups: Sequence[str] = (),
    item: str | None = None,
) -> Ratings:
    """Read judge and human scores on one scale (Subasic et al. 2026, arXiv:2611.00447).

    One row per item. Scores and the judge's probabilities are parsed as numbers explicitly
    (a text that is not a number is an error naming its rows; an empty human cell is an item
    without a human score); group keys and item labels stay text.

    Parameters
    ----------
    source : str, PathLike or DataFrame
    scale : (int, int)
    format : str, optional
        A file format (see :func:`read_table`).
    judge, human, judge_dist, groups, item
        As in :meth:`Ratings.from_frame`.

    Returns
    -------
    Ratings
    """
    frame, src = _table(source, format)

    def build() -> Ratings:
        out = frame.copy()
        numeric = [c for c in (judge, human, *(judge_dist or ())) if c is not None]
        for col in dict.fromkeys(numeric):
            if col in frame.columns:
                hint = (" (leave the cell empty for an item without a human score)"
                        if col == human else "")
                out[col] = _numbers(frame[col], col, None, what=f"numbers{hint}")
        return Ratings.from_frame(out, scale=scale, judge=judge, human=human,
                                  judge_dist=judge_dist, groups=groups, item=item)

    return _about(src.path, build)
