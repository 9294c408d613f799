"""Run folders (bayescal.runs): written whole or not at all, never mixed, never over an input,
read back checked by load_run (issue 15, finding 6)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from bayescal.cli import main
from bayescal.runs import RunFolderError, RunWriter, load_run

VERDICTS = Path(__file__).parent / "data" / "verdicts.csv"
FIT = ["fit", "judge-discrimination-btl"]


def _fit(out: Path, *more: str, file: Path = VERDICTS) -> int:
    return main([*FIT, str(file), "--method", "mle", "--out", str(out), *more])


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run"
    assert _fit(out, "--seed", "7") == 0
    return out


def test_run_json_records_what_the_run_was(run_dir):
    """run.json: command and argv, versions, model, method, options, seed, the input with its
    SHA-256 and row count, warnings, created time, every file with its SHA-256."""
    run = load_run(run_dir)
    meta = run.meta
    assert meta["command"] == "fit" and meta["argv"][:2] == FIT
    assert meta["model"] == "judge_discrimination_btl" and meta["method"] == "mle"
    assert meta["options"] == {"discrimination": True, "scale": "log", "ties": "half"}
    assert meta["seed"] == 7
    assert {"bayescal", "pymc", "numpy", "arviz", "python"} <= set(meta["versions"])
    (source,) = meta["inputs"]
    assert source["sha256"] == hashlib.sha256(VERDICTS.read_bytes()).hexdigest()
    assert source["rows"] == 900 and source["path"] == str(VERDICTS.resolve())
    assert meta["warnings"] == [] and datetime.fromisoformat(meta["created"]).tzinfo
    assert meta["covariance"] == {"information": "auto"}
    chosen = meta["info"]["covariance"]  # what auto became, and why
    assert chosen["information"] == "expected" and chosen["information_reason"]
    names = {p.name for p in run_dir.iterdir()} - {"run.json"}
    assert set(meta["files"]) == names
    for name, info in meta["files"].items():
        assert info["sha256"] == hashlib.sha256((run_dir / name).read_bytes()).hexdigest()
    assert run.result().method == "mle" and list(run.summary.index[:1]) == ["ability[claude-3.5]"]


def test_a_used_folder_is_refused_and_force_replaces_it_whole(tmp_path, capsys):
    """`fit --out` into a used folder replaced summary.csv and left the previous model's
    estimate.nc, leaderboard.csv and PNGs beside the new table. Now the folder is refused, and
    --force replaces the previous run whole: no file of the first run is left."""
    out = tmp_path / "run"
    assert main([*FIT, str(VERDICTS), "--method", "map", "--out", str(out)]) == 0
    first = (out / "run.json").read_bytes()
    capsys.readouterr()
    assert _fit(out) == 2
    assert "already holds files" in one_line(capsys) and (out / "run.json").read_bytes() == first
    assert main(["fit", "order-effect-btl", str(_ordered(tmp_path)), "--method", "mle",
                 "--out", str(out), "--force"]) == 0
    run = load_run(out)
    assert run.model == "order_effect_btl"
    assert not (out / "posterior.nc").exists() and not (out / "leaderboard.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def _ordered(folder: Path) -> Path:
    frame = pd.read_csv(VERDICTS)
    frame["order"] = [1 if i % 2 else -1 for i in range(len(frame))]
    path = folder / "ordered.csv"
    frame.to_csv(path, index=False)
    return path


def test_force_replaces_run_folders_only(tmp_path, capsys):
    """--force must not delete a folder of other files (a home directory, a data folder)."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    assert _fit(folder, "--force") == 2
    assert "not a bayescal run folder" in one_line(capsys)
    assert (folder / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("how", ["is-input", "holds-input", "link-to-folder", "file"])
def test_out_naming_an_input_is_refused(tmp_path, capsys, how):
    """`--out` replaced the scores CSV; with --force a folder holding the input would be
    deleted. Refused before any fit (paths resolved, symlinks included), the input intact."""
    data = tmp_path / "data"
    data.mkdir()
    source = data / "verdicts.csv"
    source.write_bytes(VERDICTS.read_bytes())
    (data / "run.json").write_text("{}")  # would pass for a run folder under --force
    link = tmp_path / "link"
    link.symlink_to(data)
    other = tmp_path / "other.txt"
    other.write_text("x")
    out = {"is-input": source, "holds-input": data, "link-to-folder": link,
           "file": other}[how]
    assert _fit(out, "--force", file=source) == 2
    line = one_line(capsys)
    assert ("is a file" if how == "file" else "input") in line, line
    assert source.read_bytes() == VERDICTS.read_bytes() and other.read_text() == "x"


def test_a_failed_run_leaves_the_destination_as_it_was(tmp_path, monkeypatch):
    """A failure after some files are written (here: saving the fit) leaves neither a partial
    folder nor a temporary sibling; a previous run under --force stays whole."""
    import bayescal.runs

    def broken(self, name, result, what):
        raise RuntimeError("disk full")

    monkeypatch.setattr(bayescal.runs.RunWriter, "result", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        _fit(tmp_path / "new")
    assert not (tmp_path / "new").exists()
    monkeypatch.undo()
    assert _fit(tmp_path / "old") == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()}
    monkeypatch.setattr(bayescal.runs.RunWriter, "result", broken)
    with pytest.raises(RuntimeError):
        main([*FIT, str(VERDICTS), "--method", "map", "--out", str(tmp_path / "old"),
              "--force"])
    assert {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "old"][1:]


def test_a_figure_that_fails_is_a_warning_not_a_lost_run(tmp_path, monkeypatch):
    import bayescal.runs

    def boom(*args, **kwargs):
        raise ValueError("cannot draw")

    file, needs, _ = bayescal.runs.FIGURES["forest"]
    monkeypatch.setitem(bayescal.runs.FIGURES, "forest", (file, needs, boom))
    assert _fit(tmp_path / "run") == 0
    run = load_run(tmp_path / "run")
    assert "forest.png" not in run.files and "leaderboard.png" in run.files
    assert any("forest.png was not written" in w["message"] for w in run.warnings)


@pytest.mark.parametrize("damage", ["edit", "extra", "missing", "truncated", "no-run-json"])
def test_load_run_refuses_a_folder_that_is_not_one_run(run_dir, tmp_path, damage):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    if damage == "edit":
        (copy / "summary.csv").write_text((copy / "summary.csv").read_text() + "\n")
    elif damage == "extra":
        (copy / "posterior.nc").write_bytes(b"from another run")
    elif damage == "missing":
        (copy / "leaderboard.csv").unlink()
    elif damage == "truncated":
        text = (copy / "run.json").read_text()
        (copy / "run.json").write_text(text[: len(text) // 2])
    else:
        (copy / "run.json").unlink()
    words = {"edit": "changed", "extra": "not part of its run", "missing": "missing",
             "truncated": "not valid JSON", "no-run-json": "not a run folder"}[damage]
    with pytest.raises(RunFolderError, match=words):
        load_run(copy)


def test_labels_come_back_as_text(tmp_path):
    """A run's tables are read with labels as text: "007", "7" and "NA" stay three items."""
    frame = pd.DataFrame({"item": ["007", "7", "NA"], "estimate": [1.0, float("nan"), 3.0]},
                         index=pd.Index(["ability[007]", "ability[7]", "ability[NA]"],
                                        name="term"))
    with RunWriter(tmp_path / "run") as writer:
        writer.table("leaderboard.csv", frame, "labels")
        writer.commit({"command": "test"})
    back = load_run(tmp_path / "run").leaderboard
    assert list(back["item"]) == ["007", "7", "NA"] and list(back.index) == list(frame.index)
    assert back["estimate"].isna().tolist() == [False, True, False]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["format"] == "bayescal-run"


def test_mean_out_is_a_run_and_refuses_its_input(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    pd.DataFrame({"human": [1] * 36 + [0] * 14 + [None] * 450,
                  "judge": [1] * 31 + [0] * 5 + [1] + [0] * 13 + [1] * 223 + [0] * 227}).to_csv(
        path, index=False)
    assert main(["mean", str(path), "--human", "human", "--judge", "judge", "--out",
                 str(path)]) == 2
    assert "input" in one_line(capsys)
    assert main(["mean", str(path), "--human", "human", "--judge", "judge", "--out",
                 str(tmp_path / "run"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    from bayescal.frequentist.judge_mean import METHODS

    assert doc["run"]["command"] == "mean" and len(doc["summary"]) == len(METHODS)  # one row each
    assert load_run(tmp_path / "run").meta["inputs"][0]["rows"] == 500
