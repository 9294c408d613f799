"""Files to tables: recognise a file's format from its content and read it without guessing.

Every delimited text file is read as text: no column is converted to numbers, no value such as
``NA``, ``None`` or ``null`` becomes a missing value, and ``007`` stays ``007``. Only a
genuinely empty cell is missing. JSON, JSON Lines and Parquet keep the types the file declares
(a JSON string is text, a JSON number a number). Which file format a file has is read from its
first bytes and its name (:data:`FILE_FORMATS`, one entry per format; ``format=`` overrides
it); the verdict layouts of the field's tools are in :mod:`bayescal.io.verdicts`.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bayescal.data.normalize import DataError

__all__ = ["FILE_FORMATS", "FileFormat", "Source", "read_table"]

PathLike = str | os.PathLike[str]
_HEAD_BYTES = 1 << 16
_DELIMITERS = (",", "\t", ";", "|")


@dataclass(frozen=True)
class Source:
    """Where a table came from and how it was read.

    Attributes
    ----------
    path : str
        The file as the caller named it (``"<DataFrame>"`` for a frame passed directly).
    file_format : str
        A name of :data:`FILE_FORMATS` (``"frame"`` for a DataFrame).
    layout : str or None
        The verdict layout (a name of :data:`bayescal.io.verdicts.LAYOUTS`), once the table
        was read as verdicts; None for a table read as it is.
    delimiter : str or None
        The delimiter of a delimited text file.
    """

    path: str
    file_format: str
    layout: str | None = None
    delimiter: str | None = None

    def __str__(self) -> str:
        return f"{self.path} ({self.file_format}{f', {self.layout}' if self.layout else ''})"


@dataclass(frozen=True)
class FileFormat:
    """One file format: its name, how it is recognised, how it is read.

    ``sniff(head, suffix)`` gets the file's first bytes (64 KiB, UTF-8 byte-order mark
    removed) and its lower-case suffix; ``read(path, data, head)`` returns the table (``data``
    is the whole content when the file had to be re-encoded, else None: read ``path``).
    """

    name: str
    description: str
    sniff: Callable[[bytes, str], bool]
    read: Callable[[Path, bytes | None, bytes], pd.DataFrame]


# ------------------------------------------------------------------ delimited text
def _first_line(head: bytes) -> str:
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head, final=False)
    return text.split("\n", 1)[0].rstrip("\r")


def _delimiter(head: bytes, suffix: str) -> str:
    """The delimiter: tab for ``.tsv``/``.tab``; else the candidate that splits the header line
    into the most fields (outside quotes), a comma when none splits it."""
    if suffix in (".tsv", ".tab"):
        return "\t"
    line = _first_line(head)
    counts = {d: len(next(csv.reader([line], delimiter=d), [])) for d in _DELIMITERS}
    if suffix == ".csv" and counts[","] > 1:
        return ","
    best = max(_DELIMITERS, key=lambda d: counts[d])  # ties: the earlier (comma first)
    return best if counts[best] > 1 else ","


def _header(head: bytes, delimiter: str) -> list[str]:
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head, final=False)
    return next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])


def _ragged_line(source: Path | bytes, delimiter: str, width: int) -> tuple[int, int] | None:
    """(line number, fields) of the first record whose width differs from the header's."""
    handle = (io.StringIO(source.decode("utf-8", errors="replace"), newline="")
              if isinstance(source, bytes)
              else open(source, encoding="utf-8-sig", errors="replace", newline=""))
    with handle:
        reader = csv.reader(handle, delimiter=delimiter)
        next(reader, None)
        for record in reader:
            if record and len(record) != width:
                return reader.line_num, len(record)
    return None


