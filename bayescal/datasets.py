"""Loaders for the real data sets' native files.

The files are never copied into this repository. Every loader takes ``path``: the data root (the
directory that holds the dataset folders, e.g. the one containing ``prd-vicuna80/``) or the dataset
folder itself; when ``path`` is None the root is read from the environment variable
``BAYESCAL_DATA``. Each folder's PROVENANCE.md gives the source, commit and license.

Pairwise loaders return one row per verdict with the tidy columns of
:meth:`bayescal.Comparisons.from_frame`::

    item_a, item_b   model labels (str); item_a is the model displayed first
    outcome          1.0 = item_a preferred, 0.0 = item_b preferred, 0.5 = tie
    judge            judge label (str)
    order            +1 (item_a was displayed first; true for every row of these data sets)
    question         item / prompt id (str)
    judge_kind       "human" or "llm"

Binary-label loaders (Chen et al. 2026, arXiv:2601.05420) return one row per labelled item with
0/1 integer columns. Rows without a verdict are dropped with a ``UserWarning`` that says how many
and why. Files are read by :func:`bayescal.io.read_table`: every column as text, nothing guessed;
the numeric columns a loader needs are parsed explicitly.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from bayescal.data.normalize import _numbers
from bayescal.io import read_table

__all__ = [
    "ENV_VAR",
    "DatasetNotFoundError",
    "data_root",
    "debias_judge_results",
    "llm_rubric",
    "llmbar",
    "llmfao",
    "pandalm_testset",
    "ppr_chatbot_arena",
    "prd_vicuna80",
    "triviaqa_judges",
]

ENV_VAR = "BAYESCAL_DATA"
PathArg = str | os.PathLike[str] | None
_COLUMNS = ["item_a", "item_b", "outcome", "judge", "order", "question", "judge_kind"]


class DatasetNotFoundError(FileNotFoundError):
    """A data set's files are not where the loader looked; the message says where and what to do."""


def data_root(path: PathArg = None) -> Path:
    """The directory that holds the dataset folders.

    Parameters
    ----------
    path : str or PathLike, optional
        The data root (or a dataset folder). When None, the environment variable
        ``BAYESCAL_DATA`` is used.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DatasetNotFoundError
        Neither ``path`` nor ``BAYESCAL_DATA`` is given, or the directory does not exist.
    """
    source = "path"
    if path is None:
        path, source = os.environ.get(ENV_VAR) or None, ENV_VAR
    if path is None:
        raise DatasetNotFoundError(
            f"no data directory: pass path=... or set the environment variable {ENV_VAR} to the "
            "directory that holds the dataset folders (prd-vicuna80/, ppr-chatbot-arena/, ...)"
        )
    root = Path(path).expanduser()
    if not root.is_dir():
        raise DatasetNotFoundError(
            f"data directory {str(root)!r} (from {source}) does not exist; pass path=... or set "
            f"{ENV_VAR} to the directory that holds the dataset folders"
        )
    return root


def _locate(path: PathArg, folder: str, *patterns: str) -> list[Path]:
    """Files matching ``patterns`` in ``<root>/<folder>/`` or directly in ``path``."""
    try:
        root = data_root(path)
    except DatasetNotFoundError as err:
        raise DatasetNotFoundError(f"expected <data root>/{folder}/{patterns[0]}; {err}") from None
    for base in (root / folder, root):
        found = [sorted(base.glob(p)) for p in patterns]
        if all(found):
            return [f for group in found for f in group]
    wanted = ", ".join(str(root / folder / p) for p in patterns)
    raise DatasetNotFoundError(
        f"{folder} files not found: expected {wanted}. Pass path= pointing at the data root that "
        f"holds {folder}/ (or at {folder}/ itself), or set {ENV_VAR} to that data root; the files "
        f"are described in {folder}/PROVENANCE.md"
    )


