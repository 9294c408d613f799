"""Label normalisation and column checks shared by every data container.

A label is one text: surrounding whitespace goes and equal numbers are written once (an
integer 1 and a float 1.0 are both ``"1"``). Each distinct value is normalised once, and one
:class:`LabelNormalizationWarning` says what changed. A column the caller names must exist; a
column left at its default may be absent (:class:`_DefaultColumn`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["DataError", "LabelNormalizationWarning"]


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
