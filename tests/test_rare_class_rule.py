"""validation/rare_class_rule.py: the study that chose the rare-outcome flag of judge_mean.estimate.

Its quick run (three cells, R = 2000) must show what the full run found: the former count rule
(fewer than 10 items of the rarer human class) is silent in most replicates of a cell where PPI
under-covers with about 10 such items, and the table's rule flags them; where every row holds,
nothing is flagged. The study's flags are the table's.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from bayescal.data import Labels
from bayescal.frequentist import judge_mean as jm
from bayescal.schema import wald_interval

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> ModuleType:
    key = f"validation_{name}"
    if key not in sys.modules:
        path = ROOT / "validation" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(key, path)
        assert spec is not None and spec.loader is not None
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


@pytest.fixture(scope="module")
def study() -> ModuleType:
    return _load("rare_class_rule")


@pytest.fixture(scope="module")
def quick(study: ModuleType) -> dict:
    return study.run(["--quick"])


def _cell(table, theta, q, m, method, rule):
    sel = ((table["theta"] == theta) & (table["q0"] == q) & (table["m"] == m)
           & (table["method"] == method) & (table["rule"] == rule))
    assert sel.sum() == 1
    return table[sel].iloc[0]


def test_quick_run_flags_the_failing_cell_that_the_count_rule_missed(study, quick):
    """θ = 0.1, q = 0.6, m = 100 (about 10 items with Y = 1): PPI's coverage is below the band
    (0.913 at R = 5000 in the full run, 7 band-sd below at R = 2000), the count rule flags
    about 45 % of replicates, the table's rule (``ssj``) at least 90 %; at θ = 0.3, q = 0.8,
    m = 200 every row holds and the rule flags none; PPI's natural-scale Wald reference row
    holds in the first cell (there the logit interval's shape is what fails). Catches: a verdict
    band from the wrong R or of the wrong sign, the rule reverted to the count (seen to fail),
    and a reference row that reads the logit interval."""
    table = quick["table"]
    # every row under every rule, and the plain-Wald PPI reference row (bayes: skipped in quick)
    assert len(table) == len(study.QUICK_CELLS) * (len(study.ROWS) * len(study.RULES) + 1)
    plain = _cell(table, 0.1, 0.6, 100, "ppi_plain_wald", "")
    assert plain["verdict"] == "holds"  # the symmetric-residual cell: the logit shape fails
    ppi = _cell(table, 0.1, 0.6, 100, "ppi", "ssj")
    assert ppi["verdict"] == "under" and ppi["flagged"] >= study.FLAG_TARGET
    assert _cell(table, 0.1, 0.6, 100, "ppi", "count<10")["flagged"] < 0.6
    for method in study.ROWS:
        row = _cell(table, 0.3, 0.8, 200, method, "ssj")
        assert row["flagged"] == 0.0 and row["verdict"] in ("holds", "over"), method
    band = 3 * np.sqrt(0.95 * 0.05 / table["reps"])
    low = table["coverage"] < 0.95 - band
    assert (table.loc[low, "verdict"] == "under").all()
    assert (table.loc[~low, "verdict"] != "under").all()
    summary = quick["summary"]
    chosen = summary[(summary["rule"] == "ssj") & (summary["method"] == "ppi")].iloc[0]
    assert chosen["failing"] == 2 and chosen["failing_under_target"] == 0


def test_study_flags_are_the_tables_notes(study):
    """The study's ``ssj`` flag, computed on counts, is whether ``estimate`` prints the
    rare-outcome note on the same data. Catches: a study that measures a rule the table does
    not apply (another threshold, the other class, the test set's labels)."""
    rng = np.random.default_rng(4)
    cell = {"theta": 0.2, "q0": 0.8, "q1": 0.8, "m": 100, "n": 1900, "theta_test": 0.2,
            "labelling": "fixed"}
    counts = study._battery.draw_counts(rng, cell, 40)
    res = jm.binary_from_counts(counts, 0.95, methods=["ppi"])["ppi"]
    flagged = study.flags(counts, res)["ssj"]
    assert 0 < flagged.sum() < len(flagged)  # both kinds of replicate are checked
    for c, f in zip(counts, flagged, strict=True):
        n11, n10, n01, n00, t1, t0 = (int(v) for v in c)
        lab = Labels.from_arrays(np.repeat([1.0, 1.0, 0.0, 0.0], [n11, n10, n01, n00]),
                                 np.repeat([1.0, 0.0, 1.0, 0.0], [n11, n10, n01, n00]),
                                 np.repeat([1.0, 0.0], [t1, t0]))
        note = jm.estimate(lab, methods=["ppi"]).loc["ppi", "note"]
        assert ("rare outcome" in note) == bool(f)


def test_candidate_statistics_by_hand(study):
    """The interval statistics on one hand-made row: θ̂ = 0.1, SE = 0.05 is 2 SE from 0
    (``edge<3`` flags it) and its logit-Wald interval reaches (U − θ̂)/(θ̂ − L) times further up
    than down, computed here from the interval itself. Catches: the distance to the far
    boundary, and the lopsidedness ratio inverted or measured on the logit scale."""
    lower, upper = wald_interval(0.1, 0.05, 0.95, "wald-logit")
    ratio = (upper - 0.1) / (0.1 - lower)
    row = {"estimate": np.array([0.1, 0.5]), "se": np.array([0.05, 0.05]),
           "lower": np.array([lower, 0.4]), "upper": np.array([upper, 0.6])}
    counts = np.array([[5, 5, 5, 85, 900, 1000], [40, 10, 10, 40, 900, 1000]])
    out = study.flags(counts, row)
    assert out["edge<3"].tolist() == [True, False]
    assert out["lopsided>2"].tolist() == [ratio > 2, False]
    assert out["count<10"].tolist() == [False, False] and out["count<15"].tolist() == [True, False]
    # PPI's residual Y − Ŷ is +1 in N10 = 5 and −1 in N01 = 5 items of 100: symmetric
    assert study._residual_skewness(counts)[0] == pytest.approx(0.0, abs=1e-12)