def _drop(
    df: pd.DataFrame, bad: pd.Series, why: str, loader: str, stacklevel: int = 3
) -> pd.DataFrame:
    """Drop the rows flagged ``bad`` and say so in a UserWarning (never drop silently)."""
    bad_rows = np.asarray(bad, dtype=bool)
    if bad_rows.any():
        warnings.warn(
            f"{loader}: dropped {int(bad_rows.sum())} of {len(df)} rows {why}",
            UserWarning,
            stacklevel=stacklevel,
        )
    return df.loc[~bad_rows]


def _pairwise(
    df: pd.DataFrame, verdicts: dict[str, float], loader: str, why: str
) -> pd.DataFrame:
    """Tidy frame from columns question, item_a, item_b, judge, judge_kind and a raw ``verdict``."""
    outcome = df["verdict"].astype("string").str.strip().str.lower().map(verdicts).astype(float)
    by_judge = df.loc[outcome.isna().to_numpy(), "judge"].value_counts().to_dict()
    why = f"{why}; by judge: {by_judge}"
    df = _drop(df.assign(outcome=outcome), outcome.isna(), why, loader, stacklevel=4)
    return pd.DataFrame(
        {
            "item_a": df["item_a"].astype(str),
            "item_b": df["item_b"].astype(str),
            "outcome": df["outcome"].astype(np.float64),
            "judge": df["judge"].astype(str),
            "order": np.ones(len(df), dtype=np.int64),
            "question": df["question"].astype(str),
            "judge_kind": df["judge_kind"].astype(str),
        },
        columns=_COLUMNS,
    ).reset_index(drop=True)


def _read(file: Path, numeric: Iterable[str] = ()) -> pd.DataFrame:
    """A file as :func:`bayescal.io.read_table` reads it (text as text, JSON as typed), with
    the ``numeric`` columns parsed as numbers (an empty cell is NaN)."""
    df = read_table(file)[0]
    for col in numeric:
        df[col] = _numbers(df[col], col)
    return df.reset_index(drop=True)


def _choices(given: Iterable[str] | str | None, valid: tuple[str, ...], what: str) -> list[str]:
    """Validate a subset of named choices (None = all)."""
    chosen = list(valid) if given is None else [given] if isinstance(given, str) else list(given)
    unknown = [c for c in chosen if c not in valid]
    if unknown or not chosen:
        raise ValueError(f"unknown {what} {unknown or chosen}; valid choices are {list(valid)}")
    return chosen


def prd_vicuna80(
    path: PathArg = None, *, include_humans: bool = True, alt_runs: bool = False
) -> pd.DataFrame:
    """PRD Vicuna80: 5 LLM reviewers in both display orders, plus human raters.

    80 Vicuna-benchmark questions; the LLM reviewers bard, claude, gpt35, gpt4 and vicuna-13b judge
    all 20 ordered pairs of those five models (1,600 verdicts each); 7,040 human ratings (judge
    ``"human"``, no annotator id) also cover guanaco-7b/13b/33b/65b. Source: bcdnlp/PRD (Li, Patel,
    Du 2023, arXiv 2307.02762), ``prd-vicuna80/vicuna80_judgments_long.csv``. License: MIT.

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``prd-vicuna80`` folder; default ``$BAYESCAL_DATA``.
    include_humans : bool
        Keep the human ratings (judge ``"human"``, judge_kind ``"human"``).
    alt_runs : bool
        Keep the 160 ``file_variant == "alt_run"`` rows: a second gpt35-reviewer run on the
        gpt35/gpt4 pair in both orders, which duplicates main rows. Dropped by default (by design,
        without a warning).

    Returns
    -------
    DataFrame
        Tidy pairwise columns (see the module docstring); item_a = ``model_first`` (shown as
        "Assistant 1"), item_b = ``model_second``; score 1 -> 1.0, 2 -> 0.0, 3 (tie) -> 0.5;
        question = ``question_id``. 15,040 rows by default.
    """
    (file,) = _locate(path, "prd-vicuna80", "vicuna80_judgments_long.csv")
    raw = _read(file)
    keep = np.ones(len(raw), dtype=bool)
    if not alt_runs:
        keep &= (raw["file_variant"] == "main").to_numpy()
    if not include_humans:
        keep &= (raw["judge_kind"] != "human").to_numpy()
    raw = raw.loc[keep]
    df = pd.DataFrame(
        {
            "question": raw["question_id"],
            "item_a": raw["model_first"],
            "item_b": raw["model_second"],
            "judge": raw["judge"],
            "judge_kind": raw["judge_kind"],
            "verdict": raw["score"],
        }
    )
    return _pairwise(
        df, {"1": 1.0, "2": 0.0, "3": 0.5}, "prd_vicuna80", "whose score is not 1, 2 or 3"
    )


