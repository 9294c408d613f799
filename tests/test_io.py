"""File reading (bayescal.io): text read as text, every file format and verdict layout, errors
that name the file.

Each test names the bug it catches. The constructed excerpts in ``tests/data/`` (a few records
written in each tool's format, no copied data) pin every layout's mapping against a tidy frame
written out by hand; the real files, where ``BAYESCAL_DATA`` (or a ``shared/data`` folder next to
the checkout) has them, are read and compared with an independent reading (``json``/``csv``
modules or the loaders).
"""

from __future__ import annotations

import csv
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayescal.cli import main
from bayescal.data import Comparisons, DataError, LabelNormalizationWarning
from bayescal.io import (
    FILE_FORMATS,
    LAYOUTS,
    DroppedRecordsWarning,
    read_comparisons,
    read_labels,
    read_ratings,
    read_table,
    read_verdicts,
)
from tests.conftest import shared_data_dir

DATA = Path(__file__).parent / "data"
FIT = ["fit", "judge-discrimination-btl"]


def same_cells(a: Comparisons, b: Comparisons) -> None:
    assert a.items == b.items and a.judges == b.judges
    for f in ("judge", "item_i", "item_j", "order", "count", "wins", "wins_sq"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bayescal: error:"), err
    return err[0]


# ---------------------------------------------------------------- 1. labels are text
def test_labels_are_read_as_text_never_as_numbers_or_missing(tmp_path):
    """Catches pandas' type guessing: "007" and "7" (or "1.10" and "1.1") merged into one item,
    and the valid labels NA, None, null read as missing values."""
    path = write(tmp_path / "v.csv", "item_a,item_b,outcome\n007,7,1\n1.10,1.1,0\n"
                 "NA,None,1\nnull,007,0\n7,1.1,1\n")
    data = read_comparisons(path)
    assert data.items == ("007", "1.1", "1.10", "7", "NA", "None", "null")
    frame, source = read_table(path)
    assert source.file_format == "csv"
    assert frame["item_a"].tolist() == ["007", "1.10", "NA", "null", "7"]


def test_cli_keeps_text_labels_apart(tmp_path, capsys):
    """The same through the command line (today's reader merged "007" with "7" and refused
    "NA" as a missing value)."""
    rows = [("007", "7"), ("7", "NA"), ("NA", "007")] * 4
    path = tmp_path / "v.csv"
    path.write_text("item_a,item_b,outcome\n" + "".join(
        f"{a},{b},{k % 2}\n" for k, (a, b) in enumerate(rows)))
    assert main([*FIT, str(path), "--method", "mle", "--unweighted"]) == 0
    printed = capsys.readouterr().out
    for label in ("007", "7", "NA"):
        assert re.search(rf"^{label} ", printed, re.MULTILINE), (label, printed)


def test_an_empty_cell_is_missing_and_refused_by_name(tmp_path):
    """Catches an empty cell read as the label "" or "nan" (a new item) instead of missing."""
    path = write(tmp_path / "v.csv", "item_a,item_b,outcome\nx,y,1\nx,,0\n")
    with pytest.raises(DataError, match=r"v\.csv: column 'item_b' has missing values in rows 2"):
        read_comparisons(path)


def test_numbers_from_text_are_parsed_explicitly_naming_rows(tmp_path):
    """Catches a count or order that is not a number becoming NaN and then a silent default
    (counted once, order not recorded)."""
    path = write(tmp_path / "v.csv", "item_a,item_b,outcome,count,order\n"
                 "x,y,1, 2 ,+1\nx,y,0,two,-1\n")
    with pytest.raises(DataError, match=r"column 'count' must be a positive whole number.*"
                                        r"rows 2 have \['two'\]"):
        read_comparisons(path)
    ok = read_comparisons(write(tmp_path / "w.csv", "item_a,item_b,outcome,count,order\n"
                                "x,y,1, 2 ,+1\nx,y,0,3,-1\n"))
    assert ok.n_rows == 5 and ok.has_order
    with pytest.raises(DataError, match=r"'order'.*rows 2 have \['0\.5'\]"):
        read_comparisons(write(tmp_path / "o.csv", "item_a,item_b,outcome,order\nx,y,1,1\n"
                               "x,y,0,0.5\n"))


# ---------------------------------------------------------------- 2. repeated headers
def test_repeated_header_is_refused_naming_it(tmp_path, capsys):
    """Catches pandas renaming a second 'judge' column to 'judge.1' and the fit running on the
    first one (exit 0)."""
    rows = "x,y,1,j1,k1\ny,z,0,j1,k2\nx,z,1,j2,k1\ny,x,1,j2,k2\nz,y,1,j1,k1\nz,x,0,j2,k2\n"
    path = write(tmp_path / "v.csv", "item_a,item_b,outcome,judge,judge\n" + rows * 3)
    with pytest.raises(DataError, match=r"repeats column name\(s\) \['judge'\].*2 times"):
        read_table(path)
    assert main([*FIT, str(path), "--method", "mle", "--unweighted"]) == 2
    assert "'judge'" in one_line_error(capsys)


# ---------------------------------------------------------------- 3. invisible differences
def test_invisible_label_differences_in_a_file_are_one_item_with_a_warning(tmp_path):
    """Catches café typed composed and decomposed, a zero-width space or a non-breaking space
    splitting one model into two items; the warning names the file and what changed."""
    path = write(tmp_path / "v.csv", "item_a,item_b,outcome\ncaf\u00e9,gpt 4,1\n"
                 "cafe\u0301,gpt\u00a04,0\ngpt 4\u200b,caf\u00e9,1\n")
    with pytest.warns(LabelNormalizationWarning) as caught:
        data = read_comparisons(path)
    assert data.items == ("café", "gpt 4")
    text = " ".join(str(w.message) for w in caught)
    assert text.startswith(str(path))
    assert "Unicode composed (NFC)" in text and "zero-width character removed" in text
    assert "Unicode space made ordinary" in text and "\\u0301" in text and "\\u200b" in text


# ---------------------------------------------------------------- 9. files that are not tables
@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", r"the file is empty"),
        (b"\n \n", r"only whitespace"),
        (bytes(range(256)) * 4, r"not a text table \(binary content"),
        (b"\x1f\x8b\x08\x00rest", r"gzip-compressed"),
        (b"PK\x03\x04rest", r"Excel workbook"),
        ("item_a,item_b\nx,y\n".encode("latin-1") + b"caf\xe9,y\n", r"not UTF-8"),
        (b"item_a,item_b,outcome\nx,y,1\nx,y\ny,x,0\n", r"line 3 has 2 field\(s\).*header has 3"),
        (b"item_a,item_b,outcome\nx,y,1\nx,y,0,1\n", r"line 3 has 4 field\(s\)"),
        (b"PAR1 not really parquet", r"not a readable Parquet file.*remove it and write it"),
        (b'[{"item_a": "x"}, {"item_a": ]', r"not valid JSON.*line 1"),
        (b'{"item_a": "x"}\n{"item_a" "y"}\n', r"line 2 is not a JSON record"),
        (b'[{"item_a": "x"}, ["y"]]', r"record 2 is a JSON list"),
    ],
    ids=["empty", "blank", "binary", "gzip", "xlsx", "latin1", "short row", "long row",
         "parquet", "json", "jsonl", "json list"],
)
def test_unreadable_files_are_data_errors_naming_the_file(tmp_path, content, match):
    """Catches a pandas/pyarrow traceback (or a silently padded short row) where the user
    needs one line naming the file, the line and what to do."""
    path = tmp_path / "input.dat"
    path.write_bytes(content)
    with pytest.raises(DataError, match=match) as err:
        read_table(path)
    assert str(err.value).startswith(str(path))


