"""Every notebook (jupytext py:percent script) runs top to bottom in a real kernel.

Notebooks only call the library, so running them checks that the documented workflow works.
Sampling sizes are kept small through environment variables the notebooks read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))


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
