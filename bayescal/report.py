"""One page per run: ``bayescal report RUN_DIR`` (and ``bayescal fit ... --report``).

The report is the page a team sends round. It is built from a run folder only (what
:func:`bayescal.runs.load_run` reads and checks), never from objects in memory, so the page
shows exactly what the run wrote: the data summary and inputs, the leaderboard with its
intervals and rank intervals, the judges table (discriminations, order effects, the calibration
weight λ), the sampler diagnostics, every warning and note, the model's other tables, and the
figures inline.

Two files are written into the run folder and listed in its ``run.json`` (with their SHA-256,
like every other file of the run, so :func:`~bayescal.runs.load_run` still checks the whole
folder):

* ``report.html``: one self-contained page (figures embedded as ``data:`` URIs, styles inline,
  no script, nothing fetched from the network), rendered from a Jinja2 template with
  autoescaping on, so a label such as ``<b>`` or ``a & b`` is shown as typed;
* ``report.md``: the same content as Markdown (figures referenced by file name, beside it).

Both are written atomically (temporary file, fsync, rename), and ``run.json`` last, so an
interrupted report leaves the run as it was.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bayescal.runs import RUN_JSON, Run, RunFolderError, jsonable, load_run, sha256, write_atomic

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPORT_FILES", "render", "write_report"]

#: The files a report adds to a run folder.
REPORT_FILES = {"report.html": "the run's report: one self-contained HTML page",
                "report.md": "the run's report as Markdown (figures beside it)"}

# Tables shown in their own sections, in this order; any other table of the run is listed
# after them under "Other tables".
_SECTIONS = ("leaderboard", "judges", "diagnostics")
_HIDDEN = {"summary"}  # the full interval table is shown last, folded
_TITLES = {
    "order_effect_tests": "Tests of the order effects (Wald; Holm within each family)",
    "gacv": "GACV over the LLM weight λ",
    "baselines": "DIAL's baselines: human scores of every method",
    "baseline_methods": "The baselines' λ and notes",
}


@dataclass
class _Table:
    """A table as text cells, ready for either template."""

    title: str
    what: str
    columns: list[str]
    rows: list[list[str]]
    flags: list[bool] = field(default_factory=list)  # a row to highlight (a failed check)


def _text(value: Any, digits: int) -> str:
    import math

    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == int(value) and abs(value) < 1e15 and digits == 0:
            return f"{value:.0f}"
        return f"{value:.{digits}g}" if abs(value) >= 1e5 or (0 < abs(value) < 1e-3) \
            else f"{value:.{digits}f}"
    return str(value)


def _table(frame: pd.DataFrame, title: str, what: str, digits: int = 3,
           flag: str | None = None) -> _Table:
    import pandas as pd

    frame = frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame
    columns = [str(c) for c in frame.columns]
    rows = [[_text(v.item() if hasattr(v, "item") else v, digits) for v in row]
            for row in frame.itertuples(index=False, name=None)]
    flags = ([not bool(v) for v in frame[flag]] if flag is not None and flag in frame
             else [False] * len(rows))
    return _Table(title, what, columns, rows, flags)


def _leaderboard(run: Run) -> _Table | None:
    from bayescal.tables import format_leaderboard

    board = run.leaderboard
    if board is None:
        return None
    scale = str(board["scale"].iloc[0]) if "scale" in board and len(board) else "logit"
    view = format_leaderboard(board.reset_index(drop=board.index.name is None)
                              .drop(columns="scale", errors="ignore"),
                              digits=0 if scale == "elo" else 3)
    prob = run.meta.get("prob")
    level = f"{prob:.0%} " if isinstance(prob, float) else ""
    what = (f"Items best first: estimate [{level}interval] and rank [{level}interval], 1 = best"
            + (" (Elo display scale: 1000 + 400/ln 10 per logit)" if scale == "elo" else ""))
    return _table(view, "Leaderboard", what)


def _facts(run: Run) -> list[tuple[str, str]]:
    meta = run.meta
    entry = run.entry
    facts = [("command", " ".join(["bayescal", *meta.get("argv", [])])),
             ("created (UTC)", str(meta.get("created", "")))]
    if entry is not None:
        facts.append(("model", f"{entry.title} ({entry.paper.cite()})"))
    if meta.get("method"):
        facts.append(("method", str(meta["method"]).upper()))
    elif run.methods:
        facts.append(("methods", ", ".join(m.upper() for m in run.methods)))
    if meta.get("data"):
        facts.append(("data", str(meta["data"])))
    names = {"prob": "interval probability", "seed": "seed", "scale": "display scale"}
    for key, label in names.items():
        if meta.get(key) is not None:
            facts.append((label, _text(meta[key], 2)))
    if meta.get("options"):
        facts.append(("options", ", ".join(f"{k}={v}" for k, v in meta["options"].items())))
    covariance = (meta.get("info") or {}).get("covariance") or {}
    if covariance:
        facts.append(("covariance", "; ".join(f"{k}: {v}" for k, v in covariance.items())))
    if "llm_weight" in (meta.get("info") or {}):
        facts.append(("calibration weight λ", _text(meta["info"]["llm_weight"], 4)))
    if meta.get("sampling"):
        facts.append(("sampling", ", ".join(f"{k}={v}" for k, v in meta["sampling"].items())))
    versions = meta.get("versions") or {}
    facts.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    return facts


def _inputs(run: Run) -> _Table | None:
    import pandas as pd

    inputs = run.meta.get("inputs") or []
    if not inputs:
        return None
    frame = pd.DataFrame([{"role": i.get("role"), "file": i.get("name"), "rows": i.get("rows"),
                           "layout": i.get("layout", ""), "bytes": i.get("bytes"),
                           "SHA-256": str(i.get("sha256", ""))[:16] + "…"} for i in inputs])
    return _table(frame, "Inputs", "The files read (SHA-256 prefix; the full digest is in "
                  "run.json)", digits=0)


def _diagnostics(run: Run) -> tuple[_Table | None, bool]:
    table = run.table("diagnostics")
    if table is None:
        return None, True
    if "ok" in table:  # read back from CSV as text or as booleans
        table = table.assign(ok=table["ok"].astype(str).str.lower().isin(["true", "1", "yes"]))
    ok = bool(table["ok"].all()) if "ok" in table else True
    shown = _table(table, "Diagnostics", "R-hat, effective sample sizes and divergences of the "
                   "identified quantities (NUTS); a failed check is highlighted", digits=3,
                   flag="ok")
    return shown, ok


def _figures(run: Run) -> list[dict[str, str]]:
    out = []
    for path in run.figures:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        out.append({"name": path.name, "title": run.files[path.name],
                    "src": f"data:image/png;base64,{data}"})
    return out


def _context(run: Run) -> dict[str, Any]:
    entry = run.entry
    judges = run.judges
    others = []
    for name, what in run.files.items():
        stem = name[:-4]
        if not name.endswith(".csv") or stem in (*_SECTIONS, *_HIDDEN):
            continue
        frame = run.table(stem)
        if frame is not None:
            others.append(_table(frame, _TITLES.get(stem, stem.replace("_", " ").capitalize()),
                                 what, digits=4))
    diagnostics, diagnostics_ok = _diagnostics(run)
    title = (entry.title if entry is not None else run.command.capitalize())
    return {
        "title": f"bayescal report: {title}",
        "facts": _facts(run),
        "inputs": _inputs(run),
        "leaderboard": _leaderboard(run),
        "judges": None if judges is None else _table(
            judges, "Judges", run.files.get("judges.csv", "per-judge quantities"), digits=3),
        "diagnostics": diagnostics,
        "diagnostics_ok": diagnostics_ok,
        "warnings": [str(w.get("message", w)) if isinstance(w, Mapping) else str(w)
                     for w in run.warnings],
        "notes": [str(n) for n in run.meta.get("notes", [])],
        "others": others,
        "summary": _table(run.summary, "Every interval", run.files["summary.csv"], digits=4),
        "figures": _figures(run),
        "files": sorted(n for n in run.files if n not in REPORT_FILES),
    }


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("bayescal", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(run: Run | str | os.PathLike[str]) -> tuple[str, str]:
    """The report of a run folder as ``(html, markdown)``.

    Parameters
    ----------
    run : Run or path
        A run folder (read and checked with :func:`bayescal.runs.load_run`) or a loaded run.
    """
    run = run if isinstance(run, Run) else load_run(run)
    context = _context(run)
    env = _environment()
    env.filters["md"] = _md_cell
    html = env.get_template("report.html.j2").render(**context)
    markdown = env.get_template("report.md.j2").render(**context)
    return html, markdown


def write_report(run_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``report.html`` and ``report.md`` into a run folder and list them in its
    ``run.json``; a previous report of the same run is replaced.

    Returns the two paths. Raises :class:`~bayescal.runs.RunFolderError` for a folder that is
    not a whole, unchanged run (see :func:`~bayescal.runs.load_run`).
    """
    run = load_run(run_dir)
    html, markdown = render(run)
    folder = Path(run_dir)
    written = []
    meta = dict(run.meta)
    files = dict(meta["files"])
    for name, text in (("report.html", html), ("report.md", markdown)):
        path = folder / name
        write_atomic(path, text.encode("utf-8"))
        files[name] = {"what": REPORT_FILES[name], "sha256": sha256(path),
                       "bytes": path.stat().st_size}
        written.append(path)
    meta["files"] = files
    text = json.dumps(jsonable(meta), indent=2, allow_nan=False) + "\n"
    write_atomic(folder / RUN_JSON, text.encode())
    return written
