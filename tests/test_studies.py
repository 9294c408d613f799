"""The study runner (bayescal.studies): determinism, resume, failures, progress, Dask.

Bugs these catch: seeds drawn from a shared generator in arrival order (tables then depend on the
number of workers or on a cluster's scheduling); a rerun that recomputes or duplicates finished
replicates; a raising replicate silently dropped; progress bars printed into CI logs; one out=
folder mixing two runs (another function, other cells, duplicated or surplus replicates).
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayescal import studies
from tests._study_fns import fails_until_flag, normal_means

CELLS = [{"mu": 0.0, "n": 20}, {"mu": 1.5, "n": 50}, {"mu": -2.0, "n": 5}]


def _study(name: str = "demo", reps: int = 7, cells: list | None = None) -> studies.Study:
    return studies.Study(name, cells or CELLS, reps, normal_means)


@pytest.fixture(scope="module")
def serial() -> pd.DataFrame:
    return studies.run(_study(), workers=1, chunk=3)


def test_table_layout_and_seed_rule(serial: pd.DataFrame) -> None:
    """Every (cell, replicate) is there once, in grid order, seeded by replicate_seed."""
    assert list(serial.columns[:5]) == ["mu", "n", "replicate", "seed", "error"]
    assert len(serial) == len(CELLS) * 7 * 2
    assert (serial["error"] == "").all()
    first = serial[(serial["mu"] == 1.5) & (serial["replicate"] == 4)]
    seed = studies.replicate_seed("demo", {"mu": 1.5, "n": 50}, 4)
    assert (first["seed"] == seed).all()
    x = np.random.default_rng(seed).normal(1.5, 1.0, size=50)
    assert first["value"].iloc[0] == x.mean()


def test_seeds_differ_across_study_cell_and_replicate() -> None:
    """A seed rule that ignored the name, the cell or the replicate would repeat datasets."""
    seeds = {studies.replicate_seed(name, c, r) for name in ("a", "b") for c in CELLS
             for r in range(50)}
    assert len(seeds) == 2 * len(CELLS) * 50
    # key order of a cell does not matter; its values do
    assert studies.replicate_seed("a", {"n": 20, "mu": 0.0}, 0) == \
        studies.replicate_seed("a", {"mu": 0.0, "n": 20}, 0)


def test_processes_and_chunking_give_identical_tables(serial: pd.DataFrame) -> None:
    """Two spawned processes with another block size reproduce the in-process table bit for bit."""
    parallel = studies.run(_study(), workers=2, chunk=2)
    pd.testing.assert_frame_equal(parallel, serial, check_exact=True)


def test_failures_are_rows_with_their_error() -> None:
    cells = [{"mu": 0.0, "n": 10, "fail_odd": True}]
    table = studies.run(_study("fails", 12, cells), workers=1)
    odd = table["seed"] % 2 == 1
    assert odd.any() and (~odd).any()
    assert table.loc[odd, "error"].str.startswith("FloatingPointError: odd seed").all()
    assert table.loc[odd, "value"].isna().all()
    assert (table.loc[~odd, "error"] == "").all()
    assert sorted(set(table["replicate"])) == list(range(12))  # none dropped


def test_resume_runs_only_what_is_missing(tmp_path: Path, serial: pd.DataFrame) -> None:
    """Kill a run half-way (drop some parts): the rerun computes only the missing replicates."""
    info = studies.RunInfo()
    first = studies.run(_study(), workers=1, chunk=3, out=tmp_path, info=info)
    pd.testing.assert_frame_equal(first, serial, check_exact=True)
    assert info.ran == 21 and info.resumed == 0
    parts = sorted((tmp_path / "demo").glob("part-*.parquet"))
    assert len(parts) == 9  # 3 cells × blocks of 3, 3, 1
    for p in parts[::2]:
        p.unlink()
    info = studies.RunInfo()
    again = studies.run(_study(), workers=1, chunk=3, out=tmp_path, info=info)
    assert 0 < info.ran < 21 and info.ran + info.resumed == 21
    pd.testing.assert_frame_equal(again, serial, check_exact=True)
    info = studies.RunInfo()
    studies.run(_study(), workers=1, out=tmp_path, info=info)
    assert info.ran == 0 and info.resumed == 21


def test_foreign_parts_are_refused(tmp_path: Path) -> None:
    studies.run(_study(), workers=1, out=tmp_path)
    other = studies.Study("demo", [{"mu": 9.0, "n": 3}], 2, normal_means)
    with pytest.raises(studies.StudyError, match="another study definition"):
        studies.run(other, workers=1, out=tmp_path)


def test_bad_definitions_are_refused() -> None:
    with pytest.raises(studies.StudyError, match="twice"):
        studies.Study("x", [{"a": 1}, {"a": 1}], 2, normal_means)
    with pytest.raises(studies.StudyError, match="reserved"):
        studies.Study("x", [{"seed": 1}], 2, normal_means)
    with pytest.raises(studies.StudyError, match="JSON scalar"):
        studies.Study("x", [{"a": [1, 2]}], 2, normal_means)


def test_progress_is_off_under_pytest(capsys: pytest.CaptureFixture[str]) -> None:
    studies.run(_study("quiet", 2), workers=1)
    assert capsys.readouterr().err == ""
    studies.run(_study("loud", 2), workers=1, progress=True)
    assert "loud: 6/6 replicates" in capsys.readouterr().err


def test_local_dask_cluster_gives_identical_table(serial: pd.DataFrame) -> None:
    """A 2-worker distributed.LocalCluster reproduces the local table bit for bit."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = studies.run(_study(), scheduler=client, chunk=2)
        by_address = studies.run(_study(), scheduler=cluster.scheduler_address, chunk=4)
    pd.testing.assert_frame_equal(on_dask, serial, check_exact=True)
    pd.testing.assert_frame_equal(by_address, serial, check_exact=True)


