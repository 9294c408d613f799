"""Run folders: what one ``bayescal`` command writes, written whole, and read back checked.

A run folder (``RUN_DIR``, the ``--out`` of ``bayescal fit``, ``demo``, ``mean``) holds one run
and nothing else. Its layout (``ARCHITECTURE.md`` has the table):

* ``run.json``: the command and its arguments, bayescal's and its dependencies' versions, the
  model, method, options and seed, the input files with their SHA-256 and row counts, the
  warnings raised, the time, and every other file of the folder with its SHA-256;
* ``summary.csv``: the interval table (:mod:`bayescal.schema`) of every fit of the run;
* ``leaderboard.csv``, ``judges.csv``: the items ranked and the per-judge quantities, where the
  model has them (the registry's ``score`` and ``judge_parameters``);
* ``estimate.nc`` (an MLE), ``posterior.nc`` (MAP or NUTS; ``map.nc`` beside a NUTS posterior),
  the figures (``*.png``) and the model's own tables.

:class:`RunWriter` writes into a temporary sibling folder and renames it into place at the end,
so a failed or interrupted command leaves the destination as it was, and two runs' files never
mix. It refuses, before any fitting, a destination that holds files (unless ``force``, which
replaces a previous run whole) and one that is, or contains, an input file (paths compared
after resolving symlinks). :func:`load_run` reads a folder back as a :class:`Run`, refusing one
whose files are missing, changed since they were written, or not part of the run.
:func:`write_atomic` writes one file the same way (temporary file, fsync, rename).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas and xarray are imported where used: bayescal --help stays fast
    import pandas as pd

    from bayescal.registry import Entry

__all__ = ["FIGURES", "RUN_FORMAT", "RUN_VERSION", "Run", "RunFolderError", "RunWriter",
           "describe_input", "draw_figures", "jsonable", "load_run", "refuse_inputs",
           "sha256", "write_atomic"]

RUN_FORMAT = "bayescal-run"
RUN_VERSION = 1
RUN_JSON = "run.json"
#: The file that holds each method's result.
RESULT_FILES = {"mle": "estimate.nc", "map": "posterior.nc", "nuts": "posterior.nc"}


class RunFolderError(ValueError):
    """A destination that cannot take a run, or a run folder that cannot be read."""


# ---------------------------------------------------------------------------- paths
def sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe_input(path: str | os.PathLike[str], rows: int | None, role: str) -> dict[str, Any]:
    """What ``run.json`` records of an input file: path, SHA-256, size, row count, role."""
    p = Path(path)
    return {"role": role, "path": str(p.resolve()), "name": p.name, "sha256": sha256(p),
            "bytes": p.stat().st_size, "rows": rows}


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def refuse_inputs(path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]],
                  flag: str, *, folder: bool) -> None:
    """Refuse an output ``path`` that is an input file or (a folder) holds one.

    Paths are compared after resolving symlinks, so a link to an input, or a folder reached
    through one, is refused too.
    """
    target = Path(path).resolve()
    for given in inputs:
        source = Path(given).resolve()
        if source == target or (folder and _inside(source, target)):
            what = "is" if source == target else "holds"
            raise RunFolderError(f"{flag} {path} {what} the input {given}; write the output "
                                 "elsewhere (an input is never overwritten)")


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: a temporary file in the same folder,
    flushed to disk (fsync), renamed over ``path``, and the folder synced."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform without directory file descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def jsonable(value: Any) -> Any:
    """Plain JSON: NaN -> null, ±inf -> "inf"/"-inf", numpy scalars and arrays, paths, tuples."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy scalar or array
        return jsonable(value.tolist())
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return str(value)
    return str(value)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as JSON records, its index as the first field."""
    index = frame.index.name or "index"
    return [jsonable({index: i, **row}) for i, row in zip(
        frame.index, frame.to_dict(orient="records"), strict=True)]


# ---------------------------------------------------------------------------- writing
class RunWriter:
    """Collects a run's files in a temporary folder and puts them in place at the end.

    Parameters
    ----------
    out : path or None
        The run folder. None: nothing is written (the metadata is still assembled, for
        ``--json``).
    inputs : sequence of paths
        The command's input files: ``out`` may neither be one nor hold one.
    force : bool
        Replace a previous run in ``out`` (a folder with a ``run.json``; an empty folder is
        always accepted). Without it a folder holding files is refused. The old run is moved
        aside, the new one renamed in, and the old one deleted only then.
    flag : str
        The option that named ``out``, for messages.

    Use as a context manager: an exception inside discards the temporary folder.
    """

    def __init__(self, out: str | os.PathLike[str] | None, *, inputs: Sequence[Any] = (),
                 force: bool = False, flag: str = "--out") -> None:
        self.out = None if out is None else Path(out)
        self.flag, self.force = flag, force
        self.files: dict[str, str] = {}  # name -> what it holds
        self._tmp: Path | None = None
        if self.out is not None:
            self._check_destination(inputs)
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self._tmp = Path(tempfile.mkdtemp(dir=self.out.parent,
                                              prefix=f".{self.out.name}.partial-"))

    @property
    def active(self) -> bool:
        """Whether files are written (an ``out`` was given)."""
        return self._tmp is not None

    def _check_destination(self, inputs: Sequence[Any]) -> None:
        out = self.out
        assert out is not None
        refuse_inputs(out, inputs, self.flag, folder=True)
        if out.exists() and not out.is_dir():
            raise RunFolderError(f"{self.flag} {out} is a file; a run is written into a folder")
        if out.is_dir() and any(out.iterdir()):
            if not self.force:
                raise RunFolderError(
                    f"{self.flag} {out} already holds files; write the run into a new folder, "
                    "or pass --force to replace the previous run in it whole")
            if not (out / RUN_JSON).is_file():
                raise RunFolderError(
                    f"{self.flag} {out} holds files but is not a bayescal run folder (no "
                    f"{RUN_JSON}); --force replaces run folders only: choose another folder")

    def path(self, name: str, what: str) -> Path | None:
        """Where to write file ``name`` (None when nothing is written); recorded as ``what``."""
        if self._tmp is None:
            return None
        if name == RUN_JSON or "/" in name or name.startswith("."):
            raise ValueError(f"not a run file name: {name!r}")
        self.files[name] = what
        return self._tmp / name

    def table(self, name: str, frame: pd.DataFrame, what: str) -> None:
        """Write a CSV table (NaN as an empty field; the index unless it only numbers rows)."""
        import pandas as pd

        path = self.path(name, what)
        if path is not None:
            numbers = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
            frame.to_csv(path, index=not numbers)

    def result(self, name: str, result: Any, what: str) -> None:
        """Write a fit (an ``Estimate`` or a ``DataTree``) to netCDF."""
        path = self.path(name, what)
        if path is not None:
            result.to_netcdf(path)

    def commit(self, meta: Mapping[str, Any]) -> dict[str, Any]:
        """Write ``run.json`` (``meta`` plus format, version and the files with their
        SHA-256) and put the folder in place. Returns the metadata written."""
        files = {}
        if self._tmp is not None:
            for name, what in self.files.items():
                p = self._tmp / name
                if p.is_file():
                    files[name] = {"what": what, "sha256": sha256(p), "bytes": p.stat().st_size}
        full = {"format": RUN_FORMAT, "version": RUN_VERSION, **meta, "files": files}
        full = jsonable(full)
        if self._tmp is None:
            return full
        assert self.out is not None
        text = json.dumps(full, indent=2, allow_nan=False) + "\n"
        write_atomic(self._tmp / RUN_JSON, text.encode())
        self._put_in_place()
        return full

    def _put_in_place(self) -> None:
        out, tmp = self.out, self._tmp
        assert out is not None and tmp is not None
        old = None
        if out.is_dir() and any(out.iterdir()):
            self._check_destination(())  # still a run folder we may replace
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
            old.rmdir()
            os.replace(out, old)
        try:
            os.replace(tmp, out)  # over an empty folder, or into the free name
        except BaseException:
            if old is not None:
                os.replace(old, out)
            raise
        self._tmp = None
        _sync_folder(out.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        """Remove the temporary folder (nothing reaches ``out``)."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()  # after commit there is nothing left to discard


