"""What an interactive user meets first: a fast import, a fast --help, progress bars only when
someone is watching. The timings themselves are printed by bench/interactive.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bayescal.progress import interactive

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_import_and_help_load_neither_pandas_nor_pymc():
    """Catches an eager import added to bayescal/__init__.py or bayescal/cli.py, which puts
    seconds on `bayescal --help` and on every frequentist-only script."""
    heavy = {"pandas", "scipy", "pymc", "arviz", "arviz_plots", "matplotlib"}
    assert not heavy & _modules_after("import bayescal, bayescal.cli")
    assert not heavy & _modules_after(
        "from bayescal.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")


def test_lazy_names_resolve_to_functions_not_modules():
    import bayescal as bc

    # importing the submodule must not replace the function bc.contrasts by the module
    import bayescal.contrasts

    assert callable(bc.contrasts) and callable(bc.leaderboard) and callable(bc.fit)
    assert bc.plots.__name__ == "bayescal.plots"
    with pytest.raises(AttributeError):
        bc.no_such_name  # noqa: B018


@pytest.mark.parametrize(("env", "expected"), [
    ({"BAYESCAL_PROGRESS": "1", "PYTEST_CURRENT_TEST": "x"}, True),
    ({"BAYESCAL_PROGRESS": "0"}, False),
    ({"CI": "true"}, False),
    ({"PYTEST_CURRENT_TEST": "x"}, False),
])
def test_progress_default_follows_the_environment(monkeypatch, env, expected):
    for name in ("BAYESCAL_PROGRESS", "CI", "PYTEST_CURRENT_TEST"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert interactive() is expected


def test_progress_in_a_terminal_but_not_in_a_pipe(monkeypatch):
    for name in ("BAYESCAL_PROGRESS", "CI", "PYTEST_CURRENT_TEST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)

    class Stream:
        def __init__(self, tty: bool):
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    monkeypatch.setattr(sys, "stderr", Stream(True))
    assert interactive() is True
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert interactive() is False


def test_every_cli_function_that_uses_pandas_imports_it():
    """cli.py imports pandas inside functions (so `bayescal --help` stays fast); a function that
    uses ``pd`` without its own import fails only when that command runs (as `demo --dial` did,
    whose test is slow-marked). Static check over every function of the module."""
    import ast

    import bayescal.cli

    tree = ast.parse(Path(bayescal.cli.__file__).read_text())
    missing = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        body = [n for stmt in node.body for n in ast.walk(stmt)]
        uses = any(isinstance(n, ast.Name) and n.id == "pd" for n in body)
        imports = any(isinstance(n, ast.Import) and any(a.asname == "pd" for a in n.names)
                      for n in body)
        if uses and not imports:
            missing.append(node.name)
    assert not missing, f"functions using pd without importing pandas: {missing}"
