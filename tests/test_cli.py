"""The `bayescal` command: demo, fit (every registered model), mean and their errors.

Issue 15: one CLI for every model driven by the registry (its flags, refusals of flags that do
not apply), run folders, --json, warnings once each, figures that survive any label, the Elo
display scale. The run folder's own contract (atomic, never mixed, load_run) is in
tests/test_runs.py.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescal import registry, simulate
from bayescal.cli import main
from bayescal.runs import jsonable, load_run


@pytest.fixture(scope="module")
def verdicts_csv(tmp_path_factory):
    truth = simulate.judge_discrimination_truth(5, 3, random_seed=2)
    df = simulate.judge_discrimination_btl(truth, 2000, random_seed=3, as_frame=True)
    path = tmp_path_factory.mktemp("cli") / "verdicts.csv"
    df.rename(columns={"item_a": "model_a", "item_b": "model_b", "outcome": "winner"}).to_csv(
        path, index=False)
    return path


def test_demo_runs_and_writes_a_run(tmp_path, capsys):
    """demo --out wrote only the PNGs: now the run's whole set, one result per method."""
    from bayescal.runs import load_run

    code = main(["demo", "--draws", "150", "--tune", "150", "--chains", "2", "--sampler", "pymc",
                 "--no-progress", "--out", str(tmp_path / "demo")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Leaderboard" in out and "Sampler diagnostics" in out
    assert "discrimination[judge_00]" in out and "model_00" in out
    assert "1 = best" in out  # the leaderboard with rank intervals
    run = load_run(tmp_path / "demo")
    assert run.command == "demo" and run.methods == ["mle", "map", "nuts"]
    assert {"summary.csv", "leaderboard.csv", "judges.csv", "estimate.nc", "map.nc",
            "posterior.nc", "comparison.csv", "diagnostics.csv", "forest.png"} <= set(run.files)
    assert set(run.summary["method"]) == {"mle", "map", "nuts"}
    assert {"truth", "nuts_estimate", "mle_lower"} <= set(run.leaderboard.columns)


def test_demo_dial_writes_a_run(tmp_path, capsys):
    """demo --dial --out wrote nothing: now the DIAL run (GACV path, baselines with Human-only
    and Pooled, order-effect tests, the calibrated leaderboard, MLE and posterior)."""
    assert main(["demo", "--dial", "--draws", "60", "--tune", "60", "--chains", "1",
                 "--no-progress", "--out", str(tmp_path / "dial")]) == 0
    assert "Kendall" in capsys.readouterr().out
    run = load_run(tmp_path / "dial")
    assert run.command == "demo --dial" and run.methods == ["mle", "nuts"]
    assert {"gacv.csv", "baselines.csv", "order_effect_tests.csv", "leaderboard.csv",
            "estimate.nc", "posterior.nc", "summary.csv"} <= set(run.files)
    assert {"Human", "Pooled", "DIAL-Ada", "truth"} <= set(run.table("baselines").columns)
    assert run.meta["info"]["llm_weight"] == jsonable(run.result("mle").info["llm_weight"])


def test_fit_mle_writes_the_table(verdicts_csv, tmp_path, capsys):
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "mle",
                 "--item-a", "model_a", "--item-b", "model_b", "--outcome", "winner",
                 "--out", str(tmp_path / "run"), "--information", "sandwich"])
    assert code == 0
    table = (tmp_path / "run" / "summary.csv").read_text()
    assert "ability[model_00]" in table and "discrimination[judge_02]" in table
    assert "wald" in capsys.readouterr().out


def test_fit_map_writes_the_posterior(verdicts_csv, tmp_path):
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "map",
                 "--item-a", "model_a", "--item-b", "model_b", "--outcome", "winner",
                 "--out", str(tmp_path / "run")])
    assert code == 0
    tree = xr.open_datatree(tmp_path / "run" / "posterior.nc")
    assert np.isclose(float(tree["posterior"]["ability"].sum()), 0.0, atol=1e-8)


def test_bad_input_exits_with_a_message(verdicts_csv, capsys):
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "mle"])
    assert code == 2
    err = capsys.readouterr().err
    # model_a, model_b, winner: read as Chatbot Arena battles, whose winner words these are not
    assert "'winner'" in err and "--format tidy" in err and len(err.strip().splitlines()) == 1
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "mle",
                 "--format", "tidy"])
    assert code == 2
    err = capsys.readouterr().err
    assert "missing column" in err and "model_a" in err


def test_mean_prints_every_estimator(tmp_path, capsys):
    import pandas as pd

    # the authors' vignette counts: N11=31 N10=5 N01=1 N00=13, T1=223 T0=227
    cal_y = [1] * 36 + [0] * 14
    cal_yhat = [1] * 31 + [0] * 5 + [1] * 1 + [0] * 13
    test_yhat = [1] * 223 + [0] * 227
    frame = pd.DataFrame({"human": cal_y + [None] * 450, "judge": cal_yhat + test_yhat})
    path = tmp_path / "labels.csv"
    frame.to_csv(path, index=False)
    code = main(["mean", str(path), "--human", "human", "--judge", "judge", "--prob", "0.9"])
    out = capsys.readouterr().out
    assert code == 0
    for method in ("naive", "rogan_gladen", "ppi", "ppi_plus_plus", "mle", "eif"):
        assert method in out
    assert "0.5756" in out and "0.6308" in out  # PPI and PPI++ of the published vignette


# ---------------------------------------------------------------- issue 6: validate first, one line
FIT = ["fit", "judge-discrimination-btl"]
NAMED = ["--item-a", "model_a", "--item-b", "model_b", "--outcome", "winner"]


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bayescal")
    return lines[0]


