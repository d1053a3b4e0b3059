"""Printing graphs: :func:`debugprint` (``dprint``), :func:`pprint` and :func:`pydotprint`.

:func:`debugprint` shows a graph as an indented tree, one line per Variable, in PyTensor 3's
format: the Op (or the Variable, for inputs and constants), an id such as ``[id A]`` so that
shared sub-graphs can be recognised, and options for types, shapes, memory maps and the
toposort position of each node of a compiled function. A sub-graph met a second time is not
printed again: its line is followed by ``···``. Ops that hold a graph of their own (fused
kernels) get a section ``Inner graphs:`` at the end.

>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> y = pt.exp(x) + x * 2.0
>>> _ = debugprint(y)
Add [id A]
 ├─ Exp [id B]
 │  └─ x [id C]
 └─ Mul [id D]
    ├─ x [id C]
    └─ ExpandDims{axis=0} [id E]
       └─ 2.0 [id F]

:func:`pprint` writes an expression the way one would on paper:

>>> pprint(y)
'(Exp(x) + (x * 2.0))'

:func:`pydotprint` draws the graph with Graphviz (``format="dot"`` needs nothing installed;
pictures need ``pip install arignote[viz]`` and the Graphviz ``dot`` program).

Nothing here recurses on the depth of a graph: a chain of 100,000 nodes prints (with a
``depth`` limit, or in full to a file, which is quadratic in size since every line is
indented by its depth).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from functools import singledispatch
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import HasInnerGraph, Op
from arignote.graph.utils import Scratchpad

__all__ = [
    "ConstantPrinter",
    "DefaultPrinter",
    "DimShufflePrinter",
    "FunctionPrinter",
    "IgnorePrinter",
    "LeafPrinter",
    "MakeVectorPrinter",
    "OperatorPrinter",
    "PPrinter",
    "PatternPrinter",
    "Print",
    "Printer",
    "PrinterState",
    "char_from_number",
    "constant_printer",
    "debugprint",
    "default_colorCodes",
    "default_printer",
    "dprint",
    "leaf_printer",
    "op_debug_information",
    "pp",
    "pprint",
    "pydotprint",
    "register_node_annotator",
    "set_precedence",
    "unregister_node_annotator",
]


# =========================================================================================
# debugprint
# =========================================================================================


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


def _is_function(obj: Any) -> bool:
    """A compiled function: anything with ``maker.fgraph`` (duck-typed)."""
    return isinstance(getattr(getattr(obj, "maker", None), "fgraph", None), FunctionGraph)


def _inner_graph_op(op: Any) -> Any:
    """The Op holding an inner graph for a node of ``op``: itself, or the scalar/core op
    wrapped by an Elemwise/Blockwise; ``None`` if there is none."""
    if isinstance(op, HasInnerGraph):
        return op
    for attr in ("scalar_op", "core_op"):
        inner = getattr(op, attr, None)
        if isinstance(inner, HasInnerGraph):
            return inner
    return None


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
    ) -> str:
        ident = self.assign_id(var, var)
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
        stack: list[tuple] = [(root, 0, True, parent_node)]
        pop, push = stack.pop, stack.append
        while stack:
            var, level, is_last, parent = pop()
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
                add(
                    lead,
                    bars,
                    connector,
                    self.leaf_label(var, storage, parent, inner_to_outer, inner_graph_node),
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
                push((inputs[i], level + 1, i == last, node))

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
        with ``maker.fgraph``; each node's toposort position ends its line), an ``In``/``Out``
        (its ``variable``), or a list/tuple of these.
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


# =========================================================================================
# pprint
# =========================================================================================


class PrinterState(Scratchpad):
    """What printers share while printing one expression: ``pprinter``, ``precedence`` and
    ``memo`` (the text of every Variable already printed)."""

    def __init__(self, props: Any = None, **more_props: Any):
        if isinstance(props, Scratchpad):
            self.__update__(props)
        elif props:
            self.__dict__.update(props)
        self.__dict__.update(more_props)
        self.memo: dict = {}


class Printer(ABC):
    """Turns one Variable (usually the output of one kind of Op) into text."""

    @abstractmethod
    def process(self, var: Variable, pstate: PrinterState) -> str:
        """The text for ``var``; inputs are printed with ``pstate.pprinter.process``."""


@contextmanager
def set_precedence(pstate: PrinterState, precedence: float = -1000):
    """Set ``pstate.precedence`` for the duration of a ``with`` block."""
    old = getattr(pstate, "precedence", None)
    pstate.precedence = precedence
    try:
        yield
    finally:
        pstate.precedence = old


def _owner_of(var: Variable, what: str) -> Apply:
    node = var.owner
    if node is None:
        raise TypeError(f"{what} cannot print {var}: it is not the output of an operation")
    return node


class OperatorPrinter(Printer):
    """``(a op b op c)`` for a binary operator, ``(op a)`` for a unary one (always in
    parentheses, so precedence never changes the meaning)."""

    def __init__(self, operator: str, precedence: float, assoc: str = "left"):
        if assoc not in ("left", "right", "either"):
            raise ValueError(f"OperatorPrinter: assoc must be 'left', 'right' or 'either', got {assoc!r}")
        self.operator = operator
        self.precedence = precedence
        self.assoc = assoc

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = _owner_of(output, f"operator {self.operator}")
        pprinter = pstate.pprinter
        last = len(node.inputs) - 1
        parts = []
        for i, inp in enumerate(node.inputs):
            prec = self.precedence
            if (self.assoc == "left" and i != 0) or (self.assoc == "right" and i != last):
                prec += 1e-6
            with set_precedence(pstate, prec):
                parts.append(pprinter.process(inp, pstate))
        text = self.operator + parts[0] if len(parts) == 1 else f" {self.operator} ".join(parts)
        memo[output] = result = f"({text})"
        return result


class PatternPrinter(Printer):
    """Fill a ``%``-pattern with the inputs' text: ``PatternPrinter(("|%(0)s|", -1000))``.

    One pattern per output; each is a string or ``(string, precedence of input 0, ...)``.
    """

    def __init__(self, *patterns: str | tuple):
        self.patterns = [(p, ()) if isinstance(p, str) else (p[0], tuple(p[1:])) for p in patterns]

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = _owner_of(output, f"pattern {self.patterns}")
        pattern, precs = self.patterns[node.outputs.index(output)]
        precs = precs + (1000,) * (len(node.inputs) - len(precs))
        values = {}
        for i, (inp, prec) in enumerate(zip(node.inputs, precs)):
            with set_precedence(pstate, prec):
                values[str(i)] = pstate.pprinter.process(inp, pstate)
        memo[output] = result = pattern % values
        return result


class FunctionPrinter(Printer):
    """``name(input, ..., keyword=op.keyword)``: one name per output."""

    def __init__(self, names: Sequence[str], keywords: Sequence[str] | None = None):
        self.names = list(names)
        self.keywords = list(keywords or [])

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = _owner_of(output, f"function {self.names}")
        name = self.names[node.outputs.index(output)]
        with set_precedence(pstate):
            args = [pstate.pprinter.process(inp, pstate) for inp in node.inputs]
        args.extend(f"{kw}={getattr(node.op, kw)}" for kw in self.keywords)
        memo[output] = result = f"{name}({', '.join(args)})"
        return result


class IgnorePrinter(Printer):
    """Print the (first) input in place of the output: for copies and identities."""

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = _owner_of(output, "IgnorePrinter")
        memo[output] = result = pstate.pprinter.process(node.inputs[0], pstate)
        return result


#: names printed as (ascii) Greek letters
greek = {name: f"\\{name}" for name in ("alpha", "beta", "gamma", "delta", "epsilon")}
special = {"middle_dot": "\\dot", "big_sigma": "\\Sigma"}


class LeafPrinter(Printer):
    """A Variable by its name (or ``str``)."""

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        result = greek.get(output.name) if output.name is not None else None
        memo[output] = result = result if result is not None else str(output)
        return result


class ConstantPrinter(Printer):
    """A Constant by its value."""

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        memo[output] = result = str(output.data)
        return result


class DefaultPrinter(Printer):
    """``Op(input, ...)`` for an output, the name for an input."""

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = output.owner
        if node is None:
            return leaf_printer.process(output, pstate)
        with set_precedence(pstate):
            args = ", ".join(pstate.pprinter.process(inp, pstate) for inp in node.inputs)
        memo[output] = result = f"{node.op}({args})"
        return result


class DimShufflePrinter(Printer):
    """A DimShuffle that only adds broadcastable dimensions prints as its input; a full
    reversal as ``x.T``; anything else as ``DimShuffle{1, x, 0}(x)``."""

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = _owner_of(output, "DimShufflePrinter")
        order = list(node.op.new_order)
        while order and order[0] == "x":
            order.pop(0)
        inp = node.inputs[0]
        text = pstate.pprinter.process(inp, pstate)
        ndim = inp.type.ndim
        if order == list(range(ndim)):
            result = text
        elif order == list(range(ndim - 1, -1, -1)):
            result = f"{text}.T"
        else:
            result = f"DimShuffle{{{', '.join(str(o) for o in order)}}}({text})"
        memo[output] = result
        return result


class MakeVectorPrinter(Printer):
    """``[a, b, c]``."""

    def process(self, output: Variable, pstate: PrinterState) -> str:
        memo = pstate.memo
        if output in memo:
            return memo[output]
        node = _owner_of(output, "MakeVectorPrinter")
        with set_precedence(pstate):
            items = [pstate.pprinter.process(inp, pstate) for inp in node.inputs]
        memo[output] = result = f"[{', '.join(items)}]"
        return result


leaf_printer = LeafPrinter()
constant_printer = ConstantPrinter()
default_printer = DefaultPrinter()


# The printers of arignote's own Ops. They are chosen by looking at the Op (an Elemwise by
# its scalar op's name), so that this module needs no import of arignote.tensor; Ops
# written elsewhere register theirs with ``pprint.assign(OpClass, printer)``.
_TENSOR_OPERATORS = {
    "add": ("+", -2, "either"),
    "mul": ("*", -1, "either"),
    "sub": ("-", -2, "left"),
    "neg": ("-", 0, "either"),
    "true_div": ("/", -1, "left"),
    "int_div": ("//", -1, "left"),
    "pow": ("**", 1, "right"),
}
_SCALAR_OPERATORS = {**_TENSOR_OPERATORS, "mod": ("%", -1, "left")}
_OPERATOR_PRINTERS = {k: OperatorPrinter(*v) for k, v in _SCALAR_OPERATORS.items()}
_ELEMWISE_SPECIAL = {
    "abs": PatternPrinter(("|%(0)s|", -1000)),
    "second": FunctionPrinter(["fill"]),
    "identity": IgnorePrinter(),
}
_CLASS_PRINTERS: dict[str, Printer] = {
    "arignote.tensor.math.Sum": FunctionPrinter(["sum"], ["axis"]),
    "arignote.tensor.elemwise.DimShuffle": DimShufflePrinter(),
    "arignote.tensor.products.Dot": OperatorPrinter(special["middle_dot"], -1, "left"),
    "arignote.tensor.alloc.Alloc": FunctionPrinter(["alloc"]),
    "arignote.tensor.shape.MakeVector": MakeVectorPrinter(),
    "arignote.tensor.join.Join": FunctionPrinter(["join"]),
}
_cast_printers: dict[str, Printer] = {}


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _builtin_printer(op: Any) -> Printer | None:
    cls_printer = _CLASS_PRINTERS.get(_qualname(type(op)))
    if cls_printer is not None:
        return cls_printer
    scalar_op = getattr(op, "scalar_op", None)
    if scalar_op is not None and type(op).__name__ == "Elemwise":
        name = getattr(scalar_op, "name", None)
        if name in _TENSOR_OPERATORS:
            return _OPERATOR_PRINTERS[name]
        special_printer = _ELEMWISE_SPECIAL.get(name)
        if special_printer is not None:
            return special_printer
        o_type = getattr(scalar_op, "o_type", None)
        if type(scalar_op).__name__ == "Cast" and o_type is not None:
            dtype = str(getattr(o_type, "dtype", o_type))
            printer = _cast_printers.get(dtype)
            if printer is None:
                printer = _cast_printers[dtype] = FunctionPrinter([dtype])
            return printer
        return None
    if _qualname(type(op)).startswith("arignote.scalar."):
        return _OPERATOR_PRINTERS.get(getattr(op, "name", None))
    return None


class _BuiltinPrinters(Printer):
    def process(self, output: Variable, pstate: PrinterState) -> str:
        return _builtin_printer(output.owner.op).process(output, pstate)


def _has_builtin_printer(pstate: PrinterState, var: Variable) -> bool:
    owner = var.owner
    return owner is not None and _builtin_printer(owner.op) is not None


class PPrinter(Printer):
    """Chooses a printer for each Variable: by Op (``assign(op, printer)``), by Op class
    (``assign(OpClass, printer)``), then by conditions ``cond(pstate, var)`` (the most
    recently assigned first).

    ``pprinter(var)`` returns the text for ``var``; ``pprinter(inputs, outputs, updates)``
    a small program (:meth:`process_graph`).
    """

    def __init__(self) -> None:
        self.printers: list[tuple[Callable, Printer]] = []
        self.printers_dict: dict[Any, Printer] = {}
        #: ``leaf_if(var)`` true: print ``var`` by its name, whatever its Op (process_graph)
        self.leaf_if: Callable[[Variable], bool] | None = None

    def assign(self, condition: Op | type | Callable, printer: Printer) -> None:
        """Use ``printer`` for outputs of the Op ``condition``, of Ops of the class
        ``condition``, or for Variables where ``condition(pstate, var)`` is true."""
        if isinstance(condition, (Op, type)):
            self.printers_dict[condition] = printer
        elif callable(condition):
            self.printers.insert(0, (condition, printer))
        else:
            raise TypeError(
                f"PPrinter.assign: condition must be an Op, a class or a callable, got {condition!r}"
            )

    def _choose(self, var: Variable, pstate: PrinterState) -> Printer | None:
        if self.leaf_if is not None and self.leaf_if(var):
            return leaf_printer
        owner = getattr(var, "owner", None)
        if owner is not None:
            table = self.printers_dict
            op = owner.op
            try:
                printer = table.get(op)
            except TypeError:  # an unhashable Op
                printer = None
            if printer is None:
                printer = table.get(type(op))
            if printer is not None:
                return printer
        for condition, printer in self.printers:
            if condition(pstate, var):
                return printer
        return None

    def process(self, r: Variable, pstate: PrinterState | dict | None = None) -> str:
        if pstate is None:
            pstate = PrinterState(pprinter=self)
        elif isinstance(pstate, dict):
            pstate = PrinterState(pprinter=self, **pstate)
        if r in pstate.memo:
            return pstate.memo[r]
        if not pstate.__dict__.get("_driven"):
            pstate._driven = True
            try:
                self._bottom_up(r, pstate)
            finally:
                pstate._driven = False
            if r in pstate.memo:
                return pstate.memo[r]
        printer = self._choose(r, pstate)
        return printer.process(r, pstate) if printer is not None else ""

    def _bottom_up(self, r: Variable, pstate: PrinterState) -> None:
        """Print every ancestor of ``r`` before ``r`` (no recursion on graph depth).

        Printers ask for their inputs through ``process``; with the inputs already in
        ``pstate.memo`` that is one step deep. A text is dropped from the memo once every
        node using it is done, so a long chain needs memory for one level at a time.
        """
        if r.owner is None:
            return
        order: list[Variable] = []
        clients: dict = {}
        seen = {r}
        stack: list = [(r, False)]
        while stack:
            var, expanded = stack.pop()
            if expanded:
                order.append(var)
                continue
            stack.append((var, True))
            node = var.owner
            if node is None:
                continue
            for inp in dict.fromkeys(node.inputs):
                clients[inp] = clients.get(inp, 0) + 1
                if inp not in seen:
                    seen.add(inp)
                    stack.append((inp, False))
        memo = pstate.memo
        for var in order:
            if var not in memo:
                printer = self._choose(var, pstate)
                if printer is not None:
                    try:
                        with set_precedence(pstate):
                            text = printer.process(var, pstate)
                    except Exception:  # the direct call reports it, if it gets there
                        text = None
                    if text is not None:
                        memo.setdefault(var, text)
            node = var.owner
            if node is not None:
                for inp in dict.fromkeys(node.inputs):
                    left = clients[inp] - 1
                    clients[inp] = left
                    if left == 0:
                        memo.pop(inp, None)

    def clone(self) -> PPrinter:
        cp = PPrinter()
        cp.printers = list(self.printers)
        cp.printers_dict = dict(self.printers_dict)
        cp.leaf_if = self.leaf_if
        return cp

    def clone_assign(self, condition: Op | type | Callable, printer: Printer) -> PPrinter:
        cp = self.clone()
        cp.assign(condition, printer)
        return cp

    def process_graph(
        self,
        inputs: Variable | Sequence[Variable],
        outputs: Variable | Sequence[Variable],
        updates: dict | None = None,
        display_inputs: bool = False,
    ) -> str:
        """A small program: ``name = expression`` per named or output Variable, in
        dependency order, ``shared <- expression`` per update; one output: ``return ...``."""
        from arignote.graph.traversal import io_toposort

        updates = dict(updates or {})
        inputs = [inputs] if isinstance(inputs, Variable) else list(inputs)
        outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
        lines: list[tuple[int, str]] = []
        if display_inputs:
            lines.append((0, "inputs: " + ", ".join(str(v) for v in [*inputs, *updates])))
        # Named Variables other than the one being defined print as their name, so the
        # program refers to earlier lines (whatever printer their Op has).
        current: list = [None]
        printer = self.clone()
        printer.leaf_if = lambda r: r.name is not None and r is not current[0]
        updated_by = {new: old for old, new in updates.items()}
        count = 1
        for node in io_toposort([*inputs, *updates], [*outputs, *updates.values()]):
            for out in node.outputs:
                if out in updated_by:
                    lines.append((count + 1000, f"{updated_by[out]} <- {printer.process(out)}"))
                    count += 1
                if out.name is not None or out in outputs:
                    current[0] = out
                    position = next((i for i, o in enumerate(outputs) if o is out), None)
                    name = out.name if out.name is not None else f"out[{position}]"
                    key = 2000 + position if position is not None else count
                    if len(outputs) == 1 and outputs[0] is out:
                        lines.append((key, f"return {printer.process(out)}"))
                    else:
                        lines.append((key, f"{name} = {printer.process(out)}"))
                    count += 1
        lines.sort(key=lambda item: item[0])
        return "\n".join(text for _, text in lines)

    def __call__(self, *args: Any) -> str:
        if len(args) == 1 or (len(args) == 2 and isinstance(args[1], (PrinterState, dict))):
            return self.process(*args)
        if len(args) > 2:
            return self.process_graph(*args)
        raise TypeError(
            "pprint takes a Variable (and optionally a PrinterState), or inputs, outputs, updates"
        )


pprint = PPrinter()
pprint.assign(lambda pstate, r: True, default_printer)
pprint.assign(lambda pstate, r: isinstance(r, Constant), constant_printer)
pprint.assign(_has_builtin_printer, _BuiltinPrinters())
#: the same printer as :data:`pprint`: ``pp(x)`` is the text of ``x``
pp = pprint


# =========================================================================================
# Print: an Op that prints a value when it is computed
# =========================================================================================


class Print(Op):
    """Pass a value through unchanged, printing it when it is computed.

    ``Print("x is")(x)``: prints ``x is __str__ = [...]``; ``attrs`` names the attributes
    (or methods) of the value to show; ``global_fn(op, value)`` replaces the printing.
    """

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(
        self,
        message: str = "",
        attrs: Sequence[str] = ("__str__",),
        global_fn: Callable[[Print, Any], None] | None = None,
    ):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn if global_fn is not None else _print_value

    def make_node(self, xin: Any) -> Apply:
        if not isinstance(xin, Variable):
            from arignote.tensor.basic import as_tensor_variable

            xin = as_tensor_variable(xin)
        return Apply(self, [xin], [xin.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (value,) = inputs
        output_storage[0][0] = value
        self.global_fn(self, value)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence
    ) -> list:
        return list(output_grads)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence
    ) -> list:
        return list(eval_points)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence) -> list:
        return list(shapes)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False

    def __str__(self) -> str:
        return f"Print{{message={self.message!r}}}" if self.message else "Print"


def _print_value(op: Print, value: Any) -> None:
    for attr in op.attrs:
        shown = getattr(value, attr)
        if callable(shown):
            shown = shown()
        print(op.message, attr, "=", shown)


# =========================================================================================
# pydotprint
# =========================================================================================

#: fill colours of Apply nodes, by a substring of the Op's class name
default_colorCodes = {
    "Scan": "yellow",
    "Shape": "brown",
    "IfElse": "magenta",
    "Elemwise": "#FFAABB",
    "Subtensor": "#FFAAFF",
    "Alloc": "#FFAA22",
    "Output": "blue",
}
_INPUT_COLOR = "green"
_SHARED_COLOR = "cyan"
_CONSTANT_COLOR = "#FFF2CC"
_UNUSED_COLOR = "grey"
_DARK_COLORS = {"blue", "brown", "black", "navy", "darkblue", "darkgreen", "purple", "red"}


def _dot_quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _DotGraph:
    """A directed graph, written out as Graphviz DOT text."""

    def __init__(self, name: str = "G"):
        self.name = name
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, dict]] = []
        self.clusters: list[tuple[str, list[str]]] = []

    def add_node(self, key: str, **attrs: Any) -> None:
        self.nodes.setdefault(key, {}).update(attrs)

    def add_edge(self, src: str, dst: str, **attrs: Any) -> None:
        self.edges.append((src, dst, attrs))

    @staticmethod
    def _attrs(attrs: dict) -> str:
        if not attrs:
            return ""
        return " [" + ", ".join(f"{k}={_dot_quote(v)}" for k, v in attrs.items()) + "]"

    def source(self) -> str:
        lines = [f"digraph {_dot_quote(self.name)} {{"]
        for key, attrs in self.nodes.items():
            lines.append(f"  {_dot_quote(key)}{self._attrs(attrs)};")
        for src, dst, attrs in self.edges:
            lines.append(f"  {_dot_quote(src)} -> {_dot_quote(dst)}{self._attrs(attrs)};")
        for label, members in self.clusters:
            lines.append(f"  subgraph {_dot_quote('cluster_' + label)} {{")
            lines.append(f"    label={_dot_quote(label)};")
            lines.extend(f"    {_dot_quote(m)};" for m in members)
            lines.append("  }")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _render(source: str, format: str) -> bytes:
    """Run Graphviz's ``dot`` on ``source``: through the ``graphviz`` package if installed,
    else the ``dot`` program directly."""
    hint = (
        f"pydotprint(format={format!r}) needs Graphviz to draw the picture: install the Python "
        "package with `pip install 'arignote[viz]'` (or `pip install graphviz`) and the Graphviz "
        "`dot` program (`apt-get install graphviz`, `brew install graphviz` or "
        "`conda install graphviz`). format='dot' writes the graph as DOT text with nothing installed."
    )
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.Source(source).pipe(format=format)
        except graphviz.ExecutableNotFound as err:
            raise RuntimeError(f"The Graphviz `dot` program was not found. {hint}") from err
    dot = shutil.which("dot")
    if dot is None:
        raise ImportError(hint)
    done = subprocess.run([dot, f"-T{format}"], input=source.encode(), capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"Graphviz `dot -T{format}` failed: {done.stderr.decode(errors='replace').strip()}"
        )
    return done.stdout


def _graph_of(fct: Any) -> tuple[FunctionGraph, Any]:
    if _is_function(fct):
        return fct.maker.fgraph, fct
    if isinstance(fct, FunctionGraph):
        return fct, fct
    if isinstance(fct, Variable):
        outputs = [fct]
    elif isinstance(fct, Apply):
        outputs = list(fct.outputs)
    elif isinstance(fct, (list, tuple)) and all(isinstance(v, Variable) for v in fct):
        outputs = list(fct)
    else:
        raise TypeError(
            "pydotprint takes a compiled function, a FunctionGraph, a Variable, an Apply or a list of "
            f"Variables, got {type(fct).__name__}"
        )
    return FunctionGraph(None, outputs, clone=False), None


def _updates_of(fgraph: FunctionGraph, fct: Any) -> dict[Variable, Variable]:
    """``{output computing an update: the input it updates}``."""
    mapping = getattr(fgraph, "update_mapping", None)
    if mapping:
        return {fgraph.outputs[o]: fgraph.inputs[i] for o, i in mapping.items()}
    updates: dict = {}
    expanded = getattr(getattr(fct, "maker", None), "expanded_inputs", None)
    if expanded is not None and len(expanded) == len(fgraph.inputs):
        outs = list(fgraph.outputs)
        for spec, inp in reversed(list(zip(expanded, fgraph.inputs))):
            if getattr(spec, "update", None) is not None and outs:
                updates[outs.pop()] = inp
    return updates


def _ancestor_nodes(var: Variable) -> set[Apply]:
    from arignote.graph.traversal import apply_ancestors

    return set(apply_ancestors([var]))


def pydotprint(
    fct: Any,
    outfile: str | Path | None = None,
    compact: bool = True,
    format: str = "png",
    with_ids: bool = False,
    high_contrast: bool = True,
    cond_highlight: Any = None,
    colorCodes: dict | None = None,
    max_label_size: int = 70,
    scan_graphs: bool = False,
    var_with_name_simple: bool = False,
    print_output_file: bool = True,
    return_image: bool = False,
) -> Any:
    """Draw a graph with Graphviz: Apply nodes as ellipses, Variables as boxes.

    Inputs are green (shared variables cyan), constants cream, outputs blue, unused outputs
    grey; Apply nodes are filled by ``colorCodes`` (a substring of the Op's class name ->
    colour). An edge is blue into an input an Op views, red into one it destroys; with
    several inputs, edges carry the input's index. With ``compact``, unnamed intermediate
    Variables are not drawn: their Type labels the edge.

    ``fct``: a compiled function, a FunctionGraph, a Variable, an Apply or a list of
    Variables. ``format``: ``"dot"`` writes DOT text (nothing to install); ``"png"``,
    ``"svg"``, ``"pdf"``... need Graphviz (``pip install arignote[viz]`` and the ``dot``
    program). ``return_image``: return the bytes (DOT: the text) instead of writing
    ``outfile`` (default: ``config.compiledir/arignote.pydotprint.cpu.<format>``).
    ``with_ids``: add each node's toposort index. ``cond_highlight``: the name of an IfElse
    (or its Apply) whose branches are boxed. ``scan_graphs``: also draw inner graphs, to
    files named after ``outfile``.

    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> print(pydotprint(pt.exp(x), format="dot", return_image=True))  # doctest: +ELLIPSIS
    digraph "arignote" {
      "node0" [label="Exp", shape="ellipse", style="filled", fillcolor="#FFAABB"];
      "var0" [label="name=x Vector(float64, shape=(?,))", shape="box", style="filled", fillcolor="green"];
      "var1" ...
    """
    if colorCodes is None:
        colorCodes = default_colorCodes
    fgraph, function = _graph_of(fct)
    outputs = list(fgraph.outputs)
    topo = fgraph.toposort()
    topo_index = {node: i for i, node in enumerate(topo)}
    updates = _updates_of(fgraph, function)
    for out in updates:
        if out in outputs:
            outputs.remove(out)
    output_set = set(outputs)
    shown_outputs = output_set | set(updates)

    g = _DotGraph("arignote")
    var_key: dict = {}
    var_text: dict = {}
    node_key: dict = {}
    node_text: dict = {}
    taken: set = set()

    def clip(text: str) -> str:
        return text if len(text) <= max_label_size else text[: max_label_size - 3] + "..."

    def var_label(var: Variable) -> tuple[str, str]:
        if var in var_key:
            return var_text[var], var_key[var]
        if var.name is not None:
            text = var.name if var_with_name_simple else f"name={var.name} {var.type}"
        elif isinstance(var, Constant):
            value = "val=" + str(np.asarray(var.data))
            text = f"{value.split(chr(10))[0]} {var.type}"
        elif var in updates and updates[var].name is not None:
            text = updates[var].name if var_with_name_simple else f"{updates[var].name} {var.type}"
        else:
            text = str(var.type)
        text = clip(text)
        var_key[var] = f"var{len(var_key)}"
        var_text[var] = text
        taken.add(text)
        return text, var_key[var]

    def apply_label(node: Apply) -> tuple[str, str]:
        if node in node_key:
            return node_text[node], node_key[node]
        text = str(node.op)
        if text in taken or with_ids:
            suffix = f" id={topo_index.get(node, len(node_key))}"
            text = (
                text[: max_label_size - 3 - len(suffix)] + suffix + "..."
                if len(text) + len(suffix) > max_label_size
                else text + suffix
            )
        elif len(text) > max_label_size:
            base = text[: max_label_size - 3] + "..."
            text, k = base, 1
            while text in taken:
                k += 1
                suffix = f" id={k}"
                text = base[: max_label_size - 3 - len(suffix)] + "..." + suffix
        taken.add(text)
        node_key[node] = f"node{len(node_key)}"
        node_text[node] = text
        return text, node_key[node]

    def filled(color: str) -> dict:
        if not high_contrast:
            return {"color": color}
        attrs = {"style": "filled", "fillcolor": color}
        if color in _DARK_COLORS:
            attrs["fontcolor"] = "white"
        return attrs

    for node in topo:
        text, key = apply_label(node)
        color = None
        cls_name = type(node.op).__name__
        for name, c in colorCodes.items():
            if name in cls_name:
                color = c
        attrs: dict = {"label": text, "shape": "ellipse"}
        if color is not None:
            attrs.update(filled(color))
        g.add_node(key, **attrs)

        viewed = {i for ins in (getattr(node.op, "view_map", None) or {}).values() for i in ins}
        destroyed = {i for ins in (getattr(node.op, "destroy_map", None) or {}).values() for i in ins}
        for idx, var in enumerate(node.inputs):
            vtext, vkey = var_label(var)
            edge: dict = {}
            label = str(idx) if len(node.inputs) > 1 else ""
            if label:
                edge["label"] = label
            if idx in viewed:
                edge["color"] = colorCodes.get("Output", "blue")
            elif idx in destroyed:
                edge["color"] = "red"
            if var.owner is None:
                if isinstance(var, Constant):
                    color = _CONSTANT_COLOR
                elif getattr(var, "_carries_value", False):
                    color = _SHARED_COLOR
                else:
                    color = _INPUT_COLOR
                g.add_node(vkey, label=vtext, shape="box", **filled(color))
                g.add_edge(vkey, key, **edge)
            elif var.name or not compact or var in shown_outputs:
                g.add_edge(vkey, key, **edge)
            else:  # compact: an unnamed intermediate is just an edge labelled with its Type
                edge["label"] = clip(f"{label} {var.type}" if label else str(var.type))
                g.add_edge(apply_label(var.owner)[1], key, **edge)

        for idx, var in enumerate(node.outputs):
            vtext, vkey = var_label(var)
            edge = {"label": str(idx)} if len(node.outputs) > 1 else {}
            if var in shown_outputs:
                g.add_edge(key, vkey, **edge)
                g.add_node(vkey, label=vtext, shape="box", **filled(colorCodes.get("Output", "blue")))
            elif not fgraph.clients.get(var):
                g.add_edge(key, vkey, **edge)
                g.add_node(vkey, label=vtext, shape="box", **filled(_UNUSED_COLOR))
            elif var.name or not compact:
                if compact:
                    edge["label"] = clip(f"{edge['label']} {var.type}" if edge else str(var.type))
                g.add_edge(key, vkey, **edge)
                g.add_node(vkey, label=vtext, shape="box")

    for var in outputs:  # an output that is an input of the graph: no node drew it
        if var.owner is None:
            g.add_node(
                var_label(var)[1],
                label=var_label(var)[0],
                shape="box",
                **filled(colorCodes.get("Output", "blue")),
            )

    for out, inp in updates.items():
        g.add_edge(
            var_label(inp)[1], var_label(out)[1], label="UPDATE", color=colorCodes.get("Output", "blue")
        )

    if cond_highlight is not None:
        cond = cond_highlight if isinstance(cond_highlight, Apply) else None
        if cond is None:
            for node in topo:
                if type(node.op).__name__ == "IfElse" and getattr(node.op, "name", None) == cond_highlight:
                    cond = node
        if cond is None:
            import warnings

            warnings.warn("pydotprint: cond_highlight is set but there is no such IfElse node", stacklevel=2)
        else:
            left = _ancestor_nodes(cond.inputs[1])
            right = _ancestor_nodes(cond.inputs[2])
            middle = left & right
            for label, members in (("Left", left - middle), ("Right", right - middle), ("Middle", middle)):
                keys = [node_key[n] for n in topo if n in members and n in node_key]
                g.clusters.append((label, keys))

    source = g.source()
    format = format.lower()
    text_format = format in ("dot", "gv")

    if outfile is None and not return_image:
        from arignote.configdefaults import config

        outfile = Path(config.compiledir) / f"arignote.pydotprint.cpu.{format}"
    if outfile is not None:
        outfile = Path(outfile)
        if outfile.suffix != f".{format}":
            outfile = outfile.with_suffix(f".{format}")

    if scan_graphs:
        for idx, node in enumerate(topo):
            holder = _inner_graph_op(node.op)
            if holder is None:
                continue
            inner_fn = getattr(holder, "_fn", None)
            inner = inner_fn if _is_function(inner_fn) else list(holder.inner_outputs)
            if outfile is not None:
                tag = re.sub(r"\W+", "_", str(getattr(holder, "name", None) or type(holder).__name__))
                inner_file = outfile.with_name(f"{outfile.stem}_{tag[:40].strip('_')}_{idx}{outfile.suffix}")
                pydotprint(
                    inner,
                    inner_file,
                    compact=compact,
                    format=format,
                    with_ids=with_ids,
                    high_contrast=high_contrast,
                    colorCodes=colorCodes,
                    max_label_size=max_label_size,
                    scan_graphs=scan_graphs,
                    var_with_name_simple=var_with_name_simple,
                    print_output_file=print_output_file,
                )

    data: str | bytes = source if text_format else _render(source, format)
    if return_image:
        return data
    assert outfile is not None
    outfile.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        outfile.write_text(data, encoding="utf-8")
    else:
        outfile.write_bytes(data)
    if print_output_file:
        print("The output file is available at", outfile)
    return None