def test_cli_bad_files_are_one_line_with_exit_2(tmp_path, capsys):
    """Every subcommand that reads a table reports an unreadable file as one line."""
    ragged = tmp_path / "ragged.csv"
    ragged.write_bytes(b"human,judge\n1,1\n0\n")
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(bytes(range(256)))
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    for path, argv in ((ragged, ["mean", str(ragged), "--human", "human", "--judge", "judge"]),
                       (garbage, [*FIT, str(garbage), "--method", "mle"]),
                       (empty, [*FIT, str(empty), "--method", "mle"])):
        assert main(argv) == 2
        assert str(path) in one_line_error(capsys)


def test_a_damaged_parquet_part_is_named(tmp_path):
    """Catches a raw ArrowInvalid from a folder of parts that does not say which part to
    remove; the good parts are read in order."""
    frame = pd.DataFrame({"item_a": ["x", "y"], "item_b": ["y", "z"], "outcome": [1.0, 0.0]})
    frame.iloc[:1].to_parquet(tmp_path / "part-000.parquet")
    frame.iloc[1:].to_parquet(tmp_path / "part-001.parquet")
    table, source = read_table(tmp_path)
    assert source.file_format == "parquet" and table["item_a"].tolist() == ["x", "y"]
    (tmp_path / "part-002.parquet").write_bytes(b"PAR1 truncated")
    with pytest.raises(DataError, match=r"part-002\.parquet: not a readable Parquet file.*"
                                        r"remove it"):
        read_table(tmp_path)


