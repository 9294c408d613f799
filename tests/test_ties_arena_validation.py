"""``validation/ties_arena.py`` in smoke size on Chatbot Arena: it runs and its rows keep
their order of widths."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import checkout_env, shared_data_dir

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


@pytest.mark.slow
def test_ties_posterior_quick():
    """``validation/ties_posterior.py --quick`` (four NUTS compiles: over a minute, so slow).
    Catches the script breaking and two wrong posteriors: a half-win NUTS posterior not wider
    than the half-win sandwich for every model (its Bernoulli curvature exceeds the tied
    verdicts' variance, as the Wald intervals above), and a Davidson posterior more than 20 %
    from the Davidson Wald interval (expected information, the same likelihood; at 600 draws
    the Monte Carlo error of a 95 % width is about 4 %)."""
    import subprocess

    data = shared_data_dir()
    if data is None or not (data / "ppr-chatbot-arena").is_dir():
        pytest.skip("ppr-chatbot-arena not found: set BAYESCAL_DATA")
    code = ("import sys, json; sys.path.insert(0, 'validation'); import ties_posterior as t; "
            f"out = t.run(['--data', {str(data)!r}, '--quick']); "
            "print(json.dumps({k: {m: list(v) for m, v in d.items()} for k, d in out.items()}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env=checkout_env(), check=True)
    import json

    out = {k: {m: np.array(v) for m, v in d.items()}
           for k, d in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
    assert set(out) == {f"{m} {t}" for m in ("judge_discrimination_btl", "order_effect_btl")
                        for t in ("half", "davidson")}
    for model in ("judge_discrimination_btl", "order_effect_btl"):
        half, dav = out[f"{model} half"], out[f"{model} davidson"]
        assert all(r.shape == (6,) and np.all(np.isfinite(r)) for r in (*half.values(),
                                                                        *dav.values()))
        assert np.all(half["posterior"] > half["wald"]), model
        ratio = dav["posterior"] / dav["wald"]
        assert np.all((ratio > 0.8) & (ratio < 1.25)), (model, ratio)