@pytest.fixture
def no_fitting(monkeypatch):
    """Every fitting entry point fails the test if it is reached (``bayescal.fit`` is set on
    the package, so its lazy import of PyMC is not paid here)."""
    import bayescal
    from bayescal.frequentist import judge_discrimination_btl as twin

    def refuse(*args, **kwargs):
        raise AssertionError("a fit started before the arguments were validated")

    monkeypatch.setattr(bayescal, "fit", refuse, raising=False)
    monkeypatch.setattr(twin, "fit", refuse)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--prob", "95"], "--prob"),
        (["--prob", "0"], "--prob"),
        (["--draws", "0"], "--draws"),
        (["--chains", "-2"], "--chains"),
        (["--tune", "1.5"], "--tune"),
        (["--judge", "rater"], "--judge"),
        (["--count", "N"], "--count"),
        (["--order", "Order"], "--order"),
    ],
)
def test_bad_arguments_fail_before_any_fit_naming_the_flag(verdicts_csv, no_fitting, capsys, argv,
                                                           flag):
    """Catches `--prob 95` discarding a NUTS run (validation after fitting) and `--judge rater`
    silently pooling every judge when the column does not exist."""
    code = main([*FIT, str(verdicts_csv), *NAMED, *argv])
    assert code == 2
    line = one_line_error(capsys)
    assert flag in line and "judge=" not in line
    if flag in ("--judge", "--count", "--order"):
        assert "columns are" in line and "'model_a'" in line


def test_missing_file_and_column_of_mean_name_the_flag(tmp_path, capsys):
    assert main([*FIT, str(tmp_path / "nope.csv"), "--method", "mle"]) == 2
    assert "nope.csv" in one_line_error(capsys)
    path = tmp_path / "labels.csv"
    pd.DataFrame({"human": [1, None, 0], "llm": [1, 0, 1]}).to_csv(path, index=False)
    assert main(["mean", str(path), "--human", "human", "--judge", "gpt"]) == 2
    line = one_line_error(capsys)
    assert "--judge gpt" in line and "'llm'" in line
    assert main(["mean", str(path), "--human", "human", "--judge", "llm", "--prob", "90"]) == 2
    assert "--prob" in one_line_error(capsys)
    # yes/no labels: the way out is the --positive flag, not the library's "positive=..."
    pd.DataFrame({"human": ["yes", None, "no"], "llm": ["yes", "no", "no"]}).to_csv(
        path, index=False)
    assert main(["mean", str(path), "--human", "human", "--judge", "llm"]) == 2
    line = one_line_error(capsys)
    assert "--positive VALUE" in line and "positive=" not in line