# ---------------------------------------------------------------- one folder, one study (issue 15.7)
def test_exactly_the_replicates_asked_for(tmp_path: Path, serial: pd.DataFrame) -> None:
    """replicates=4 on a folder of a 7-replicate run returns replicates 0-3 only, and a larger
    count computes only the new ones. Bug caught (the runner before the manifest): every part
    of the folder was returned, replicates 0-6 for a 4-replicate study."""
    studies.run(_study(), workers=1, chunk=3, out=tmp_path)
    info = studies.RunInfo()
    four = studies.run(_study(reps=4), workers=1, out=tmp_path, info=info)
    assert sorted(set(four["replicate"])) == [0, 1, 2, 3]
    assert info.ran == 0 and info.resumed == 12
    pd.testing.assert_frame_equal(four, studies.run(_study(reps=4), workers=1), check_exact=True)
    fresh = tmp_path / "grow"
    studies.run(_study(reps=4), workers=1, out=fresh)
    info = studies.RunInfo()
    seven = studies.run(_study(), workers=1, chunk=2, out=fresh, info=info)
    assert info.ran == 3 * 3 and info.resumed == 3 * 4
    pd.testing.assert_frame_equal(seven, serial, check_exact=True)
    manifest = json.loads((fresh / "demo" / "manifest.json").read_text())
    assert manifest["replicates"] == 7 and manifest["chunk"] == 2
    assert manifest["identity"]["fn"]["qualname"] == "normal_means"
    assert manifest["identity"]["fn"]["module"] == "tests._study_fns"
    assert len(manifest["identity"]["cells"]) == 3 and manifest["identity"]["seed_rule"]


def test_two_runs_in_one_folder_never_duplicate(tmp_path: Path, serial: pd.DataFrame) -> None:
    """Parts of two runs with different chunks over the same replicates (two runs writing into
    one folder at once, or a copied folder) are refused by name. Bug caught: both runs' rows
    were concatenated, every replicate of the overlap returned twice."""
    studies.run(_study(), workers=1, chunk=3, out=tmp_path / "a")
    studies.run(_study(), workers=1, chunk=2, out=tmp_path / "b")
    for part in (tmp_path / "b" / "demo").glob("part-*.parquet"):
        shutil.copy(part, tmp_path / "a" / "demo" / part.name)
    with pytest.raises(studies.StudyError, match=r"in two parts, part-.*\.parquet and part-"):
        studies.run(_study(), workers=1, out=tmp_path / "a")


