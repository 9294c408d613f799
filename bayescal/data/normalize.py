"""Label normalisation, number parsing and column checks shared by every data container.

A label is one text. Text is never read as a number: ``"007"`` and ``"7"`` are two labels, and
so are ``"1.10"`` and ``"1.1"``; ``"NA"`` and ``"None"`` are labels like any other. What a label
loses is what a reader cannot see: surrounding whitespace, the difference between Unicode's
composed and decomposed forms (``café`` typed as one character or as ``e`` and a combining
accent: both become the composed form, NFC), zero-width characters (U+200B, U+200C, U+200D,
U+2060 and the byte-order mark U+FEFF, removed) and non-breaking or other Unicode spaces
(written as an ordinary space). A label that arrives as a number (a numeric column of a
DataFrame, a JSON or Parquet number) is written once: an integer 1 and a float 1.0 are both
``"1"``. Each distinct value is normalised once, and one :class:`LabelNormalizationWarning`
says what changed and why. A column the caller names must exist; a column left at its default
may be absent (:class:`_DefaultColumn`). Numbers read from text (outcomes, counts, display
orders, scores) are parsed explicitly by :func:`_numbers`, whose errors name the rows.
"""

from __future__ import annotations

import unicodedata
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


# Characters a reader cannot see: removed (zero-width) or written as an ordinary space.
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
          "\u202f\u205f\u3000"
_INVISIBLE = str.maketrans({**dict.fromkeys(_ZERO_WIDTH, None), **dict.fromkeys(_SPACES, " ")})


def _canonical_text(text: str) -> str:
    """Surrounding whitespace off, Unicode NFC, zero-width characters out, Unicode spaces made
    ordinary. Never a number format: ``"1.10"`` stays ``"1.10"``."""
    if text.isascii():  # the common case: nothing invisible can be in it
        return text.strip()
    return unicodedata.normalize("NFC", text.translate(_INVISIBLE)).strip()


def _canonical(value: object) -> str:
    """One text per label: a number is written once (1 and 1.0 -> '1'; 1.5 -> '1.5'), a text
    only loses what a reader cannot see (see the module docstring)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return str(int(v)) if v.is_integer() else repr(v)
    return _canonical_text(str(value))


def _why_changed(value: object, label: str) -> str:
    """What normalising ``value`` to ``label`` did, in words (for the warning)."""
    if not isinstance(value, str):
        return "number written once"
    reasons = []
    if any(c in value for c in _ZERO_WIDTH):
        reasons.append("zero-width character removed")
    if any(c in value for c in _SPACES):
        reasons.append("Unicode space made ordinary")
    if not unicodedata.is_normalized("NFC", value.translate(_INVISIBLE)):
        reasons.append("Unicode composed (NFC)")
    if value.translate(_INVISIBLE) != value.translate(_INVISIBLE).strip():
        reasons.append("surrounding whitespace removed")
    return ", ".join(reasons) or "normalised"


def _shown(value: object) -> str:
    """A value as the warning shows it: invisible characters escaped, so that the change is
    visible (``'gpt-4\\u200b'``); decomposed text shows its combining marks escaped."""
    if not isinstance(value, str):
        return str(value)
    if value.isascii():
        return repr(value)
    out = "".join(c if unicodedata.category(c)[0] not in "MZC" or c == " "
                  else f"\\u{ord(c):04x}" for c in value)
    return f"'{out}'"


def _coded_labels(
    s: pd.Series, column: str, argument: str
) -> tuple[NDArray[np.int64], list[str], str | None]:
    """Codes of a label column into its distinct labels, those labels made canonical, and a
    note of what normalisation changed (None if nothing).

    Labels are coded once per distinct value (``pd.factorize``), so normalising costs nothing
    per row; missing values were refused before. Two raw values with one canonical label
    (``café`` in NFC and NFD) get one label here and one code in the caller's recoding.
    """
    try:
        codes, uniques = pd.factorize(s)
    except TypeError:  # unhashable cells: lists or dicts (e.g. a JSON array in a label column)
        bad = s.map(lambda v: not isinstance(v, (str, int, float, bool, np.generic))).to_numpy(bool)
        raise DataError(
            f"column {column!r} holds lists or objects, not labels, in rows "
            f"{_rows(s.index, bad)} (e.g. {s[bad].iloc[0]!r}); write each label as one text",
            argument=argument,
        ) from None
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
    examples = ", ".join(f"{_shown(raw[u])} -> {labels[u]!r} ({_why_changed(raw[u], labels[u])})"
                         for u in changed[:_MAX_LISTED])
    more = f" and {len(changed) - _MAX_LISTED} more" if len(changed) > _MAX_LISTED else ""
    note = (f"column {column!r}: {len(changed)} label{'s' if len(changed) > 1 else ''} in "
            f"{n_rows} row{'s' if n_rows > 1 else ''} ({examples}{more})")
    return codes.astype(np.int64, copy=False), labels, note


def _numbers(
    s: pd.Series, column: str, argument: str | None = None, *, what: str = "numbers",
    hint: str = "", refuse: bool = True,
) -> NDArray[np.float64]:
    """A column as floats, parsed explicitly: numbers as they are, text by ``float`` once per
    distinct value (surrounding whitespace allowed). Missing cells are NaN; a text that is not
    a number (the text ``nan`` included) is a DataError naming its rows and values, or, with
    ``refuse=False``, NaN for a caller whose own check then names the rows and raw values.
    """
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan)
    codes, uniques = pd.factorize(s)  # missing cells get code -1
    value = np.full(len(uniques) + 1, np.nan)
    bad = []
    for u, v in enumerate(uniques):
        if isinstance(v, (bool, np.bool_, int, float, np.number)):
            value[u] = float(v)
            continue
        try:
            value[u] = float(str(v).strip())
        except ValueError:
            bad.append(u)
            continue
        if np.isnan(value[u]):  # the text "nan" is not a number, and not a missing cell either
            bad.append(u)
    if bad and refuse:
        rows = np.isin(codes, bad)
        examples = [uniques[u] for u in bad[:_MAX_LISTED]]
        raise DataError(
            f"column {column!r} must hold {what}; rows {_rows(s.index, rows)} have "
            f"{examples}{hint}",
            argument=argument,
        )
    return value[codes]


def _recode(
    codes: NDArray[np.int64], labels: list[str], index: pd.Index
) -> NDArray[np.int64]:
    """Codes into a column's distinct labels -> codes into ``index`` (the sorted label set)."""
    return index.get_indexer(labels).astype(np.int64)[codes]