def test_library_errors_are_one_line_naming_the_flag(tmp_path, capsys):
    """Catches a traceback (or a message naming `outcome=`) for bad data in a file."""
    path = tmp_path / "soft.csv"
    pd.DataFrame({"a": ["x", "y", "z"], "b": ["y", "z", "x"], "y": [1.0, 0.3, 0.0]}).to_csv(
        path, index=False)
    code = main([*FIT, str(path), "--method", "mle", "--item-a", "a", "--item-b", "b",
                 "--outcome", "y"])
    assert code == 2
    line = one_line_error(capsys)
    assert "--outcome" in line and "rows 2" in line  # rows are the file's records, from 1
    assert "--fractional" in line and "fractional=True" not in line
    # an identification error from the fit itself: two disconnected pairs
    path = tmp_path / "split.csv"
    pd.DataFrame({"item_a": ["a", "b", "c", "d"], "item_b": ["b", "a", "d", "c"],
                  "outcome": [1, 1, 1, 1]}).to_csv(path, index=False)
    assert main([*FIT, str(path), "--method", "mle"]) == 2
    assert "components" in one_line_error(capsys)
    assert main([*FIT, str(path), "--method", "mle", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_outcome_kind_is_a_flag_and_the_clash_error_names_it(tmp_path, capsys):
    """Catches an error that tells a shell user to pass ``outcome_kind='winner'`` (an argument
    the command line had no flag for, so the file could not be read as meant) and a flag that
    is parsed but not handed to the reader."""
    path = tmp_path / "winners.csv"
    # items "a", "b", "c": the winner "a" in row 2 reads as item a's label and as the code for
    # item_a, and the two readings differ there
    pd.DataFrame({"item_a": ["a", "c", "b", "a", "b", "c"],
                  "item_b": ["b", "a", "c", "c", "a", "b"],
                  "winner": ["a", "a", "c", "c", "b", "b"]}).to_csv(path, index=False)
    argv = [*FIT, str(path), "--method", "mle", "--outcome", "winner", "--out"]
    assert main([*argv, str(tmp_path / "o1")]) == 2
    line = one_line_error(capsys)
    assert "--outcome-kind winner" in line and "outcome_kind=" not in line
    assert main([*argv, str(tmp_path / "o2"), "--outcome-kind", "winner"]) == 0
    wins = pd.read_csv(tmp_path / "o2" / "summary.csv", index_col="term")["estimate"]
    # read as winners each item won twice and lost twice: equal abilities
    np.testing.assert_allclose(wins.filter(like="ability[").to_numpy(), 0.0, atol=1e-6)


def test_the_command_exits_2_with_one_line(verdicts_csv):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "bayescal.cli", *FIT, str(verdicts_csv), *NAMED,
                           "--method", "mle", "--judge", "rater"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "--judge rater" in proc.stderr and proc.stdout == ""


def test_fit_writes_the_leaderboard_and_figures(verdicts_csv, tmp_path, capsys):
    """`fit --out` writes the PNGs, and prints abilities best first with rank intervals."""
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "mle",
                 "--item-a", "model_a", "--item-b", "model_b", "--outcome", "winner",
                 "--out", str(tmp_path / "run")])
    assert code == 0
    for name in ("forest.png", "leaderboard.png", "win_probabilities.png",
                 "discriminations.png"):
        assert (tmp_path / "run" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    board = pd.read_csv(tmp_path / "run" / "leaderboard.csv")
    assert list(board["mle_estimate"]) == sorted(board["mle_estimate"], reverse=True)
    out = capsys.readouterr().out
    printed = [line.split()[0] for line in out.splitlines() if line.startswith("model_")]
    assert printed == list(board["item"])


def test_fit_low_rank_judges_mle_and_rank_errors(tmp_path, capsys):
    from bayescal import simulate

    truth = simulate.low_rank_judges_truth(6, 4, 1, random_seed=2)
    frame = simulate.low_rank_judges(truth, 3000, random_seed=4).to_frame()
    frame = frame.rename(columns={"item_i": "item_a", "item_j": "item_b"})
    frame["outcome"] = frame["wins"] / frame["count"]  # win shares: needs --fractional
    path = tmp_path / "cells.csv"
    frame[["judge", "item_a", "item_b", "order", "count", "outcome"]].to_csv(path, index=False)
    code = main(["fit", "low-rank-judges", str(path), "--rank", "1", "--method", "mle",
                 "--fractional", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    for term in ("order_effect[judge_00]", "consensus_loading[judge_03]",
                 "disagreement[item_00, 1]", "ability[judge_01, item_02]"):
        assert term in out
    assert "Leaderboard of consensus" in out  # the consensus ranking, best first
    summary = pd.read_csv(tmp_path / "out" / "summary.csv", index_col="term")
    assert "consensus[item_05]" in summary.index
    for bad in (["--rank", "0"], ["--rank", "4"]):
        argv = ["fit", "low-rank-judges", str(path), "--method", "mle", "--fractional", *bad]
        assert main(argv) == 2
        assert "rank" in capsys.readouterr().err


# ---------------------------------------------------------------- issue 14: covariance flags
# --information, --cluster and --correction mean the same for every pairwise fit: the library's
# covariance.request decides, a key the user names is used or refused, a flag that does not
# apply is refused in one line naming it (exit 2).
def _verdict_frame(data, rng) -> pd.DataFrame:
    """One row per verdict, with a battle id that groups verdicts (a cluster key)."""
    from bayescal.charts import comparison_verdicts

    v = comparison_verdicts(data)
    items, judges = np.asarray(data.items), np.asarray(data.judges)
    frame = pd.DataFrame({"item_a": items[v["item_i"]], "item_b": items[v["item_j"]],
                          "judge": judges[v["judge"]], "outcome": v["outcome"]})
    if data.has_order:
        frame["order"] = v["order"]
    frame["battle"] = [f"b{g:03d}" for g in rng.integers(0, 80, len(frame))]
    frame["one_battle"] = "b000"
    return frame


@pytest.fixture(scope="module")
def clustered(tmp_path_factory):
    """Verdict files with battle ids for the judge-discrimination and order-effect fits."""
    rng = np.random.default_rng(14)
    folder = tmp_path_factory.mktemp("clustered")
    truth = simulate.judge_discrimination_truth(5, 3, random_seed=2)
    jd = _verdict_frame(simulate.judge_discrimination_btl(truth, 1500, random_seed=3), rng)
    truth = simulate.order_effect_truth(8, 2, random_seed=4)  # 28 pairs for 16 parameters
    oe = _verdict_frame(simulate.order_effect_btl(truth, 1500, random_seed=5), rng)
    paths = {"judge-discrimination-btl": folder / "jd.csv", "order-effect-btl": folder / "oe.csv"}
    jd.to_csv(paths["judge-discrimination-btl"], index=False)
    oe.to_csv(paths["order-effect-btl"], index=False)
    return paths


def _se(folder) -> pd.Series:
    return pd.read_csv(folder / "summary.csv", index_col="term")["se"]


def _library(model: str, path, **kwargs) -> pd.Series:
    from bayescal import registry
    from bayescal.data import Comparisons

    frame = pd.read_csv(path)
    column = kwargs.pop("column", None)
    data = Comparisons.from_frame(frame, cluster=column)
    return registry.by_cli(model).fit(data, **kwargs).summary()["se"]


@pytest.mark.parametrize("model", ["judge-discrimination-btl", "order-effect-btl"])
def test_cli_cluster_key_is_used_not_ignored(model, clustered, tmp_path):
    """Issue 14 finding 1: `fit order-effect-btl --information cluster --cluster battle` printed
    the (judge, pair)-clustered table whatever the column held. Now the SEs are the library's
    clustered by battle, and a column holding one cluster is refused (G = 1)."""
    path = clustered[model]
    assert main(["fit", model, str(path), "--method", "mle", "--information", "cluster",
                 "--cluster", "battle", "--out", str(tmp_path / "a")]) == 0
    want = _library(model, path, column="battle", information="cluster")
    pd.testing.assert_series_equal(_se(tmp_path / "a"), want, rtol=1e-9, check_names=False)
    other = _library(model, path, information="expected")
    assert not np.allclose(want.to_numpy(), other.to_numpy(), rtol=1e-3)


def test_cli_one_cluster_is_refused(clustered, capsys):
    assert main(["fit", "order-effect-btl", str(clustered["order-effect-btl"]), "--method",
                 "mle", "--cluster", "one_battle"]) == 2
    line = one_line_error(capsys)
    assert "one_battle" in line and "cluster" in line


def test_cli_cluster_alone_selects_the_clustered_covariance(clustered, tmp_path):
    """Issue 14 finding 3: `fit judge-discrimination-btl --cluster battle` without
    --information cluster silently used no clustering; now auto resolves to the key."""
    path = clustered["judge-discrimination-btl"]
    assert main(["fit", "judge-discrimination-btl", str(path), "--method", "mle",
                 "--cluster", "battle", "--out", str(tmp_path)]) == 0
    want = _library("judge-discrimination-btl", path, column="battle", information="cluster")
    pd.testing.assert_series_equal(_se(tmp_path), want, rtol=1e-9, check_names=False)


def test_cli_correction_and_builtin_keys_reach_the_twin(clustered, tmp_path):
    """--correction CR0 drops G/(G-1) (the SEs move by sqrt((G-1)/G)); a built-in key
    (judge_pair, pair) clusters without a column."""
    path = clustered["order-effect-btl"]
    for key, correction in (("battle", "CR0"), ("judge_pair", None), ("pair", "CR0")):
        out = tmp_path / f"{key}-{correction}"
        argv = ["fit", "order-effect-btl", str(path), "--method", "mle", "--cluster", key,
                "--out", str(out)]
        if correction:
            argv += ["--correction", correction]
        with warnings.catch_warnings():  # few clusters per judge for the built-in keys
            warnings.simplefilter("ignore")
            assert main(argv) == 0
            kwargs = {"column": key} if key == "battle" else {"cluster": key}
            want = _library("order-effect-btl", path, information="cluster",
                            correction=correction, **kwargs)
        pd.testing.assert_series_equal(_se(out), want, rtol=1e-9, check_names=False)
    cr1 = _library("order-effect-btl", path, column="battle", information="cluster")
    ratio = (_se(tmp_path / "battle-CR0") / cr1).to_numpy()
    np.testing.assert_allclose(ratio, np.sqrt(79 / 80), rtol=1e-3)


@pytest.mark.parametrize(
    ("model", "argv", "named"),
    [
        ("judge-discrimination-btl", ["--cluster", "battle", "--information", "sandwich"],
         ["--cluster battle", "--information sandwich"]),
        ("judge-discrimination-btl", ["--correction", "CR0"], ["--correction CR0"]),
        ("judge-discrimination-btl", ["--cluster", "arena"], ["--cluster arena", "judge_pair"]),
        ("order-effect-btl", ["--information", "cluster"], ["--information cluster"]),
        ("judge-discrimination-btl", ["--method", "nuts", "--information", "sandwich"],
         ["--information", "--method nuts"]),
        ("order-effect-btl", ["--method", "map", "--cluster", "battle"],
         ["--cluster", "--method map"]),
    ],
)
def test_cli_covariance_flags_that_do_not_apply_are_refused(model, argv, named, clustered,
                                                            no_fitting, monkeypatch, capsys):
    """One line naming the flag, exit 2, before any fit: a key with a kind that uses none, a
    correction without a key, a key that is neither a column nor built in, cluster without a
    key, and covariance flags on a Bayesian fit (today all but the unknown key are accepted and
    ignored)."""
    from bayescal.frequentist import order_effect_btl

    monkeypatch.setattr(order_effect_btl, "fit", lambda *a, **k: pytest.fail("fitted"))
    argv = ["--method", "mle", *argv] if "--method" not in argv else argv
    assert main(["fit", model, str(clustered[model]), *argv]) == 2
    line = one_line_error(capsys)
    for text in named:
        assert text in line, line


@pytest.fixture(scope="module")
def dial_files(tmp_path_factory):
    from bayescal import simulate_dial as sd
    from bayescal.charts import comparison_verdicts

    par = sd.truth(6, 4, 1, random_seed=3)
    folder = tmp_path_factory.mktemp("dial")
    llm = _verdict_frame(sd.llm(par, 3000, random_seed=5), np.random.default_rng(1))
    llm.to_csv(folder / "llm.csv", index=False)
    hum = sd.human(par, 300, random_seed=6)
    v = comparison_verdicts(hum)
    items = np.asarray(hum.items)
    pd.DataFrame({"item_a": items[v["item_i"]], "item_b": items[v["item_j"]],
                  "outcome": v["outcome"],
                  "battle": [f"h{g:03d}" for g in np.random.default_rng(2).integers(0, 60, len(v[
                      "outcome"]))]}).to_csv(folder / "human.csv", index=False)
    return folder / "llm.csv", folder / "human.csv"


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--cluster", "no_such_column"], "--cluster no_such_column"),  # finding 2
        (["--correction", "CR0", "--information", "sandwich"], "--correction CR0"),
        (["--information", "cluster"], "--information cluster"),
    ],
)
def test_cli_human_calibration_covariance_flags_are_checked(argv, named, dial_files, monkeypatch,
                                                            capsys):
    """Issue 14 finding 2: `fit human-calibration --cluster X` never checked that X exists (nor
    a correction without a key, nor cluster without one)."""
    from bayescal.frequentist import human_calibration as hc

    monkeypatch.setattr(hc, "fit", lambda *a, **k: pytest.fail("fitted"))
    monkeypatch.setattr(hc, "gacv", lambda *a, **k: pytest.fail("fitted"))
    llm, human = dial_files
    assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method", "mle",
                 "--llm-weight", "inf", *argv]) == 2
    assert named in one_line_error(capsys)


