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
* **Resumable, never mixed.** With ``out=`` each finished task (a cell and a block of replicates)
  is written at once, atomically, as a Parquet file under ``out/<study name>/``; a rerun reads
  them back and runs only the replicates that are not there yet. The folder's
  ``manifest.json`` records the study's identity: its name, its cells, the seed rule, and the
  function (module, qualified name and the SHA-256 of its source); every part carries the
  identity's digest. A folder of another identity (other cells, a changed function) is refused
  with what differs; ``overwrite=True`` discards its parts, a fresh ``out=`` keeps them. The
  number of replicates and ``chunk`` are not part of the identity (a replicate's seed and rows
  depend on neither): a run returns exactly replicates 0 .. ``replicates`` − 1, computing those
  not there yet, and leaves further ones on disk. A damaged part is refused by name (remove it
  and rerun: only its replicates are recomputed); a replicate found in two parts is refused.
* **Errors can be retried.** ``retry_errors=True`` removes the failed replicates from their
  parts (each part rewritten atomically) and runs them again.
* **Progress** is shown on standard error when a person is watching
  (:func:`bayescal.progress.interactive`), never under pytest or CI.

Dask (``pip install bayescal[studies]``) is used only when ``scheduler`` is given: a scheduler
address (``"tcp://host:8786"``) or a ``distributed.Client``. The worker processes must be able to
import ``fn`` (or Dask pickles it by value, as for functions defined in a script).
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import marshal
import os
import shutil
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
from bayescal.runs import write_atomic

__all__ = ["Study", "StudyError", "function_identity", "replicate_seed", "run"]

RESERVED = ("replicate", "seed", "error")
MANIFEST = "manifest.json"
_FORMAT = "bayescal-study"
#: How seeds are made (:func:`replicate_seed`); part of the identity, so a change of rule can
#: never mix two rules' replicates in one folder.
SEED_RULE = "sha256(name, cell) -> SeedSequence(spawn_key=(replicate,)) -> uint32, v1"
_PART_KEY = b"bayescal_study"
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
    # named by the exact replicates: a retried block (errors only) never replaces the part
    # that keeps the block's other replicates
    which = hashlib.sha256(",".join(map(str, reps)).encode()).hexdigest()[:8]
    return folder / f"part-{tag}-r{reps[0]:06d}-{reps[-1]:06d}-{which}.parquet"


def function_identity(fn: Callable[..., Any]) -> dict[str, str]:
    """Module, qualified name and SHA-256 of the source of a study function.

    The source is :func:`inspect.getsource` (the compiled code where the source is not
    available). Only ``fn``'s own text is hashed: a change in a helper it calls is not seen,
    so change the study's name (or use ``overwrite=True``) when such a change matters.
    """
    module = str(getattr(fn, "__module__", None) or type(fn).__module__)
    qualname = str(getattr(fn, "__qualname__", None) or type(fn).__qualname__)
    try:
        text = inspect.getsource(fn).encode()
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        if code is None:
            raise StudyError(
                f"cannot identify the study function {fn!r} (no source, no code object): "
                "resumable studies (out=) need a plain function defined in a module or script"
            ) from None
        text = marshal.dumps(code)
    return {"module": module, "qualname": qualname,
            "source_sha256": hashlib.sha256(text).hexdigest()}


def _identity(study: Study) -> dict[str, Any]:
    """What must match for two runs' replicates to be the same replicates."""
    return {"name": study.name, "cells": sorted(cell_key(c) for c in study.cells),
            "seed_rule": SEED_RULE, "fn": function_identity(study.fn)}


