"""The Numba backend's dispatcher: the source of a Numba function computing one node.

``numba_funcify(op, node)`` returns a :class:`NumbaImpl`: the text of one Python function,
``def impl(...)``, that Numba compiles (``numba.njit``), and the values of the constants the
Op itself carries (a fused body's literals), passed after the node's inputs. The function
takes the node's input values in order, then those constants, and returns the node's output
value (a tuple of them for several outputs). A 0-d tensor is a Numba scalar of its dtype, on
the way in and on the way out; every other tensor is an array (any layout; an output may be a
view of an input, as the Op's ``view_map`` allows). An Op that destroys an input (an
in-place Elemwise, an increment) writes into it only where :func:`overwritable` says the
value is an array allocated earlier in the same call (never a graph input, a constant or a
view of one): the DestroyHandler has already made sure nothing reads it afterwards, as for
the reference VM, and a call that fails and is computed again on tier 1 starts from the
graph's inputs, which are never written.

The text depends on the node's structure only (its Op's props, its inputs' and outputs'
dtypes, ranks and static broadcastable patterns), never on a constant's value, so that a
whole graph's source (:mod:`arignote.link.numba.graph`) is a content key of the disk cache.
An Op whose node cannot be written raises :class:`NoNumbaImpl` (the default for an Op with no
registration), naming it: the graph then runs on the per-node tiers and says why.

Errors: where the reference VM raises (a runtime shape mismatch, an index out of bounds), the
function raises too (the message is Numba's constant one: the linker re-runs the call on
tier 1, which raises the VM's error naming the node). Op families register theirs with
``@numba_funcify.register(OpClass)`` from the modules beside this one. Nothing here imports
Numba.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.graph.basic import Apply
from arignote.graph.destroyhandler import view_root
from arignote.graph.op import Op
from arignote.scalar.type import ScalarType
from arignote.tensor.alloc import Alloc
from arignote.tensor.elemwise import CAReduce, Elemwise
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1, AdvancedSubtensor1
from arignote.tensor.indexing.basic import IncSubtensor
from arignote.tensor.join import Join
from arignote.tensor.type import TensorType

__all__ = [
    "NoNumbaImpl",
    "NumbaImpl",
    "numba_funcify",
    "nb_dtype",
    "SUPPORTED_DTYPES",
    "check_types",
    "overwritable",
]

FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SUPPORTED_DTYPES = (*FLOATS, *INTS, "bool")


class NoNumbaImpl(TypeError):
    """A node the Numba backend cannot compute (no implementation for its Op, or for these
    dtypes); the message names the Op and why."""


@dataclass(frozen=True)
class NumbaImpl:
    """A node's Numba function: ``source`` defines ``impl`` (see the module's doc);
    ``consts`` are passed after the node's inputs, in order (NumPy scalars or arrays);
    ``helpers``: module-level definitions ``impl`` calls (each a decorated function whose
    name is unique to its text, e.g. an inner graph's function)."""

    source: str
    consts: tuple = ()
    helpers: tuple = ()


@functools.singledispatch
def numba_funcify(op: Op, node: Apply) -> NumbaImpl:
    """The :class:`NumbaImpl` computing ``node`` (an Apply of ``op``); see the module's doc.
    Ops without one raise :class:`NoNumbaImpl`."""
    raise NoNumbaImpl(
        f"{type(op).__name__} ({op}) has no Numba implementation (register one with "
        f"arignote.link.numba.dispatch.numba_funcify.register({type(op).__name__}))"
    )


#: the Ops whose functions here return an array they allocate (not a view, not an input;
#: an increment in place returns its input, itself such an array)
_ALLOCATING = (Elemwise, CAReduce, IncSubtensor, AdvancedIncSubtensor1, AdvancedSubtensor1, Alloc, Join)


def overwritable(node: Apply, i: int) -> bool:
    """Whether ``node``'s function may write into its input ``i`` (which its Op destroys):
    the input is an array of rank > 0 that a node of :data:`_ALLOCATING` made earlier in the
    call, or a view of one (``view_map`` followed up), never a graph input or a constant,
    and no other input of the node shares its memory (a loop writing one element could
    change another it reads later)."""
    var = node.inputs[i]
    if getattr(var.type, "ndim", 0) == 0:
        return False
    root = view_root(var)
    if root.owner is None or not isinstance(root.owner.op, _ALLOCATING):
        return False
    return all(view_root(v) is not root for k, v in enumerate(node.inputs) if k != i)


def nb_dtype(dtype: str) -> str:
    """The expression for ``dtype`` in generated code (``np.float64``, ``np.bool_``)."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def check_types(node: Apply, what: str, variables: Sequence[Any] | None = None) -> None:
    """Raise :class:`NoNumbaImpl` unless every Variable (default: the node's inputs and
    outputs) is a tensor of a dtype the backend writes."""
    for v in variables if variables is not None else [*node.inputs, *node.outputs]:
        if not isinstance(v.type, (TensorType, ScalarType)) or v.type.dtype not in SUPPORTED_DTYPES:
            raise NoNumbaImpl(f"{what}: {v.type} is not a tensor of a dtype the Numba backend writes")


def ndim_of(v: Any) -> int:
    """A Variable's rank (a ScalarType's: 0, a Numba scalar as a 0-d tensor is)."""
    return getattr(v.type, "ndim", 0)


def shape_tuple(items: Sequence[str]) -> str:
    """A tuple expression of the given length expressions (``(n,)`` for one)."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def np_scalar(dtype: str, value: Any) -> Any:
    return np.dtype(dtype).type(value)
