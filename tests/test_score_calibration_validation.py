"""``validation/score_calibration.py --quick`` runs on llm-rubric; its tables have their shape."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict:
    data = shared_data_dir()
    if data is None or not (data / "llm-rubric").is_dir():
        pytest.skip("llm-rubric not found: set BAYESCAL_DATA")
    spec = importlib.util.spec_from_file_location("validation_score_calibration",
                                                  ROOT / "validation" / "score_calibration.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("score_calibration")
    return module.run(["--quick", "--data", str(data), "--out", str(out)])


def test_quick_tables(quick: dict) -> None:
    t2 = quick["table2_final"]
    assert {"raw", "sqm", "sqm_upper", "sqm_predictive", "isotonic", "dawid_skene"} <= set(t2.index)
    assert t2.loc["raw", "mae_delta_pct"] == 0
    assert sorted(t2["rank"])[0] == 1
    uvm = quick["upper_vs_mid"]
    assert set(uvm["pair"]) == {"sqm vs sqm_upper", "sqm_predictive vs sqm_predictive_upper"}
    assert (uvm["groups"] == 3).all()
    assert list(quick["anchors_needed"].columns) == ["10%", "25%", "50%", "75%", "100%",
                                                     "early_stop"]
    small = quick["small_anchor_sets"]
    assert list(small.index) == [10, 20, 30, 50]
    assert small.notna().all().all()
    assert not quick["stopping"].empty and not quick["wilcoxon"].empty
    contrast = quick["cumulative_contrast"]
    assert (contrast["cumulative_mae"] > 0).all() and "sqm" in contrast.index


@pytest.mark.slow
def test_sets_study_quick() -> None:
    """``validation/score_calibration_sets.py --quick`` (80 data sets of 30 anchors): the MAP
    plug-in's randomised 80 % set is below its 99 % band of 0.8, the posterior predictive's holds
    it (the default-run test in test_score_calibration_sets.py checks the same on its own seed)."""
    spec = importlib.util.spec_from_file_location(
        "validation_score_calibration_sets", ROOT / "validation" / "score_calibration_sets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = module.run(["--quick"])
    plug = table.loc[(30, "MAP plug-in", "randomised")]
    post = table.loc[(30, "posterior predictive", "randomised")]
    assert plug["coverage"] + plug["band"] < 0.8
    assert abs(post["coverage"] - 0.8) < post["band"]
