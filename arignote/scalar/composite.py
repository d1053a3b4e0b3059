"""Composite: a scalar op whose body is a graph of scalar ops (the body of a fused kernel).

Its ``impl`` is generated Python, one line per inner node, calling each inner op's
``impl``; since those work elementwise on arrays, so does the Composite (this is the
NumPy evaluation of a fused kernel). ``py_code()`` shows the source.

>>> from arignote.scalar import basic as ps
>>> a, b = ps.float64("a"), ps.float64("b")
>>> c = Composite([a, b], [ps.exp(a) + b * a])
>>> print(c)
Composite{(exp(i0) + (i1 * i0))}
>>> print(c.py_code())
def composite(i0, i1):
    t0 = exp(i0)
    t1 = mul(i1, i0)
    t2 = add(t0, t1)
    return t2
>>> float(c.impl(1.0, 2.0))
4.718281828459045
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import HasInnerGraph
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import ScalarType

__all__ = ["Composite"]

_INFIX = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "true_div": "/",
    "int_div": "//",
    "mod": "%",
    "pow": "**",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "neq": "!=",
    "and_": "&",
    "or_": "|",
    "xor": "^",
}
_MAX_STR = 300


class Composite(ScalarOp, HasInnerGraph):
    """A scalar op computing ``outputs`` from ``inputs`` through a graph of scalar ops.

    Two Composites with the same inner structure (ops, wiring, constants, input Types)
    are equal, so fused kernels merge and cache by content.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable], name: str | None = None):
        for i, var in enumerate(inputs):
            if not isinstance(getattr(var, "type", None), ScalarType):
                raise TypeError(
                    f"Composite input {i} ({var}) must be a scalar Variable, got Type {getattr(var, 'type', None)}"
                )
            if isinstance(var, Constant):
                raise TypeError(
                    f"Composite input {i} ({var}) is a Constant; inputs must be free scalar Variables "
                    "(constants belong in the body)"
                )
        self._fgraph = FunctionGraph(list(inputs), list(outputs), clone=True)
        for node in self._fgraph.apply_nodes:
            if not isinstance(node.op, ScalarOp):
                raise TypeError(f"Composite bodies may only contain scalar ops; {node} uses {node.op}")
        self.nin = len(inputs)
        self.nout = len(outputs)
        self._order = self._fgraph.toposort()
        self._signature = self._make_signature()
        self._hash = hash(self._signature)
        self._text = self._make_text()
        super().__init__(None, name=name or f"Composite{{{self._text}}}")
        self._fn: Any = None

    # -- inner graph ----------------------------------------------------------------------

    @property
    def fgraph(self) -> FunctionGraph:
        return self._fgraph

    @property
    def inner_inputs(self) -> list[Variable]:
        return self._fgraph.inputs

    @property
    def inner_outputs(self) -> list[Variable]:
        return self._fgraph.outputs

    def clone(self) -> Composite:
        return Composite(self.inner_inputs, self.inner_outputs, name=self.name)

    # -- identity -------------------------------------------------------------------------

    def _refs(self) -> dict:
        refs: dict = {v: ("i", k) for k, v in enumerate(self.inner_inputs)}
        for n, node in enumerate(self._order):
            for k, out in enumerate(node.outputs):
                refs[out] = ("n", n, k)
        return refs

    def _make_signature(self) -> tuple:
        refs = self._refs()

        def ref(v: Variable) -> tuple:
            if isinstance(v, Constant):
                return ("c", v.type, np.asarray(v.data).tobytes())
            return refs[v]

        body = tuple((node.op, tuple(ref(i) for i in node.inputs)) for node in self._order)
        return (tuple(v.type for v in self.inner_inputs), body, tuple(ref(o) for o in self.inner_outputs))

    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(self) is type(other) and self._hash == other._hash and self._signature == other._signature
        )

    def __hash__(self) -> int:
        return self._hash

    # -- typing and running ---------------------------------------------------------------

    def output_types(self, types: Sequence[ScalarType]) -> list[ScalarType]:
        expected = [v.type for v in self.inner_inputs]
        if list(types) != expected:
            raise TypeError(
                f"{self} takes inputs of types ({', '.join(map(str, expected))}), got ({', '.join(map(str, types))})"
            )
        return [v.type for v in self.inner_outputs]

    def impl(self, *inputs: Any) -> Any:
        if self._fn is None:
            self._fn = self._compile()
        return self._fn(*inputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for cell, out, value in zip(output_storage, node.outputs, results):
            cell[0] = np.asarray(value).astype(out.type.dtype)[()]

    # -- generated code -------------------------------------------------------------------

    def _code_and_namespace(self) -> tuple[str, dict]:
        names: dict = {v: f"i{k}" for k, v in enumerate(self.inner_inputs)}
        namespace: dict = {}
        op_names: dict = {}
        lines = [f"def composite({', '.join(names[v] for v in self.inner_inputs)}):"]
        tmp = 0

        def const_name(var: Variable) -> str:
            names[var] = f"c{sum(1 for n in names.values() if n.startswith('c'))}"
            namespace[names[var]] = var.data
            return names[var]

        for node in self._order:
            args = []
            for inp in node.inputs:
                if inp not in names:  # a constant
                    const_name(inp)
                args.append(names[inp])
            fname = op_names.get(node.op)
            if fname is None:
                fname = _identifier(str(node.op), namespace)
                op_names[node.op] = fname
                namespace[fname] = node.op.impl
            outs = []
            for out in node.outputs:
                names[out] = f"t{tmp}"
                outs.append(names[out])
                tmp += 1
            lines.append(f"    {', '.join(outs)} = {fname}({', '.join(args)})")
        for v in self.inner_outputs:  # an output may be an input or a constant
            if v not in names:
                const_name(v)
        rets = ", ".join(names[v] for v in self.inner_outputs)
        lines.append(f"    return {rets}")
        return "\n".join(lines), namespace

    def py_code(self) -> str:
        """The Python source of this Composite's ``impl`` (one line per inner node)."""
        return self._code_and_namespace()[0]

    def _compile(self) -> Any:
        source, namespace = self._code_and_namespace()
        code = compile(source, f"<{self.name[:60]}>", "exec")
        exec(code, namespace)
        return namespace["composite"]

    def _make_text(self) -> str:
        text: dict = {v: f"i{k}" for k, v in enumerate(self.inner_inputs)}
        for node in self._order:
            args = [text.get(i, str(i)) for i in node.inputs]
            op_name = getattr(node.op, "name", str(node.op))
            if op_name in _INFIX and len(args) >= 2:
                s = "(" + f" {_INFIX[op_name]} ".join(args) + ")"
            elif op_name == "neg":
                s = f"(-{args[0]})"
            else:
                s = f"{node.op}({', '.join(args)})"
            for k, out in enumerate(node.outputs):
                text[out] = s if len(node.outputs) == 1 else f"{s}[{k}]"
        result = ", ".join(text.get(o, str(o)) for o in self.inner_outputs)
        return result if len(result) <= _MAX_STR else result[: _MAX_STR - 3] + "..."

    def __str__(self) -> str:
        return self.name

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_fn"] = None  # generated code is rebuilt on first use
        return state


def _identifier(text: str, taken: dict) -> str:
    base = re.sub(r"\W", "_", text).strip("_") or "op"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"op_{base}"
    name, k = base, 1
    while name in taken or name in ("composite",) or re.fullmatch(r"[itc]\d+", name):
        name = f"{base}_{k}"
        k += 1
    return name