def test_demo_covariance_flags_are_checked_before_fitting(no_fitting, monkeypatch, capsys):
    """demo takes the same flags for its MLE; demo --dial, whose intervals are DIAL's, refuses
    them (today it ran the whole pipeline and ignored them)."""
    from bayescal import simulate_dial

    monkeypatch.setattr(simulate_dial, "llm", lambda *a, **k: pytest.fail("simulated"))
    assert main(["demo", "--dial", "--information", "sandwich"]) == 2
    assert "--information" in one_line_error(capsys)
    assert main(["demo", "--cluster", "battle"]) == 2
    assert "--cluster battle" in one_line_error(capsys)
    assert main(["demo", "--correction", "CR0", "--information", "expected"]) == 2
    assert "--correction CR0" in one_line_error(capsys)


@pytest.mark.parametrize("kind", ["expected", "observed", "sandwich"])
def test_cli_human_calibration_information_is_honoured(kind, dial_files, tmp_path):
    """Issue 14 finding 4: `--information expected` on human calibration was silently replaced
    by the clustered sandwich; now every kind is the library's, as named."""
    from bayescal.data import Comparisons
    from bayescal.frequentist import human_calibration as hc

    llm, human = dial_files
    out = tmp_path / kind
    assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method", "mle",
                 "--llm-weight", "4", "--information", kind, "--out", str(out)]) == 0
    data = Comparisons.concat([Comparisons.from_frame(pd.read_csv(llm)),
                               Comparisons.from_frame(pd.read_csv(human).assign(judge="human"),
                                                      order=None)], humans=["human"])
    want = hc.fit(data, llm_weight=4.0, information=kind)
    assert want.info["information"] == kind
    pd.testing.assert_series_equal(_se(out), want.summary()["se"], rtol=1e-9, check_names=False)


