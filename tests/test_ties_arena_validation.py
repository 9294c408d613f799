"""``validation/ties_arena.py`` in smoke size on Chatbot Arena: it runs and its rows keep
their order of widths."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]


def test_ties_arena_smoke():
    """Catches the script breaking, and the half-win expected-information interval not being
    wider than the half-win sandwich on tie-heavy data (its Bernoulli variance p(1-p) exceeds
    the verdicts' p(1-p) - t/4 for every model, whatever the bootstrap draws)."""
    data = shared_data_dir()
    if data is None or not (data / "ppr-chatbot-arena").is_dir():
        pytest.skip("ppr-chatbot-arena not found: set BAYESCAL_DATA")
    spec = importlib.util.spec_from_file_location("validation_ties_arena",
                                                  ROOT / "validation" / "ties_arena.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    ratios = module.run(["--data", str(data), "--models", "6", "--boot", "5"])
    assert set(ratios) == {"half-win expected", "half-win sandwich", "Davidson expected",
                           "Davidson sandwich"}
    assert all(r.shape == (6,) and np.all(np.isfinite(r)) for r in ratios.values())
    assert np.all(ratios["half-win expected"] > ratios["half-win sandwich"])
