"""When to show progress bars: in a terminal or a notebook, not under pytest or CI."""

from __future__ import annotations

import os
import sys

__all__ = ["interactive"]


def interactive() -> bool:
    """True when a person is likely watching: a terminal or a Jupyter kernel, not a test or CI.

    Used as the default of ``progressbar`` in :func:`bayescal.fit` and in the ``bayescal``
    command. ``BAYESCAL_PROGRESS=0`` or ``1`` decides outright; otherwise quiet when
    ``PYTEST_CURRENT_TEST`` or ``CI`` is set, or when standard error is neither a terminal nor a
    notebook's stream (a log file, a pipe).
    """
    forced = os.environ.get("BAYESCAL_PROGRESS", "").strip().lower()
    if forced in {"0", "1", "false", "true", "no", "yes"}:
        return forced in {"1", "true", "yes"}
    if os.environ.get("PYTEST_CURRENT_TEST") or os.environ.get("CI"):
        return False
    if "ipykernel" in sys.modules:
        # a notebook's stderr is no terminal, yet the bars render there
        return True
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())