# ---------------------------------------------------------------- 10. file formats
def tidy_frame() -> pd.DataFrame:
    return pd.DataFrame({"item_a": ["007", "x", "y", "x", "NA"],
                         "item_b": ["x", "y", "007", "NA", "y"],
                         "outcome": ["1", "0", "0.5", "model_a", "tie"],
                         "judge": ["j1", "j1", "j2", "j2", "j1"],
                         "order": ["1", "-1", "1", "1", "-1"]})


@pytest.mark.parametrize("fmt", ["csv", "tsv", "json", "jsonl", "parquet", "semicolon"])
def test_every_file_format_is_recognised_from_its_content(tmp_path, fmt):
    """Catches a JSON file parsed as CSV (the error listed '[{"model_a": ...' as a column), a
    TSV read as one column, a Parquet file refused: each format, under a name that does not
    tell (``.txt``), gives the same verdicts as the frame."""
    frame = tidy_frame()
    path = tmp_path / "verdicts.txt"
    if fmt in ("csv", "tsv", "semicolon"):
        frame.to_csv(path, index=False, sep={"csv": ",", "tsv": "\t", "semicolon": ";"}[fmt])
    elif fmt == "json":
        frame.to_json(path, orient="records", indent=1)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    table, source = read_table(path)
    assert source.file_format == {"semicolon": "csv"}.get(fmt, fmt)
    assert list(table.columns) == list(frame.columns)
    same_cells(read_comparisons(path), Comparisons.from_frame(frame))


def test_spreadsheet_exports_are_read(tmp_path):
    """Catches a byte-order mark glued to the first column name, CRLF line ends, quoted
    values holding the delimiter or a line break, and a UTF-16 'Unicode text' export (tabs)
    refused as binary."""
    expected = pd.DataFrame({"item_a": ["x, the first", "y"], "item_b": ["y", "line\nbreak"],
                             "outcome": ["1", "0"]})
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfitem_a,item_b,outcome\r\n\"x, the first\",y,1\r\n"
                    b"y,\"line\nbreak\",0\r\n")
    utf16 = tmp_path / "unicode.txt"
    utf16.write_bytes("item_a\titem_b\toutcome\r\nx, the first\ty\t1\r\n"
                      "y\t\"line\nbreak\"\t0\r\n".encode("utf-16"))
    for path, fmt in ((bom, "csv"), (utf16, "tsv")):
        table, source = read_table(path)
        assert source.file_format == fmt
        pd.testing.assert_frame_equal(table.reset_index(drop=True).astype(object),
                                      expected.astype(object))


def test_a_record_longer_than_a_read_block(tmp_path):
    """Catches pyarrow's 'straddling object' error on a quoted text of several MiB (a model
    output with line breaks in an annotation export)."""
    long = "word\n" * 1_200_000  # 6 MB, more than one 4 MiB block
    path = tmp_path / "long.csv"
    path.write_text(f'item_a,item_b,output\nx,y,"{long}"\ny,x,short\n')
    table, _ = read_table(path)
    assert table["output"].str.len().tolist() == [len(long), 5]


def test_a_json_file_named_csv_is_read_as_json(tmp_path):
    """The issue's example: Arena records saved as ``.csv``."""
    path = tmp_path / "battles.csv"
    path.write_text((DATA / "arena_battles.json").read_text())
    _, source = read_verdicts(path)
    assert (source.file_format, source.layout) == ("json", "arena")