def test_cli_human_calibration_uses_the_files_cluster_key(dial_files, tmp_path, capsys):
    """`--cluster battle` clusters both samples by the files' column (the library's result); a
    key only the LLM file has is refused, naming the human file."""
    from bayescal.data import Comparisons
    from bayescal.frequentist import human_calibration as hc

    llm, human = dial_files
    out = tmp_path / "battle"
    with warnings.catch_warnings():  # few human clusters
        warnings.simplefilter("ignore")
        assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method",
                     "mle", "--llm-weight", "4", "--cluster", "battle", "--out", str(out)]) == 0
        data = Comparisons.concat([
            Comparisons.from_frame(pd.read_csv(llm), cluster="battle"),
            Comparisons.from_frame(pd.read_csv(human).assign(judge="human"), order=None,
                                   cluster="battle")], humans=["human"])
        want = hc.fit(data, llm_weight=4.0, cluster="battle")
    assert want.info["cluster"] == "battle"
    pd.testing.assert_series_equal(_se(out), want.summary()["se"], rtol=1e-9, check_names=False)
    capsys.readouterr()
    pd.read_csv(human).drop(columns="battle").to_csv(tmp_path / "bare.csv", index=False)
    assert main(["fit", "human-calibration", str(llm), "--human", str(tmp_path / "bare.csv"),
                 "--method", "mle", "--llm-weight", "4", "--cluster", "battle"]) == 2
    assert "bare.csv has no column 'battle'" in one_line_error(capsys)


# ---------------------------------------------------------------- issue 15: one CLI, the registry's
ENTRIES = list(registry.entries())


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.stem for e in ENTRIES])
def test_each_model_has_its_flags_and_help_from_the_registry(entry, capsys):
    """`bayescal fit MODEL --help` lists the model's own options (flag, choices, default), its
    covariance kinds, and the one interval default 0.95. Catches a model (misclassification,
    score calibration) unreachable from the CLI and an option added to the registry but not
    to the command line."""
    text = " ".join(_help(["fit", entry.cli], capsys).split())
    for opt in entry.options:
        assert opt.flag in text, opt.flag
        for choice in opt.choices or ():
            assert str(choice) in text
    for kind in entry.information:
        assert kind in text
    assert "(default 0.95)" in text and "--method {mle,map,nuts}" in text
    assert ("--scale {logit,elo}" in text) == bool(entry.score and entry.score_log_odds)


def test_the_default_interval_probability_is_the_schemas():
    """mean defaulted to 90 % and fit to 95 %: one default, bayescal.schema.DEFAULT_PROB."""
    from bayescal.cli import DEFAULT_PROB
    from bayescal.schema import DEFAULT_PROB as SCHEMA

    assert DEFAULT_PROB == SCHEMA


