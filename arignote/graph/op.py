"""The :class:`Op` contract: what a computation is, how it builds nodes and how it runs.

An Op is a function definition; an :class:`~arignote.graph.basic.Apply` is a call of it.
A subclass defines :meth:`Op.make_node` (or ``itypes``/``otypes``) and :meth:`Op.perform`;
``__props__`` makes equal Ops interchangeable for merging. Optional hooks, looked up with
``getattr`` by the parts that use them: ``infer_shape(fgraph, node, shapes)``,
``connection_pattern(node)``, ``flops(inputs, outputs)``, ``debug_perform(node, inputs,
output_storage)``, ``get_params(node)``.

>>> from arignote.graph.basic import Apply
>>> from arignote.graph.op import Op
>>> from arignote.graph.type import Type
>>> class Num(Type):
...     def filter(self, data, strict=False, allow_downcast=None):
...         return float(data)
>>> class Scale(Op):
...     __props__ = ("factor",)
...     def __init__(self, factor):
...         self.factor = factor
...     def make_node(self, x):
...         return Apply(self, [x], [x.type()])
...     def perform(self, node, inputs, output_storage):
...         output_storage[0][0] = self.factor * inputs[0]
>>> Scale(2) == Scale(2), str(Scale(2))
(True, 'Scale{factor=2}')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.utils import MetaObject, add_tag_trace

__all__ = [
    "BasicThunkType",
    "HasInnerGraph",
    "InputStorageType",
    "Op",
    "OutputStorageType",
    "PassThroughOp",
    "PerformMethodType",
    "StorageCellType",
    "ThunkCallableType",
    "ThunkType",
    "has_own_thunk",
    "io_connection_pattern",
    "is_thunk_type",
]

ThunkType = Callable[[], None]
StorageMapType = dict
ComputeMapType = dict

# the storage-cell protocol's shapes, for annotations (PyTensor's names)
#: one value's cell: a one-element list, ``[None]`` until computed
StorageCellType = list[Any | None]
#: ``perform``'s ``output_storage`` and a thunk's input cells: one cell per Variable
InputStorageType = list[StorageCellType]
OutputStorageType = list[StorageCellType]
#: ``Op.perform(node, inputs, output_storage)``
PerformMethodType = Callable[[Apply, list[Any], OutputStorageType], None]
#: a thunk: computes its node's outputs into their cells
BasicThunkType = Callable[[], None]
#: a function making a thunk from a perform method, the storage and compute maps and a node
ThunkCallableType = Callable[[PerformMethodType, StorageMapType, ComputeMapType, Apply], None]


def is_thunk_type(thunk: Callable[..., Any]) -> ThunkType:
    """``thunk``, typed as a thunk (for type checkers; it is returned as it is).

    >>> f = lambda: None
    >>> is_thunk_type(f) is f
    True
    """
    if not callable(thunk):
        raise TypeError(f"a thunk must be callable, got {type(thunk).__name__} {thunk!r}")
    return thunk


class Op(MetaObject):
    """Base class of every operation in a graph.

    Required: ``make_node(*inputs) -> Apply`` (or class attributes ``itypes`` and
    ``otypes``) and ``perform(node, inputs, output_storage)``, unless ``make_thunk`` is
    overridden instead.
    """

    #: ``{output_index: [input_index]}``: outputs that are views of an input
    view_map: dict[int, list[int]] = {}
    #: ``{output_index: [input_index]}``: inputs that are overwritten to make an output
    destroy_map: dict[int, list[int]] = {}
    #: index of the output that ``__call__`` returns; ``None``: all (or the only) outputs
    default_output: int | None = None
    #: input Types of a simple Op (checked with ``is_super``); see :meth:`make_node`
    itypes: Sequence | None = None
    #: output Types of a simple Op
    otypes: Sequence | None = None
    #: records the caller's stack on a Variable's or Apply's ``tag.trace``
    #: (:func:`arignote.graph.utils.add_tag_trace`), for Ops that build nodes by hand
    add_tag_trace = staticmethod(add_tag_trace)

    # -- building -------------------------------------------------------------------------

    def make_node(self, *inputs: Variable) -> Apply:
        """Build the Apply node for ``inputs``; raise a clear error if they don't fit.

        The default serves Ops that declare ``itypes`` and ``otypes``: each input is
        checked with ``itype.is_super(input.type)`` and fresh outputs are made from
        ``otypes``.
        """
        if self.itypes is None or self.otypes is None:
            raise TypeError(
                f"{type(self).__name__} must define make_node, or the class attributes itypes and otypes"
            )
        if len(inputs) != len(self.itypes):
            raise ValueError(f"{self} takes {len(self.itypes)} inputs, got {len(inputs)}")
        checked = []
        for i, (inp, itype) in enumerate(zip(inputs, self.itypes)):
            if not isinstance(inp, Variable):
                inp = itype.filter_variable(inp)
            if not itype.is_super(inp.type):
                raise TypeError(f"{self}: input {i} ({inp}) has Type {inp.type}, expected {itype}")
            checked.append(inp)
        return Apply(self, checked, [t() for t in self.otypes])

    def __call__(
        self, *inputs: Any, name: str | None = None, return_list: bool = False, **kwargs: Any
    ) -> Any:
        """Build a node with :meth:`make_node` and return its output(s).

        Returns ``node.outputs[default_output]`` when ``default_output`` is set, else the
        only output, else the list of outputs (always a list with ``return_list``).
        ``name`` names the returned output (``name_i`` for each of several).
        An Op that cannot compute (no ``perform`` and no ``make_thunk`` of its own) cannot be
        applied: a TypeError, as PyTensor 3 refuses to make one.
        """
        node = self.make_node(*inputs, **kwargs)
        cls = type(self)
        if cls.perform is Op.perform and cls.make_thunk is Op.make_thunk:
            raise TypeError(
                f"Can't apply the Op {cls.__name__}: it defines neither "
                "perform(node, inputs, output_storage) nor make_thunk"
            )
        outputs = node.outputs
        do = self.default_output
        if name is not None:
            if do is not None:
                outputs[do].name = name
            elif len(outputs) == 1:
                outputs[0].name = name
            else:
                for i, out in enumerate(outputs):
                    out.name = f"{name}_{i}"
        if do is not None:
            out = outputs[do]
            return [out] if return_list else out
        if return_list or len(outputs) != 1:
            return list(outputs)
        return outputs[0]

    # -- running --------------------------------------------------------------------------

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        """Compute the outputs of ``node`` from input values into the storage cells.

        ``output_storage[i]`` is a one-element list; set ``output_storage[i][0]``. It may
        hold a value from a previous call (right dtype, any shape) that may be reused.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define perform(node, inputs, output_storage) or override make_thunk"
        )

    def prepare_node(
        self,
        node: Apply,
        storage_map: StorageMapType | None,
        compute_map: ComputeMapType | None,
        impl: str | None,
    ) -> None:
        """Hook run once per node before its thunk is made (precompute, cache, ...)."""

    def make_py_thunk(
        self,
        node: Apply,
        storage_map: StorageMapType,
        compute_map: ComputeMapType | None,
        no_recycling: Sequence[Variable],
        debug: bool = False,
    ) -> ThunkType:
        """A thunk that runs :meth:`perform` (or ``debug_perform`` with ``debug``)."""
        in_cells = [storage_map[v] for v in node.inputs]
        out_cells = [storage_map[v] for v in node.outputs]
        perform = getattr(self, "debug_perform", self.perform) if debug else self.perform
        # An Op with get_params always gets the params argument, even when they are None.
        has_params = hasattr(self, "get_params")
        params = node.run_params() if has_params else None
        no_recycle = [storage_map[v] for v in node.outputs if v in no_recycling] if no_recycling else []
        done = [compute_map[v] for v in node.outputs] if compute_map is not None else []

        # The thunk runs on every call: variants without the work a node does not need
        # (no cells to clear, no params, one compute flag) spare the Python glue.
        if no_recycle or has_params or len(done) > 1:
            extra = (params,) if has_params else ()

            def thunk() -> None:
                for cell in no_recycle:
                    cell[0] = None
                perform(node, [c[0] for c in in_cells], out_cells, *extra)
                for flag in done:
                    flag[0] = True

        elif done:
            (flag,) = done
            if len(in_cells) == 1:
                (i0,) = in_cells

                def thunk() -> None:
                    perform(node, [i0[0]], out_cells)
                    flag[0] = True

            elif len(in_cells) == 2:
                i0, i1 = in_cells

                def thunk() -> None:
                    perform(node, [i0[0], i1[0]], out_cells)
                    flag[0] = True

            else:

                def thunk() -> None:
                    perform(node, [c[0] for c in in_cells], out_cells)
                    flag[0] = True

        else:

            def thunk() -> None:
                perform(node, [c[0] for c in in_cells], out_cells)

        thunk.inputs = in_cells  # type: ignore[attr-defined]
        thunk.outputs = out_cells  # type: ignore[attr-defined]
        thunk.perform = perform  # type: ignore[attr-defined]
        thunk.lazy = False  # type: ignore[attr-defined]
        return thunk

    def make_thunk(
        self,
        node: Apply,
        storage_map: StorageMapType,
        compute_map: ComputeMapType | None,
        no_recycling: Sequence[Variable],
        impl: str | None = None,
    ) -> ThunkType:
        """Return a zero-argument function that computes ``node``.

        ``storage_map`` maps each Variable to its one-element storage cell and
        ``compute_map`` each Variable to a one-element flag cell that the thunk sets once
        the output is computed. Output cells of variables in ``no_recycling`` are
        cleared before each run, so no buffer from an earlier call is reused for them.
        ``impl`` is ``None`` or ``"py"``; arignote has no C implementations.
        """
        if impl not in (None, "py"):
            raise ValueError(
                f"{self}: no implementation {impl!r}; arignote Ops run through perform "
                "(impl='py') here, fast backends are chosen by the linker"
            )
        self.prepare_node(node, storage_map, compute_map, "py")
        return self.make_py_thunk(node, storage_map, compute_map, no_recycling)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Whether a node of this Op whose inputs are all constants may be precomputed."""
        return True

    def inplace_on_inputs(self, allowed_inplace_inputs: list[int]) -> Op:
        """An equivalent Op that works in place on some of ``allowed_inplace_inputs``.

        Default: ``self`` (no in-place version).
        """
        return self

    # -- differentiation ------------------------------------------------------------------
    # The seeds spell the rules grad / L_op / R_op; PyTensor 3 spells them pullback /
    # pushforward. An Op may define either spelling; each default forwards to the other,
    # so callers may use either one.

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Vector-Jacobian product: one gradient term per input (the seeds' ``L_op``)."""
        if type(self).L_op is not Op.L_op:
            return self.L_op(inputs, outputs, output_grads)
        return self.grad(inputs, output_grads)

    def pullback_in_pass(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
        wanted: Sequence[bool],
        memo: dict,
    ) -> list:
        """:meth:`pullback` as one reverse pass of ``grad`` calls it.

        ``wanted[i]`` says whether input ``i``'s term is needed (the rule may return
        ``None`` for one that is not, and skip building it); ``memo`` is a dict shared by
        every node of the pass, in which a rule may keep what other nodes' rules can reuse
        (Elemwise keeps the nodes its replayed scalar rules build, so a subexpression used
        twice is differentiated into one node). The default calls :meth:`pullback`.
        """
        return self.pullback(inputs, outputs, output_grads)

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Seeds' spelling of :meth:`pullback`; the default uses :meth:`grad`."""
        if type(self).pullback is not Op.pullback:
            return self.pullback(inputs, outputs, output_grads)
        return self.grad(inputs, output_grads)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        """Gradient terms of the cost with respect to each input (see the Op contract).

        Not defined by default: differentiating through an Op that defines none of
        ``grad``, ``L_op`` or ``pullback`` is an error.
        """
        if type(self).L_op is not Op.L_op or type(self).pullback is not Op.pullback:
            outputs = self.make_node(*inputs).outputs
            return self.pullback(inputs, outputs, output_grads)
        raise NotImplementedError(
            f"{self} defines no gradient (grad, L_op or pullback); it cannot be differentiated"
        )

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """Jacobian-vector product: one term per output (the seeds' ``R_op``)."""
        return self.R_op(inputs, eval_points)

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list:
        """Seeds' spelling of :meth:`pushforward`; not defined by default."""
        if type(self).pushforward is not Op.pushforward:
            return self.pushforward(inputs, self.make_node(*inputs).outputs, eval_points)
        raise NotImplementedError(f"{self} defines no R_op / pushforward")

    # -- printing -------------------------------------------------------------------------

    def __str__(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)