def _read_delimited(path: Path, data: bytes | None, head: bytes, delimiter: str) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = _header(head, delimiter)
    if not names:
        raise DataError(f"{path}: has no header line (the first line names the columns)")
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    repeated = [n for n, k in seen.items() if k > 1]
    if repeated:
        raise DataError(
            f"{path}: the header repeats column name(s) {repeated} "
            f"({', '.join(f'{n!r} {seen[n]} times' for n in repeated)}); every column needs "
            "its own name, or it is not clear which one is meant. Rename or drop the repeats.")
    def read(block_size: int) -> pa.Table:
        return pacsv.read_csv(
            io.BytesIO(data) if data is not None else str(path),
            read_options=pacsv.ReadOptions(block_size=block_size),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=True,
                null_values=[""], quoted_strings_can_be_null=True),
        )

    try:
        try:
            table = read(1 << 22)
        except pa.ArrowInvalid as err:
            if "straddl" not in str(err):
                raise
            # a record longer than a block (long texts): read the file as one block
            size = len(data) if data is not None else path.stat().st_size
            table = read(min(size + 1, (1 << 31) - 1))
    except pa.ArrowInvalid as err:
        text = str(err)
        if "Empty CSV file" in text:
            raise DataError(f"{path}: the file has no header line and no rows") from None
        if "invalid UTF8" in text or "UTF8" in text:
            raise DataError(f"{path}: is not UTF-8 text ({text}); save it as UTF-8 (in a "
                            "spreadsheet: 'CSV UTF-8')") from None
        if "columns, got" in text:
            found = _ragged_line(data if data is not None else path, delimiter, len(names))
            if found is not None:
                line, width = found
                raise DataError(
                    f"{path}: line {line} has {width} field(s) but the header has "
                    f"{len(names)} ({names}); fix that line (a missing or extra "
                    f"{_named(delimiter)}, or a value with a {_named(delimiter)} that is not "
                    "quoted)") from None
        raise DataError(f"{path}: not a readable {_named_format(delimiter)} file ({text})"
                        ) from None
    if table.column_names != names:  # the header parsed differently: never guess
        raise DataError(f"{path}: the header could not be read consistently "
                        f"({names} vs {table.column_names}); check its quoting")
    return table.to_pandas()


def _named(delimiter: str) -> str:
    return {",": "comma", "\t": "tab", ";": "semicolon", "|": "'|'"}[delimiter]


def _named_format(delimiter: str) -> str:
    return "TSV" if delimiter == "\t" else "CSV"


def _sniff_tsv(head: bytes, suffix: str) -> bool:
    return _delimiter(head, suffix) == "\t"


def _read_tsv(path: Path, data: bytes | None, head: bytes) -> pd.DataFrame:
    return _read_delimited(path, data, head, "\t")


def _read_csv(path: Path, data: bytes | None, head: bytes) -> pd.DataFrame:
    delimiter = _delimiter(head, path.suffix.lower())
    return _read_delimited(path, data, head, "," if delimiter == "\t" else delimiter)


# ------------------------------------------------------------------ JSON
def _json_text(path: Path, data: bytes | None) -> str:
    raw = data if data is not None else path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: is not UTF-8 text (byte {err.start}); JSON files are UTF-8"
                        ) from None


def _records(path: Path, values: object, where: str) -> pd.DataFrame:
    if not isinstance(values, list):
        raise DataError(f"{path}: {where} is a JSON {type(values).__name__}, not an array of "
                        "records")
    bad = next((k for k, v in enumerate(values) if not isinstance(v, dict)), None)
    if bad is not None:
        raise DataError(f"{path}: record {bad + 1} is a JSON {type(values[bad]).__name__}, not "
                        "an object of named fields; every record must be {\"column\": value, ...}")
    return pd.DataFrame(values)