def test_mean_uses_the_one_default_probability(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    cal_y, cal_yhat = [1] * 36 + [0] * 14, [1] * 31 + [0] * 5 + [1] * 1 + [0] * 13
    pd.DataFrame({"human": cal_y + [None] * 450,
                  "judge": cal_yhat + [1] * 223 + [0] * 227}).to_csv(path, index=False)
    assert main(["mean", str(path), "--human", "human", "--judge", "judge", "--out",
                 str(tmp_path / "run")]) == 0
    run = load_run(tmp_path / "run")
    assert (run.summary["prob"] == 0.95).all() and run.command == "mean"
    assert "estimators.png" in run.files


@pytest.mark.parametrize(("model", "argv", "flag"), [
    ("low-rank-judges", ["--unweighted"], "--unweighted"),
    ("low-rank-judges", ["--no-discrimination"], "--no-discrimination"),
    ("judge-discrimination-btl", ["--rank", "2"], "--rank"),
    ("order-effect-btl", ["--llm-weight=4"], "--llm-weight"),
    ("low-rank-judges", ["--scale", "elo"], "--scale"),
])
def test_a_flag_of_another_model_is_refused(model, argv, flag, verdicts_csv, no_fitting, capsys):
    """`fit low-rank-judges --unweighted` and `--rank` on judge-discrimination were accepted
    and ignored; now one line naming the flag (and the model that has it), exit 2."""
    assert main(["fit", model, str(verdicts_csv), *NAMED, "--method", "mle", *argv]) == 2
    line = one_line_error(capsys)
    assert f"{flag} does not apply to {model}" in line, line


@pytest.mark.parametrize(("argv", "named"), [
    (["--method", "map", "--discrimination-scale", "natural"], "--discrimination-scale"),
    (["--method", "mle", "--draws", "10"], "--draws"),
    (["--method", "map", "--chains", "2"], "--chains"),
    (["--method", "map", "--seed", "3"], "--seed"),
    (["--method", "mle", "--sampler", "pymc"], "--sampler"),
    (["--method", "mle", "--discrimination-scale", "wide"], "--discrimination-scale"),
    (["--method", "mle", "--ability-scale-sd", "2"], "--ability-scale-sd"),
    (["--method", "map", "--ability-scale-sd", "2"], "--ability-scale-sd"),
    (["--method", "nuts", "--ability-scale-sd", "-1"], "--ability-scale-sd"),
    (["--method", "nuts", "--ability-scale-sd", "nan"], "--ability-scale-sd"),
])
def test_a_flag_the_method_does_not_use_is_refused(argv, named, verdicts_csv, no_fitting,
                                                   capsys):
    """A twin-only option with MAP/NUTS, a NUTS setting with MLE/MAP: refused, not ignored."""
    assert main([*FIT, str(verdicts_csv), *NAMED, *argv]) == 2
    assert named in one_line_error(capsys)


def test_model_options_reach_the_twin(verdicts_csv, tmp_path):
    """--no-discrimination fits the unweighted BTL and --discrimination-scale natural the
    paper's intervals: the library's results, as named."""
    from bayescal.data import Comparisons

    frame = pd.read_csv(verdicts_csv)
    data = Comparisons.from_frame(frame, item_a="model_a", item_b="model_b", outcome="winner")
    entry = registry.get("judge_discrimination_btl")
    for flags, kwargs in ((["--no-discrimination"], {"discrimination": False}),
                          (["--unweighted"], {"discrimination": False}),
                          (["--discrimination-scale", "natural"], {"scale": "natural"})):
        out = tmp_path / flags[0].strip("-")
        assert main([*FIT, str(verdicts_csv), *NAMED, "--method", "mle", *flags, "--out",
                     str(out)]) == 0
        want = entry.fit(data, **kwargs).summary()
        got = load_run(out).summary
        pd.testing.assert_series_equal(got["upper"], want["upper"], check_names=False)
        assert load_run(out).meta["options"] == {"discrimination": True, "scale": "log",
                                                 "ties": "half", **kwargs}


def test_ability_scale_flag_builds_the_learned_scale(verdicts_csv):
    """--ability-scale-sd S is build's ability_scale_sd: the abilities' scale becomes a free
    variable with a HalfNormal(S) prior (the posterior to read after bayescal next), and a
    second, different value in priors is refused rather than one of them ignored. Catches the
    option dropped on its way to the model, or the fixed ability_sd left in place."""
    import scipy.stats

    from bayescal.data import Comparisons
    from bayescal.models import judge_discrimination_btl as jdm

    frame = pd.read_csv(verdicts_csv)
    data = Comparisons.from_frame(frame, item_a="model_a", item_b="model_b", outcome="winner")
    model = registry.get("judge_discrimination_btl").build(data, ability_scale_sd=2.0)
    assert "ability_scale" in model.named_vars
    logp = model.compile_logp(vars=[model["ability_scale"]], jacobian=False)
    point = model.initial_point()
    point["ability_scale_log__"] = np.log(0.7)
    assert logp(point) == pytest.approx(scipy.stats.halfnorm(scale=2.0).logpdf(0.7))
    with pytest.raises(ValueError, match="disagree"):
        jdm.build(data, ability_scale_sd=2.0,
                  priors=jdm.Priors(ability_sd=None, ability_scale_sd=3.0))


def _frame_of(data) -> pd.DataFrame:
    from bayescal.charts import comparison_verdicts

    v = comparison_verdicts(data)
    items, judges = np.asarray(data.items), np.asarray(data.judges)
    frame = pd.DataFrame({"item_a": items[v["item_i"]], "item_b": items[v["item_j"]],
                          "judge": judges[v["judge"]], "outcome": v["outcome"]})
    if data.has_order:
        frame["order"] = v["order"]
    return frame


@pytest.fixture(scope="module")
def model_files(tmp_path_factory, dial_files):
    """One input file per registered model (the registry's simulations, small)."""
    folder = tmp_path_factory.mktemp("models")
    files = {}
    for entry in ENTRIES:
        path = folder / f"{entry.stem}.csv"
        if entry.data_type == "Comparisons" and entry.stem != "human_calibration":
            mode = "both_orders" if entry.stem == "low_rank_judges" else "default"
            _frame_of(entry.simulation.draw(mode)).to_csv(path, index=False)
            files[entry.stem] = [str(path)]
        elif entry.stem == "human_calibration":
            llm, human = dial_files
            files[entry.stem] = [str(llm), "--human", str(human), "--llm-weight", "4"]
        elif entry.data_type == "Labels":
            lab = entry.simulation.draw()
            frame = pd.DataFrame(np.vstack([lab.yhat_cal, lab.yhat_test]),
                                 columns=list(lab.judges))
            frame["human"] = np.concatenate([lab.y_cal, np.full(len(lab.yhat_test), np.nan)])
            frame.to_csv(path, index=False)
            files[entry.stem] = [str(path), "--judge", ",".join(lab.judges)]
        else:
            r = entry.simulation.draw()
            pd.DataFrame({"judge": r.judge, "human": r.human}).to_csv(path, index=False)
            files[entry.stem] = [str(path), "--scale", "1", "5"]
    return files


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.stem for e in ENTRIES])
def test_every_model_fits_from_the_cli_and_writes_the_same_set(entry, model_files, tmp_path):
    """Every fit writes the one set: summary.csv, estimate.nc, run.json, leaderboard.csv where
    the model has a score, judges.csv where it has judge parameters, its figures. Today the
    DIAL commands wrote only summary.csv and two models had no command at all."""
    out = tmp_path / "run"
    assert main(["fit", entry.cli, *model_files[entry.stem], "--method", "mle", "--out",
                 str(out)]) == 0
    run = load_run(out)
    assert run.model == entry.stem and run.method == "mle" == run.methods[0]
    assert {"summary.csv", "estimate.nc"} <= set(run.files)
    assert ("leaderboard.csv" in run.files) == (entry.score is not None)
    assert ("judges.csv" in run.files) == bool(entry.judge_parameters)
    assert "forest.png" in run.files and len(run.figures) >= 2
    want = entry.fit(_container(entry, model_files[entry.stem]), **_mle_options(entry))
    pd.testing.assert_series_equal(run.summary["estimate"], want.summary()["estimate"],
                                   check_names=False, rtol=1e-9)
    assert run.result().terms == want.terms
    if entry.judge_parameters:
        assert set(run.judges["parameter"]) <= set(entry.judge_parameters)


