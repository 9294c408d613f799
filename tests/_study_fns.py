"""Module-level study functions for tests/test_studies.py (importable by spawned processes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def normal_means(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """Mean and SD of n normal draws; fails on purpose when the cell asks for it."""
    rng = np.random.default_rng(seed)
    x = rng.normal(cell["mu"], 1.0, size=cell["n"])
    if cell.get("fail_odd") and seed % 2 == 1:
        raise FloatingPointError(f"odd seed {seed}")
    return pd.DataFrame({"stat": ["mean", "sd"], "value": [x.mean(), x.std(ddof=1)]})


def fails_until_flag(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """Fails on odd seeds until the file ``cell["flag"]`` exists (a transient failure)."""
    from pathlib import Path

    if seed % 2 == 1 and not Path(cell["flag"]).exists():
        raise ConnectionError(f"transient failure at seed {seed}")
    return pd.DataFrame({"value": [float(seed % 97)]})
