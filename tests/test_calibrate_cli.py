"""`bayescal calibrate`: learns a map from anchors, streams through --state, never loses data.

The state of a stream (``--state FILE``) is read, the new anchors are added, and it is written
back atomically; a state that is truncated, edited or of another method is refused, as are
outputs that name an input. The library side: ``Calibrator.partial_fit`` adds a batch and
``from_dict`` checks what it loads.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from bayescal.calibration import SQM, from_dict
from bayescal.calibration.protocol import default_methods
from bayescal.cli import main
from bayescal.data import DataError


def _files(tmp_path):
    anchors = tmp_path / "anchors.csv"
    pd.DataFrame({"judge": [3, 3, 4, 4, 4, 5, 5, 5, 5, 5],
                  "human": [1, 2, 2, 3, 3, 3, 4, 4, 5, 5]}).to_csv(anchors, index=False)
    scores = tmp_path / "scores.csv"
    pd.DataFrame({"id": list("abcde"), "judge": [1, 2, 3, 4, 5]}).to_csv(scores, index=False)
    return anchors, scores


def _batch(path, seed: int, n: int = 41) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    judge = rng.integers(1, 6, n)
    frame = pd.DataFrame({"judge": judge, "human": np.clip(judge + rng.integers(-1, 2, n), 1, 5)})
    frame.to_csv(path, index=False)
    return frame


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


# ---------------------------------------------------------------- issue 15 finding 5: streaming
def test_a_second_batch_adds_to_the_first(tmp_path, capsys) -> None:
    """Catches `--state` only writing: after two batches of 41 anchors the state held 41, the
    first batch lost. Now it holds 82 and equals SQM fitted on both batches at once."""
    _, scores = _files(tmp_path)
    first, second = _batch(tmp_path / "b1.csv", 1), _batch(tmp_path / "b2.csv", 2)
    state = tmp_path / "state.json"
    for path in ("b1.csv", "b2.csv"):
        assert main(["calibrate", str(tmp_path / path), str(scores), "--scale", "1", "5",
                     "--state", str(state), "--out", str(tmp_path / f"out-{path}")]) == 0
    saved = json.loads(state.read_text())
    assert saved["state"]["n_anchors"] == 82 and len(saved["batches"]) == 2
    both = pd.concat([first, second])
    want = SQM((1, 5)).fit(both["judge"], both["human"])
    assert from_dict(saved).to_dict() == want.to_dict()
    calibrated = pd.read_csv(tmp_path / "out-b2.csv")["calibrated"].to_numpy()
    np.testing.assert_array_equal(calibrated, want.predict([1, 2, 3, 4, 5]))
    assert "82 anchors in 2 batch(es)" in capsys.readouterr().err


def test_the_same_batch_twice_is_refused(tmp_path, capsys) -> None:
    """Adding one anchors file twice counts every anchor twice: refused unless asked for."""
    _, scores = _files(tmp_path)
    _batch(tmp_path / "b1.csv", 1)
    state = tmp_path / "state.json"
    argv = ["calibrate", str(tmp_path / "b1.csv"), str(scores), "--scale", "1", "5", "--state",
            str(state), "--out", str(tmp_path / "o.csv")]
    assert main(argv) == 0
    before = state.read_bytes()
    assert main(argv) == 2
    assert "already added" in capsys.readouterr().err and state.read_bytes() == before
    assert main([*argv, "--allow-repeat"]) == 0
    assert json.loads(state.read_text())["state"]["n_anchors"] == 82


def test_the_state_is_written_atomically(tmp_path, monkeypatch) -> None:
    """A run killed while writing left a truncated JSON: now the new state is written to a
    temporary file and renamed, so a failure at the rename leaves the previous state whole
    (and no temporary file behind)."""
    import bayescal.runs

    _, scores = _files(tmp_path)
    _batch(tmp_path / "b1.csv", 1)
    _batch(tmp_path / "b2.csv", 2)
    state = tmp_path / "state.json"
    assert main(["calibrate", str(tmp_path / "b1.csv"), str(scores), "--scale", "1", "5",
                 "--state", str(state), "--out", str(tmp_path / "o1.csv")]) == 0
    before = state.read_bytes()
    replace = os.replace

    def killed(src, dst):
        if str(dst).endswith("state.json"):
            raise KeyboardInterrupt  # the process dies between writing and renaming
        return replace(src, dst)

    monkeypatch.setattr(bayescal.runs.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        main(["calibrate", str(tmp_path / "b2.csv"), str(scores), "--scale", "1", "5",
              "--state", str(state), "--out", str(tmp_path / "o2.csv")])
    assert state.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize(("content", "words"), [
    ('{"method": "sqm", "params": {"scale": [1, 5], "posi', "cut short"),
    ("", "cut short"),
    ('{"method": "sqm", "params": {"scale": [1, 5], "position": "mid"}, "state": {"n_anchors": '
     '3, "judge_counts": [1, -1, 3, 0, 0], "human_counts": [3, 0, 0, 0, 0]}}', "whole counts"),
    ('{"method": "sqm", "params": {"scale": [1, 5], "position": "mid"}, "state": {"n_anchors": '
     '3, "judge_counts": [1.5, 1.5, 0, 0, 0], "human_counts": [3, 0, 0, 0, 0]}}', "whole counts"),
    ('[1, 2, 3]', "not a calibrator state"),
])
def test_a_broken_state_is_refused_with_what_to_do(tmp_path, capsys, content, words) -> None:
    """A truncated or edited state was silently replaced (or loaded): refused, the file left as
    it is, and the message says what to do."""
    anchors, scores = _files(tmp_path)
    state = tmp_path / "state.json"
    state.write_text(content)
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "5", "--state",
                 str(state)]) == 2
    err = capsys.readouterr().err
    assert words in err and "new --state file" in err and len(err.strip().splitlines()) == 1
    assert state.read_text() == content


def test_a_state_of_another_method_or_scale_is_refused(tmp_path, capsys) -> None:
    anchors, scores = _files(tmp_path)
    state = tmp_path / "state.json"
    base = ["calibrate", str(anchors), str(scores), "--state", str(state)]
    assert main([*base, "--scale", "1", "5", "--method", "sqm_upper", "--out",
                 str(tmp_path / "o.csv")]) == 0
    before = state.read_bytes()
    assert main([*base, "--scale", "1", "5", "--method", "isotonic"]) == 2
    assert "holds a sqm calibrator" in capsys.readouterr().err
    assert main([*base, "--scale", "1", "6", "--method", "sqm_upper"]) == 2
    assert "scale 1..6" in capsys.readouterr().err
    assert state.read_bytes() == before
    # without --method the stream continues with its own method (upper), not the default mid
    _batch(tmp_path / "more.csv", 3)
    assert main(["calibrate", str(tmp_path / "more.csv"), str(scores), "--state", str(state),
                 "--scale", "1", "5", "--out", str(tmp_path / "o2.csv")]) == 0
    assert json.loads(state.read_text())["params"]["position"] == "upper"


# ---------------------------------------------------------------- finding 6: outputs vs inputs
@pytest.mark.parametrize("which", ["state-is-anchors", "out-is-scores", "state-links-anchors",
                                   "out-is-state"])
def test_outputs_that_name_an_input_are_refused(tmp_path, capsys, which) -> None:
    """`--state a.csv` destroyed the anchors and `--out` could replace the scores: refused
    (paths compared after resolving symlinks), every file left as it was."""
    anchors, scores = _files(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(anchors)
    flags = {"state-is-anchors": ["--state", str(anchors)],
             "out-is-scores": ["--out", str(scores)],
             "state-links-anchors": ["--state", str(link)],
             "out-is-state": ["--out", str(tmp_path / "x"), "--state", str(tmp_path / "x")]}
    before = {p: p.read_bytes() for p in (anchors, scores)}
    assert main(["calibrate", str(anchors), str(scores), "--scale", "1", "5",
                 *flags[which]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and ("input" in err or "same file" in err)
    assert all(p.read_bytes() == b for p, b in before.items())
    assert not (tmp_path / "x").exists()


def test_unreadable_tables_are_one_line_errors(tmp_path, capsys) -> None:
    """An empty anchors file printed a pandas traceback."""
    _, scores = _files(tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert main(["calibrate", str(empty), str(scores), "--scale", "1", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "empty.csv" in err


# ---------------------------------------------------------------- the library: load and stream
_SCALE = (1, 5)


def _anchors(seed: int, n: int = 37) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    j = rng.integers(1, 6, n).astype(float)
    return j, np.clip(j + rng.integers(-1, 2, n), 1, 5).astype(float)


@pytest.mark.parametrize("name", sorted(default_methods(distributions=False)))
def test_partial_fit_adds_a_batch(name) -> None:
    """For every calibrator: fit(batch 1) then partial_fit(batch 2) is fit(both), and the state
    survives a JSON round trip through the checks of from_dict."""
    make = default_methods(distributions=False)[name]
    (j1, h1), (j2, h2) = _anchors(1), _anchors(2)
    streamed = make(_SCALE).fit(j1, h1).partial_fit(j2, h2)
    whole = make(_SCALE).fit(np.concatenate([j1, j2]), np.concatenate([h1, h2]))
    assert json.dumps(streamed.to_dict()) == json.dumps(whole.to_dict())
    again = from_dict(json.loads(json.dumps(streamed.to_dict())))
    np.testing.assert_allclose(again.predict([1, 2, 3, 4, 5]), whole.predict([1, 2, 3, 4, 5]))


def _edit(state: dict, path: tuple, value) -> dict:
    out = json.loads(json.dumps(state))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize(("name", "path", "value", "words"), [
    ("sqm", ("state", "judge_counts", 0), -1, "whole counts"),
    ("sqm", ("state", "human_counts", 1), 0.5, "whole counts"),
    ("sqm", ("state", "judge_counts"), [1, 2, 3], "shape"),
    ("sqm", ("state", "n_anchors"), 5, "add up to"),
    ("sqm", ("state", "n_anchors"), -1, "n_anchors"),
    ("sqm", ("state", "extra"), [1], "keys"),
    ("sqm", ("params", "position"), "left", "position"),
    ("isotonic", ("state", "cells", 0, 0), 2.5, "whole counts"),
    ("isotonic", ("state", "cells"), [[1, 2], [3, 4]], "shape"),
    ("dawid_skene", ("state", "fitted_cells", 0, 0), 99, "fitted_cells"),
    ("streaming_linear", ("state", "moments", 0), 3.0, "n = n_anchors"),
    ("bayesian_update", ("state", "precision", 0, 1), 9.0, "symmetric"),
    ("few_shot", ("state", "anchors", 0), [9, 1], "scale"),
    ("sliced_wasserstein", ("state", "counts", 0), 100, "add up to"),
    ("sqm", ("method",), "nope", "unknown calibrator"),
])
def test_from_dict_refuses_a_tampered_state(name, path, value, words) -> None:
    """A calibrator state accepted negative or fractional counts (int() truncated 2.5 to 2),
    wrong shapes and counts that do not add up: each is refused, naming what is wrong."""
    j, h = _anchors(3)
    good = default_methods(distributions=False)[name](_SCALE).fit(j, h).to_dict()
    from_dict(json.loads(json.dumps(good)))  # the untouched state loads
    with pytest.raises(DataError, match=words):
        from_dict(_edit(good, path, value))


def test_predictive_state_refuses_negative_mass() -> None:
    from bayescal.calibration import PredictiveSQM

    w = np.array([[0.5, 0.5, 0, 0, 0], [0, 0.2, 0.8, 0, 0]])
    good = PredictiveSQM(_SCALE).fit(w, [1, 3]).to_dict()
    from_dict(good)
    with pytest.raises(DataError, match="negative"):
        from_dict(_edit(good, ("state", "judge_counts"), [0.5, -0.3, 1.8, 0, 0]))