def _mle_options(entry) -> dict:
    return {"llm_weight": 4.0} if entry.stem == "human_calibration" else {}


def _container(entry, argv):
    from bayescal.data import Comparisons, Labels, Ratings

    frame = pd.read_csv(argv[0])
    if entry.stem == "human_calibration":
        human = pd.read_csv(argv[2]).assign(judge="human")
        return Comparisons.concat([Comparisons.from_frame(frame),
                                   Comparisons.from_frame(human, order=None)], humans=["human"])
    if entry.data_type == "Comparisons":
        return Comparisons.from_frame(frame)
    if entry.data_type == "Labels":
        return Labels.from_frame(frame, human="human", judge=argv[2].split(","))
    return Ratings.from_frame(frame, scale=(1, 5))


def test_human_calibration_baselines_are_reachable(dial_files, tmp_path, capsys):
    """Human-only and Pooled were API-only: --baselines writes every DIAL method's scores (the
    library's), and --llm-weight 0 is the Human-only fit."""
    from bayescal.data import Comparisons
    from bayescal.frequentist import dial_baselines as db

    llm, human = dial_files
    assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method", "mle",
                 "--llm-weight", "4", "--baselines", "--out", str(tmp_path / "run")]) == 0
    data = Comparisons.concat([Comparisons.from_frame(pd.read_csv(llm)),
                               Comparisons.from_frame(pd.read_csv(human).assign(judge="human"),
                                                      order=None)], humans=["human"])
    scores, _, _ = db.baselines(data, rank=1)
    got = load_run(tmp_path / "run").table("baselines")
    pd.testing.assert_frame_equal(got, scores, check_names=False, rtol=1e-9)
    assert "Pooled" in capsys.readouterr().out
    assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method", "mle",
                 "--llm-weight", "0", "--out", str(tmp_path / "h0")]) == 0
    h0 = load_run(tmp_path / "h0").summary
    human_rows = h0[h0["parameter"] == "human_ability"]
    np.testing.assert_allclose(human_rows["estimate"], scores["Human"], rtol=1e-8)
    judges = load_run(tmp_path / "run").judges
    assert (judges["calibration_weight"] == 4.0).all()


def test_human_calibration_map_at_infinity_is_refused(dial_files, no_fitting, capsys):
    llm, human = dial_files
    assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method", "map",
                 "--llm-weight", "inf"]) == 2
    assert "cut posterior" in one_line_error(capsys)
    assert main(["fit", "human-calibration", str(llm), "--method", "mle"]) == 2
    assert "--human FILE" in one_line_error(capsys)