def _read_json(path: Path, data: bytes | None, head: bytes) -> pd.DataFrame:
    text = _json_text(path, data)
    try:
        values = json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data" and _first_char(head) == b"{":  # JSON Lines named .json
            return _read_jsonl(path, data, head)
        raise DataError(f"{path}: not valid JSON: {err.msg} at line {err.lineno}, column "
                        f"{err.colno}") from None
    if isinstance(values, dict):
        raise DataError(
            f"{path}: a JSON object with keys {list(values)[:8]}, not records: give an array of "
            "records ([{...}, {...}], pandas: to_json(orient='records')) or one record per line "
            "(JSON Lines)")
    return _records(path, values, "the file")


def _read_jsonl(path: Path, data: bytes | None, head: bytes) -> pd.DataFrame:
    text = _json_text(path, data)
    lines = [(k + 1, line) for k, line in enumerate(text.splitlines()) if line.strip()]
    try:
        values = json.loads("[" + ",".join(line for _, line in lines) + "]")
    except json.JSONDecodeError:
        try:  # one pretty-printed object is not JSON Lines: say so
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            raise DataError(
                f"{path}: one JSON object with keys {list(whole)[:8]}, not records: give an "
                "array of records ([{...}, {...}]) or one record per line (JSON Lines)") from None
        for number, line in lines:
            try:
                json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}: line {number} is not a JSON record ({err.msg}, column "
                                f"{err.colno}); JSON Lines hold one object per line") from None
        raise
    bad = next((k for k, v in enumerate(values) if not isinstance(v, dict)), None)
    if bad is not None:
        raise DataError(f"{path}: line {lines[bad][0]} is a JSON {type(values[bad]).__name__}, "
                        "not an object of named fields")
    return pd.DataFrame(values)


def _first_char(head: bytes) -> bytes:
    return head.lstrip()[:1]


# ------------------------------------------------------------------ Parquet
def _read_parquet_file(path: Path, data: bytes | None = None) -> pd.DataFrame:
    try:
        df = pd.read_parquet(io.BytesIO(data) if data is not None else path)
    except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ... for a damaged file
        raise DataError(
            f"{path}: not a readable Parquet file ({type(err).__name__}: {err}); it is damaged "
            "or was not written to the end: remove it and write it again") from None
    if isinstance(df.index, pd.RangeIndex):
        return df.reset_index(drop=True)
    named = [n for n in df.index.names if n is not None]
    return df.reset_index(drop=not named)


def _read_parquet(path: Path, data: bytes | None, head: bytes) -> pd.DataFrame:
    return _read_parquet_file(path, data)


FILE_FORMATS: tuple[FileFormat, ...] = (
    FileFormat("parquet", "Apache Parquet (a file, or a folder of *.parquet parts)",
               lambda head, suffix: head[:4] == b"PAR1", _read_parquet),
    FileFormat("json", "a JSON array of records: [{\"column\": value, ...}, ...]",
               lambda head, suffix: _first_char(head) == b"[" or (
                   _first_char(head) == b"{" and suffix == ".json"), _read_json),
    FileFormat("jsonl", "JSON Lines: one record {\"column\": value, ...} per line",
               lambda head, suffix: _first_char(head) == b"{", _read_jsonl),
    FileFormat("tsv", "tab-separated text with a header line (.tsv, .tab, or tabs in the header)",
               _sniff_tsv, _read_tsv),
    FileFormat("csv", "comma-separated text with a header line (a semicolon or '|' is "
               "recognised from the header)", lambda head, suffix: True, _read_csv),
)
_BY_NAME = {f.name: f for f in FILE_FORMATS}

# First bytes of files that are not tables this reader reads, with what to do instead.
_NOT_TABLES = (
    (b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip)"),
    (b"PK\x03\x04", "a zip archive or an Excel workbook: export the sheet as CSV UTF-8"),
    (b"\xd0\xcf\x11\xe0", "an old Excel or Office file: export the sheet as CSV UTF-8"),
    (b"ARROW1", "an Arrow IPC / Feather file: write it as Parquet or CSV"),
)


def format_names() -> list[str]:
    """Names accepted by ``read_table(format=...)``."""
    return list(_BY_NAME)