def test_format_overrides_recognition(tmp_path):
    """Catches ``format=`` being ignored: a tab-separated file with commas in its header is
    read by the named format, and ``format="tidy"`` keeps a layout's columns as they are."""
    path = write(tmp_path / "v.dat", "item_a\titem_b\toutcome\tnote\nx\ty\t1\ta,b\ny\tz\t0\tc\n")
    table, source = read_table(path, format="tsv")
    assert source.file_format == "tsv" and table["note"].tolist() == ["a,b", "c"]
    frame, source = read_verdicts(DATA / "arena_battles.json", format="tidy")
    assert source.layout == "tidy" and "item_a" not in frame
    with pytest.raises(DataError, match="unknown file format 'xlsx'"):
        read_table(path, format="xlsx")
    assert {f.name for f in FILE_FORMATS} == {"csv", "tsv", "json", "jsonl", "parquet"}
    assert {layout.name for layout in LAYOUTS} == {"fastchat", "arena", "alpaca_eval",
                                                   "judge_aware"}


def test_named_columns_mean_a_tidy_table(tmp_path):
    """Naming item_a/item_b/outcome reads the file's own columns (as the from_frame error
    advises), not a layout the reader recognised; naming them with a layout is refused."""
    data = read_comparisons(DATA / "arena_battles.json", item_a="model_a", item_b="model_b",
                            outcome="winner", judge=None)
    assert data.n_rows == 5 and data.judges == ("judge",) and not data.has_order
    with pytest.raises(DataError, match="item_a= names a column of a tidy table"):
        read_verdicts(DATA / "arena_battles.json", format="arena", item_a="model_a")


# ---------------------------------------------------------------- 10. native layouts
def test_fastchat_pairwise_judgments_are_two_display_orders():
    """Catches the two games read as one verdict (or game 2's winner taken in display terms,
    which would flip it): game 1 shows model_1 first (order +1), game 2 model_2 first (order
    -1), winners are in model terms; 'error' dropped with a warning; judge = model/prompt."""
    with pytest.warns(DroppedRecordsWarning, match=r"dropped 1 of 10 verdicts.*'error'"):
        data = read_comparisons(DATA / "fastchat_pair.jsonl")
    pv2, math = "gpt-4/pair-v2", "gpt-4/pair-math-v1"
    expected = pd.DataFrame(
        [("alpha-7b", "beta-13b", 1.0, pv2, 1), ("alpha-7b", "beta-13b", 1.0, pv2, -1),
         ("alpha-7b", "gamma-70b", 0.0, pv2, 1), ("alpha-7b", "gamma-70b", 0.5, pv2, -1),
         ("beta-13b", "gamma-70b", 1.0, pv2, 1), ("beta-13b", "gamma-70b", 0.0, pv2, -1),
         ("alpha-7b", "beta-13b", 0.0, pv2, -1),
         ("beta-13b", "gamma-70b", 0.5, math, 1), ("beta-13b", "gamma-70b", 0.0, math, -1)],
        columns=["item_a", "item_b", "outcome", "judge", "order"])
    same_cells(data, Comparisons.from_frame(expected))
    with pytest.warns(DroppedRecordsWarning):
        frame, source = read_verdicts(DATA / "fastchat_pair.jsonl")
        clustered = read_comparisons(DATA / "fastchat_pair.jsonl", cluster="question_id")
    assert (source.file_format, source.layout) == ("jsonl", "fastchat")
    assert {"question_id", "turn"} <= set(frame.columns)  # the file's own columns stay
    assert clustered.clusters == ("111", "81", "82")


def test_fastchat_single_grading_is_one_verdict_without_order(tmp_path):
    """Catches single-answer grading (one verdict from two scores, g1 = g2 by construction)
    counted twice as two display orders."""
    records = [{"question_id": 1, "model_1": "a", "model_2": "b", "g1_winner": "model_1",
                "g2_winner": "model_1", "judge": ["gpt-4", "single-v1"], "m1_score": 9,
                "m2_score": 4},
               {"question_id": 2, "model_1": "a", "model_2": "b", "g1_winner": "tie",
                "g2_winner": "tie", "judge": ["gpt-4", "single-v1"], "m1_score": 5,
                "m2_score": 5}]
    path = write(tmp_path / "single.jsonl", "\n".join(map(json.dumps, records)))
    data = read_comparisons(path)
    assert data.n_rows == 2 and not data.order.any()
    np.testing.assert_array_equal(data.wins, [1.5])


