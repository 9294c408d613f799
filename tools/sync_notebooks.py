"""Pair every jupytext script in notebooks/ with an executed .ipynb that renders on GitHub.

The ``.py`` (py:percent) is the source that is reviewed and edited; the ``.ipynb`` next to it
carries the same cells plus their outputs (tables and inline figures). ``tests/test_notebooks.py``
fails when the two disagree on any cell's source.

Run from the repository root::

    python tools/sync_notebooks.py --execute                 # run every notebook, write .ipynb
    python tools/sync_notebooks.py --execute notebooks/x.py  # just one
    python tools/sync_notebooks.py                           # copy edited sources into the
                                                             # .ipynb, keeping old outputs

Executing needs the real datasets (``BAYESCAL_DATA``, else a ``shared/data`` folder next to the
checkout) and the ``notebooks`` extra. Progress bars are switched off (``BAYESCAL_PROGRESS=0``)
so that outputs hold results, not bars; figures are embedded at ``--dpi`` (default 72) to keep the
files small.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def sources(path: Path) -> list[tuple[str, str]]:
    """(cell type, source) of every cell of a notebook file, .py or .ipynb."""
    import jupytext

    notebook = jupytext.read(path)
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


def _data_dir() -> str | None:
    env = os.environ.get("BAYESCAL_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared" / "data")
    found = next((p for p in candidates if p.is_dir()), None)
    return str(found) if found else None


def sync(script: Path, *, execute: bool, dpi: int, timeout: int) -> Path:
    """Write ``script``'s .ipynb twin (executed, or with the previous outputs kept)."""
    import jupytext
    from jupytext.combine import combine_inputs_with_outputs

    target = script.with_suffix(".ipynb")
    notebook = jupytext.read(script)
    if execute:
        import nbclient

        os.environ["BAYESCAL_PROGRESS"] = "0"
        os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend embeds the figures
        data = _data_dir()
        if data is not None:
            os.environ.setdefault("BAYESCAL_DATA", data)
        setup = jupytext.reads(
            f"%config InlineBackend.rc = {{'figure.dpi': {dpi}}}\n", fmt="py:percent")
        notebook.cells.insert(0, setup.cells[0])
        client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                         resources={"metadata": {"path": str(NOTEBOOKS)}})
        client.execute()
        notebook.cells.pop(0)
        for cell in notebook.cells:
            cell.get("metadata", {}).pop("execution", None)
    elif target.exists():
        notebook = combine_inputs_with_outputs(notebook, jupytext.read(target), fmt="py:percent")
    jupytext.write(notebook, target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scripts", nargs="*", type=Path,
                        help="notebooks/<stem>.py files (default: all)")
    parser.add_argument("--execute", action="store_true", help="run the notebooks")
    parser.add_argument("--dpi", type=int, default=72)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    args = parser.parse_args()
    scripts = args.scripts or sorted(NOTEBOOKS.glob("*.py"))
    for script in scripts:
        target = sync(script, execute=args.execute, dpi=args.dpi, timeout=args.timeout)
        size = target.stat().st_size / 1e6
        print(f"{script} -> {target.name} ({size:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