def test_a_changed_function_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same module and name with another body: the old parts are not reused. Bug caught:
    the rerun returned the old function's rows as the new function's."""
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "study_fn_changing.py"
    body = ("import pandas as pd\n\ndef stat(cell, seed):\n"
            "    return pd.DataFrame({{'value': [{}]}})\n")
    source.write_text(body.format("1.0"))
    mod = importlib.import_module("study_fn_changing")
    out = tmp_path / "out"
    first = studies.run(studies.Study("s", CELLS, 2, mod.stat), workers=1, out=out)
    assert (first["value"] == 1.0).all()
    source.write_text(body.format("2.0"))
    mod = importlib.reload(mod)
    with pytest.raises(studies.StudyError, match=r"function source sha256 .*changed.*fresh out=.*"
                       "overwrite=True"):
        studies.run(studies.Study("s", CELLS, 2, mod.stat), workers=1, out=out)
    again = studies.run(studies.Study("s", CELLS, 2, mod.stat), workers=1, out=out,
                        overwrite=True)
    assert (again["value"] == 2.0).all()
    with pytest.raises(studies.StudyError, match=r"cells: not in this study.*new"):
        studies.run(studies.Study("s", CELLS[:2] + [{"mu": 9.0, "n": 3}], 2, mod.stat),
                    workers=1, out=out)


def test_parts_without_a_manifest_or_of_another_manifest_are_refused(tmp_path: Path) -> None:
    """A part the runner did not write for this manifest (a plain Parquet file, a folder of an
    older runner) is refused, never read as this study's replicates."""
    studies.run(_study(), workers=1, out=tmp_path)
    folder = tmp_path / "demo"
    part = sorted(folder.glob("part-*.parquet"))[0]
    pd.read_parquet(part).to_parquet(part, index=False)  # same rows, no study digest
    with pytest.raises(studies.StudyError, match=f"{part.name} is not a part of this study"):
        studies.run(_study(), workers=1, out=tmp_path)
    (folder / "manifest.json").unlink()
    with pytest.raises(studies.StudyError, match="no manifest.json"):
        studies.run(_study(), workers=1, out=tmp_path)


def test_a_damaged_part_is_named(tmp_path: Path, serial: pd.DataFrame) -> None:
    """A truncated Parquet part raises a StudyError naming the file to remove, and removing it
    recomputes only its replicates. Bug caught: a raw pyarrow ArrowInvalid with no file name."""
    studies.run(_study(), workers=1, chunk=3, out=tmp_path)
    part = sorted((tmp_path / "demo").glob("part-*.parquet"))[1]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    with pytest.raises(studies.StudyError, match=f"part .*{part.name} cannot be read.*Remove"):
        studies.run(_study(), workers=1, out=tmp_path)
    part.unlink()
    info = studies.RunInfo()
    again = studies.run(_study(), workers=1, chunk=3, out=tmp_path, info=info)
    assert info.ran == 3
    pd.testing.assert_frame_equal(again, serial, check_exact=True)


def test_errors_are_retried_on_request(tmp_path: Path) -> None:
    """retry_errors=True runs the failed replicates again and only those; without it they stay
    recorded. Bug caught: errored replicates were never retried (a transient failure stayed in
    the table for good)."""
    flag = tmp_path / "fixed"
    study = studies.Study("flaky", [{"flag": str(flag)}], 10, fails_until_flag)
    first = studies.run(study, workers=1, chunk=4, out=tmp_path)
    failed = set(first.loc[first["error"] != "", "replicate"])
    assert failed and len(failed) < 10
    flag.touch()
    info = studies.RunInfo()
    kept = studies.run(study, workers=1, out=tmp_path, info=info)
    assert info.ran == 0 and set(kept.loc[kept["error"] != "", "replicate"]) == failed
    info = studies.RunInfo()
    retried = studies.run(study, workers=1, chunk=4, out=tmp_path, retry_errors=True, info=info)
    assert info.ran == len(failed) and info.resumed == 10 - len(failed)
    assert (retried["error"] == "").all() and list(retried["replicate"]) == list(range(10))
    pd.testing.assert_frame_equal(retried, studies.run(study, workers=1), check_exact=True)
