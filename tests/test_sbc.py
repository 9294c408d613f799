"""Simulation-based calibration in CI: validation/sbc.py --quick --check.

Bugs this catches: a PyMC model whose log-likelihood and prior-predictive ``random`` functions
disagree, whose log-likelihood is counted the wrong number of times (the ``loglik_x2`` mutation
adds it once more through a Potential), or whose prior differs from the one the data were drawn
with (``prior_sd_x2``: data from the same model with every prior sd doubled); and a right model
whose fits diverge in more than 5 % of prior draws. The check fails unless every right model is
judged calibrated AND every mutation is rejected; thresholds are χ² quantiles at
α = 0.01 / (number of quantities), fixed seeds (the runner's).

Sizes, from the power argument in validation/sbc.py: ``loglik_x2`` needs about 130 prior draws
for power 0.9 per quantity, ``prior_sd_x2`` is rejected at 50 with p < 1e-7. Compiling one model
for nutpie takes 15–60 s on a shared 2-core machine, so the default run is the
judge-discrimination BTL's right model and ``prior_sd_x2`` at 50 draws (about 30 s); every model
with both mutations at 130 draws is the ``slow`` test (about 15 minutes on that machine).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("judge_discrimination_btl", "order_effect_btl", "score_calibration",
          "misclassification", "low_rank_judges", "human_calibration_lambda0")


def _check(models: tuple[str, ...], mutations: tuple[str, ...], draws: int,
           timeout: float) -> None:
    pytest.importorskip("nutpie")
    proc = subprocess.run([sys.executable, str(ROOT / "validation" / "sbc.py"), "--check",
                           "--draws", str(draws), "--models", ",".join(models),
                           "--mutations", ",".join(mutations)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:] + proc.stderr[-3000:]
    assert "CHECK FAILED" not in out
    verdicts = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) > 1 and words[0] in models:
            verdict = next((v for v in ("NOT calibrated", "calibrated", "divergent")
                            if line.rstrip().endswith(v)), None)
            if verdict is not None:
                verdicts[(words[0], words[1])] = verdict
    expected = {(m, mu): "calibrated" if mu == "none" else "NOT calibrated"
                for m in models for mu in mutations}
    assert verdicts == expected, out[-3000:]


def test_sbc_quick_btl_passes_the_right_model_and_rejects_the_prior_mutation() -> None:
    """The judge-discrimination BTL at 50 draws: right model calibrated, ``prior_sd_x2``
    rejected (catches a prior or ``random`` function out of step with the log-density)."""
    _check(MODELS[:1], ("none", "prior_sd_x2"), draws=50, timeout=400)


@pytest.mark.slow
def test_sbc_every_model_passes_the_right_model_and_rejects_both_mutations() -> None:
    """Every SBC entry at 130 draws: right model calibrated, both mutations rejected (catches a
    likelihood counted twice, a prior of the wrong scale, a model whose fits diverge)."""
    _check(MODELS, ("none", "loglik_x2", "prior_sd_x2"), draws=130, timeout=3600)


def _sbc_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("sbc", ROOT / "validation" / "sbc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sbc", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("divergent", "expected"), [(2, "calibrated"), (3, "divergent")])
def test_sbc_verdict_fails_a_right_model_whose_fits_diverge(divergent: int,
                                                            expected: str) -> None:
    """Perfectly uniform ranks over 50 draws, ``divergent`` of them with a divergence: 2 (4 %)
    passes, 3 (6 %) is over the 5 % rule and fails the right model, not a mutated cell.
    Catches divergences reported but not counted (the verdict read from the ranks only)."""
    import pandas as pd

    sbc = _sbc_module()
    rows = [{"model": "m", "mutation": mutation, "replicate": r, "error": "",
             "quantity": "x[0]", "rank": 2 * r, "divergences": int(r < divergent)}
            for mutation in ("none", "prior_sd_x2") for r in range(50)]
    table = pd.DataFrame(rows)
    tests = sbc.uniformity(table, "tails", 0.01)
    assert tests["chi2"].max() == 0.0  # ranks 0, 2, .., 98: exactly the expected bin counts
    summary = sbc.verdicts(tests, table).set_index("mutation")
    assert summary.loc["none", "divergent_draws"] == divergent
    assert summary.loc["none", "verdict"] == expected
    assert summary.loc["prior_sd_x2", "verdict"] == "calibrated"


def test_sbc_check_fails_a_model_whose_prior_draws_fail() -> None:
    """Model "m" raises in every prior draw (as the low-rank entry did when its design could not
    be built), model "k" is perfect. Catches a model silently missing from the verdicts (only
    cells with ranks were judged, so ``--check`` passed without it) and a failed mutated cell
    counted as a mutation caught."""
    import pandas as pd

    sbc = _sbc_module()
    rows = [{"model": "k", "mutation": mutation, "replicate": r, "error": "",
             "quantity": "x[0]", "rank": 2 * r, "divergences": 0}
            for mutation in ("none", "prior_sd_x2") for r in range(50)]
    rows += [{"model": "m", "mutation": mutation, "replicate": r,
              "error": "IdentificationError: no consensus"}
             for mutation in ("none", "prior_sd_x2") for r in range(50)]
    table = pd.DataFrame(rows)
    summary = sbc.verdicts(sbc.uniformity(table, "tails", 0.01), table)
    verdict = summary.set_index(["model", "mutation"])["verdict"]
    assert verdict[("m", "none")] == verdict[("m", "prior_sd_x2")] == "draws failed"
    assert summary.set_index(["model", "mutation"]).loc[("m", "none"), "failed_draws"] == 50
    # k's right model passes, its unrejected mutation and both of m's cells fail the check
    assert set(map(tuple, sbc.failures(summary)[["model", "mutation"]].to_numpy())) == {
        ("k", "prior_sd_x2"), ("m", "none"), ("m", "prior_sd_x2")}
