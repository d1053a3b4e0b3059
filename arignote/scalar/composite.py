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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.null_type import DisconnectedType, NullType, disconnected_type
from arignote.graph.op import HasInnerGraph
from arignote.graph.traversal import io_toposort
from arignote.graph.utils import CodeCache, MissingInputError
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import ScalarType, constant, discrete_types

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

#: compiled bodies by source: bodies of the same shape (a long chain cut into kernels, a
#: model's repeated layers) have the same source (constants and callees are names bound in
#: each body's own namespace); one file name for all, as the source is shared
_compile_source = CodeCache("<Composite body>", 512)


#: an n-ary op done pairwise (``("chain", f)``) with more operands than this is one line
#: calling :func:`_pairwise`, not a statement per pair
_UNROLLED_CHAIN = 16


def _pairwise(fn: Any, args: tuple, out: Any = None) -> Any:
    """``fn(...fn(fn(a0, a1), a2)..., an)``, the last call writing into ``out`` if given."""
    acc = args[0]
    for a in args[1:-1]:
        acc = fn(acc, a)
    return fn(acc, args[-1]) if out is None else fn(acc, args[-1], out=out)


class Composite(ScalarOp, HasInnerGraph):
    """A scalar op computing ``outputs`` from ``inputs`` through a graph of scalar ops.

    Two Composites with the same inner structure (ops, wiring, constants, input Types)
    are equal, so fused kernels merge and cache by content.
    """

    def __init__(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        name: str | None = None,
        *,
        clone: bool = True,
    ):
        """``clone=False`` takes the body's variables as they are, without a copy: for a
        caller that built them for this Composite only (the fusion rewrite does)."""
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
        if clone:
            self._fgraph: FunctionGraph | None = FunctionGraph(list(inputs), list(outputs), clone=True)
            self._inputs, self._outputs = self._fgraph.inputs, self._fgraph.outputs
            self._order = self._fgraph.toposort()
        else:
            # the FunctionGraph is made when asked for: fusion makes a Composite per group,
            # and its index of the body (a few objects per inner node) is rarely read
            self._fgraph = None
            self._inputs, self._outputs = list(inputs), list(outputs)
            self._order = io_toposort(self._inputs, self._outputs)
        known = set(self._inputs)
        for node in self._order:
            if not isinstance(node.op, ScalarOp):
                raise TypeError(f"Composite bodies may only contain scalar ops; {node} uses {node.op}")
            for var in node.inputs:
                if var.owner is None and var not in known and not isinstance(var, Constant):
                    raise MissingInputError(
                        f"Composite body: {var} (input of {node}) is neither an input nor a constant",
                        variable=var,
                    )
        self.nin = len(inputs)
        self.nout = len(outputs)
        self._signature = self._make_signature()
        self._hash = self._signature_hash()
        super().__init__(None, name=name)
        self._name = name  # (None: the body's text, made when first asked for)
        self._fn: Any = None

    @property
    def name(self) -> str:
        """``Composite{...}`` with the body's text, made when first asked for: fusion makes
        a Composite per fused group, and few of them are ever printed."""
        if self._name is None:
            self._name = f"Composite{{{self._make_text()}}}"
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value

    # -- inner graph ----------------------------------------------------------------------

    @property
    def fgraph(self) -> FunctionGraph:
        if self._fgraph is None:
            self._fgraph = FunctionGraph(self._inputs, self._outputs, clone=False)
        return self._fgraph

    @property
    def inner_inputs(self) -> list[Variable]:
        return self._inputs

    @property
    def inner_outputs(self) -> list[Variable]:
        return self._outputs

    @property
    def body_nodes(self) -> list[Apply]:
        """The body's nodes, each after those it reads (``fgraph.toposort()``'s order,
        without making the FunctionGraph)."""
        return self._order

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

    def _signature_hash(self) -> int:
        """``hash(self._signature)``'s equivalent, hashing each distinct op object once (a
        body of 100,000 nodes has a handful of ops)."""
        op_hashes: dict = {}

        def op_hash(op: Any) -> int:
            h = op_hashes.get(id(op))
            if h is None:
                h = op_hashes[id(op)] = hash(op)
            return h

        types, body, outs = self._signature
        return hash((types, tuple((op_hash(op), ins) for op, ins in body), outs))

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

    # -- gradient -------------------------------------------------------------------------

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Which outputs depend on each input, through the inner ops' own patterns."""
        deps: dict = {v: {k} for k, v in enumerate(self.inner_inputs)}
        for inner in self._order:
            pattern = _pattern(inner)
            for j, out in enumerate(inner.outputs):
                deps[out] = set().union(
                    *(deps.get(v, set()) for i, v in enumerate(inner.inputs) if pattern[i][j])
                )
        return [[k in deps.get(o, ()) for o in self.inner_outputs] for k in range(self.nin)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        """Backpropagate through the body: the body is rebuilt on ``inputs`` and each inner
        op's own rule is applied in reverse order, so the result is a graph of scalar ops.

        As in :func:`arignote.gradient.grad`: terms reaching a variable are added once; an
        integer-valued variable passes a zero gradient (even when an undefined one reaches
        it: it is locally constant, so whatever the cost does with it contributes nothing);
        an input the requested outputs do not depend on gets a disconnected term; an
        undefined / not implemented gradient reaching a real variable goes on (as a
        NullType term) to the inputs it depends on.
        """

        if len(inputs) != self.nin or len(output_grads) != self.nout:
            raise ValueError(
                f"{self}.grad takes {self.nin} inputs and {self.nout} output gradients, "
                f"got {len(inputs)} and {len(output_grads)}"
            )
        # the body on the given inputs; terms are keyed by the *inner* variables, so an
        # input given twice still gets one gradient per position
        env: dict = dict(zip(self.inner_inputs, inputs))
        rebuilt: list[Apply] = []
        for inner in self._order:
            args = [env[v] if v in env else v.clone() for v in inner.inputs]  # else: a constant
            new = inner.op.make_node(*args)
            env.update(zip(inner.outputs, new.outputs))
            rebuilt.append(new)
        terms: dict = {}
        for out, g in zip(self.inner_outputs, output_grads):
            if not is_disconnected(g):
                terms.setdefault(out, []).append(g)
        for inner, new in zip(reversed(self._order), reversed(rebuilt)):
            out_grads = []
            for out, new_out in zip(inner.outputs, new.outputs):
                ts = terms.get(out)
                if not ts:
                    out_grads.append(disconnected_type())
                elif out.type.dtype in discrete_types:
                    # integer-valued: f(x + eps) == f(x), whatever the cost does with it
                    out_grads.append(_float_zeros(new_out))
                else:
                    out_grads.append(_add_terms(ts))
            if all(is_disconnected(g) for g in out_grads):
                continue
            pattern = _pattern(inner)
            nulls = [g for g in out_grads if is_null(g)]
            if nulls:
                in_grads = [
                    nulls[0] if any(p and not is_disconnected(g) for p, g in zip(row, out_grads)) else None
                    for row in pattern
                ]
            else:
                in_grads = list(new.op.pullback(list(new.inputs), list(new.outputs), out_grads))
                if len(in_grads) != len(new.inputs):
                    raise ValueError(
                        f"{new.op}.pullback returned {len(in_grads)} terms for {len(new.inputs)} inputs"
                    )
            for v, t in zip(inner.inputs, in_grads):
                if t is None or isinstance(v, Constant) or is_disconnected(t):
                    continue
                terms.setdefault(v, []).append(t)
        return [_add_terms(terms[v]) if v in terms else disconnected_type() for v in self.inner_inputs]

    # -- generated code -------------------------------------------------------------------

    def _code_and_namespace(
        self, resolve: Callable[[Apply], Any] | None = None, write_into: Mapping[Apply, int] | None = None
    ) -> tuple[str, dict]:
        """The source of the body (one line per inner node) and its namespace.

        ``resolve(node)`` may say how a node is computed instead of its op's ``impl``:
        ``("call", f)`` for ``f(*args)``, ``("chain", f)`` for ``f(f(a, b), c)...`` (an
        n-ary op done pairwise), ``("cast", dtype)`` for ``a.astype(dtype)``; None keeps
        ``impl``. A backend uses it to call NumPy directly where that is the same.
        ``write_into[node] = j``: that node's (last) ufunc call writes into input ``j``
        (``out=``), for a "call" or "chain" node.
        """
        write_into = write_into or {}
        names: dict = {v: f"i{k}" for k, v in enumerate(self.inner_inputs)}
        namespace: dict = {}
        callee_names: dict = {}  # id(callable) -> its name in the namespace
        lines = [f"def composite({', '.join(names[v] for v in self.inner_inputs)}):"]
        n_tmp = 0
        n_const = 0
        # A temporary's name is reused once its value is read for the last time: a local
        # keeps its array alive until the function returns, so a 512-node chain would hold
        # 512 arrays at once (and CPython compiles many locals slowly).
        last_use: dict = {}
        for k, node in enumerate(self._order):
            for inp in node.inputs:
                last_use[inp] = k
        returned = set(self.inner_outputs)
        free: list[str] = []

        def tmp_name(var: Variable) -> str:
            nonlocal n_tmp
            if free:
                names[var] = free.pop()
            else:
                names[var] = f"t{n_tmp}"
                n_tmp += 1
            return names[var]

        def const_name(var: Variable) -> str:
            nonlocal n_const
            names[var] = f"c{n_const}"
            n_const += 1
            namespace[names[var]] = var.data
            return names[var]

        def callee(fn: Any, hint: str) -> str:
            name = callee_names.get(id(fn))
            if name is None:
                name = callee_names[id(fn)] = _identifier(hint, namespace)
                namespace[name] = fn
            return name

        for k, node in enumerate(self._order):
            args = []
            for inp in node.inputs:
                if inp not in names:  # a constant
                    const_name(inp)
                args.append(names[inp])
            spec = resolve(node) if resolve is not None else None
            out = f", out=i{write_into[node]}" if node in write_into else ""
            if spec is None:
                call = f"{callee(node.op.impl, str(node.op))}({', '.join(args)})"
            elif spec[0] == "call":
                call = (
                    f"{callee(spec[1], getattr(spec[1], '__name__', str(node.op)))}({', '.join(args)}{out})"
                )
            elif spec[0] == "chain" and len(args) > _UNROLLED_CHAIN:
                # one line, pairwise in a loop: CPython compiles each line of a body in
                # ~20 µs, and a 10,000-term sum would be 10,000 lines
                fname = callee(spec[1], getattr(spec[1], "__name__", str(node.op)))
                call = f"{callee(_pairwise, '_pairwise')}({fname}, ({', '.join(args)}){out})"
                spec = ("call", spec[1])
            elif spec[0] == "chain":  # one statement per pair: no nesting limit; the last writes
                fname = callee(spec[1], getattr(spec[1], "__name__", str(node.op)))
                call = f"{fname}({args[0]}, {args[1]}{out if len(args) == 2 else ''})"
            elif spec[0] == "cast":
                call = f"{args[0]}.astype({callee(spec[1], f'dtype_{spec[1]}')})"
            else:
                raise ValueError(f"resolve gave {spec!r} for {node}; expected call, chain or cast")
            # the inputs read here for the last time free their names, after this node's
            # statements (a chain's first statement must not overwrite a later operand)
            done = [
                names[inp]
                for inp in dict.fromkeys(node.inputs)
                if last_use.get(inp) == k and inp not in returned and names[inp][0] == "t"
            ]
            outs = [tmp_name(out) for out in node.outputs]
            if spec is not None and spec[0] == "chain":
                (acc,) = outs
                for j, a in enumerate(args[2:], 3):
                    lines.append(f"    {acc} = {call}")
                    call = f"{fname}({acc}, {a}{out if j == len(args) else ''})"
            lines.append(f"    {', '.join(outs)} = {call}")
            free.extend(name for name in done if name not in outs)
            for out in node.outputs:
                if out not in last_use and out not in returned:  # never read: free at once
                    free.append(names[out])
        for v in self.inner_outputs:  # an output may be an input or a constant
            if v not in names:
                const_name(v)
        rets = ", ".join(names[v] for v in self.inner_outputs)
        lines.append(f"    return {rets}")
        return "\n".join(lines), namespace

    def py_code(self, resolve: Callable[[Apply], Any] | None = None) -> str:
        """The Python source of this Composite's ``impl`` (one line per inner node); with
        ``resolve``, of :meth:`compile_body`'s function."""
        return self._code_and_namespace(resolve)[0]

    def compile_body(
        self, resolve: Callable[[Apply], Any] | None = None, write_into: Mapping[Apply, int] | None = None
    ) -> Any:
        """The body as a Python function of the inputs (arrays or scalars), one line per
        inner node; ``resolve`` and ``write_into`` as for :meth:`_code_and_namespace`
        (None: ``impl``'s, fresh results)."""
        source, namespace = self._code_and_namespace(resolve, write_into)
        exec(_compile_source(source), namespace)
        return namespace["composite"]

    def _compile(self) -> Any:
        body = self.compile_body()
        if self.nout == 1:
            return body

        def impl(*inputs: Any) -> tuple:
            return _distinct(body(*inputs))

        return impl

    def _make_text(self) -> str:
        # written from the outputs down, and only as far as the text is shown (its first
        # _MAX_STR characters): a body of thousands of nodes costs what a short one does
        inputs = {v: f"i{k}" for k, v in enumerate(self.inner_inputs)}
        parts: list[str] = []
        size = 0

        def emit(piece: str) -> None:
            nonlocal size
            parts.append(piece)
            size += len(piece)

        def render(var: Variable) -> None:
            name = inputs.get(var)
            node = var.owner
            if name is not None or node is None:
                emit(name if name is not None else str(var))
                return
            op_name = getattr(node.op, "name", str(node.op))
            if op_name in _INFIX and len(node.inputs) >= 2:
                opening, sep, closing = "(", f" {_INFIX[op_name]} ", ")"
            elif op_name == "neg":
                opening, sep, closing = "(-", "", ")"
            else:
                opening, sep, closing = f"{node.op}(", ", ", ")"
            emit(opening)
            for j, arg in enumerate(node.inputs):
                if size > _MAX_STR:
                    return
                if j:
                    emit(sep)
                render(arg)
            emit(closing)
            if len(node.outputs) > 1:
                emit(f"[{node.outputs.index(var)}]")

        for k, out in enumerate(self.inner_outputs):
            if size > _MAX_STR:
                break
            if k:
                emit(", ")
            render(out)
        result = "".join(parts)
        return result if len(result) <= _MAX_STR else result[: _MAX_STR - 3] + "..."

    def __str__(self) -> str:
        return self.name

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_fn"] = None  # generated code is rebuilt on first use
        return state


def _distinct(values: Sequence[Any]) -> tuple:
    """``values`` with each array that is an earlier one, or may share memory with one
    (a body's ``identity`` or ``real`` of another output), copied: outputs of one node
    never share memory."""
    out: list = []
    for v in values:
        if isinstance(v, np.ndarray) and any(
            w is v
            or (
                isinstance(w, np.ndarray)
                and (v.base is not None or w.base is not None)
                and np.may_share_memory(v, w)
            )
            for w in out
        ):
            v = v.copy()
        out.append(v)
    return tuple(out)


def _pattern(node: Apply) -> list[list[bool]]:
    fn = getattr(node.op, "connection_pattern", None)
    if fn is None:
        return [[True] * len(node.outputs) for _ in node.inputs]
    return fn(node)


def is_disconnected(v: Any) -> bool:

    return isinstance(getattr(v, "type", None), DisconnectedType)


def is_null(v: Any) -> bool:

    return isinstance(getattr(v, "type", None), NullType)


def _add_terms(terms: list[Variable]) -> Variable:
    """The sum of gradient terms (the first NullType term if there is one)."""
    from arignote.scalar.basic import add

    nulls = [t for t in terms if is_null(t)]
    if nulls:
        return nulls[0]
    return terms[0] if len(terms) == 1 else add(*terms)


def _float_zeros(v: Variable) -> Variable:
    """A zero gradient for ``v`` in ``floatX`` (``second(v, 0)``)."""
    from arignote.scalar.basic import second

    return second(v, constant(0, dtype=config.floatX))


def _identifier(text: str, taken: dict) -> str:
    base = re.sub(r"\W", "_", text).strip("_") or "op"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"op_{base}"
    name, k = base, 1
    while name in taken or name in ("composite",) or re.fullmatch(r"[itc]\d+", name):
        name = f"{base}_{k}"
        k += 1
    return name