ARENA_JUDGES = ("human", "gpt4_0125_preview", "claude3_opus_20240229", "gpt35_turbo")


def ppr_chatbot_arena(
    path: PathArg = None, *, judges: Iterable[str] | str | None = None
) -> pd.DataFrame:
    """Chatbot Arena battles with the human vote and three LLM judges' verdicts on each.

    26,919 battles (26,910 distinct conversations) over 20 models; every battle judged by the human
    voter and by GPT-4-0125-preview, Claude-3-Opus and GPT-3.5-Turbo, all seeing model_a first.
    Source: Networks-Learning/prediction-powered-ranking (Chatzi et al., NeurIPS 2024), merged into
    ``ppr-chatbot-arena/arena_human_vs_llm_judges.csv``. License: MIT (battles from LMSYS
    chatbot_arena_conversations; no text is included).

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``ppr-chatbot-arena`` folder; default ``$BAYESCAL_DATA``.
    judges : str or iterable of str, optional
        Subset of ``human``, ``gpt4_0125_preview``, ``claude3_opus_20240229``, ``gpt35_turbo``
        (default all four).

    Returns
    -------
    DataFrame
        Tidy pairwise columns, one row per (battle, judge); item_a = ``model_a``; ``model_a`` ->
        1.0, ``model_b`` -> 0.0, ``tie`` and ``tie (bothbad)`` -> 0.5; question = ``question_id``;
        judge ``human`` has judge_kind ``"human"``. 107,676 rows with all judges.
    """
    chosen = _choices(judges, ARENA_JUDGES, "judge(s)")
    (file,) = _locate(path, "ppr-chatbot-arena", "arena_human_vs_llm_judges.csv")
    raw = _read(file)
    df = raw.melt(
        id_vars=["question_id", "model_a", "model_b"],
        value_vars=chosen,
        var_name="judge",
        value_name="verdict",
    ).rename(columns={"question_id": "question", "model_a": "item_a", "model_b": "item_b"})
    df["judge_kind"] = np.where(df["judge"] == "human", "human", "llm")
    verdicts = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
    return _pairwise(df, verdicts, "ppr_chatbot_arena", "with no verdict")


