"""Shared fixtures. PyTensor's compile cache lives outside the checkout so CI reuses it."""

from __future__ import annotations

import os
from pathlib import Path

if "base_compiledir" not in os.environ.get("PYTENSOR_FLAGS", ""):
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "bayescal-pytensor"
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    os.environ["PYTENSOR_FLAGS"] = ",".join(filter(None, [flags, f"base_compiledir={cache}"]))

import numpy as np
import pytest


def checkout_env() -> dict[str, str]:
    """The environment for a script run as a subprocess (``validation/*.py``, ``sbc.py``) with
    this checkout's bayescal first on its path: a script's own folder, not the checkout, heads
    its ``sys.path``, so without it a worktree's check runs whichever bayescal is installed
    (a broken kernel in the worktree then passed the SBC check)."""
    root = str(Path(__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))


def shared_data_dir() -> Path | None:
    """The real datasets: BAYESCAL_DATA, else a shared/data folder next to the checkout."""
    env = os.environ.get("BAYESCAL_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    return next((p for p in candidates if p.is_dir()), None)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's module name: deterministic and order-independent."""
    return np.random.default_rng(sum(map(ord, request.module.__name__)))
