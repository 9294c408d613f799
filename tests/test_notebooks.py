"""Every notebook (jupytext py:percent script) runs top to bottom in a real kernel.

Notebooks only call the library, so running them checks that the documented workflow works.
Sampling sizes are kept small through environment variables the notebooks read.

Running all six takes minutes (12-42 s each), so the executions are slow tests
(``pytest -m slow``, and ``tools/sync_notebooks.py --execute`` when a notebook changes). The fast
suite checks that each rendered ``.ipynb`` holds its script's cells, executed, with outputs and
without an error: a notebook whose pinned facts failed at its last execution cannot be shipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    nbclient = pytest.importorskip("nbclient")
    data = shared_data_dir()
    if data is None:
        pytest.skip("real datasets not found: set BAYESCAL_DATA")
    monkeypatch.setenv("BAYESCAL_DATA", str(data))
    monkeypatch.setenv("NOTEBOOK_OUT", str(tmp_path))
    monkeypatch.setenv("BAYESCAL_NB_DRAWS", os.environ.get("BAYESCAL_NB_DRAWS", "200"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = jupytext.read(path)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()


def _sources(path: Path) -> list[tuple[str, str]]:
    jupytext = pytest.importorskip("jupytext")
    return [(cell.cell_type, cell.source.strip()) for cell in jupytext.read(path).cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_has_an_executed_twin_with_the_same_cells(path):
    """The .ipynb that renders on the repository page shows this script's code, with outputs.

    Catches an edited script whose rendered notebook still shows the old code, a missing
    .ipynb, and an .ipynb committed without having been run (no outputs, no figures)."""
    twin = path.with_suffix(".ipynb")
    fix = f"run `python tools/sync_notebooks.py --execute {path.relative_to(path.parents[1])}`"
    assert twin.exists(), f"{twin.name} is missing: {fix}"
    assert _sources(path) == _sources(twin), f"{twin.name} differs from {path.name}: {fix}"
    import json

    cells = json.loads(twin.read_text())["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert outputs, f"{twin.name} has no outputs: {fix}"
    assert not any(o.get("output_type") == "error" for o in outputs), f"{twin.name} failed: {fix}"
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    if "plt." in path.read_text() or "bc.plots" in path.read_text():
        assert images, f"{twin.name} shows no figure inline: {fix}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_rendered_notebook_shows_no_sampler_failure_or_machine_path(path):
    """The rendered notebook is what users read: a NUTS run printed with failed diagnostics
    (its intervals not earned) or a warning carrying the executing machine's file paths must
    not be shipped."""
    import json

    twin = path.with_suffix(".ipynb")
    if not twin.exists():
        pytest.skip(f"{twin.name} is missing (checked by the pairing test)")
    text = "".join(
        "".join(o.get("text", ""))
        for c in json.loads(twin.read_text())["cells"] if c["cell_type"] == "code"
        for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert "sampler diagnostics failed" not in text, twin.name
    assert "site-packages" not in text and "ipykernel_" not in text, twin.name