def llmfao(path: PathArg = None, *, crowd: bool = True, llm: bool = True) -> pd.DataFrame:
    """LLMFAO: crowd workers (with worker ids) plus GPT-4 and GPT-3.5-Turbo-Instruct verdicts.

    8,931 crowd votes by 124 workers on 2,139 model pairs (13 prompts, 59 models); GPT-4 and
    GPT-3.5-Turbo-Instruct each judge all 3,236 pairs (19 prompts, 70 models). Source:
    dustalov/llmfao (Ustalov), ``crowd-comparisons.csv``, ``gpt4-comparisons.csv``,
    ``gpt3-comparisons.csv``. License: CC BY 4.0 (Dmitry Ustalov / llmonitor.com).

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``llmfao`` folder; default ``$BAYESCAL_DATA``.
    crowd : bool
        Include the crowd votes (judge ``"worker:<worker id>"``, judge_kind ``"human"``).
    llm : bool
        Include the GPT verdicts (judges ``"gpt-4"`` and ``"gpt-3.5-turbo-instruct"``).

    Returns
    -------
    DataFrame
        Tidy pairwise columns; item_a = ``left`` (the name of ``model_x``, shown first),
        item_b = ``right``; winner left -> 1.0, right -> 0.0, tie -> 0.5; question = ``id``
        (the pair id, shared across files). 15,403 rows with both sources.

    Notes
    -----
    The source pipeline coded unparseable or failed GPT answers as ties, so some GPT "ties" are
    non-answers that cannot be told apart here.
    """
    if not (crowd or llm):
        raise ValueError("llmfao: crowd=False and llm=False select no rows; enable at least one")
    sources: dict[str, str | None] = {"crowd-comparisons.csv": None} if crowd else {}
    if llm:
        sources["gpt4-comparisons.csv"] = "gpt-4"
        sources["gpt3-comparisons.csv"] = "gpt-3.5-turbo-instruct"
    files = _locate(path, "llmfao", *sources)
    frames = []
    for file, judge in zip(files, sources.values(), strict=True):
        raw = _read(file)
        human = judge is None
        frames.append(
            pd.DataFrame(
                {
                    "question": raw["id"],
                    "item_a": raw["left"],
                    "item_b": raw["right"],
                    "judge": "worker:" + raw["worker"] if human else judge,
                    "judge_kind": "human" if human else "llm",
                    "verdict": raw["winner"],
                }
            )
        )
    verdicts = {"left": 1.0, "right": 0.0, "tie": 0.5}
    return _pairwise(pd.concat(frames, ignore_index=True), verdicts, "llmfao", "with no verdict")


def pandalm_testset(path: PathArg = None) -> pd.DataFrame:
    """PandaLM test set: 3 human annotators, GPT-3.5-turbo and PandaLM-7B on the same 999 items.

    Five 7B-class models (llama-7b, bloom-7b, cerebras-gpt-6.7B, opt-7b, pythia-6.9b), all 10
    unordered pairs, one display order per item (response1 shown first). Source: WeOpenML/PandaLM
    (ICLR 2024), ``testset-v1.json``, ``gpt-3.5-turbo-testset-v1.json``,
    ``pandalm-7b-testset-v1.json``. License: Apache-2.0.

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``pandalm-testset`` folder; default ``$BAYESCAL_DATA``.

    Returns
    -------
    DataFrame
        Tidy pairwise columns, one row per (item, judge) for judges ``annotator1``..``annotator3``
        (human), ``gpt-3.5-turbo`` and ``pandalm-7b`` (llm); item_a, item_b = ``cmp_key`` split at
        its single "_" (model names contain "-" but never "_"); verdict 1 -> 1.0, 2 -> 0.0,
        0 / "Tie" -> 0.5; question = ``idx``. The 25 GPT-3.5 verdicts coded "garbage"
        (unparseable) are dropped with a warning: 4,970 rows.
    """
    files = _locate(
        path, "pandalm-testset",
        "testset-v1.json", "gpt-3.5-turbo-testset-v1.json", "pandalm-7b-testset-v1.json",
    )
    test, gpt, panda = (_read(f).astype({"idx": str}) for f in files)
    wide = (
        test[["idx", "cmp_key", "annotator1", "annotator2", "annotator3"]]
        .merge(gpt[["idx", "gpt_result"]], on="idx", how="left", validate="one_to_one")
        .merge(panda[["idx", "pandalm_result"]], on="idx", how="left", validate="one_to_one")
        .rename(columns={"gpt_result": "gpt-3.5-turbo", "pandalm_result": "pandalm-7b"})
    )
    bad_key = wide["cmp_key"].str.count("_") != 1
    if bad_key.any():
        raise ValueError(
            "pandalm_testset: cmp_key must be '<model1>_<model2>' with one '_'; got "
            f"{sorted(wide.loc[bad_key, 'cmp_key'].unique())[:5]}"
        )
    wide[["item_a", "item_b"]] = wide["cmp_key"].str.split("_", expand=True)
    df = wide.melt(
        id_vars=["idx", "item_a", "item_b"],
        value_vars=["annotator1", "annotator2", "annotator3", "gpt-3.5-turbo", "pandalm-7b"],
        var_name="judge",
        value_name="verdict",
    ).rename(columns={"idx": "question"})
    df["judge_kind"] = np.where(df["judge"].str.startswith("annotator"), "human", "llm")
    verdicts = {"1": 1.0, "2": 0.0, "0": 0.5, "tie": 0.5}
    return _pairwise(
        df, verdicts, "pandalm_testset", "with no verdict ('garbage' = unparseable answer)"
    )


