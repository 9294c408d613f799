"""Reading the files people have: tidy tables and the native formats of the field's tools.

Every reader recognises a file from its content (its first bytes and its name); ``format=``
may name it, but is never required. Delimited text is read as text: labels are never guessed
to be numbers (``"007"`` and ``"7"`` are two items, ``"1.10"`` and ``"1.1"`` too) and no word
(``NA``, ``None``, ``null``) becomes a missing value; only an empty cell is missing. Numeric
columns (outcomes, counts, display orders, scores) are parsed explicitly, and a value that is
not a number is refused by row. A header that repeats a column name is refused (never renamed
``judge.1``). Every error names the file, and rows are numbered as the file's records, from 1.

File formats (:data:`FILE_FORMATS`):

=========  ==========================================================  =====================
name       what                                                        recognised by
=========  ==========================================================  =====================
csv        comma-separated text with a header (``;`` or ``|`` too)     the fallback for text
tsv        tab-separated text with a header                            ``.tsv``/``.tab`` or
                                                                       tabs in the header
json       an array of records ``[{"column": value}, ...]``            first character ``[``
jsonl      JSON Lines, one record per line                             first character ``{``
parquet    Apache Parquet (a file, or a folder of ``*.parquet``)       magic bytes ``PAR1``
=========  ==========================================================  =====================

Verdict layouts (:data:`LAYOUTS`; any file format), mapped to the tidy columns of
:meth:`bayescal.data.Comparisons.from_frame` (``outcome`` = P(item_a preferred)):

===========  ===========================================  ===================================
layout       recognised by the columns                    mapped to
===========  ===========================================  ===================================
tidy         ``item_a``, ``item_b``, ``outcome``          as they are
fastchat     ``model_1``, ``model_2``, ``g1_winner``,     two verdicts per record: game 1
             ``g2_winner`` (FastChat MT-Bench pairwise    ``order`` +1, game 2 (``model_2``
             judgments; ``judge`` a (model, prompt)        shown first) ``order`` -1; ``tie``
             list)                                         1/2; ``error`` dropped; judge
                                                           ``gpt-4/pair-v2``
arena        ``model_a``, ``model_b``, ``winner``          ``model_a`` 1, ``model_b`` 0,
             (Chatbot Arena battles)                       ``tie``/``tie (bothbad)`` 1/2;
                                                           ``order`` +1; cluster key
                                                           ``question_id``
alpaca_eval  ``generator_1``, ``generator_2``,            outcome 2 − preference (1, 2, 1.5
             ``preference`` (AlpacaEval annotations)       draw, 0 an older draw); judge
                                                           ``annotator``; no order
judge_aware  ``model_a``, ``model_b``, ``judge_model``,   ``a`` 1, ``b`` 0, ``c`` 1/2;
             ``judge_preferred_model`` (Xu, Tan, Wu,      ``unknown`` dropped; judge
             Zhou 2026, arXiv:2601.21817)                  ``judge_model``; ``order`` +1
===========  ===========================================  ===================================

The meaning of each mapping, and why, is in :mod:`bayescal.io.verdicts`. Dropped records
(no verdict) are said in a :class:`DroppedRecordsWarning`.

Public functions: :func:`read_table` (a file as a frame, nothing guessed), :func:`read_verdicts`
(a file of verdicts as tidy columns), :func:`read_comparisons`, :func:`read_labels`,
:func:`read_ratings` (a file to a container). Writing files is not this package's concern.
"""

from bayescal.io.readers import read_comparisons, read_labels, read_ratings, read_verdicts
from bayescal.io.tables import FILE_FORMATS, FileFormat, Source, format_names, read_table
from bayescal.io.verdicts import (
    LAYOUTS,
    DroppedRecordsWarning,
    Layout,
    as_verdicts,
    detect_layout,
    layout_names,
)

__all__ = ["FILE_FORMATS", "LAYOUTS", "DroppedRecordsWarning", "FileFormat", "Layout", "Source",
           "as_verdicts", "detect_layout", "format_names", "layout_names", "read_comparisons",
           "read_labels", "read_ratings", "read_table", "read_verdicts"]
