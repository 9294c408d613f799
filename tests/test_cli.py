"""The `bayescal` command: demo, fit and their errors."""

from __future__ import annotations

import numpy as np
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
    assert "discrimination[judge_00]" in out and "ability[model_00]" in out


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


def test_fit_low_rank_judges_mle_and_rank_errors(tmp_path, capsys):
    from bayescal import simulate

    truth = simulate.low_rank_judges_truth(6, 4, 1, random_seed=2)
    frame = simulate.low_rank_judges(truth, 3000, random_seed=4).to_frame()
    frame = frame.rename(columns={"item_i": "item_a", "item_j": "item_b"})
    frame["outcome"] = frame["wins"] / frame["count"]
    path = tmp_path / "cells.csv"
    frame[["judge", "item_a", "item_b", "order", "count", "outcome"]].to_csv(path, index=False)
    code = main(["fit", "low-rank-judges", str(path), "--rank", "1", "--method", "mle",
                 "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    for term in ("order_effect[judge_00]", "consensus[item_05]", "consensus_loading[judge_03]",
                 "disagreement[item_00, 1]", "ability[judge_01, item_02]"):
        assert term in out
    assert (tmp_path / "out" / "summary.csv").is_file()
    for bad in ([], ["--rank", "0"], ["--rank", "4"]):
        assert main(["fit", "low-rank-judges", str(path), "--method", "mle", *bad]) == 2
        assert "rank" in capsys.readouterr().err
