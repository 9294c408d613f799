"""Simulation-based calibration in CI: validation/sbc.py --quick --check.

Bugs this catches: a PyMC model whose log-likelihood is scaled wrongly relative to the simulator
(the ``loglik_x2`` mutation fits every count and win doubled, i.e. twice the log-likelihood) or
whose prior scale differs from the one the data were drawn with (``prior_sd_x2``). The check
fails unless the right model is judged calibrated AND both mutations are rejected; thresholds are
χ² quantiles at α = 0.01 / (number of quantities), fixed seeds (the runner's), 50 prior draws.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_sbc_quick_passes_the_right_model_and_rejects_mutations() -> None:
    pytest.importorskip("nutpie")
    proc = subprocess.run([sys.executable, str(ROOT / "validation" / "sbc.py"), "--quick",
                           "--check"], capture_output=True, text=True, timeout=400, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "CHECK FAILED" not in out
    lines = [ln for ln in out.splitlines() if ln.startswith("judge_discrimination_btl")]
    verdicts = {ln.split()[1]: ln.rstrip().endswith("NOT calibrated") for ln in lines
                if ln.rstrip().endswith("calibrated")}
    assert verdicts == {"none": False, "loglik_x2": True, "prior_sd_x2": True}, out[-3000:]
