"""The `bayescal` command: demo, fit and their errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescal import simulate
from bayescal.cli import main


@pytest.fixture(scope="module")
def verdicts_csv(tmp_path_factory):
    truth = simulate.judge_discrimination_truth(5, 3, random_seed=2)
    df = simulate.judge_discrimination_btl(truth, 2000, random_seed=3, as_frame=True)
    path = tmp_path_factory.mktemp("cli") / "verdicts.csv"
    df.rename(columns={"item_a": "model_a", "item_b": "model_b", "outcome": "winner"}).to_csv(
        path, index=False)
    return path


def test_demo_runs(capsys):
    code = main(["demo", "--draws", "150", "--tune", "150", "--chains", "2", "--sampler", "pymc",
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Leaderboard" in out and "Sampler diagnostics" in out
    assert "discrimination[judge_00]" in out and "model_00" in out
    assert "1 = best" in out  # the leaderboard with rank intervals


def test_fit_mle_writes_the_table(verdicts_csv, tmp_path, capsys):
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "mle",
                 "--item-a", "model_a", "--item-b", "model_b", "--outcome", "winner",
                 "--out", str(tmp_path), "--information", "sandwich"])
    assert code == 0
    table = (tmp_path / "summary.csv").read_text()
    assert "ability[model_00]" in table and "discrimination[judge_02]" in table
    assert "wald" in capsys.readouterr().out


def test_fit_map_writes_the_posterior(verdicts_csv, tmp_path):
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "map",
                 "--item-a", "model_a", "--item-b", "model_b", "--outcome", "winner",
                 "--out", str(tmp_path)])
    assert code == 0
    tree = xr.open_datatree(tmp_path / "posterior.nc")
    assert np.isclose(float(tree["posterior"]["ability"].sum()), 0.0, atol=1e-8)


def test_bad_input_exits_with_a_message(verdicts_csv, capsys):
    code = main(["fit", "judge-discrimination-btl", str(verdicts_csv), "--method", "mle"])
    assert code == 2
    err = capsys.readouterr().err
    assert "missing column" in err and "model_a" in err


def test_mean_prints_every_estimator(tmp_path, capsys):
    import pandas as pd

    # references.md D1.1 counts: N11=31 N10=5 N01=1 N00=13, T1=223 T0=227
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


def test_library_errors_are_one_line_naming_the_flag(tmp_path, capsys):
    """Catches a traceback (or a message naming `outcome=`) for bad data in a file."""
    path = tmp_path / "soft.csv"
    pd.DataFrame({"a": ["x", "y", "z"], "b": ["y", "z", "x"], "y": [1.0, 0.3, 0.0]}).to_csv(
        path, index=False)
    code = main([*FIT, str(path), "--method", "mle", "--item-a", "a", "--item-b", "b",
                 "--outcome", "y"])
    assert code == 2
    line = one_line_error(capsys)
    assert "--outcome" in line and "rows 1" in line
    assert "--fractional" in line and "fractional=True" not in line
    # an identification error from the fit itself: two disconnected pairs
    path = tmp_path / "split.csv"
    pd.DataFrame({"item_a": ["a", "b", "c", "d"], "item_b": ["b", "a", "d", "c"],
                  "outcome": [1, 1, 1, 1]}).to_csv(path, index=False)
    assert main([*FIT, str(path), "--method", "mle"]) == 2
    assert "components" in one_line_error(capsys)
    assert main([*FIT, str(path), "--method", "mle", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


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
                 "--out", str(tmp_path)])
    assert code == 0
    for name in ("forest.png", "leaderboard.png", "win_probabilities.png",
                 "discriminations.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    board = pd.read_csv(tmp_path / "leaderboard.csv")
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
    for term in ("order_effect[judge_00]", "consensus[item_05]", "consensus_loading[judge_03]",
                 "disagreement[item_00, 1]", "ability[judge_01, item_02]"):
        assert term in out
    assert (tmp_path / "out" / "summary.csv").is_file()
    for bad in ([], ["--rank", "0"], ["--rank", "4"]):
        argv = ["fit", "low-rank-judges", str(path), "--method", "mle", "--fractional", *bad]
        assert main(argv) == 2
        assert "rank" in capsys.readouterr().err
