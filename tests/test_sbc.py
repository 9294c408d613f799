"""Simulation-based calibration in CI: validation/sbc.py --check, every model in its small version.

Bugs this catches: a PyMC model whose log-likelihood and prior-predictive ``random`` functions
disagree, whose log-likelihood is counted the wrong number of times (the ``loglik_x2`` mutation
adds it once more through a Potential), or whose prior differs from the one the data were drawn
with (``prior_sd_x2``: data from the same model with every prior sd doubled); an SBC entry that
no longer builds or draws (its cells are "draws failed"); and a right model whose fits diverge in
more than 5 % of prior draws. The check fails unless every right model is judged calibrated AND
every mutation is rejected; thresholds are χ² quantiles at α = 0.01 / (number of quantities),
fixed seeds (the runner's).

Sizes. The default run checks every entry's right model and ``prior_sd_x2`` at 50 prior draws.
From the 130-draw rank counts, the exact multinomial power at the Bonferroni threshold of the
most shifted quantity alone is, at 50 draws, 0.87 (misclassification) to 0.996 (low-rank
judges), and a model is rejected when any quantity is; at 30 draws it is 0.61–0.93, so fewer
draws would leave no margin. ``loglik_x2`` needs about 130 draws (power 0.86 per
data-dominated quantity, 0.37 at 50), so it stays in the ``slow`` test, with
every mutation at 130 draws. Cost: compiling a model for nutpie is 2–12 s of CPU with a warm
compile cache and 15–50 s cold (low-rank judges the most: numba's type inference and LLVM over
some 500 functions), a fit 0.01–0.06 s, so the seven entries run as two processes side by side
(one compile per model per process) at numba's default optimisation. ``NUMBA_OPT=0`` was tried:
it saved no compile time measurably (cold low-rank compile 50 s against 53 s) and made the
score-calibration and low-rank fits ten times slower (0.55 s against 0.05 s a fit): the check
took 219 s in a full run then, 42 s alone now with a warm cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import checkout_env

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("judge_discrimination_btl", "order_effect_btl", "score_calibration",
          "misclassification", "misclassification_dependent", "low_rank_judges",
          "human_calibration_lambda0")
# two processes of about equal cost, with a warm or a cold compile cache (CPU at 50 draws,
# warm: low-rank judges 16 s, score calibration 13 s, the four smallest 27 s together, the
# item-effect misclassification model 35 s; a cold compile of low-rank judges alone is about
# 50 s, of score calibration 25 s, the item-effect model's 41 s with its 100 fits)
GROUPS = (("low_rank_judges", "score_calibration"),
          ("judge_discrimination_btl", "order_effect_btl", "misclassification",
           "misclassification_dependent", "human_calibration_lambda0"))
VERDICTS = ("NOT calibrated", "calibrated", "divergent", "draws failed")


def _check(groups: tuple[tuple[str, ...], ...], mutations: tuple[str, ...], draws: int,
           timeout: float) -> None:
    """Run ``sbc.py --check`` on each group of models, the groups in parallel processes."""
    pytest.importorskip("nutpie")
    env = checkout_env()
    procs = [subprocess.Popen([sys.executable, str(ROOT / "validation" / "sbc.py"), "--check",
                               "--draws", str(draws), "--models", ",".join(models),
                               "--mutations", ",".join(mutations)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env=env) for models in groups]
    outputs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            outputs.append((proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    verdicts = {}
    for models, (code, out, err) in zip(groups, outputs, strict=True):
        assert code == 0, out[-4000:] + err[-3000:]
        assert "CHECK FAILED" not in out
        for line in out.splitlines():
            words = line.split()
            if len(words) > 1 and words[0] in models:
                verdict = next((v for v in VERDICTS if line.rstrip().endswith(v)), None)
                if verdict is not None:
                    verdicts[(words[0], words[1])] = verdict
    expected = {(m, mu): "calibrated" if mu == "none" else "NOT calibrated"
                for models in groups for m in models for mu in mutations}
    assert verdicts == expected, "\n".join(o[1][-3000:] for o in outputs)


def test_groups_cover_every_model() -> None:
    """The parallel groups hold every SBC entry once (a model left out is a model unchecked)."""
    assert sorted(m for g in GROUPS for m in g) == sorted(MODELS)
    assert sorted(MODELS) == sorted(_sbc_module().ENTRIES)


def test_sbc_quick_every_model_passes_the_right_model_and_rejects_the_prior_mutation() -> None:
    """Every entry at 50 draws: right model calibrated with at most 5 % of its fits divergent,
    ``prior_sd_x2`` rejected (catches a prior or ``random`` function out of step with the
    log-density, an entry that no longer builds, fits that diverge). Seen to fail: the shared
    BTL kernel's ``random`` drawing wins with σ(η/2) instead of σ(η) (the judge-discrimination
    right model rejected, 4 of 6 quantities, p = 6e-13); the item-effect misclassification
    model's ``random`` drawing the item effect per judge, no dependence (its right model
    rejected on σ_0 and σ_1, p = 5e-7); the low-rank entry before its fixed pivot start ("draws
    failed": its design cannot be built)."""
    _check(GROUPS, ("none", "prior_sd_x2"), draws=50, timeout=600)


@pytest.mark.slow
def test_sbc_every_model_passes_the_right_model_and_rejects_both_mutations() -> None:
    """Every SBC entry at 130 draws: right model calibrated, both mutations rejected (catches a
    likelihood counted twice, a prior of the wrong scale, a model whose fits diverge)."""
    _check(GROUPS, ("none", "loglik_x2", "prior_sd_x2"), draws=130, timeout=3600)


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