def _file_format(name: str) -> FileFormat:
    key = name.strip().lower().replace("-", "_")
    if key not in _BY_NAME:
        raise DataError(f"unknown file format {name!r}; formats are {list(_BY_NAME)}",
                        argument="format")
    return _BY_NAME[key]


def _head(path: Path) -> tuple[bytes, bytes | None]:
    """The first bytes (UTF-8 byte-order mark removed) and, for a UTF-16 file, the whole
    content re-encoded as UTF-8 (spreadsheets' 'Unicode text' export)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        data = path.read_bytes().decode("utf-16").encode("utf-8")
        return data[:_HEAD_BYTES], data
    return head.removeprefix(codecs.BOM_UTF8), None


def _check_text(path: Path, head: bytes) -> None:
    for magic, what in _NOT_TABLES:
        if head.startswith(magic):
            raise DataError(f"{path}: is {what}")
    if b"\x00" in head:
        raise DataError(
            f"{path}: is not a text table (binary content: a NUL byte at byte "
            f"{head.index(b'\x00')}); formats read: {', '.join(_BY_NAME)}")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: is not UTF-8 text (byte {err.start}); save it as UTF-8 (in a "
                        "spreadsheet: 'CSV UTF-8')") from None


def read_table(path: PathLike, *, format: str | None = None) -> tuple[pd.DataFrame, Source]:
    """Read a table from a file as it is: text as text, nothing guessed.

    Parameters
    ----------
    path : str or PathLike
        A CSV, TSV, JSON (array of records), JSON Lines or Parquet file, or a folder of
        Parquet parts.
    format : str, optional
        A name of :data:`FILE_FORMATS` (``csv``, ``tsv``, ``parquet``, ``json``, ``jsonl``).
        Default: recognised from the file's first bytes and its name.

    Returns
    -------
    frame : DataFrame
        Delimited text: every column text (missing only where a cell is empty). JSON and
        Parquet: the file's own types. The index numbers the records from 1 (in a CSV, record
        1 is the line after the header), so that errors name rows as the file has them.
    source : Source
        The path and the file format read.

    Raises
    ------
    DataError
        No such file; an empty file; a binary, compressed or non-UTF-8 file; a repeated
        column name in the header (never renamed ``judge.1``); a line with more or fewer
        fields than the header (named by line); invalid JSON (named by line); a damaged
        Parquet file or part (named, with what to do). Each message starts with the file.
    """
    p = Path(path)
    shown = str(path)
    if p.is_dir():
        parts = sorted(p.glob("*.parquet"))
        if not parts:
            raise DataError(f"{shown}: a folder without *.parquet parts; name a file")
        if format is not None and _file_format(format).name != "parquet":
            raise DataError(f"{shown}: a folder is read as Parquet parts, not {format!r}",
                            argument="format")
        frames = [_read_parquet_file(part) for part in parts]
        df = pd.concat(frames, ignore_index=True)
        df.index = pd.RangeIndex(1, len(df) + 1)
        return df, Source(shown, "parquet")
    if not p.is_file():
        raise DataError(f"{shown}: no such file")
    if p.stat().st_size == 0:
        raise DataError(f"{shown}: the file is empty (0 bytes): there is no table in it")
    head, data = _head(p)
    suffix = p.suffix.lower()
    if format is not None:
        chosen = _file_format(format)
    elif head[:4] == b"PAR1":
        chosen = _BY_NAME["parquet"]
    else:
        _check_text(p, head)
        if not head.strip():
            raise DataError(f"{shown}: holds only whitespace: there is no table in it")
        chosen = next(f for f in FILE_FORMATS if f.sniff(head, suffix))
    df = chosen.read(p, data, head)
    df.index = pd.RangeIndex(1, len(df) + 1)
    delimiter = None
    if chosen.name == "csv":
        delimiter = _delimiter(head, suffix)
        delimiter = "," if delimiter == "\t" else delimiter
    elif chosen.name == "tsv":
        delimiter = "\t"
    return df, Source(shown, chosen.name, delimiter=delimiter)