def _digest(identity: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    out = []
    if old.get("name") != new["name"]:
        out.append(f"name {old.get('name')!r} (now {new['name']!r})")
    if old.get("cells") != new["cells"]:
        before, now = set(old.get("cells") or []), set(new["cells"])
        gone, added = sorted(before - now), sorted(now - before)
        out.append("cells: " + "; ".join(
            ([f"not in this study {gone[:3]}"] if gone else [])
            + ([f"new {added[:3]}"] if added else [])))
    if old.get("seed_rule") != new["seed_rule"]:
        out.append(f"seed rule {old.get('seed_rule')!r} (now {new['seed_rule']!r})")
    fo, fn = old.get("fn") or {}, new["fn"]
    for key in ("module", "qualname", "source_sha256"):
        if fo.get(key) != fn[key]:
            was, now = fo.get(key), fn[key]
            if key == "source_sha256":
                was, now = (was or "")[:12], now[:12]
                out.append(f"function source sha256 {was}… (now {now}…: the function changed)")
            else:
                out.append(f"function {key} {was!r} (now {now!r})")
    return out


def _open_folder(folder: Path, study: Study, identity: dict[str, Any], chunk: int,
                 overwrite: bool) -> str:
    """Check (or write) the folder's manifest; returns the identity digest parts must carry."""
    digest = _digest(identity)
    path = folder / MANIFEST
    parts = sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []
    old = None
    if path.exists():
        try:
            old = json.loads(path.read_text())
            if not isinstance(old, dict) or old.get("format") != _FORMAT:
                raise ValueError(f"format {old.get('format') if isinstance(old, dict) else old!r}")
        except (ValueError, UnicodeDecodeError) as err:
            if not overwrite:
                raise StudyError(f"{path} is not a study manifest ({err}); remove the folder "
                                 f"{folder}, use another out= folder, or pass overwrite=True"
                                 ) from None
            old = None
    problems: list[str] = []
    if old is not None and old.get("digest") != digest:
        problems = _differences(old.get("identity") or {}, identity) or ["its identity digest"]
    elif old is None and parts:
        problems = [f"it holds {len(parts)} part(s) but no {MANIFEST} (written by another "
                    "tool or an older bayescal)"]
    if problems:
        if not overwrite:
            raise StudyError(
                f"{folder} holds another study definition than study {study.name!r}: it differs "
                f"in {', '.join(problems)}. Use a fresh out= folder to keep those results, or "
                "overwrite=True to discard them")
        shutil.rmtree(folder)
        old = None
    folder.mkdir(parents=True, exist_ok=True)
    replicates = max(int(study.replicates), int(old.get("replicates", 0)) if old else 0)
    manifest = {"format": _FORMAT, "version": 1, "digest": digest, "identity": identity,
                "replicates": replicates, "chunk": chunk,
                "first_seed": replicate_seed(study.name, study.cells[0], 0)}
    if manifest != old:
        write_atomic(path, (json.dumps(manifest, indent=1) + "\n").encode())
    return digest


def _read_part(path: Path, digest: str) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as err:
        raise StudyError(
            f"part {path} cannot be read ({type(err).__name__}: {err}); it is damaged. Remove "
            "this file and rerun: only its replicates are computed again") from None
    meta = table.schema.metadata or {}
    df = table.to_pandas()
    if meta.get(_PART_KEY, b"").decode() != digest or df.empty or "__cell" not in df \
            or "replicate" not in df:
        raise StudyError(f"{path} is not a part of this study's manifest (another definition, "
                         "or not written by this runner); remove it, or use another out= folder")
    return df


def _write_part(path: Path, df: pd.DataFrame, digest: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _PART_KEY: digest})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    write_atomic(path, buffer.getvalue())  # a killed run never leaves a half-written part


def _read_parts(folder: Path, digest: str, retry_errors: bool) -> list[pd.DataFrame]:
    """Every part of the folder, each replicate once; with ``retry_errors`` the failed
    replicates are removed from their parts first (so that, if interrupted, they are missing)."""
    frames, seen = [], {}
    for path in sorted(folder.glob("part-*.parquet")):
        df = _read_part(path, digest)
        if retry_errors and (df["error"] != "").any():
            df = df[df["error"] == ""].reset_index(drop=True)
            if df.empty:
                path.unlink()
                continue
            _write_part(path, df, digest)
        for key, reps in df.groupby("__cell", sort=False)["replicate"]:
            for r in set(int(v) for v in reps):
                if (key, r) in seen:
                    raise StudyError(f"replicate {r} of cell {key} is in two parts, "
                                     f"{seen[key, r].name} and {path.name} (two runs wrote into "
                                     f"{folder} at once?); remove one of them")
                seen[key, r] = path
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
        progress: bool | None = None, info: RunInfo | None = None, overwrite: bool = False,
        retry_errors: bool = False) -> pd.DataFrame:
    """Run every (cell, replicate) of ``study`` and return the tidy table.

    Parameters
    ----------
    workers
        Local processes (default: ``os.cpu_count()``); 1 runs in this process. Ignored when
        ``scheduler`` is given.
    scheduler
        A Dask scheduler address or a ``distributed.Client``: run the blocks on that cluster.
    out
        Folder for partial results; the study's parts go to ``out/<name>/`` beside its
        ``manifest.json``, and a rerun of the same study resumes. A folder of another study
        definition is refused (see ``overwrite``).
    chunk
        Replicates per task (default 10): larger blocks amortise the per-task cost of shipping
        work to a process or a cluster when one replicate takes milliseconds. It may differ
        between the runs of one folder.
    progress
        Show progress on stderr; default :func:`bayescal.progress.interactive`.
    info
        Filled with counts and timings (used by ``bench/studies.py``).
    overwrite
        Discard the parts of ``out/<name>/`` when its manifest is of another definition (other
        cells, a changed function) instead of refusing the folder.
    retry_errors
        Run again the replicates recorded with an error in ``out/<name>/``.

    Returns
    -------
    pandas.DataFrame
        Replicates 0 .. ``replicates`` − 1 of every cell (further replicates in ``out`` are left
        there, not returned), ordered by cell (grid order), replicate, then the function's row
        order, so the table does not depend on which worker finished first.
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
    digest = ""
    if folder is not None:
        digest = _open_folder(folder, study, _identity(study), chunk, overwrite)
        for df in _read_parts(folder, digest, retry_errors):
            df = df[df["replicate"] < study.replicates]  # exactly the replicates asked for
            if df.empty:
                continue
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
            _write_part(path, df, digest)
            df = _read_part(path, digest)  # resumed and fresh parts then have the same dtypes
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
