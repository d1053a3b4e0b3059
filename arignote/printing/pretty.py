"""``pprint``: an expression written the way one would on paper, and its printers.

A :class:`PPrinter` chooses a :class:`Printer` for each Variable (by Op, by Op class, or by
condition); :data:`pprint` (``pp``) is the default one, which knows arignote's own Ops.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.graph.traversal import io_toposort
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
    "Printer",
    "PrinterState",
    "constant_printer",
    "default_printer",
    "leaf_printer",
    "pp",
    "pprint",
    "set_precedence",
]


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
        data = output.data
        # a value without a one-line text of its own (a scipy.sparse matrix prints every
        # entry) is shown as its Constant shows itself
        text = str(output) if hasattr(data, "nnz") else str(data)
        memo[output] = result = text
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
    "arignote.tensor.reductions.Sum": FunctionPrinter(["sum"], ["axis"]),
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