CLAUDE = "claude-opus-4-20250514"


def debias_judge_results(
    path: PathArg = None,
    *,
    opponent: str = "gemini-2.5-pro",
    judge: str = "gpt-4o-mini",
    target: str = "position",
) -> pd.DataFrame:
    """Chen et al. (2026) Arena battles: a binary human verdict and an LLM judge's pick per battle.

    Claude-Opus-4 against one opponent, judged by one LLM; one file
    ``claude-opus-4-20250514_vs_<opponent>_<judge>.json`` per combination. Source:
    yiqunchen/debias-llm-as-a-judge (Chen et al., arXiv 2601.05420), ``data/judge_results``.
    License: MIT (battles from Chatbot Arena's arena-human-preference data).

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``debias-judge-results`` folder; default ``$BAYESCAL_DATA``.
    opponent : str
        ``gemini-2.5-flash``, ``gemini-2.5-pro`` or ``qwen3-235b-a22b-no-thinking`` (the files
        present are checked).
    judge : str
        ``gpt-4o-mini`` or ``gpt-5.2``.
    target : {"position", "claude"}
        ``"position"``: human = 1{human prefers the model shown in position A}, judge =
        1{judge picks A} (the repository's scripts). ``"claude"``: human = 1{human prefers
        Claude}, judge = 1{judge picks Claude} (the package's real-data vignette).

    Returns
    -------
    DataFrame
        Columns ``id`` (str), ``human`` and ``judge`` (int64, 0/1). Records without a judge pick or
        with a tie / both-bad human verdict are dropped with a warning (gemini-2.5-pro files: one
        record with ``error: missing_content``, leaving 276; the other files lose none).
    """
    if target not in ("position", "claude"):
        raise ValueError(f"unknown target {target!r}; valid choices are ['position', 'claude']")
    files = _locate(path, "debias-judge-results", f"{CLAUDE}_vs_*_*.json")
    table = {tuple(f.stem.split("_vs_", 1)[1].rsplit("_", 1)): f for f in files}
    _choices(opponent, tuple(sorted({o for o, _ in table})), "opponent")
    _choices(judge, tuple(sorted({j for o, j in table if o == opponent})), f"judge for {opponent}")
    raw = _read(table[opponent, judge])
    raw = raw.assign(
        pick=raw["judge_pick"].astype("string").str.strip().str.upper(),
        verdict=raw["human_winner"].astype("string").str.strip().str.lower(),
    )
    loader = "debias_judge_results"
    raw = _drop(raw, ~raw["pick"].isin(["A", "B"]), "with no judge pick", loader)
    raw = _drop(
        raw, ~raw["verdict"].isin(["model_a", "model_b"]),
        "with a tie or both-bad human verdict", loader,
    )
    human_a, judge_a = raw["verdict"] == "model_a", raw["pick"] == "A"
    if target == "claude":
        claude_a = raw["model_a"] == CLAUDE
        human_a, judge_a = human_a == claude_a, judge_a == claude_a
    return pd.DataFrame(
        {
            "id": raw["id"].astype(str),
            "human": human_a.to_numpy(dtype=np.int64),
            "judge": judge_a.to_numpy(dtype=np.int64),
        }
    ).reset_index(drop=True)


