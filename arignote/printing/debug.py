"""``debugprint`` (``dprint``): a graph as an indented tree, one line per Variable.

The format is PyTensor 3's: the Op (or the Variable, for inputs and constants), an id such
as ``[id A]`` so that shared sub-graphs can be recognised, and options for types, shapes,
memory maps and the toposort position of each node of a compiled function. A node of a
compiled function that runs through the generic ``perform`` thunk (its backend has no fast
implementation of its Op) is marked ``[perform]``. A sub-graph met a second time is not
printed again: its line is followed by ``···``. Ops that hold a graph
of their own (fused kernels) get a section ``Inner graphs:`` at the end. The walk uses an
explicit stack, so a graph of any depth prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import singledispatch
from typing import Any, TextIO

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.printing.utils import _inner_graph_op, _is_function
from arignote.tensor.conversion import is_literal_constant

__all__ = [
    "char_from_number",
    "debugprint",
    "dprint",
    "op_debug_information",
    "register_node_annotator",
    "unregister_node_annotator",
]


def char_from_number(number: int) -> str:
    """The id letters for ``number``: base 26 with ``A`` as the zero digit (PyTensor's ids).

    >>> [char_from_number(n) for n in (0, 1, 25, 26, 27, 26 * 26)]
    ['A', 'B', 'Z', 'BA', 'BB', 'BAA']
    """
    if number < 0:
        raise ValueError(f"char_from_number needs a number >= 0, got {number}")
    digits = []
    while True:
        number, rem = divmod(number, 26)
        digits.append(chr(65 + rem))
        if number == 0:
            break
    return "".join(reversed(digits))


@singledispatch
def op_debug_information(op: Any, node: Apply) -> dict[Apply, dict[Variable, str]]:
    """Extra text that ``debugprint(..., print_op_info=True)`` shows next to Variables.

    Register an implementation for an Op class; it returns ``{node: {variable: text}}``
    for the inputs and outputs of ``node`` that deserve a note (``(text)`` is appended to
    their lines). The default has nothing to say.
    """
    return {}


#: Callables ``fn(node, context) -> str | None`` asked about every Apply line of a
#: debugprint; a string they return is appended to the line. ``context`` is the compiled
#: function or FunctionGraph being printed (``None`` for plain Variables). This is where
#: a backend says that a node runs without a fast implementation.
_NODE_ANNOTATORS: list[Callable[[Apply, Any], str | None]] = []


def register_node_annotator(fn: Callable[[Apply, Any], str | None]) -> Callable:
    """Add ``fn(node, context) -> str | None`` to the notes debugprint puts on Apply lines.

    Returns ``fn``, so it can be used as a decorator; see :func:`unregister_node_annotator`.
    """
    if fn not in _NODE_ANNOTATORS:
        _NODE_ANNOTATORS.append(fn)
    return fn


def unregister_node_annotator(fn: Callable) -> None:
    """Stop asking ``fn`` about Apply lines (nothing happens if it was not registered)."""
    if fn in _NODE_ANNOTATORS:
        _NODE_ANNOTATORS.remove(fn)


#: Appended to the line of a node of a compiled function that runs through the generic
#: ``perform`` thunk: never silently slow (DESIGN.md section 3).
PERFORM_MARKER = "[perform]"


def _runs_on_perform(node: Apply, context: Any) -> bool:
    """Whether the compiled function ``context`` runs ``node`` through ``perform``: its
    runner (``context.vm``) says so through ``impl_of(node)``. Plain graphs and
    FunctionGraphs are never marked (nothing runs them)."""
    if context is None or isinstance(context, FunctionGraph):
        return False
    impl_of = getattr(getattr(context, "vm", None), "impl_of", None)
    return impl_of is not None and impl_of(node) == "perform"


def _is_symbolic_op(op: Any) -> bool:
    return any(cls.__name__ == "SymbolicOp" for cls in type(op).__mro__)


def _storage_of(obj: Any) -> dict | None:
    vm = getattr(obj, "vm", None)
    storage = getattr(vm, "storage_map", None)
    if storage is None:
        storage = getattr(obj, "storage_map", None)
    return storage if isinstance(storage, dict) else None


class _LineSink:
    """Collects pieces of text and writes them out in chunks of about a megabyte (a huge
    print stays bounded in memory, a small one is one ``write``)."""

    __slots__ = ("file", "parts", "size")

    def __init__(self, file: TextIO):
        self.file = file
        self.parts: list[str] = []
        self.size = 0

    def add(self, line: str) -> None:
        self.parts.append(line)
        self.parts.append("\n")
        self.size += len(line)
        if self.size > 1 << 20:
            self.flush()

    def add_pieces(self, a: str, b: str, c: str, d: str) -> None:
        """The line ``a + b + c + d``, without building it."""
        parts = self.parts
        parts += (a, b, c, d, "\n")
        self.size += len(b) + len(d) + 8
        if self.size > 1 << 20:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.file.write("".join(self.parts))
            self.parts = []
            self.size = 0


class _StringSink:
    """A write-only text buffer (``"".join`` at the end: faster than StringIO for big text)."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.write = self.chunks.append

    def getvalue(self) -> str:
        return "".join(self.chunks)


class _DebugPrinter:
    """State of one :func:`debugprint` call: ids, what was printed, inner graphs found."""

    def __init__(
        self,
        sink: _LineSink,
        depth: int,
        print_type: bool,
        print_shape: bool,
        id_type: str,
        stop_on_name: bool,
        done: dict,
        used_ids: dict,
        print_op_info: bool,
        print_destroy_map: bool,
        print_view_map: bool,
    ):
        self.sink = sink
        self.depth = depth
        self.print_type = print_type
        self.print_shape = print_shape
        self.id_type = id_type
        self.stop_on_name = stop_on_name
        self.done = done
        self.used_ids = used_ids
        self.print_op_info = print_op_info
        self.print_destroy_map = print_destroy_map
        self.print_view_map = print_view_map
        self.op_information: dict = {}
        self.inner_vars: list[Variable] = []
        self._inner_seen: set = set()

    # -- ids and labels -------------------------------------------------------------------

    def assign_id(self, obj: Any, var: Variable) -> str:
        used = self.used_ids
        text = used.get(obj)
        if text is not None:
            self.done[obj] = text
            return text
        id_type = self.id_type
        if id_type == "CHAR":
            text = f"[id {char_from_number(len(used))}]"
        elif id_type == "int":
            text = f"[id {len(used)}]"
        elif id_type == "id":
            text = f"[id {id(var)}]"
        elif id_type == "auto":
            text = f"[id {var.auto_name}]"
        elif id_type == "":
            text = ""
        else:
            raise ValueError(
                f"debugprint: id_type must be 'CHAR', 'int', 'id', 'auto' or '', got {id_type!r}"
            )
        used[obj] = text
        self.done[obj] = text
        return text

    def note_inner(self, var: Variable) -> None:
        """Remember ``var`` if its node holds an inner graph (printed in a second pass)."""
        owner = var.owner
        if owner is not None and var not in self._inner_seen and _inner_graph_op(owner.op) is not None:
            self._inner_seen.add(var)
            self.inner_vars.append(var)

    def add_op_info(self, node: Apply | None) -> None:
        if node is not None and node not in self.op_information:
            self.op_information.update(op_debug_information(node.op, node) or {})

    def _type_and_shape(self, var: Variable) -> str:
        text = ""
        if self.print_type:
            text = f" <{var.type}>"
        if self.print_shape:
            shape = getattr(var.type, "shape", None)
            if shape is not None:
                text += f" shape={str(tuple(shape)).replace('None', '?')}"
        return text

    def leaf_label(
        self,
        var: Variable,
        storage: dict | None,
        parent_node: Apply | None,
        inner_to_outer: dict | None,
        inner_graph_node: Apply | None,
        key: Any = None,
    ) -> str:
        ident = self.assign_id(var if key is None else key, var)
        parts = [str(var)]
        if ident:
            parts.append(f" {ident}")
        parts.append(self._type_and_shape(var))
        if storage is not None and var in storage:
            parts.append(f" {storage[var]}")
        label = "".join(parts)
        if inner_to_outer is not None and var in inner_to_outer:
            outer = inner_to_outer[var]
            label += f" -> {self.assign_id(outer.owner if outer.owner is not None else outer, outer)}"
        if self.op_information:
            for node in dict.fromkeys([inner_graph_node, parent_node]):
                info = self.op_information.get(node)
                if info and var in info:
                    label += f" ({info[var]})"
        return label

    def apply_label(
        self,
        var: Variable,
        header: bool,
        topo: dict | None,
        storage: dict | None,
        parent_node: Apply | None,
        context: Any,
    ) -> str:
        node = var.owner
        op = node.op
        ident = self.assign_id(node, var)
        ident = f" {ident}" if ident else ""
        memory = ""
        if self.print_destroy_map and getattr(op, "destroy_map", None):
            memory += f" d={op.destroy_map}"
        if self.print_view_map and getattr(op, "view_map", None):
            memory += f" v={op.view_map}"
        position = ""
        if topo:
            index = topo.get(node)
            if index is not None:
                position = f" {index}"
        if header:
            return f"{op}{ident}{memory}{position}"
        parts = [str(op)]
        if len(node.outputs) > 1:
            parts.append(f".{var.index}")
        parts.append(ident)
        parts.append(self._type_and_shape(var))
        if var.name:
            parts.append(f" '{var.name}'")
        parts.append(memory)
        parts.append(position)
        if _runs_on_perform(node, context):
            parts.append(f" {PERFORM_MARKER}")
        for annotate in _NODE_ANNOTATORS:
            note = annotate(node, context)
            if note:
                parts.append(f" {note}")
        if storage is not None and var in storage:
            parts.append(f" {storage[var]}")
        label = "".join(parts)
        if self.print_op_info:
            self.add_op_info(node)
        if self.op_information:
            info = (
                parent_node is not None and self.op_information.get(parent_node)
            ) or self.op_information.get(node)
            if info and var in info:
                label += f" ({info[var]})"
        return label

    # -- the walk -------------------------------------------------------------------------

    def walk(
        self,
        root: Variable,
        prefix: str = "",
        child_prefix: str | None = None,
        topo: dict | None = None,
        storage: dict | None = None,
        parent_node: Apply | None = None,
        inner_to_outer: dict | None = None,
        inner_graph_node: Apply | None = None,
        header: bool = False,
        context: Any = None,
    ) -> None:
        """Print the tree under ``root``, depth first, with an explicit stack."""
        depth = self.depth
        if depth == 0:
            return
        base = prefix if child_prefix is None else child_prefix
        add = self.sink.add_pieces
        done = self.done
        stop_on_name = self.stop_on_name
        # ``bars``: what is drawn left of the connector for the node being printed, 3
        # characters per ancestor below the root: "   " once that ancestor was the last
        # input of its parent, " │ " otherwise. Stack entries: (var, level, is_last, parent).
        bars = ""
        stack: list[tuple] = [(root, 0, True, parent_node, -1)]
        pop, push = stack.pop, stack.append
        while stack:
            var, level, is_last, parent, position = pop()
            if depth != -1 and level >= depth:
                self.note_inner(var)
                continue
            if level == 0:
                lead, bars, connector = prefix, "", ""
            else:
                width = 3 * (level - 1)
                if len(bars) != width:
                    bars = bars[:width]
                lead, connector = base, (" └─ " if is_last else " ├─ ")
            node = var.owner
            if node is None:
                # A Python number written in an expression is one shared constant here, where
                # PyTensor makes one per use: outside a compiled function (whose merged graph
                # shares constants in PyTensor too), each use gets its own id.
                key = None
                if position >= 0 and is_literal_constant(var) and not _is_function(context):
                    key = (var, parent, position)
                add(
                    lead,
                    bars,
                    connector,
                    self.leaf_label(var, storage, parent, inner_to_outer, inner_graph_node, key),
                )
                done.setdefault(var, "")
                continue
            is_header = header and level == 0
            if not is_header:
                self.note_inner(var)
            already = node in done
            add(lead, bars, connector, self.apply_label(var, is_header, topo, storage, parent, context))
            if level:
                bars += "   " if is_last else " │ "
            if already or (stop_on_name and var.name is not None):
                if not is_header:
                    add(base, bars, " └─ ", "···")
                continue
            inputs = node.inputs
            last = len(inputs) - 1
            for i in range(last, -1, -1):
                push((inputs[i], level + 1, i == last, node, i))

    # -- inner graphs ---------------------------------------------------------------------

    def print_inner_graphs(self, show: Callable[[Any], bool], print_fgraph_inputs: bool) -> None:
        todo = [v for v in self.inner_vars if show(v.owner.op)]
        if not todo:
            return
        add = self.sink.add
        add("")
        add("Inner graphs:")
        printed: set = set()
        k = 0
        while k < len(todo):
            var = todo[k]
            k += 1
            node = var.owner
            if node in printed:
                continue
            printed.add(node)
            op = node.op
            holder = _inner_graph_op(op)
            inner_fn = getattr(holder, "_fn", None)
            if _is_function(inner_fn):
                inner_inputs = inner_fn.maker.fgraph.inputs
                inner_outputs = inner_fn.maker.fgraph.outputs
            else:
                inner_inputs = holder.inner_inputs
                inner_outputs = holder.inner_outputs
            inner_to_outer = None
            mappings = getattr(holder, "get_oinp_iinp_iout_oout_mappings", None)
            if mappings is not None:
                pairs = mappings()["outer_inp_from_inner_inp"]
                inner_to_outer = {inner_inputs[i]: node.inputs[o] for i, o in pairs.items()}
            if self.print_op_info:
                self.add_op_info(node)
            add("")
            self.walk(var, prefix="", parent_node=node, inner_to_outer=inner_to_outer, header=True)
            if print_fgraph_inputs:
                for inp in inner_inputs:
                    self.walk(
                        inp,
                        prefix=" → ",
                        parent_node=node,
                        inner_to_outer=inner_to_outer,
                        inner_graph_node=node,
                    )
                inner_to_outer = None
            before = len(self.inner_vars)
            for out in inner_outputs:
                self.note_inner(out)
                self.walk(
                    out,
                    prefix=" ← ",
                    child_prefix="   ",
                    parent_node=node,
                    inner_to_outer=inner_to_outer,
                    inner_graph_node=node,
                )
            # inner graphs found inside this one are printed after it
            todo.extend(v for v in self.inner_vars[before:] if show(v.owner.op))


def debugprint(
    graph_like: Any,
    depth: int = -1,
    print_type: bool = False,
    print_shape: bool = False,
    file: Any = None,
    id_type: str = "CHAR",
    stop_on_name: bool = False,
    done: dict | None = None,
    print_storage: bool = False,
    used_ids: dict | None = None,
    print_op_info: bool = False,
    print_destroy_map: bool = False,
    print_view_map: bool = False,
    print_fgraph_inputs: bool = False,
    print_memory_map: bool = False,
    print_inner_graphs: bool | str = "auto",
) -> Any:
    """Print a graph as a tree, one line per Variable (PyTensor 3's format).

    Parameters
    ----------
    graph_like
        A Variable, an Apply (its outputs), a FunctionGraph, a compiled function (anything
        with ``maker.fgraph``; each node's toposort position ends its line, followed by
        ``[perform]`` for a node that runs through the generic ``perform`` thunk, the slow
        path: no fast implementation of its Op in the backend, as its ``vm.impl_of(node)``
        says), an ``In``/``Out`` (its ``variable``), or a list/tuple of these.
    depth
        How many levels to print (``-1``: all).
    print_type, print_shape
        Append ``<Type>`` / ``shape=(...)`` (``?`` for unknown lengths) to each line.
    file
        ``None``: print to ``sys.stdout`` and return ``graph_like``; ``"str"``: return the
        text; a writable file: write to it and return it.
    id_type
        ``"CHAR"`` (``[id A]``), ``"int"`` (``[id 0]``), ``"id"`` (Python ``id``),
        ``"auto"`` (``Variable.auto_name``) or ``""`` (no ids).
    stop_on_name
        Do not print below a named Variable.
    done, used_ids
        Dicts shared between calls: objects already printed (not expanded again) and the
        ids given so far.
    print_storage
        For a compiled function, the content of each Variable's storage cell.
    print_op_info
        Notes from :func:`op_debug_information` (e.g. the taps of a scan).
    print_destroy_map, print_view_map, print_memory_map
        Append ``d={...}`` / ``v={...}`` for Ops that overwrite / alias inputs (both with
        ``print_memory_map``).
    print_fgraph_inputs
        First list the inputs of FunctionGraphs and inner graphs, as ``→ x [id A]``.
    print_inner_graphs
        Print the graphs held by Ops that have one (``"auto"``: all but symbolic ones).

    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> print(debugprint(pt.log(x).sum(), print_type=True, file="str"), end="")
    Sum{axes=None} [id A] <Scalar(float64, shape=())>
     └─ Log [id B] <Vector(float64, shape=(?,))>
        └─ x [id C] <Vector(float64, shape=(?,))>
    """
    if not isinstance(depth, int) or isinstance(depth, bool):
        raise TypeError(f"debugprint: depth must be an int, got {depth!r}")
    if file == "str":
        out: Any = _StringSink()
    elif file is None:
        out = sys.stdout
    elif hasattr(file, "write"):
        out = file
    else:
        raise TypeError(f"debugprint: file must be None, 'str' or a writable file, got {file!r}")
    if print_memory_map:
        print_destroy_map = print_view_map = True
    if print_inner_graphs == "auto":

        def show(op: Any) -> bool:
            holder = _inner_graph_op(op)
            return holder is not None and not _is_symbolic_op(holder)

    elif print_inner_graphs:

        def show(op: Any) -> bool:
            return _inner_graph_op(op) is not None

    else:

        def show(op: Any) -> bool:
            return False

    sink = _LineSink(out)
    printer = _DebugPrinter(
        sink,
        depth,
        print_type,
        print_shape,
        id_type,
        stop_on_name,
        {} if done is None else done,
        {} if used_ids is None else used_ids,
        print_op_info,
        print_destroy_map,
        print_view_map,
    )

    graphs = graph_like if isinstance(graph_like, (list, tuple, set)) else (graph_like,)
    inputs_to_print: list[Variable] = []
    # (variable, toposort positions, storage map, context for annotators)
    roots: list[tuple[Variable, dict | None, dict | None, Any]] = []
    for obj in graphs:
        if isinstance(obj, Variable):
            roots.append((obj, None, None, None))
        elif isinstance(obj, Apply):
            roots.extend((o, None, None, None) for o in obj.outputs)
        elif isinstance(obj, FunctionGraph) or _is_function(obj):
            fgraph = obj if isinstance(obj, FunctionGraph) else obj.maker.fgraph
            if print_fgraph_inputs:
                inputs_to_print.extend(fgraph.inputs)
            topo = {node: i for i, node in enumerate(fgraph.toposort())}
            storage = _storage_of(obj) if print_storage else None
            roots.extend((o, topo, storage, obj) for o in fgraph.outputs)
        elif isinstance(obj, (int, float, np.ndarray)) and not isinstance(obj, bool):
            sink.add(str(obj))
        elif isinstance(getattr(obj, "variable", None), Variable):  # In / Out
            roots.append((obj.variable, None, None, None))
        else:
            raise TypeError(f"debugprint cannot print an object of type {type(obj).__name__}: {obj!r}")

    for var in inputs_to_print:
        printer.walk(var, prefix="→ ", parent_node=var.owner)
    for var, topo, storage, context in roots:
        if print_op_info:
            printer.add_op_info(var.owner)
        printer.walk(var, topo=topo, storage=storage, parent_node=var.owner, context=context)
    printer.print_inner_graphs(show, print_fgraph_inputs)
    sink.flush()

    if file == "str":
        return out.getvalue()
    if file is None:
        return graph_like
    if hasattr(out, "flush"):
        out.flush()
    return out


dprint = debugprint