class PassThroughOp(Op):
    """Base of the Ops whose one output holds their one input's value (itself, a view or a
    copy of it, with a gradient rule or declared facts of their own): the shape is the
    input's, and gradients and tangents pass straight through (a missing tangent is a
    disconnected one). Subclasses define ``make_node`` and ``perform``."""

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [output_grads[0]]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
    ) -> list:
        t = tangents[0]
        return [disconnected_type() if t is None else t]


def has_own_thunk(op: Any) -> bool:
    """Whether the class of ``op`` overrides ``Op.make_thunk`` (its own thunk, as
    ``IfElse``'s lazy one, runs instead of ``perform`` and of any backend's)."""
    return getattr(type(op), "make_thunk", Op.make_thunk) is not Op.make_thunk


class HasInnerGraph:
    """Mixin for Ops that hold a graph of their own (fused kernels, scan, OpFromGraph).

    Subclasses provide ``fgraph`` (the inner FunctionGraph) and ``clone()``; ``inner_inputs``
    and ``inner_outputs`` are its inputs and outputs unless a subclass says otherwise.
    Graph-wide tools (printing, cloning with ``clone_inner_graphs``) use them.
    """

    @property
    def fn(self) -> Any:
        """The compiled inner function (subclasses that compile one define it)."""
        raise AttributeError(f"{type(self).__name__} has no compiled inner function")

    @property
    def inner_inputs(self) -> list[Variable]:
        return self._inner_fgraph("inner_inputs").inputs

    @property
    def inner_outputs(self) -> list[Variable]:
        return self._inner_fgraph("inner_outputs").outputs

    def _inner_fgraph(self, what: str) -> Any:
        fgraph = getattr(self, "fgraph", None)
        if fgraph is None:
            raise NotImplementedError(f"{type(self).__name__} must define fgraph (or {what})")
        return fgraph

    def clone(self) -> Op:
        raise NotImplementedError(f"{type(self).__name__} must define clone")