# ---------------------------------------------------------------------------- figures
def _forest(fits: Mapping[str, Any], entry: Entry | None, prob: float, sort_by: str,
            truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.forest(prob=prob, truth=truth, sort_by=sort_by, **fits)


def _leaderboard(fits: Mapping[str, Any], entry: Entry | None, prob: float, sort_by: str,
                 truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.leaderboard(prob=prob, truth=truth, sort_by=sort_by, scale=scale,
                             parameter=entry.score if entry and entry.score else "ability",
                             **fits)


def _win_probabilities(fits: Mapping[str, Any], entry: Entry | None, prob: float,
                       sort_by: str, truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.win_probability_heatmap(
        fits[sort_by], parameter=entry.score if entry and entry.score else "ability")


def _discriminations(fits: Mapping[str, Any], entry: Entry | None, prob: float, sort_by: str,
                     truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.discriminations(prob=prob, truth=truth, **fits)


def _order_effects(fits: Mapping[str, Any], entry: Entry | None, prob: float, sort_by: str,
                   truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.order_effects(prob=prob, truth=truth, **fits)


def _judge_loadings(fits: Mapping[str, Any], entry: Entry | None, prob: float, sort_by: str,
                    truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.judge_loadings(fits[sort_by], prob=prob)


def _calibration_map(fits: Mapping[str, Any], entry: Entry | None, prob: float, sort_by: str,
                     truth: Any, scale: str = "logit") -> Any:
    from bayescal import plots

    return plots.calibration_map(prob=prob, **fits)


#: Figure name -> (file, the variable it needs or None, how it is drawn). A model's figures are
#: the registry's ``figures``; one whose variable no fit has (order effects of a fit without
#: them) is left out.
FIGURES: Mapping[str, tuple[str, str | None, Callable[..., Any]]] = {
    "forest": ("forest.png", None, _forest),
    "leaderboard": ("leaderboard.png", "score", _leaderboard),
    "win_probabilities": ("win_probabilities.png", "score", _win_probabilities),
    "discriminations": ("discriminations.png", "discrimination", _discriminations),
    "judges": ("judges.png", None, _discriminations),  # every judge-indexed quantity
    "order_effects": ("order_effects.png", "order_effect", _order_effects),
    "judge_loadings": ("judge_loadings.png", "consensus_loading", _judge_loadings),
    "calibration_map": ("calibration_map.png", None, _calibration_map),
}


def _figure_of(obj: Any) -> Any:
    """The matplotlib Figure of a Figure or an arviz-plots PlotCollection."""
    viz = getattr(obj, "viz", None)
    return obj if viz is None else viz["figure"].item()


def literal_labels(figure: Any, labels: Iterable[str]) -> None:
    """Show data labels as typed: a text holding a label with ``$`` is not parsed as
    mathtext (``$5 model`` or ``a_$x^2$`` would otherwise fail to draw or be set as
    mathematics), while the figure's own mathematics (``$b_k$``) is kept."""
    from matplotlib.text import Text

    special = [lbl for lbl in labels if "$" in lbl]
    if not special:
        return
    for text in figure.findobj(Text):
        content = text.get_text()
        if any(lbl in content for lbl in special):
            text.set_parse_math(False)


def _variables(fit: Any) -> set[str]:
    import xarray as xr

    if isinstance(fit, xr.DataTree):
        return {str(v) for v in fit["posterior"].data_vars}
    return {str(v) for v in fit.params.data_vars}


def draw_figures(writer: RunWriter, names: Sequence[str], fits: Mapping[str, Any], *,
                 entry: Entry | None, prob: float, sort_by: str, labels: Iterable[str],
                 truth: Any = None, scale: str = "logit") -> list[str]:
    """Draw the figures ``names`` (keys of :data:`FIGURES`) of ``fits`` into the run.

    A figure that cannot be drawn is reported by a warning (the run keeps its tables and
    results) rather than failing the run. Returns the files written.
    """
    if not writer.active:
        return []
    import warnings

    import matplotlib

    matplotlib.use("Agg")  # the command writes files; it never opens windows
    import matplotlib.pyplot as plt

    have = set().union(*(_variables(f) for f in fits.values()))
    labels = list(labels)
    written = []
    for name in names:
        file, needs, draw = FIGURES[name]
        needed = entry.score if needs == "score" and entry is not None else needs
        if needed is not None and needed not in have:
            continue
        try:
            figure = _figure_of(draw(fits, entry, prob, sort_by, truth, scale))
            literal_labels(figure, labels)
            path = writer.path(file, f"figure: {name.replace('_', ' ')}")
            assert path is not None
            figure.savefig(path, dpi=100)
            written.append(file)
        except Exception as err:  # one figure must not cost the run
            writer.files.pop(file, None)
            warnings.warn(f"figure {file} was not written ({type(err).__name__}: {err})",
                          RuntimeWarning, stacklevel=2)
        finally:
            plt.close("all")
    return written


# ---------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class Run:
    """A run folder read back by :func:`load_run`.

    Attributes
    ----------
    path : Path
        The folder.
    meta : dict
        ``run.json`` (see the module docstring): ``command``, ``argv``, ``model`` (the
        registry stem, or None), ``method`` (or ``methods``), ``options``, ``seed``,
        ``inputs``, ``versions``, ``warnings``, ``files``, ``created``, ...
    """

    path: Path
    meta: dict[str, Any]

    @property
    def command(self) -> str:
        return str(self.meta.get("command"))

    @property
    def model(self) -> str | None:
        """The registry stem of the model (None for ``mean``)."""
        return self.meta.get("model")

    @property
    def entry(self) -> Entry | None:
        """The model's registry entry."""
        from bayescal import registry

        return registry.get(self.model) if self.model else None

    @property
    def method(self) -> str | None:
        """The method of a ``fit`` (``mle``, ``map``, ``nuts``); None for a run of several."""
        return self.meta.get("method")

    @property
    def options(self) -> dict[str, Any]:
        """The model options the fit used."""
        return dict(self.meta.get("options", {}))

    @property
    def methods(self) -> list[str]:
        """The fits of the run, in order (``["mle"]``; ``["mle", "map", "nuts"]`` for demo)."""
        return list(self.meta.get("results", {}))

    @property
    def warnings(self) -> list[str]:
        return list(self.meta.get("warnings", []))

    @property
    def files(self) -> dict[str, str]:
        """File name -> what it holds."""
        return {name: f["what"] for name, f in self.meta["files"].items()}

    @property
    def figures(self) -> list[Path]:
        return [self.path / n for n in self.meta["files"] if n.endswith(".png")]

    def table(self, name: str) -> pd.DataFrame | None:
        """A CSV of the run (``"summary"``, ``"leaderboard"``, ``"judges"``, ``"gacv"``, ...),
        labels read as text; None when the run has none."""
        import pandas as pd

        file = name if name.endswith(".csv") else f"{name}.csv"
        if file not in self.meta["files"]:
            return None
        head = pd.read_csv(self.path / file, nrows=0)
        text = {c: str for c in head.columns
                if c in ("term", "item", "judge", "judge_2", "parameter", "method", "interval",
                         "note", "scale", "model", "estimator", "family", "reason",
                         "reason_code")}
        frame = pd.read_csv(self.path / file, dtype=text, keep_default_na=False,
                            na_values=[""])
        first = head.columns[0]
        if first in ("term", "item", "judge", "estimator", "model"):  # the writers' indexes
            frame = frame.set_index(first)
        return frame

    @property
    def summary(self) -> pd.DataFrame:
        """The interval table of every fit (index ``term``; column ``method``)."""
        table = self.table("summary")
        if table is None:
            raise RunFolderError(f"{self.path}: the run has no summary.csv")
        return table

    @property
    def leaderboard(self) -> pd.DataFrame | None:
        return self.table("leaderboard")

    @property
    def judges(self) -> pd.DataFrame | None:
        return self.table("judges")

    def result(self, method: str | None = None) -> Any:
        """The fit of ``method`` (default: the last): an ``Estimate`` or a ``DataTree``."""
        results = self.meta.get("results", {})
        if not results:
            raise RunFolderError(f"{self.path}: the run saved no fit")
        method = method if method is not None else list(results)[-1]
        if method not in results:
            raise RunFolderError(f"{self.path}: no {method!r} fit; the run has {list(results)}")
        file = self.path / results[method]
        if method == "mle":
            from bayescal.frequentist._core import Estimate

            return Estimate.from_netcdf(file)
        import xarray as xr

        return xr.open_datatree(file).load()


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read a run folder, checking that it holds one whole run.

    Raises
    ------
    RunFolderError
        No folder or no ``run.json``; a ``run.json`` that is not valid JSON or of another
        format or version; a file listed in it that is missing or changed since it was
        written (SHA-256); a file in the folder that the run did not write.
    """
    folder = Path(path)
    meta_path = folder / RUN_JSON
    if not folder.is_dir():
        raise RunFolderError(f"{folder} is not a folder; pass the --out folder of a run")
    if not meta_path.is_file():
        raise RunFolderError(f"{folder} is not a run folder (no {RUN_JSON}); write one with "
                             "bayescal fit MODEL FILE --out FOLDER")
    try:
        meta = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RunFolderError(f"{meta_path} is not valid JSON ({err}); the run was cut short "
                             "or edited: rerun its command") from None
    if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
        raise RunFolderError(f"{meta_path} is not a bayescal run record")
    if meta.get("version") != RUN_VERSION:
        raise RunFolderError(f"{meta_path}: run format version {meta.get('version')!r}; this "
                             f"bayescal reads version {RUN_VERSION}")
    files = meta.get("files")
    if not isinstance(files, dict):
        raise RunFolderError(f"{meta_path} lists no files")
    for name, info in files.items():
        p = folder / name
        if not p.is_file():
            raise RunFolderError(f"{folder}: {name} is listed in {RUN_JSON} but missing")
        if sha256(p) != info.get("sha256"):
            raise RunFolderError(f"{folder}: {name} changed after the run wrote it (SHA-256 "
                                 "differs); rerun the command")
    extra = sorted(p.name for p in folder.iterdir()
                   if p.name not in files and p.name != RUN_JSON and not p.name.startswith("."))
    if extra:
        raise RunFolderError(f"{folder} holds files that are not part of its run: {extra}; a "
                             "run folder holds one run")
    return Run(folder, meta)


def created_now() -> str:
    """The time stamp of ``run.json``: UTC, ISO 8601, seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")
