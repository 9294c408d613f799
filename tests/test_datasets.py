"""Loaders of the real data sets: schema, counts re-derived from the raw files, provenance facts.

The data live outside the repository: ``$BAYESCAL_DATA`` (or a ``shared/data`` folder next to the
checkout).
Expected numbers are recomputed here from the raw files with the csv/json modules (independently
of the loaders' pandas code) or quoted from the folders' PROVENANCE.md.
"""

from __future__ import annotations

import csv
import json
import os
import re
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayescal import datasets as ds
from bayescal.data import Comparisons

ROOT = Path(
    os.environ.get(ds.ENV_VAR) or Path(__file__).resolve().parents[2] / "shared" / "data"
)
if not (ROOT / "prd-vicuna80").is_dir():
    pytest.skip(
        f"real data not found at {ROOT}; set {ds.ENV_VAR} to the data root", allow_module_level=True
    )

PAIRWISE = ["item_a", "item_b", "outcome", "judge", "order", "question", "judge_kind"]


def _load(loader, **kwargs):
    """Call a loader once, returning the frame and the warning messages it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = loader(ROOT, **kwargs)
    return df, [str(w.message) for w in caught]


def _csv(*parts: str) -> list[dict[str, str]]:
    with open(ROOT.joinpath(*parts), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _json(*parts: str) -> list[dict]:
    return json.loads(ROOT.joinpath(*parts).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def prd():
    return _load(ds.prd_vicuna80)


@pytest.fixture(scope="module")
def arena():
    return _load(ds.ppr_chatbot_arena)


@pytest.fixture(scope="module")
def fao():
    return _load(ds.llmfao)


@pytest.fixture(scope="module")
def panda():
    return _load(ds.pandalm_testset)


def _check_pairwise(df: pd.DataFrame) -> None:
    assert list(df.columns) == PAIRWISE
    for col in ("item_a", "item_b", "judge", "question", "judge_kind"):
        assert pd.api.types.is_string_dtype(df[col]), col
        assert df[col].notna().all(), col
    assert df["outcome"].dtype == np.float64
    assert df["order"].dtype == np.int64
    assert set(df["outcome"].unique()) <= {0.0, 0.5, 1.0}
    assert (df["order"] == 1).all()
    assert set(df["judge_kind"].unique()) <= {"human", "llm"}
    assert (df["item_a"] != df["item_b"]).all()
    assert df.index.equals(pd.RangeIndex(len(df)))


@pytest.mark.parametrize("name", ["prd", "arena", "fao", "panda"])
def test_pairwise_schema_and_comparisons(name, request):
    df, _ = request.getfixturevalue(name)
    _check_pairwise(df)
    humans = sorted(df.loc[df["judge_kind"] == "human", "judge"].unique())
    data = Comparisons.from_frame(df, humans=humans)
    assert data.n_rows == len(df)
    assert data.has_order
    assert set(data.items) == set(df["item_a"]) | set(df["item_b"])
    canonical = np.where(df["item_a"] < df["item_b"], df["outcome"], 1.0 - df["outcome"])
    assert data.wins.sum() == pytest.approx(canonical.sum())


# ---------------------------------------------------------------- PRD Vicuna80
def test_prd_counts_against_raw(prd):
    df, caught = prd
    assert caught == []
    raw = _csv("prd-vicuna80", "vicuna80_judgments_long.csv")
    main = [r for r in raw if r["file_variant"] == "main"]
    assert len(raw) == 15_200 and len(df) == len(main) == 15_040
    assert df["judge"].value_counts().to_dict() == dict(Counter(r["judge"] for r in main))
    # provenance: every LLM reviewer has 1,600 main judgments, humans 7,040 ratings
    counts = df["judge"].value_counts()
    assert counts.drop("human").eq(1_600).all() and counts.size == 6
    assert counts["human"] == 7_040
    assert (df["judge_kind"] == "human").sum() == 7_040
    score = {"1": 1.0, "2": 0.0, "3": 0.5}
    expect = Counter((r["judge"], r["question_id"], r["model_first"], score[r["score"]])
                     for r in main)
    got = Counter(zip(df["judge"], df["question"], df["item_a"], df["outcome"], strict=True))
    assert got == expect


def test_prd_human_rows_match_verbatim_rating_files(prd):
    df, _ = prd
    expect: Counter = Counter()
    pattern = re.compile(r"answer_(.+)-vs-answer_(.+)-human-reviewer")
    for file in sorted((ROOT / "prd-vicuna80" / "ratings-human").glob("*.jsonl")):
        first, second = pattern.match(file.name).groups()
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                outcome = {1: 1.0, 2: 0.0, 3: 0.5}[rec["score"]]
                expect[first, second, str(rec["question_id"]), outcome] += 1
    human = df[df["judge"] == "human"]
    got = Counter(zip(human["item_a"], human["item_b"], human["question"], human["outcome"],
                      strict=True))
    assert sum(expect.values()) == 7_040
    assert got == expect


def test_prd_position_effects_from_provenance(prd):
    df, _ = prd
    llm = df[df["judge_kind"] == "llm"]
    # "P(first displayed wins)" in PROVENANCE.md is the share of strict first-position wins
    # (ties not counted); counting a tie as half a win gives bard 0.80, gpt4 0.605 instead.
    first_wins = llm.assign(w=llm["outcome"] == 1.0).groupby("judge")["w"].mean().round(2)
    assert first_wins.to_dict() == {"bard": 0.78, "claude": 0.33, "gpt35": 0.40, "gpt4": 0.53,
                                    "vicuna-13b": 0.39}
    half = llm.groupby("judge")["outcome"].mean()
    assert half["bard"] == pytest.approx(0.8009375) and half["gpt4"] == pytest.approx(0.605)
    # order-consistent verdicts over the 800 swapped (question, pair) presentations per judge:
    # the same winner (or tie) in both display orders
    winner = np.select([llm["outcome"] == 1.0, llm["outcome"] == 0.0],
                       [llm["item_a"], llm["item_b"]], "tie")
    pair = np.where(llm["item_a"] < llm["item_b"], llm["item_a"] + "|" + llm["item_b"],
                    llm["item_b"] + "|" + llm["item_a"])
    groups = llm.assign(winner=winner, pair=pair).groupby(["judge", "question", "pair"])["winner"]
    assert (groups.size() == 2).all() and groups.ngroups == 5 * 800
    consistent = (groups.nunique() == 1).groupby("judge").sum()
    assert consistent.to_dict() == {"gpt35": 553, "gpt4": 551, "claude": 439, "vicuna-13b": 299,
                                    "bard": 295}


def test_prd_options():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        no_humans = ds.prd_vicuna80(ROOT, include_humans=False)
        alt = ds.prd_vicuna80(ROOT / "prd-vicuna80", alt_runs=True)  # the dataset folder itself
    assert len(no_humans) == 8_000 and set(no_humans["judge_kind"]) == {"llm"}
    assert len(alt) == 15_200
    assert (alt["judge"] == "gpt35").sum() == 1_760


# ---------------------------------------------------------------- Chatbot Arena (PPR)
def test_arena_counts_against_raw(arena):
    df, caught = arena
    assert caught == []
    raw = _csv("ppr-chatbot-arena", "arena_human_vs_llm_judges.csv")
    assert len(raw) == 26_919 and len(df) == 4 * 26_919
    assert df["judge"].value_counts().eq(26_919).all()
    human_raw = Counter(r["human"] for r in raw)
    assert human_raw == {"model_a": 9_516, "model_b": 9_391, "tie": 2_880, "tie (bothbad)": 5_132}
    human = df[df["judge"] == "human"]
    assert (human["judge_kind"] == "human").all()
    assert (df.loc[df["judge"] != "human", "judge_kind"] == "llm").all()
    assert human["outcome"].value_counts().to_dict() == {1.0: 9_516, 0.0: 9_391, 0.5: 8_012}
    assert human["question"].nunique() == 26_910
    assert len(set(df["item_a"]) | set(df["item_b"])) == 20
    assert human["question"].tolist() == [r["question_id"] for r in raw]


def test_arena_judge_facts_from_provenance(arena):
    df, _ = arena
    by = {j: g["outcome"].to_numpy() for j, g in df.groupby("judge")}
    questions = {j: g["question"].to_numpy() for j, g in df.groupby("judge")}
    for j in by:  # rows of every judge follow the file order, so they align by position
        assert (questions[j] == questions["human"]).all()
    decisive = by["human"] != 0.5
    agree = {j: np.mean(by[j][decisive] == by["human"][decisive]) for j in by if j != "human"}
    assert decisive.sum() == 18_907
    assert round(agree["gpt4_0125_preview"], 2) == 0.63
    assert round(agree["gpt35_turbo"], 2) == 0.57
    assert round(agree["claude3_opus_20240229"], 2) == 0.53
    assert round(np.mean(by["gpt35_turbo"] == 1.0), 2) == 0.86
    assert np.mean(by["claude3_opus_20240229"] == 0.0) > np.mean(by["claude3_opus_20240229"] == 1.0)


def test_arena_judge_subset():
    df = ds.ppr_chatbot_arena(ROOT, judges="gpt35_turbo")
    assert len(df) == 26_919 and set(df["judge"]) == {"gpt35_turbo"}
    with pytest.raises(ValueError, match="valid choices"):
        ds.ppr_chatbot_arena(ROOT, judges=["human", "gpt5"])


# ---------------------------------------------------------------- LLMFAO
def test_llmfao_counts_against_raw(fao):
    df, caught = fao
    assert caught == []
    crowd_raw = _csv("llmfao", "crowd-comparisons.csv")
    gpt4_raw = _csv("llmfao", "gpt4-comparisons.csv")
    gpt3_raw = _csv("llmfao", "gpt3-comparisons.csv")
    assert (len(crowd_raw), len(gpt4_raw), len(gpt3_raw)) == (8_931, 3_236, 3_236)
    assert len(df) == 8_931 + 2 * 3_236
    win = {"left": 1.0, "right": 0.0, "tie": 0.5}
    for judge_kind, rows in (("human", crowd_raw), ("llm", gpt4_raw + gpt3_raw)):
        part = df[df["judge_kind"] == judge_kind]
        expect = Counter((r["id"], r["left"], r["right"], win[r["winner"]]) for r in rows)
        got = Counter(zip(part["question"], part["item_a"], part["item_b"], part["outcome"],
                          strict=True))
        assert got == expect
    crowd = df[df["judge_kind"] == "human"]
    assert crowd["judge"].str.startswith("worker:").all()
    assert crowd["judge"].nunique() == 124 == len({r["worker"] for r in crowd_raw})
    assert crowd["question"].nunique() == 2_139
    assert len(set(crowd["item_a"]) | set(crowd["item_b"])) == 59
    assert len(set(df["item_a"]) | set(df["item_b"])) == 70
    assert set(crowd["question"]) <= set(df.loc[df["judge"] == "gpt-4", "question"])
    assert crowd.groupby("question").size().between(1, 5).all()
    # provenance vote counts
    label = df["judge"].where(df["judge_kind"] == "llm", "crowd")
    counts = {j: g.value_counts().to_dict() for j, g in df["outcome"].groupby(label)}
    assert counts["crowd"] == {0.5: 3_471, 1.0: 2_911, 0.0: 2_549}
    assert counts["gpt-4"] == {0.0: 1_700, 1.0: 1_397, 0.5: 139}
    assert counts["gpt-3.5-turbo-instruct"] == {1.0: 1_965, 0.0: 958, 0.5: 313}


def test_llmfao_options():
    assert len(ds.llmfao(ROOT, llm=False)) == 8_931
    gpt = ds.llmfao(ROOT / "llmfao", crowd=False)
    assert len(gpt) == 6_472 and set(gpt["judge"]) == {"gpt-4", "gpt-3.5-turbo-instruct"}
    with pytest.raises(ValueError, match="at least one"):
        ds.llmfao(ROOT, crowd=False, llm=False)


# ---------------------------------------------------------------- PandaLM
def test_pandalm_counts_against_raw(panda):
    df, caught = panda
    test = _json("pandalm-testset", "testset-v1.json")
    gpt = _json("pandalm-testset", "gpt-3.5-turbo-testset-v1.json")
    plm = _json("pandalm-testset", "pandalm-7b-testset-v1.json")
    assert len(test) == len(gpt) == len(plm) == 999
    garbage = sum(r["gpt_result"] == "garbage" for r in gpt)
    assert garbage == 25
    assert len(df) == 5 * 999 - garbage == 4_970
    assert caught == ["pandalm_testset: dropped 25 of 4995 rows with no verdict ('garbage' = "
                      "unparseable answer); by judge: {'gpt-3.5-turbo': 25}"]
    sizes = df["judge"].value_counts().to_dict()
    assert sizes == {"annotator1": 999, "annotator2": 999, "annotator3": 999, "pandalm-7b": 999,
                     "gpt-3.5-turbo": 974}
    code = {"1": 1.0, "2": 0.0, "0": 0.5, "Tie": 0.5}
    verdicts = {f"annotator{k}": {str(r["idx"]): code[str(r[f"annotator{k}"])] for r in test}
                for k in (1, 2, 3)}
    verdicts["gpt-3.5-turbo"] = {str(r["idx"]): code[r["gpt_result"]] for r in gpt
                                 if r["gpt_result"] != "garbage"}
    verdicts["pandalm-7b"] = {str(r["idx"]): code[str(r["pandalm_result"])] for r in plm}
    for judge, expect in verdicts.items():
        part = df[df["judge"] == judge]
        assert dict(zip(part["question"], part["outcome"], strict=True)) == expect, judge
    keys = {str(r["idx"]): r["cmp_key"] for r in test}
    assert all(keys[q] == f"{a}_{b}" for q, a, b in zip(df["question"], df["item_a"],
                                                        df["item_b"], strict=True))
    # provenance: annotator1 2: 475 / 1: 427 / 0: 97; five models; 89-111 items per pair
    a1 = df[df["judge"] == "annotator1"]
    assert a1["outcome"].value_counts().to_dict() == {0.0: 475, 1.0: 427, 0.5: 97}
    assert set(df["item_a"]) | set(df["item_b"]) == {
        "llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b"}
    per_pair = a1.groupby(["item_a", "item_b"]).size()
    assert len(per_pair) == 10 and per_pair.min() == 89 and per_pair.max() == 111
    assert df.groupby("judge_kind")["judge"].nunique().to_dict() == {"human": 3, "llm": 2}
    # in this release the first-displayed model is always the alphabetically first one
    assert (df["item_a"] < df["item_b"]).all()


def test_pandalm_warns_about_garbage():
    with pytest.warns(UserWarning, match=r"dropped 25 of 4995 rows .*gpt-3\.5-turbo"):
        ds.pandalm_testset(ROOT)


# ------------------------------------------------------- debias-judge-results (Chen et al. 2026)
CLAUDE = "claude-opus-4-20250514"


def _debias_raw(opponent: str, judge: str) -> list[dict]:
    return _json("debias-judge-results", f"{CLAUDE}_vs_{opponent}_{judge}.json")


@pytest.mark.parametrize("opponent", ["gemini-2.5-flash", "gemini-2.5-pro",
                                      "qwen3-235b-a22b-no-thinking"])
@pytest.mark.parametrize("judge", ["gpt-4o-mini", "gpt-5.2"])
@pytest.mark.parametrize("target", ["position", "claude"])
def test_debias_against_raw(opponent, judge, target):
    raw = _debias_raw(opponent, judge)
    kept = [r for r in raw if r.get("judge_pick") in ("A", "B")
            and r["human_winner"] in ("model_a", "model_b")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = ds.debias_judge_results(ROOT, opponent=opponent, judge=judge, target=target)
    assert [str(w.message) for w in caught] == (
        [f"debias_judge_results: dropped {len(raw) - len(kept)} of {len(raw)} rows with no judge "
         "pick"] if len(kept) < len(raw) else [])
    assert list(df.columns) == ["id", "human", "judge"]
    assert df["human"].dtype == np.int64 and df["judge"].dtype == np.int64
    assert pd.api.types.is_string_dtype(df["id"])
    if target == "position":
        human = [int(r["human_winner"] == "model_a") for r in kept]
        pick = [int(r["judge_pick"] == "A") for r in kept]
    else:
        human = [int(r["model_a" if r["human_winner"] == "model_a" else "model_b"] == CLAUDE)
                 for r in kept]
        pick = [int(r["model_a" if r["judge_pick"] == "A" else "model_b"] == CLAUDE) for r in kept]
    assert df["id"].tolist() == [r["id"] for r in kept]
    assert df["human"].tolist() == human and df["judge"].tolist() == pick


def test_debias_vignette_truth():
    # the authors' vignette: gemini-2.5-pro / gpt-5.2 file, target Claude: the 277 records lose
    # the one with error "missing_content" (no judge pick); theta_true = 65 / 276 = 0.2355
    raw = _debias_raw("gemini-2.5-pro", "gpt-5.2")
    assert len(raw) == 277 and [r.get("error") for r in raw if r.get("judge_pick") is None] == [
        "missing_content"]
    with pytest.warns(UserWarning, match="dropped 1 of 277 rows with no judge pick"):
        df = ds.debias_judge_results(ROOT, opponent="gemini-2.5-pro", judge="gpt-5.2",
                                     target="claude")
    assert len(df) == 276 and df["human"].sum() == 65
    assert df["human"].mean() == pytest.approx(0.2355, abs=5e-5)
    # no record in any file has a tie / both-bad human verdict
    for f in (ROOT / "debias-judge-results").glob("*.json"):
        assert {r["human_winner"] for r in json.loads(f.read_text())} == {"model_a", "model_b"}


def test_debias_rejects_unknown_choices():
    with pytest.raises(ValueError, match=r"gemini-2\.5-flash.*gemini-2\.5-pro.*qwen3"):
        ds.debias_judge_results(ROOT, opponent="gpt-4")
    with pytest.raises(ValueError, match=r"gpt-4o-mini.*gpt-5\.2"):
        ds.debias_judge_results(ROOT, judge="gpt-4")
    with pytest.raises(ValueError, match="position"):
        ds.debias_judge_results(ROOT, target="gemini")


# ---------------------------------------------------------------- Judging the judges (TriviaQA)
TRIVIA_TEXT = {"model", "response", "question", "references", "benchmark",
               "Human-Eval_Confidence"}


@pytest.mark.parametrize(
    ("version", "human_col", "n_rows", "n_true", "n_judges"),
    [(2, "Human-Eval", 3_200, 2_039, 9), (1, "HumanJudgement", 3_600, 2_507, 11)],
)
def test_triviaqa_against_raw(version, human_col, n_rows, n_true, n_judges):
    raw = _csv("judging-judges-triviaqa", f"TriviaQA_Judges_w_HumanJudgement_V{version}.csv")
    labelled = [r for r in raw if r[human_col] in ("True", "False")]
    judges = [c for c in raw[0] if c not in TRIVIA_TEXT | {human_col}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = ds.triviaqa_judges(ROOT, version=version)
    dropped = len(raw) - len(labelled)
    assert [str(w.message) for w in caught] == (
        [f"triviaqa_judges: dropped {dropped} of 3600 rows with an empty human label "
         f"({human_col})"] if dropped else [])
    assert len(judges) == n_judges and len(df) == len(labelled) == n_rows
    assert list(df.columns) == ["model", "question", "human", *judges]
    assert df["human"].dtype == np.int64 and df["human"].sum() == n_true
    for j in judges:
        assert df[j].dtype == "Int64"
        expect = [{"True": 1, "False": 0}.get(r[j]) for r in labelled]
        assert [None if pd.isna(v) else int(v) for v in df[j]] == expect, j
    assert df["model"].tolist() == [r["model"] for r in labelled]


def test_triviaqa_facts():
    with pytest.warns(UserWarning, match="dropped 400 of 3600 rows"):
        v2 = ds.triviaqa_judges(ROOT)
    assert v2["model"].value_counts().eq(400).all() and v2["model"].nunique() == 8
    assert not v2.duplicated(["model", "question"]).any()
    assert v2.drop(columns=["model", "question"]).notna().all().all()
    v1 = ds.triviaqa_judges(ROOT / "judging-judges-triviaqa", version=1)
    assert v1["Llama-70B"].isna().sum() == 135 and v1["GPT-4"].isna().sum() == 5
    with pytest.raises(ValueError, match="valid choices"):
        ds.triviaqa_judges(ROOT, version=3)


# ---------------------------------------------------------------- locating the files
LOADERS = [ds.prd_vicuna80, ds.ppr_chatbot_arena, ds.llmfao, ds.pandalm_testset,
           ds.debias_judge_results, ds.triviaqa_judges]


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
def test_missing_data_raises_clear_error(loader, monkeypatch, tmp_path):
    monkeypatch.delenv(ds.ENV_VAR, raising=False)
    with pytest.raises(ds.DatasetNotFoundError, match=ds.ENV_VAR) as err:
        loader()
    assert isinstance(err.value, FileNotFoundError)
    with pytest.raises(FileNotFoundError, match=ds.ENV_VAR) as err:
        loader(tmp_path)
    assert str(tmp_path) in str(err.value) and "expected" in str(err.value)
    monkeypatch.setenv(ds.ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(ds.DatasetNotFoundError, match="nowhere"):
        loader()


def test_env_var_and_data_root(monkeypatch):
    monkeypatch.setenv(ds.ENV_VAR, str(ROOT))
    assert ds.data_root() == ROOT
    assert ds.data_root(ROOT / "llmfao") == ROOT / "llmfao"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(ds.debias_judge_results()) == 276
    monkeypatch.delenv(ds.ENV_VAR)
    with pytest.raises(ds.DatasetNotFoundError, match=ds.ENV_VAR):
        ds.data_root()
