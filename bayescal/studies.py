"""Studies: a grid of cells × replicates, run here (processes) or on a Dask cluster.

A *study* is a name, a list of cells (dicts of JSON scalars, e.g. ``{"N": 10, "K": 5, "T": 500}``),
a number of replicates per cell and a module-level function ``fn(cell, seed) -> DataFrame`` that
simulates and fits one replicate and returns its tidy rows (at least one). :func:`run` executes
every (cell, replicate) once and returns one tidy table: the cell's keys, ``replicate``, ``seed``,
``error`` (empty string when the replicate succeeded) and the function's own columns.

Guarantees:

* **Seeds do not depend on scheduling.** The seed of (study, cell, replicate) is derived from a
  SHA-256 of the study's name and the cell's canonical JSON, spread by
  :class:`numpy.random.SeedSequence` with the replicate as spawn key (:func:`replicate_seed`).
  The same study gives bit-identical tables with 1 worker, many processes or a Dask cluster.
* **Failures are recorded, never dropped.** A replicate that raises becomes one row with its
  ``error`` text ("ExceptionType: message"); the function's columns are missing (NaN) there.
* **Resumable.** With ``out=`` each finished task (a cell and a block of replicates) is written at
  once as a Parquet file under ``out/<study name>/``; a rerun reads them back and runs only the
  replicates that are not there yet. Parts from a different study definition are refused.
* **Progress** is shown on standard error when a person is watching
  (:func:`bayescal.progress.interactive`), never under pytest or CI.

Dask (``pip install bayescal[studies]``) is used only when ``scheduler`` is given: a scheduler
address (``"tcp://host:8786"``) or a ``distributed.Client``. The worker processes must be able to
import ``fn`` (or Dask pickles it by value, as for functions defined in a script).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayescal.progress import interactive

__all__ = ["Study", "StudyError", "replicate_seed", "run"]

RESERVED = ("replicate", "seed", "error")
Cell = Mapping[str, Any]


class StudyError(ValueError):
    """A study that cannot run as defined (bad cells, clashing columns, foreign partial results)."""


@dataclass(frozen=True)
class Study:
    """A grid of ``cells`` × ``replicates`` and the function computing one replicate.

    Parameters
    ----------
    name
        Identifies the study: part of every seed and the folder of its partial results.
    cells
        The grid, each cell a dict of JSON scalars (str, int, float, bool); keys become columns.
    replicates
        Replicates per cell (r = 0 .. replicates − 1).
    fn
        ``fn(cell, seed) -> pandas.DataFrame``: one replicate's tidy rows (at least one).
        Its columns must not reuse a cell key nor ``replicate``, ``seed``, ``error``.
    """

    name: str
    cells: Sequence[Cell]
    replicates: int
    fn: Callable[[dict[str, Any], int], pd.DataFrame] = field(repr=False)

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise StudyError("a study needs a non-empty name (it is part of every seed)")
        if int(self.replicates) < 1:
            raise StudyError(f"replicates must be at least 1, got {self.replicates}")
        keys = [cell_key(c) for c in self.cells]
        if len(set(keys)) != len(keys):
            dup = next(k for k in keys if keys.count(k) > 1)
            raise StudyError(f"cell {dup} appears twice in study {self.name!r}")
        for c in self.cells:
            clash = set(c) & set(RESERVED)
            if clash:
                raise StudyError(f"cell {dict(c)} uses reserved column name(s) {sorted(clash)}")


def cell_key(cell: Cell) -> str:
    """Canonical JSON of a cell (sorted keys): its identity in seeds and partial results."""
    for k, v in cell.items():
        if not isinstance(v, (str, int, float, bool, np.integer, np.floating, np.bool_)):
            raise StudyError(f"cell value {k}={v!r} is not a JSON scalar (str, int, float, bool)")
    plain = {str(k): (v.item() if isinstance(v, np.generic) else v) for k, v in cell.items()}
    return json.dumps(plain, sort_keys=True, separators=(",", ":"))


def replicate_seed(name: str, cell: Cell, replicate: int) -> int:
    """The 32-bit seed of one replicate: SeedSequence(SHA-256(name, cell), spawn_key=(r,))."""
    digest = hashlib.sha256(f"{name}\x00{cell_key(cell)}".encode()).digest()
    seq = np.random.SeedSequence(int.from_bytes(digest[:16], "little"), spawn_key=(int(replicate),))
    return int(seq.generate_state(1)[0])


def _run_block(name: str, fn: Callable[[dict[str, Any], int], pd.DataFrame], cell: dict[str, Any],
               reps: tuple[int, ...]) -> tuple[pd.DataFrame, float]:
    """Run replicates ``reps`` of one cell; returns their rows and the seconds spent inside fn."""
    bodies, replicate, seeds, errors, inside = [], [], [], [], 0.0
    for r in reps:
        seed = replicate_seed(name, cell, r)
        start = time.perf_counter()
        try:
            try:
                rows = fn(dict(cell), seed)
            finally:
                inside += time.perf_counter() - start
            if not isinstance(rows, pd.DataFrame):
                raise TypeError(f"the study function returned {type(rows).__name__}, "
                                "not a pandas DataFrame")
            clash = set(rows.columns) & (set(cell) | set(RESERVED))
            if clash:
                raise StudyError(f"the study function's columns {sorted(clash)} clash with the "
                                 "cell's keys or the runner's replicate/seed/error")
            if rows.empty:
                raise StudyError("the study function returned no rows (return at least one row "
                                 "per replicate so that it is recorded as done)")
            error = ""
        except Exception as exc:  # recorded as a row, never dropped
            last = traceback.extract_tb(exc.__traceback__)[-1:]
            where = f" (at {Path(last[0].filename).name}:{last[0].lineno})" if last else ""
            rows, error = pd.DataFrame(index=range(1)), f"{type(exc).__name__}: {exc}{where}"
        bodies.append(rows.reset_index(drop=True))
        replicate += [r] * len(rows)
        seeds += [seed] * len(rows)
        errors += [error] * len(rows)
    # one frame per block, built once: per-replicate column inserts cost more than a fast fn
    meta = {k: [v] * len(replicate) for k, v in cell.items()}
    meta.update(replicate=np.asarray(replicate, np.int64), seed=np.asarray(seeds, np.int64),
                error=errors)
    body = pd.concat(bodies, ignore_index=True)
    return pd.concat([pd.DataFrame(meta), body], axis=1), inside


def _blocks(study: Study, missing: dict[str, set[int]],
            chunk: int) -> Iterator[tuple[int, tuple[int, ...]]]:
    for idx, cell in enumerate(study.cells):
        todo = sorted(missing[cell_key(cell)])
        for lo in range(0, len(todo), chunk):
            yield idx, tuple(todo[lo:lo + chunk])


def _part_path(folder: Path, cell: Cell, reps: tuple[int, ...]) -> Path:
    tag = hashlib.sha256(cell_key(cell).encode()).hexdigest()[:12]
    return folder / f"part-{tag}-r{reps[0]:06d}-{reps[-1]:06d}.parquet"


def _read_parts(folder: Path, study: Study) -> list[pd.DataFrame]:
    frames = []
    known = {cell_key(c) for c in study.cells}
    for path in sorted(folder.glob("part-*.parquet")):
        df = pd.read_parquet(path)
        if df.empty or "replicate" not in df or "__cell" not in df:
            raise StudyError(f"{path} is not a partial result of this runner; remove it or use "
                             "another out= folder")
        foreign = set(df["__cell"]) - known
        if foreign:
            raise StudyError(f"{path} holds cell {sorted(foreign)[0]}, which is not in study "
                             f"{study.name!r}: the folder belongs to another study definition")
        frames.append(df)
    return frames


class _Bar:
    """A one-line counter on stderr (quiet unless a person is watching)."""

    def __init__(self, total: int, label: str, show: bool) -> None:
        self.total, self.label, self.show, self.done = total, label, show, 0
        self.start = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        if self.show:
            elapsed = time.perf_counter() - self.start
            print(f"\r{self.label}: {self.done}/{self.total} replicates, {elapsed:.0f} s",
                  end="\n" if self.done >= self.total else "", file=sys.stderr, flush=True)


@dataclass
class RunInfo:
    """What :func:`run` did: replicates run now vs resumed, seconds inside ``fn`` vs wall."""

    ran: int = 0
    resumed: int = 0
    fn_seconds: float = 0.0
    wall_seconds: float = 0.0


def run(study: Study, *, workers: int | None = None, scheduler: Any = None,
        out: str | os.PathLike[str] | None = None, chunk: int | None = None,
        progress: bool | None = None, info: RunInfo | None = None) -> pd.DataFrame:
    """Run every (cell, replicate) of ``study`` and return the tidy table.

    Parameters
    ----------
    workers
        Local processes (default: ``os.cpu_count()``); 1 runs in this process. Ignored when
        ``scheduler`` is given.
    scheduler
        A Dask scheduler address or a ``distributed.Client``: run the blocks on that cluster.
    out
        Folder for partial results; the study's parts go to ``out/<name>/`` and a rerun resumes.
    chunk
        Replicates per task (default 10): larger blocks amortise the per-task cost of shipping
        work to a process or a cluster when one replicate takes milliseconds.
    progress
        Show progress on stderr; default :func:`bayescal.progress.interactive`.
    info
        Filled with counts and timings (used by ``bench/studies.py``).

    Returns
    -------
    pandas.DataFrame
        Rows ordered by cell (grid order), replicate, then the function's row order, so the table
        does not depend on which worker finished first.
    """
    chunk = 10 if chunk is None else int(chunk)
    if chunk < 1:
        raise StudyError(f"chunk must be at least 1, got {chunk}")
    info = RunInfo() if info is None else info
    wall_start = time.perf_counter()
    keys = [cell_key(c) for c in study.cells]
    cells = [dict(c) for c in study.cells]
    frames: list[pd.DataFrame] = []
    folder = None if out is None else Path(out) / study.name
    missing = {k: set(range(study.replicates)) for k in keys}
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        for df in _read_parts(folder, study):
            for key, reps in df.groupby("__cell", sort=False)["replicate"]:
                missing[key] -= set(int(r) for r in reps)
                info.resumed += len(set(reps))
            frames.append(df)
    blocks = list(_blocks(study, missing, chunk))
    bar = _Bar(sum(len(r) for _, r in blocks), study.name,
               interactive() if progress is None else progress)

    def arrived(idx: int, reps: tuple[int, ...], df: pd.DataFrame, inside: float) -> None:
        df = df.copy()
        df["__cell"] = keys[idx]
        if folder is not None:
            path = _part_path(folder, cells[idx], reps)
            tmp = path.with_suffix(".tmp")
            df.to_parquet(tmp, index=False)
            os.replace(tmp, path)  # a killed run never leaves a half-written part behind
            df = pd.read_parquet(path)  # resumed and fresh parts then have the same dtypes
        frames.append(df)
        info.ran += len(reps)
        info.fn_seconds += inside
        bar.update(len(reps))

    if blocks:
        if scheduler is not None:
            _run_dask(study, cells, blocks, scheduler, arrived)
        elif (workers or os.cpu_count() or 1) <= 1 or len(blocks) == 1:
            for idx, reps in blocks:
                arrived(idx, reps, *_run_block(study.name, study.fn, cells[idx], reps))
        else:
            with ProcessPoolExecutor(workers or os.cpu_count(),
                                     mp_context=get_context("spawn")) as pool:
                futures = {pool.submit(_run_block, study.name, study.fn, cells[idx], reps):
                           (idx, reps) for idx, reps in blocks}
                for fut in as_completed(futures):
                    arrived(*futures[fut], *fut.result())
    info.wall_seconds += time.perf_counter() - wall_start
    return _assemble(frames, keys)


def _run_dask(study: Study, cells: list[dict[str, Any]], blocks: list[tuple[int, tuple[int, ...]]],
              scheduler: Any, arrived: Callable[..., None]) -> None:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("running a study on Dask needs `pip install bayescal[studies]` "
                          "(dask and distributed)") from exc
    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        futures = {client.submit(_run_block, study.name, study.fn, cells[idx], reps, pure=False):
                   (idx, reps) for idx, reps in blocks}
        for fut in dask_completed(list(futures)):
            arrived(*futures[fut], *fut.result())
    finally:
        if own:
            client.close()


def _assemble(frames: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=["replicate", "seed", "error"])
    order = {k: i for i, k in enumerate(keys)}
    # concatenated in grid order, not arrival order, so column order and dtypes are reproducible
    frames = sorted(frames, key=lambda f: (order[f["__cell"].iloc[0]], int(f["replicate"].min())))
    table = pd.concat(frames, ignore_index=True)
    table["__order"] = table["__cell"].map(order)
    table["__row"] = np.arange(len(table))
    # stable on the row counter: within a replicate the function's own row order is kept
    table = table.sort_values(["__order", "replicate", "__row"], kind="stable")
    return table.drop(columns=["__cell", "__order", "__row"]).reset_index(drop=True)