_TRIVIAQA_TEXT = ["model", "response", "question", "references", "benchmark"]


def triviaqa_judges(path: PathArg = None, *, version: int = 2) -> pd.DataFrame:
    """Judging the Judges (TriviaQA): human correct/incorrect label plus many judges' labels.

    400 TriviaQA questions answered by several exam-taker models; each answer carries a human
    correctness label and a correct/incorrect label from every judge. Source:
    UMass-Meta-LLM-Eval/llm_eval (Thakur et al. 2024, arXiv 2406.12624),
    ``TriviaQA_Judges_w_HumanJudgement_V{1,2}.csv``. License: MIT (declared in the repository's
    package metadata; it has no LICENSE file).

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``judging-judges-triviaqa`` folder; default ``$BAYESCAL_DATA``.
    version : {2, 1}
        2 = the "triviaQA-400-FINAL" set (human column ``Human-Eval``; judges JudgeLM, Gemma-2B,
        Llama3-70B, Llama-70B, GPT-4, Llama-7B, Llama3-8B, Llama-13B, Mistral-7B). 1 = the earlier
        "triviaQA-400-v1.5.0" set (human column ``HumanJudgement``; the same LLM judges plus the
        lexical judges EM and Contains).

    Returns
    -------
    DataFrame
        Columns ``model`` (exam taker), ``question`` (question text), ``human`` (int64, 1 = the
        answer is correct), then one column per judge in file order (nullable ``Int64``, 1 = the
        judge says correct). Rows with an empty human label are dropped with a warning (V2: the
        400 unlabelled duplicate gpt-4t rows, leaving 3,200). A judge label missing in the file
        stays ``<NA>`` (V1: 5 rows lack every judge label, Llama-70B lacks 135).
    """
    if version not in (1, 2):
        raise ValueError(f"unknown version {version!r}; valid choices are [1, 2]")
    (file,) = _locate(
        path, "judging-judges-triviaqa", f"TriviaQA_Judges_w_HumanJudgement_V{version}.csv"
    )
    raw = _read(file).fillna("")  # an empty cell is an empty label here
    human = {1: "HumanJudgement", 2: "Human-Eval"}[version]
    judges = [c for c in raw.columns if c not in {*_TRIVIAQA_TEXT, human, "Human-Eval_Confidence"}]
    labels = raw[[human, *judges]].apply(
        lambda col: col.str.strip().str.lower().map({"true": 1, "false": 0}).astype("Int64")
    )
    df = pd.concat([raw[["model", "question"]].astype(str), labels], axis=1)
    df = _drop(df, df[human].isna(), f"with an empty human label ({human})", "triviaqa_judges")
    return df.rename(columns={human: "human"}).astype({"human": np.int64}).reset_index(drop=True)


# ------------------------------------------------------------------------------ LLMBar
_LLMBAR_SYNTHESIZE = ("Swap", "Swap_CoT")