# ---------------------------------------------------------------- --json
def test_json_prints_the_result_and_nothing_else(verdicts_csv, tmp_path, capsys):
    """--json: stdout is one JSON document (the summary rows as in summary.csv, the run's
    metadata), strict JSON (no NaN), nothing else on stdout."""
    assert main([*FIT, str(verdicts_csv), *NAMED, "--method", "mle", "--json", "--out",
                 str(tmp_path / "run")]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(printed)
    json.loads(printed, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    summary = load_run(tmp_path / "run").summary
    assert [r["term"] for r in doc["summary"]] == list(summary.index)
    np.testing.assert_allclose([r["estimate"] for r in doc["summary"]], summary["estimate"])
    assert doc["run"]["model"] == "judge_discrimination_btl"
    assert doc["run"]["files"] == load_run(tmp_path / "run").meta["files"]
    assert [r["item"] for r in doc["leaderboard"]] == list(
        load_run(tmp_path / "run").leaderboard["item"])
    # without --out: the same result, no files
    assert main([*FIT, str(verdicts_csv), *NAMED, "--method", "map", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["files"] == {} and doc["summary"][0]["se"] is None  # MAP: no se (NaN)


# ---------------------------------------------------------------- warnings
def test_warnings_reach_the_user_once_each_without_file_paths(tmp_path):
    """Python printed `.../normalize.py:123: LabelNormalizationWarning: ...` and the source
    line, once per occurrence; now one line `warning: ...` per distinct warning, kept in
    run.json."""
    import subprocess
    import sys

    frame = pd.read_csv(Path(__file__).parent / "data" / "verdicts.csv")
    frame.loc[frame["item_a"] == "gpt-4o", "item_a"] = " gpt-4o"
    path = tmp_path / "spaces.csv"
    frame.to_csv(path, index=False)
    proc = subprocess.run([sys.executable, "-m", "bayescal.cli", *FIT, str(path), "--method",
                           "mle", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert len(lines) == 1 and "' gpt-4o' -> 'gpt-4o'" in lines[0]
    assert ".py:" not in proc.stderr and "Warning:" not in proc.stderr
    recorded = load_run(tmp_path / "run").warnings
    assert [w["category"] for w in recorded] == ["LabelNormalizationWarning"]


def test_the_warning_log_dedupes():
    from bayescal.cli import _WarningLog

    with _WarningLog() as log:
        for _ in range(3):
            warnings.warn("the same\n  thing", UserWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
    assert log.entries() == [{"category": "UserWarning", "message": "the same thing"}]


# ---------------------------------------------------------------- labels that are mathtext
def test_labels_with_dollars_do_not_break_the_figures(verdicts_csv, tmp_path):
    """An item label containing `$` crashed figure writing (matplotlib mathtext) after
    summary.csv and estimate.nc had been written; now every figure is written, the labels
    drawn as typed."""
    frame = pd.read_csv(verdicts_csv)
    rename = {"model_00": "$x^$ model", "model_01": "a_$$", "model_02": "b^c_d"}
    for column in ("model_a", "model_b"):
        frame[column] = frame[column].replace(rename)
    path = tmp_path / "dollars.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "run"
    assert main([*FIT, str(path), *NAMED, "--method", "mle", "--out", str(out)]) == 0
    run = load_run(out)
    assert {"forest.png", "leaderboard.png", "win_probabilities.png",
            "discriminations.png"} <= set(run.files)
    assert set(rename.values()) <= set(run.leaderboard["item"]) and run.warnings == []


# ---------------------------------------------------------------- --scale elo
def test_elo_scale_in_the_leaderboard_and_the_cli(verdicts_csv, tmp_path, capsys):
    """--scale elo: the leaderboard (printed and leaderboard.csv) on R = 1000 + 400/ln 10 × s,
    labelled; ranks unchanged; bc.leaderboard(scale="elo") is the same table."""
    import bayescal as bc
    from bayescal.data import Comparisons

    runs = {}
    for scale in ("logit", "elo"):
        assert main([*FIT, str(verdicts_csv), *NAMED, "--method", "mle", "--scale", scale,
                     "--out", str(tmp_path / scale)]) == 0
        runs[scale] = load_run(tmp_path / scale).leaderboard
    assert "on the Elo scale" in capsys.readouterr().out
    logit, elo = runs["logit"], runs["elo"]
    for column in ("mle_estimate", "mle_lower", "mle_upper"):
        np.testing.assert_allclose(elo[column], 1000 + 400 / np.log(10) * logit[column])
    assert (elo["scale"] == "elo").all() and "scale" not in logit
    pd.testing.assert_series_equal(elo["mle_rank_upper"], logit["mle_rank_upper"])
    data = Comparisons.from_frame(pd.read_csv(verdicts_csv), item_a="model_a", item_b="model_b",
                                  outcome="winner")
    table = bc.leaderboard(registry.get("judge_discrimination_btl").fit(data), scale="elo",
                           random_seed=1)
    np.testing.assert_allclose(table["mle_estimate"], elo["mle_estimate"])
    assert table.attrs["scale"] == "elo"
    with pytest.raises(ValueError, match="scale"):
        bc.leaderboard(registry.get("judge_discrimination_btl").fit(data), scale="Elo")


def test_registry_declares_what_runs_show():
    """The registry's score, judge parameters and figures name identified quantities and
    figures the run writer draws."""
    from bayescal.runs import FIGURES

    for entry in ENTRIES:
        assert entry.score is None or entry.score in entry.identified, entry.stem
        assert set(entry.judge_parameters) <= set(entry.identified), entry.stem
        assert set(entry.figures) <= set(FIGURES), entry.stem
        for opt in entry.options:
            assert opt.command_line_default is registry.REQUIRED or opt.command_line_default \
                is None or isinstance(opt.command_line_default, (opt.type, str))


def test_data_flags_are_the_readers_keywords():
    import inspect

    from bayescal import data
    from bayescal.cli import _DATA_FLAGS

    for kind, flags in _DATA_FLAGS.items():
        params = inspect.signature(getattr(data, kind).from_frame).parameters
        assert {k for k, _, _ in flags} <= set(params), kind


def test_fit_reads_the_fields_layouts_and_records_them(tmp_path):
    """The command reads what bayescal.io reads (a Chatbot Arena battle file as JSON, found from
    its content); run.json says which layout was read. --format names are bayescal.io's."""
    from bayescal import io
    from bayescal.cli import _FILE_FORMATS, _LAYOUTS

    assert set(_FILE_FORMATS) == set(io.format_names())
    assert set(_LAYOUTS) == set(io.layout_names())
    arena = Path(__file__).parent / "data" / "arena_battles.json"
    out = tmp_path / "run"
    assert main([*FIT, str(arena), "--method", "mle", "--no-discrimination", "--out",
                 str(out)]) == 0
    (source,) = load_run(out).meta["inputs"]
    assert source["layout"] == "arena" and source["rows"] == 5
    assert main([*FIT, str(arena), "--method", "mle", "--no-discrimination", "--format",
                 "fastchat"]) == 2


def test_human_calibration_map_is_the_power_posterior_mode(dial_files, tmp_path):
    """--method map was not offered for human calibration (a note, then the twin): now the
    power posterior's mode at the λ given, the library's."""
    import bayescal as bc
    from bayescal.data import Comparisons
    from bayescal.models import human_calibration as hm

    llm, human = dial_files
    out = tmp_path / "run"
    assert main(["fit", "human-calibration", str(llm), "--human", str(human), "--method", "map",
                 "--llm-weight", "4", "--out", str(out)]) == 0
    data = Comparisons.concat([Comparisons.from_frame(pd.read_csv(llm)),
                               Comparisons.from_frame(pd.read_csv(human).assign(judge="human"),
                                                      order=None)], humans=["human"])
    model = hm.build(data, llm_weight=4.0)
    want = bc.summarize(bc.fit(model, "map", initvals=hm.initvals(model)), 0.95)
    got = load_run(out).summary
    rows = want[want["parameter"] == "human_ability"].index
    np.testing.assert_allclose(got.loc[rows, "estimate"], want.loc[rows, "estimate"], rtol=1e-6)
    assert load_run(out).options["llm_weight"] == 4.0
