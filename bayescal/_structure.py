"""Compiled model functions, cached per model *structure*: the graph with its data abstracted.

Two models built by one ``build`` from data of the same shape share every operation of their
graphs and differ only in numbers: the values of their ``pm.Data`` variables (shared variables,
including the coordinate lengths) and of their array constants (observed counts, a design
basis). Compiling a graph (rewrites, then the linker) is what makes a MAP slow and a nutpie
fit pay seconds before the first draw, so the functions are compiled once per structure with
the data as explicit inputs, and each call passes its own model's numbers.

The structure of a list of graphs is a hashable tuple with one token per variable, in
topological order:

* an operation's output: the ``Op`` (compared by its properties, as PyTensor's own merge of
  equal subgraphs does), the tokens of its inputs and its output types (a ``ViewOp``, the
  identity, is looked through);
* a free value variable: its position, name and type;
* data (every tensor shared variable; every floating-point array constant; every integer or
  boolean matrix constant, and vector constant of more than ``_BAKED_INDEX_SIZE`` elements):
  its type only, the value being an input of the compiled function;
* a random generator (PyMC's initial point keeps one in its graph, to read the shape of a
  variable from it): its type only; each call gets a fresh generator, as PyMC reseeds its own
  when no seed is given;
* every other constant (scalars such as a prior's scale, short shape or index vectors): its
  type and its value.

Equal structures are the same function of (free values, data), so the cache can never answer
with a function of another model's data: the data are not in the function. A graph with a root
that is none of these is not cached and is compiled as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pytensor.compile.ops import ViewOp
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable, clone_get_equiv
from pytensor.graph.traversal import toposort
from pytensor.tensor.random.type import RandomGeneratorType
from pytensor.tensor.type import TensorType

__all__ = ["Entry", "Structure", "StructureCache", "Uncacheable", "is_data", "structure"]

# integer vector constants up to this size are shapes, axes or short index lists: baked into
# the graph (and into the key by value) so that rewrites can still see them
_BAKED_INDEX_SIZE = 16


class Uncacheable(Exception):
    """The graph has a root that is neither a free variable, data nor a plain constant."""


@dataclass(frozen=True)
class Structure:
    """The structure of some graphs and the data variables they read, in canonical order."""

    key: tuple[Any, ...]
    data: tuple[Variable, ...]

    def values(self) -> list[Any]:
        """This model's numbers behind :attr:`data`, in the same order; a fresh generator for
        each random generator, as PyMC reseeds them when no seed is given."""
        return [np.random.default_rng() if isinstance(v.type, RandomGeneratorType)
                else np.asarray(v.get_value(borrow=True)) if isinstance(v, SharedVariable)
                else np.asarray(v.data) for v in self.data]

    def abstracted(self, outputs: Sequence[Variable]) -> tuple[list[Variable], list[Variable]]:
        """``outputs`` with every data variable replaced by a fresh input of the same type;
        returns (new outputs, the new inputs in :attr:`data` order)."""
        inputs = [v.type() for v in self.data]
        for new, old in zip(inputs, self.data, strict=True):
            new.name = old.name
        # one copy of the graph (clone_replace rebuilds it twice: twice the time); the free
        # variables and the constants are kept
        memo: dict[Any, Any] = {v: v for v in outputs if v.owner is None}  # else copied
        memo.update(zip(self.data, inputs, strict=True))
        equiv = clone_get_equiv([], outputs, copy_inputs=False, copy_orphans=False, memo=memo)
        return [equiv[v] for v in outputs], inputs


def is_data(var: Variable, constants: Callable[[Constant], bool] | None = None) -> bool:
    """Whether a root of a graph is data (an input of the compiled functions) or baked in."""
    if isinstance(var, SharedVariable):
        if not isinstance(var.type, TensorType | RandomGeneratorType):
            raise Uncacheable(f"shared variable {var} of type {var.type}")
        return True
    if constants is not None and not constants(var):
        return False
    value = np.asarray(var.data)
    if value.ndim == 0:
        return False
    if value.dtype.kind in "fc":
        return True
    return value.dtype.kind in "iub" and (value.ndim > 1 or value.size > _BAKED_INDEX_SIZE)


def _constant_token(var: Constant) -> tuple[Any, ...]:
    data = var.data
    if isinstance(data, np.ndarray | np.generic | int | float | bool):
        value = np.asarray(data)
        return ("const", var.type, value.dtype.str, value.shape, value.tobytes())
    try:
        hash(data)
    except TypeError as err:
        raise Uncacheable(f"constant {var} with unhashable data") from err
    return ("const", var.type, type(data), data)


def structure(outputs: Sequence[Variable], free: Sequence[Variable],
              extra: tuple[Any, ...] = (),
              constants: Callable[[Constant], bool] | None = None) -> Structure:
    """The structure of ``outputs`` as functions of the ``free`` variables and the data.

    ``extra`` joins the key (compile options that change the function). ``constants``, when
    given, says which array constants may be data; the others are keyed by value (nutpie
    compiles the model's own graph, so only constants of that graph can become its inputs,
    not those PyMC creates while deriving the log density). Raises :class:`Uncacheable` for
    a graph that cannot be keyed soundly.
    """
    index: dict[Variable, int] = {}
    tokens: list[Any] = []
    data: list[Variable] = []
    free_position = {v: i for i, v in enumerate(free)}

    def root(var: Variable) -> int:
        if var in free_position:
            token: tuple[Any, ...] = ("free", free_position[var], var.name, var.type)
        elif isinstance(var, SharedVariable | Constant):
            if is_data(var, constants):
                token = ("data", var.type)
                data.append(var)
            else:
                token = _constant_token(var)
        else:
            raise Uncacheable(f"graph input {var} is neither free, data nor constant")
        index[var] = len(tokens)
        tokens.append(token)
        return index[var]

    def ref(var: Variable) -> int:
        found = index.get(var)
        return found if found is not None else root(var)

    for node in toposort(outputs):
        inputs = tuple(ref(v) for v in node.inputs)
        if isinstance(node.op, ViewOp):  # an identity that copying a PyMC model drops
            index[node.outputs[0]] = inputs[0]
            continue
        try:
            hash(node.op)
        except TypeError as err:
            raise Uncacheable(f"unhashable op {node.op}") from err
        tokens.append(("apply", node.op, inputs, tuple(o.type for o in node.outputs)))
        base = len(tokens) - 1
        for k, out in enumerate(node.outputs):
            index[out] = len(tokens)
            tokens.append(("out", base, k))
    out_refs = tuple(ref(v) for v in outputs)
    return Structure(key=(tuple(tokens), out_refs, tuple(free_position.values()), extra),
                     data=tuple(data))


@dataclass
class Entry:
    value: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


class StructureCache:
    """A small LRU cache of compiled objects keyed by structure.

    ``get(key, build)`` returns the entry for ``key``, calling ``build()`` on a miss. Each
    entry carries a lock: a compiled PyTensor function keeps its own storage, so two threads
    must not call it at once.
    """

    def __init__(self, size: int = 32):
        self._size = size
        self._entries: OrderedDict[tuple[Any, ...], Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Entry:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry
        value = build()  # outside the lock: compiling takes long and may recurse
        with self._lock:
            entry = self._entries.setdefault(key, Entry(value))
            self._entries.move_to_end(key)
            self.misses += 1
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)