def llmbar(
    path: PathArg = None,
    *,
    strategies: Iterable[str] | str | None = None,
    synthesize: bool = False,
    lengths: bool = False,
) -> pd.DataFrame:
    """LLMBar: 6 LLM evaluators x prompting strategies, every verdict in both display orders.

    1,209 items (instruction + two anonymous outputs) in 13 subsets; judges GPT-4, ChatGPT,
    ChatGPT-0301, PaLM2, LLaMA2, Falcon. Source: princeton-nlp/LLMBar (Zeng et al., ICLR 2024),
    ``llmbar/llmbar_judgments_long.csv`` (derived from the repository's result files; see
    ``llmbar/PROVENANCE.md``). License: MIT.

    The outputs are anonymous, so ``item_a``/``item_b`` are the labels ``output_1``/``output_2``
    of one item (``question``): a two-alternative design per item, not a ranking of systems.
    Pooled over items, each judge has one pair in both orders, which identifies its order
    effect (DIAL Prop. 1, a 2-cycle); build ``question + ":" + item_a`` labels to keep items
    apart.

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``llmbar`` folder; default ``$BAYESCAL_DATA``.
    strategies : str or iterable of str, optional
        Prompting strategies to keep (default all: Vanilla, CoT, Swap, Metrics, Reference,
        Rating, ...; the Processed subsets have only Vanilla_NoRules and Metrics_Reference).
    synthesize : bool
        Keep the "synthesize" step of the Swap strategies (sample 1, run only where the plain
        two-order verdicts disagreed: a selected subset, not a display-order replicate).
        Dropped by default (by design, without a warning).
    lengths : bool
        Add ``length_a`` and ``length_b``: the characters of item_a's and item_b's output
        text, read from the items' ``datasets/<subset>/dataset.json`` files (for answer-length
        features, e.g. ``np.log`` of them in ``Comparisons.from_frame(features=...)``).

    Returns
    -------
    DataFrame
        Tidy pairwise columns (see the module docstring) with item_a = the output displayed
        first (``order`` = +1 on every row); plus ``strategy``, ``subset``, and ``gold``
        (1.0 when the gold/human label prefers item_a, else 0.0). Rows without a parsable
        verdict (348 in the file) are dropped with a warning.

    Raises
    ------
    DatasetNotFoundError
        ``lengths=True`` and an item's texts are missing from the datasets folder.
    """
    (file,) = _locate(path, "llmbar", "llmbar_judgments_long.csv")
    raw = _read(file, numeric=("sample", "swapped", "winner", "label"))
    valid = tuple(sorted(raw["strategy"].unique()))
    keep = raw["strategy"].isin(_choices(strategies, valid, "strategies"))
    if not synthesize:
        keep &= ~(raw["strategy"].isin(_LLMBAR_SYNTHESIZE) & (raw["sample"] == 1))
    raw = raw.loc[keep.to_numpy()]
    raw = _drop(raw, raw["winner"].isna(), "without a parsable verdict (winner empty)",
                "llmbar")
    swapped = raw["swapped"].to_numpy() == 1
    first = np.where(swapped, "output_2", "output_1")
    second = np.where(swapped, "output_1", "output_2")
    first_code = np.where(swapped, 2, 1)
    question = raw["subset"].astype(str) + "/" + raw["item"].astype(str)
    out = pd.DataFrame(
        {
            "item_a": first,
            "item_b": second,
            "outcome": (raw["winner"].to_numpy() == first_code).astype(np.float64),
            "judge": raw["judge"].astype(str).to_numpy(),
            "order": np.ones(len(raw), dtype=np.int64),
            "question": question.to_numpy(),
            "judge_kind": "llm",
            "strategy": raw["strategy"].astype(str).to_numpy(),
            "subset": raw["subset"].astype(str).to_numpy(),
            "gold": (raw["label"].to_numpy() == first_code).astype(np.float64),
        }
    )
    if not lengths:
        return out
    text = _llmbar_lengths(file.parent)
    index = pd.MultiIndex.from_arrays([out["question"], out["item_a"]])
    out["length_a"] = text.reindex(index).to_numpy()
    out["length_b"] = text.reindex(pd.MultiIndex.from_arrays(
        [out["question"], out["item_b"]])).to_numpy()
    missing = out["length_a"].isna() | out["length_b"].isna()
    if missing.any():
        raise DatasetNotFoundError(
            f"llmbar: no output texts for {int(missing.sum())} verdict rows (e.g. item "
            f"{out.loc[missing, 'question'].iloc[0]!r}) under {file.parent / 'datasets'}")
    return out


def _llmbar_lengths(folder: Path) -> pd.Series:
    """Characters of each item's two outputs, indexed by (question, output_1 / output_2)."""
    import json

    keys, values = [], []
    for file in sorted((folder / "datasets").rglob("dataset.json")):
        subset = file.parent.relative_to(folder / "datasets").as_posix()
        for index, record in enumerate(json.loads(file.read_text(encoding="utf-8"))):
            for output in ("output_1", "output_2"):
                keys.append((f"{subset}/{index}", output))
                values.append(float(len(record[output])))
    return pd.Series(values, index=pd.MultiIndex.from_tuples(keys), dtype=np.float64)