def io_connection_pattern(inputs: Sequence[Variable], outputs: Sequence[Variable]) -> list[list[bool]]:
    """Which ``outputs`` depend on which ``inputs`` of the subgraph between them.

    Row ``i``, column ``j`` is true when output ``j`` is connected to input ``i`` through the
    nodes' own ``connection_pattern`` (an Op without one connects every input to every
    output), the pattern that an Op holding this subgraph as its inner graph has.

    >>> import arignote.tensor as pt
    >>> x, y = pt.dscalar("x"), pt.dscalar("y")
    >>> io_connection_pattern([x, y], [x * 2, x + y])
    [[True, True], [False, True]]
    """
    from arignote.graph.traversal import io_toposort  # (traversal imports this module)

    inputs, outputs = list(inputs), list(outputs)
    deps: dict[Variable, frozenset[int]] = {v: frozenset((k,)) for k, v in enumerate(inputs)}
    empty: frozenset[int] = frozenset()
    for node in io_toposort(inputs, outputs):
        in_deps = [deps.get(v, empty) for v in node.inputs]
        pattern = node_connection_pattern(node)
        for j, out in enumerate(node.outputs):
            if pattern is None:
                deps[out] = empty.union(*in_deps)
            else:
                deps[out] = empty.union(*(d for d, row in zip(in_deps, pattern, strict=True) if row[j]))
    return [[k in deps.get(o, empty) for o in outputs] for k in range(len(inputs))]


def node_connection_pattern(node: Apply) -> list[list[bool]] | None:
    """The node's Op's connection pattern (an Elemwise's: its scalar op's), checked to have
    one row per input of one entry per output, or ``None`` when the Op defines none (every
    input connected to every output)."""
    fn = getattr(node.op, "connection_pattern", None)
    # (an Op whose pattern is its scalar op's, as an Elemwise's, is read from there: None,
    # all connected, when the scalar op has none, which the gradient's fast path takes)
    if fn is None or getattr(fn, "from_scalar_op", False):
        fn = getattr(getattr(node.op, "scalar_op", None), "connection_pattern", None)
        if fn is None:
            return None
    pattern = fn(node)
    if len(pattern) != len(node.inputs) or any(len(row) != len(node.outputs) for row in pattern):
        raise ValueError(
            f"{node.op}.connection_pattern must give one row per input ({len(node.inputs)}) of one "
            f"entry per output ({len(node.outputs)}); got {pattern!r} for {node}"
        )
    return pattern