def test_arena_battles_map_winner_words_and_keep_the_cluster_key():
    """Catches 'tie (bothbad)' dropped or counted as a loss, the winner read case-sensitively,
    and question_id lost (it is Arena's natural cluster key)."""
    data = read_comparisons(DATA / "arena_battles.json", cluster="question_id")
    expected = pd.DataFrame(
        {"item_a": ["alpha-7b", "beta-13b", "gamma-70b", "gamma-70b", "alpha-7b"],
         "item_b": ["beta-13b", "gamma-70b", "alpha-7b", "beta-13b", "gamma-70b"],
         "outcome": [1.0, 0.5, 0.0, 0.5, 0.0], "order": 1,
         "judge": ["arena_user_1", "arena_user_2", "arena_user_1", "arena_user_3",
                   "arena_user_2"],
         "question_id": ["c0ffee01", "c0ffee02", "c0ffee03", "c0ffee03", "c0ffee04"]})
    same_cells(data, Comparisons.from_frame(expected, cluster="question_id"))
    assert data.clusters == ("c0ffee01", "c0ffee02", "c0ffee03", "c0ffee04")


def test_arena_winner_outside_the_vocabulary_is_refused(tmp_path):
    records = json.loads((DATA / "arena_battles.json").read_text())
    records[2]["winner"] = "gamma-70b"
    path = write(tmp_path / "b.json", json.dumps(records))
    with pytest.raises(DataError, match=r"b\.json: column 'winner' has values \['gamma-70b'\] "
                                        r"in records 3"):
        read_comparisons(path)


def test_alpaca_eval_preferences_are_two_minus_preference():
    """Catches preference 1 (output_1 preferred) read as item_b winning, the older draw code 0
    read as a loss, a failed annotation (null) counted, and soft weighted preferences fitted
    as verdicts without fractional=True."""
    path = DATA / "alpaca_eval_annotations.json"
    with pytest.warns(DroppedRecordsWarning), pytest.raises(DataError, match="fractional=True"):
        read_comparisons(path)
    with pytest.warns(DroppedRecordsWarning, match=r"dropped 1 of 6.*failed annotation"):
        data = read_comparisons(path, fractional=True)
    expected = pd.DataFrame(
        {"item_a": "ref-model", "item_b": ["alpha-7b", "beta-13b", "alpha-7b", "beta-13b",
                                           "beta-13b"],
         "outcome": [0.25, 1.0, 0.0, 0.5, 0.5], "judge": "weighted_judge"})
    same_cells(data, Comparisons.from_frame(expected, fractional=True))


def test_judge_aware_records_of_xu_et_al():
    """Catches 'c' (a tie) read as a loss, 'unknown' or missing preferences counted, and the
    case of 'A' mattering."""
    with pytest.warns(DroppedRecordsWarning, match=r"dropped 2 of 6.*by judge: \{'judge-y': 1, "
                                                   r"'judge-x': 1\}"):
        data = read_comparisons(DATA / "judge_aware.json")
    expected = pd.DataFrame(
        {"item_a": "alpha-7b", "item_b": ["beta-13b", "beta-13b", "gamma-70b", "gamma-70b"],
         "outcome": [1.0, 0.0, 0.5, 1.0], "judge": ["judge-x", "judge-y", "judge-x", "judge-y"],
         "order": 1})
    same_cells(data, Comparisons.from_frame(expected))


# ---------------------------------------------------------------- labels and ratings
def test_read_labels_parses_numbers_and_flags_explicitly(tmp_path):
    """Catches 'NA' read as a missing human label (an unlabelled item, silently), a labelled
    column of the words True/False refused, and positive='1' missing a label written 1."""
    path = write(tmp_path / "l.csv", "human,judge,cal\n1,1,True\n0,1,true\n,0,False\n1,0,1\n"
                 ",1,0\n")
    labels = read_labels(path, labelled="cal")
    assert (labels.m, labels.n) == (3, 2)
    with pytest.raises(DataError, match=r"l2\.csv: column 'human' must hold numbers \(leave the "
                                        r"cell empty.*rows 2 have \['NA'\]"):
        read_labels(write(tmp_path / "l2.csv", "human,judge\n1,1\nNA,0\n0,1\n,1\n"))
    coded = write(tmp_path / "l3.csv", "human,judge\nyes,yes\nno,yes\n,no\nyes,no\n")
    labels = read_labels(coded, positive="yes")
    np.testing.assert_array_equal(labels.y_cal, [1.0, 0.0, 1.0])
    json_path = tmp_path / "l4.json"
    json_path.write_text(json.dumps([{"human": 1, "judge": 1}, {"human": 2, "judge": 2},
                                     {"human": None, "judge": 1}]))
    np.testing.assert_array_equal(read_labels(json_path, positive="1").y_cal, [1.0, 0.0])


