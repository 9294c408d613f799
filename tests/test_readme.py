"""The README's quickstart runs as written, from the repository root."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_quickstart_runs(monkeypatch, capsys):
    """Catches a quickstart that uses an undefined name, a file that is not shipped, or an API
    that changed under it."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    blocks = _python_blocks((ROOT / "README.md").read_text())
    assert blocks, "README.md has no python block"
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short default run: diagnostics may warn
        exec(compile(blocks[0], "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "gpt-4o" in out and "ability[gpt-4o]" in out  # leaderboard and comparison printed
    assert {"post", "mode", "mle", "data"} <= set(namespace)
    plt.close("all")


def test_readme_input_table_names_every_from_frame_argument():
    from inspect import signature

    from bayescal.data import Comparisons

    text = (ROOT / "README.md").read_text()
    for name in signature(Comparisons.from_frame).parameters:
        if name not in {"cls", "df", "humans"}:
            assert f"`{name}" in text, name


@pytest.mark.parametrize("word", ["model_a", "tie", "order", "count", "cluster"])
def test_readme_documents_the_input_vocabulary(word):
    assert word in (ROOT / "README.md").read_text()