# ------------------------------------------------------------------------------ LLM-Rubric
_RUBRIC_FILES = {
    "real": ("real_data", "gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv",
             "human_judges_real_convs_FIXED_ANON.tsv"),
    "synth": ("synth_data", "gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv",
              "human_judges_synth_all_FIXED_ANON.tsv"),
}
RUBRIC_PROBS = ["prob_1", "prob_2", "prob_3", "prob_4"]


def llm_rubric(path: PathArg = None, *, part: str = "real") -> pd.DataFrame:
    """LLM-Rubric: human 1–4 scores and GPT-3.5's probability of each score, per item.

    Dialogues rated on 9 questions (``Q0`` = overall satisfaction, ``Q1``–``Q8`` rubric
    dimensions) by one human per dialogue (real part) or ~3 (synthetic part), and by
    gpt-3.5-turbo-16k, whose full probability over the four answers is kept. Source:
    microsoft/LLM-Rubric (Hashemi et al., ACL 2024), ``data/{real,synth}_data``. License: MIT.

    Parameters
    ----------
    path : str or PathLike, optional
        Data root or the ``llm-rubric`` folder; default ``$BAYESCAL_DATA``.
    part : {"real", "synth"}
        The 223 real conversations or the 225 synthetic ones.

    Returns
    -------
    DataFrame
        One row per (dialogue, criterion, human annotator): ``item`` (dialogue id), ``criterion``
        (``Q0``..``Q8``), ``judge`` (int64, the judge's sampled answer 1–4), ``prob_1``..``prob_4``
        (the judge's probabilities, as in the file: rows sum to 1 within ~1.5e−6), ``human``
        (int64, 1–4), ``annotator`` (str). A human score of 0 (not applicable) or a missing one is
        dropped with a warning, and so are human-rated dialogues the judge did not score.
        ``Q8`` is a 3-option item (``prob_4`` is always 0): use it on the scale 1..3 or leave
        it out.
    """
    if part not in _RUBRIC_FILES:
        raise ValueError(f"unknown part {part!r}; valid choices are {sorted(_RUBRIC_FILES)}")
    sub, judge_file, human_file = _RUBRIC_FILES[part]
    ev_file, hu_file = _locate(path, "llm-rubric", f"{sub}/{judge_file}", f"{sub}/{human_file}")
    ev = _read(ev_file, numeric=("sample_llm", *(f"answer{k}_prob" for k in range(1, 5))))
    questions = sorted(ev["criterion"].unique())
    hu = _read(hu_file, numeric=questions)
    long = hu.melt(id_vars=["text_id", "annotator_id"], value_vars=questions,
                   var_name="criterion", value_name="human")
    long = _drop(long, long["human"].isna() | (long["human"] == 0),
                 "with no human score (0 = not applicable, or empty)", "llm_rubric")
    merged = long.merge(ev, on=["text_id", "criterion"], how="left", validate="many_to_one")
    merged = _drop(merged, merged["sample_llm"].isna(),
                   "whose dialogue the judge did not score", "llm_rubric")
    probs = merged[[f"answer{k}_prob" for k in range(1, 5)]].to_numpy(np.float64)
    out = pd.DataFrame({
        "item": merged["text_id"].astype(str),
        "criterion": merged["criterion"].astype(str),
        "judge": merged["sample_llm"].astype(np.int64),
        **{c: probs[:, k] for k, c in enumerate(RUBRIC_PROBS)},
        "human": merged["human"].astype(np.int64),
        "annotator": merged["annotator_id"].astype(str),
    })
    return out.sort_values(["criterion", "item", "annotator"], kind="stable").reset_index(drop=True)