def test_read_ratings_parses_scores_and_keeps_groups_as_text(tmp_path):
    """Catches a group key '01' read as the number 1 (merging it with group '1') and a human
    score 'NA' read as unrated."""
    path = write(tmp_path / "r.tsv", "judge\thuman\tgroup\n3\t4\t01\n2\t\t1\n5\t5\t01\n")
    ratings = read_ratings(path, scale=(1, 5), groups=["group"])
    assert ratings.groups["group"].tolist() == ["01", "1", "01"]
    np.testing.assert_array_equal(ratings.rated, [True, False, True])
    with pytest.raises(DataError, match=r"r2\.csv: column 'human' must hold numbers.*rows 2"):
        read_ratings(write(tmp_path / "r2.csv", "judge,human\n3,4\n2,NA\n"), scale=(1, 5))


# ---------------------------------------------------------------- real files
@pytest.fixture(scope="module")
def real() -> Path:
    root = shared_data_dir()
    if root is None or not (root / "ppr-chatbot-arena").is_dir():
        pytest.skip("real data not found; set BAYESCAL_DATA to the data root")
    return root


def test_real_json_array_and_json_lines(real):
    """PandaLM's test set (a JSON array) and LLMFAO's models (JSON Lines) read with the file's
    own types, record for record as the json module reads them."""
    path = real / "pandalm-testset" / "testset-v1.json"
    table, source = read_table(path)
    records = json.loads(path.read_text(encoding="utf-8"))
    assert source.file_format == "json" and len(table) == len(records) == 999
    assert table.iloc[17].to_dict() == records[17]
    path = real / "llmfao" / "models.jsonl"
    table, source = read_table(path)
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert source.file_format == "jsonl" and len(table) == len(lines) == 70
    assert table["id"].tolist() == [r["id"] for r in lines]


def test_real_tsv_is_text_as_the_csv_module_reads_it(real):
    path = real / "llm-rubric" / "real_data" / "human_judges_real_convs_FIXED_ANON.tsv"
    table, source = read_table(path)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert source.file_format == "tsv" and list(table.columns) == rows[0]
    assert table.fillna("").astype(str).values.tolist() == rows[1:]


def test_real_arena_battles_as_tidy_table_and_as_battle_records(real, tmp_path):
    """The PPR Chatbot Arena file read with named columns, and its human votes written as
    Arena battle records (JSON Lines, ``winner``), both give the loader's verdicts."""
    path = real / "ppr-chatbot-arena" / "arena_human_vs_llm_judges.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from bayescal import datasets
        expected = Comparisons.from_frame(
            datasets.ppr_chatbot_arena(real, judges="human"), judge=None, order=None)
    same_cells(read_comparisons(path, item_a="model_a", item_b="model_b", outcome="human",
                                order=None), expected)
    raw, _ = read_table(path)
    battles = tmp_path / "battles.jsonl"
    raw[["question_id", "model_a", "model_b", "human"]].rename(
        columns={"human": "winner"}).to_json(battles, orient="records", lines=True)
    data = read_comparisons(battles, cluster="question_id")
    same_cells(data.collapse(order=True), expected)
    assert len(data.clusters) == 26_910  # PROVENANCE.md: distinct conversations


def test_io_imports_only_data_and_itself():
    """The layer of ARCHITECTURE.md: reading files needs the containers, never a model, a twin
    or the fitting code (so that reading a file stays cheap and independent of them)."""
    import ast

    root = Path(__file__).resolve().parents[1] / "bayescal" / "io"
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        bad = {n for n in names if n.startswith("bayescal")
               and not n.startswith(("bayescal.data", "bayescal.io"))}
        assert not bad, f"{path.name} imports {sorted(bad)}"
