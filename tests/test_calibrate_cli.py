"""`bayescal calibrate`: learns a map from anchors and writes calibrated scores; clear errors."""

from __future__ import annotations

import json

import pandas as pd

from bayescal.cli import main


def _files(tmp_path):
    anchors = tmp_path / "anchors.csv"
    pd.DataFrame({"judge": [3, 3, 4, 4, 4, 5, 5, 5, 5, 5],
                  "human": [1, 2, 2, 3, 3, 3, 4, 4, 5, 5]}).to_csv(anchors, index=False)
    scores = tmp_path / "scores.csv"
    pd.DataFrame({"id": list("abcde"), "judge": [1, 2, 3, 4, 5]}).to_csv(scores, index=False)
    return anchors, scores


def test_calibrate_writes_the_d42_maps(tmp_path, capsys) -> None:
    anchors, scores = _files(tmp_path)
    out, state = tmp_path / "out.csv", tmp_path / "state.json"
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "5", "--method",
                 "sqm_upper", "--out", str(out), "--state", str(state)]) == 0
    df = pd.read_csv(out)
    assert df["calibrated_rounded"].tolist() == [1, 1, 2, 3, 5] and list(df["id"]) == list("abcde")
    assert json.loads(state.read_text())["params"]["position"] == "upper"
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "5"]) == 0
    printed = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert printed["calibrated"].tolist() == [1, 1, 1, 3, 4]  # the mid default


def test_calibrate_with_distributions(tmp_path) -> None:
    anchors = tmp_path / "a.csv"
    pd.DataFrame({"p1": [1.0, 0.0, 0.5], "p2": [0.0, 0.5, 0.5], "p3": [0.0, 0.5, 0.0],
                  "human": [1, 3, 2]}).to_csv(anchors, index=False)
    scores = tmp_path / "s.csv"
    pd.DataFrame({"p1": [0.2], "p2": [0.3], "p3": [0.5]}).to_csv(scores, index=False)
    out = tmp_path / "o.csv"
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "3", "--method",
                 "sqm_predictive", "--dist", "p1,p2,p3", "--out", str(out)]) == 0
    assert pd.read_csv(out)["calibrated"].between(1, 3).all()


def test_calibrate_errors_are_clear(tmp_path, capsys) -> None:
    anchors, scores = _files(tmp_path)
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "4"]) == 2
    assert "off the declared scale 1..4" in capsys.readouterr().err
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "5", "--method",
                 "magic"]) == 2
    assert "unknown method 'magic'" in capsys.readouterr().err
