"""Patterns over graphs: the matcher behind ``PatternNodeRewriter``, ``OpPattern`` for
``tracks``, and (optionally) graph Variables as terms of ``logical-unification``/``etuples``.

A pattern is a tuple ``(op, *sub_patterns)`` whose head is an Op instance (matched by
``==``), an Op class (matched by ``isinstance``) or an :class:`OpPattern`; a sub-pattern is
a pattern, a string (a variable: the same name must bind the same Variable), a dict
``{"pattern": "x", "constraint": fn}`` (a variable that binds only where ``fn(var)`` is
true), or a constant (a number, an array or a ``Constant``: it matches a constant whose
value is equal everywhere, through any expand-dims views of it).

>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pattern = convert_strs_to_vars((pt.sub, 1, (pt.erf, "x")))
>>> subs = match_pattern(pattern, (1 - pt.erf(x)).owner)
>>> [(str(k), v) for k, v in subs.items()]
[('~x', x)]
>>> reify_pattern(convert_strs_to_vars((pt.erfc, "x")), {PatternVar("x"): x}) is None
False

The same graphs as terms of the ``logical-unification`` and ``etuples`` packages (the
``[unify]`` extra; they are imported when first used): :func:`etuplize` turns a Variable
into an expression tuple ``e(op, *inputs)``, and :func:`unify`/:func:`reify` work on
Variables, as in PyTensor's kanren-style rules::

    from unification import var
    x_lv = var()
    s = unify(etuple(pt.exp, x_lv), pt.exp(x))   # {~_1: x}
    reify(etuple(pt.log, x_lv), s).evaled_obj     # log(x), a Variable
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op

__all__ = [
    "OpPattern",
    "PatternNode",
    "PatternVar",
    "ConstrainedVar",
    "convert_strs_to_vars",
    "match_pattern",
    "reify_pattern",
    "etuplize",
    "unify",
    "reify",
    "etuple",
]


class OpPattern:
    """Matches Ops of ``op_type`` whose listed parameters have the given values.

    A parameter's value may itself be an :class:`OpPattern` (an Op parameter, e.g. an
    ``Elemwise``'s ``scalar_op``), or a string inside a pattern (a variable bound to the
    parameter). Usable in ``tracks`` and as the head of a pattern tuple.

    >>> from arignote.tensor.elemwise import Elemwise
    >>> from arignote.scalar.basic import Exp
    >>> import arignote.tensor as pt
    >>> OpPattern(Elemwise, scalar_op=OpPattern(Exp)).match_op(pt.exp)
    True
    """

    __slots__ = ("op_type", "parameters")

    def __init__(self, op_type: type | tuple, parameters: Mapping | Sequence | None = None, **kwargs: Any):
        if kwargs and parameters is not None:
            raise ValueError("give OpPattern parameters as a dict or as keywords, not both")
        params = kwargs or parameters or ()
        items = params.items() if isinstance(params, Mapping) else params
        self.op_type = op_type
        self.parameters: tuple = tuple(sorted(items, key=lambda kv: kv[0]))

    def match_op(self, op: Any) -> bool:
        return isinstance(op, self.op_type) and _match_params(self, op, None)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is OpPattern and self.op_type == other.op_type and self.parameters == other.parameters
        )

    def __hash__(self) -> int:
        try:
            return hash((self.op_type, self.parameters))
        except TypeError:
            return hash(self.op_type)

    def __repr__(self) -> str:
        names = getattr(self.op_type, "__name__", str(self.op_type))
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters)
        return f"OpPattern({names}{', ' if params else ''}{params})"


class PatternVar:
    """A variable of a pattern (written as a string); ``constraint(var)`` must hold."""

    __slots__ = ("constraint", "token")

    def __init__(self, token: str, constraint: Callable[[Any], bool] | None = None):
        self.token = token
        self.constraint = constraint

    def __eq__(self, other: object) -> bool:
        return type(other) in (PatternVar, ConstrainedVar) and other.token == self.token  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("PatternVar", self.token))

    def __str__(self) -> str:
        return f"~{self.token}"

    def __repr__(self) -> str:
        return f"PatternVar({self.token!r}{', constraint=...' if self.constraint else ''})"


class ConstrainedVar(PatternVar):
    """A pattern variable with a constraint (``{"pattern": "x", "constraint": fn}``)."""

    __slots__ = ()

    def __init__(self, constraint: Callable[[Any], bool], token: str | None = None):
        super().__init__(token or f"_constrained_{id(self)}", constraint)


class PatternNode:
    """``(op, *inputs)`` once converted: ``op_match`` is an Op, an Op class or an OpPattern."""

    __slots__ = ("inputs", "op_match")

    def __init__(self, op_match: Any, inputs: tuple):
        self.op_match = op_match
        self.inputs = inputs

    def __repr__(self) -> str:
        return f"{self.op_match}({', '.join(map(str, self.inputs))})"


def convert_strs_to_vars(pattern: Any, var_map: dict[str, PatternVar] | None = None) -> Any:
    """A pattern written with tuples, strings and dicts as :class:`PatternNode`s and
    :class:`PatternVar`s; ``var_map`` (shared between an input and an output pattern)
    makes one name one variable."""
    if var_map is None:
        var_map = {}

    def var_for(name: str, constraint: Callable | None = None) -> PatternVar:
        v = var_map.get(name)
        if v is None:
            v = var_map[name] = PatternVar(name, constraint)
        elif constraint is not None:
            if v.constraint is not None and v.constraint is not constraint:
                raise ValueError(f"pattern variable {name!r} has two different constraints")
            v.constraint = constraint
        return v

    def convert(p: Any, in_op_params: bool = False) -> Any:
        if isinstance(p, PatternVar | PatternNode):
            return p
        if isinstance(p, str):
            return var_for(p)
        if isinstance(p, dict):
            inner = p["pattern"]
            constraint = p.get("constraint")
            if isinstance(inner, str):
                return var_for(inner, constraint)
            converted = convert(inner)
            if constraint is not None and isinstance(converted, PatternNode):
                return _ConstrainedNode(converted.op_match, converted.inputs, constraint)
            return converted
        if isinstance(p, OpPattern):
            return OpPattern(p.op_type, tuple((k, convert(v, True)) for k, v in p.parameters))
        if isinstance(p, tuple) and not in_op_params:
            if not p:
                raise TypeError("an empty tuple is not a pattern")
            head = convert(p[0], True) if isinstance(p[0], OpPattern) else p[0]
            if not (isinstance(head, Op | OpPattern) or (isinstance(head, type) and issubclass(head, Op))):
                raise TypeError(
                    f"a pattern tuple starts with an Op instance, an Op class or an OpPattern; got {p[0]!r}"
                )
            return PatternNode(head, tuple(convert(e) for e in p[1:]))
        return p

    return convert(pattern)


class _ConstrainedNode(PatternNode):
    """A sub-pattern node whose matched Variable must also satisfy ``constraint``."""

    __slots__ = ("constraint",)

    def __init__(self, op_match: Any, inputs: tuple, constraint: Callable):
        super().__init__(op_match, inputs)
        self.constraint = constraint


def _match_op(op_match: Any, op: Op, subs: dict | None) -> bool:
    if isinstance(op_match, OpPattern):
        return isinstance(op, op_match.op_type) and _match_params(op_match, op, subs)
    if isinstance(op_match, type):
        return isinstance(op, op_match)
    return op == op_match


def _match_params(pattern: OpPattern, op: Any, subs: dict | None) -> bool:
    for key, expected in pattern.parameters:
        actual = getattr(op, key, _MISSING)
        if actual is _MISSING:
            return False
        if isinstance(expected, OpPattern):
            if not _match_op(expected, actual, subs):
                return False
        elif isinstance(expected, PatternVar):
            if subs is not None and not _bind(expected, actual, subs):
                return False
        elif actual != expected:
            return False
    return True


_MISSING = object()


def match_pattern(
    pattern: PatternNode, node: Apply, subs: dict | None = None, clients: Mapping | None = None
) -> dict | None:
    """``{PatternVar: value}`` where ``node`` matches ``pattern``, else None. With
    ``clients`` (a FunctionGraph's), an inner matched node whose output has other clients
    does not match (replacing the root would not remove it)."""
    subs = {} if subs is None else subs
    return subs if _match_node(pattern, node, subs, clients) else None


def _match_node(pattern: PatternNode, node: Apply, subs: dict, clients: Mapping | None) -> bool:
    if not _match_op(pattern.op_match, node.op, subs) or len(pattern.inputs) != len(node.inputs):
        return False
    return all(_match(p, v, subs, clients) for p, v in zip(pattern.inputs, node.inputs))


def _match(pattern: Any, var: Variable, subs: dict, clients: Mapping | None) -> bool:
    if isinstance(pattern, PatternVar):
        return _bind(pattern, var, subs)
    if isinstance(pattern, PatternNode):
        node = var.owner
        if node is None or (clients is not None and len(clients.get(var, ())) > 1):
            return False
        if isinstance(pattern, _ConstrainedNode) and not pattern.constraint(var):
            return False
        return _match_node(pattern, node, subs, clients)
    if isinstance(pattern, Variable) and not isinstance(pattern, Constant):
        return pattern is var
    value = pattern.data if isinstance(pattern, Constant) else pattern
    data = constant_value(var)
    if data is _MISSING:
        return False
    try:
        return bool(np.array_equiv(data, value))
    except (TypeError, ValueError):
        return False


def constant_value(var: Variable) -> Any:
    """The data of ``var`` if it is a constant or an expand-dims view of one (what a
    number in an expression becomes), else a sentinel."""
    while var.owner is not None:
        node = var.owner
        if not getattr(node.op, "is_expand_dims", False) or len(node.inputs) != 1:
            return _MISSING
        var = node.inputs[0]
    return var.data if isinstance(var, Constant) else _MISSING


def _bind(pvar: PatternVar, value: Any, subs: dict) -> bool:
    bound = subs.get(pvar, _MISSING)
    if bound is not _MISSING:
        if bound is value:
            return True
        if isinstance(bound, Constant) and isinstance(value, Constant):
            return bool(bound.type == value.type and np.array_equal(bound.data, value.data))
        if isinstance(bound, Variable) or isinstance(value, Variable):
            return False
        try:
            return bool(bound == value)
        except (TypeError, ValueError):
            return False
    if pvar.constraint is not None and not pvar.constraint(value):
        return False
    subs[pvar] = value
    return True


def reify_pattern(pattern: Any, subs: Mapping) -> Any:
    """Build the graph an output pattern describes, with ``subs``'s values in place of
    its variables (an Op head is called on the built inputs: its default output)."""
    if isinstance(pattern, PatternVar):
        try:
            return subs[pattern]
        except KeyError:
            raise ValueError(
                f"the output pattern uses {pattern.token!r}, which the input did not bind"
            ) from None
    if isinstance(pattern, PatternNode):
        op = _reify_op(pattern.op_match, subs)
        out = op(*(reify_pattern(p, subs) for p in pattern.inputs))
        return out
    return pattern


def _reify_op(op_match: Any, subs: Mapping) -> Any:
    if isinstance(op_match, OpPattern):
        if not isinstance(op_match.op_type, type):
            raise ValueError(f"cannot build an Op from {op_match} (its op_type is not one class)")
        params = {
            k: _reify_op(v, subs) if isinstance(v, OpPattern) else subs[v] if isinstance(v, PatternVar) else v
            for k, v in op_match.parameters
        }
        return op_match.op_type(**params)
    if isinstance(op_match, type):
        raise ValueError(f"cannot build an Op from the class {op_match.__name__}: use an instance")
    return op_match


def pattern_to_str(pattern: Any) -> str:
    if isinstance(pattern, PatternNode):
        return f"{pattern.op_match}({', '.join(pattern_to_str(p) for p in pattern.inputs)})"
    if isinstance(pattern, tuple) and pattern:
        return f"{pattern[0]}({', '.join(pattern_to_str(p) for p in pattern[1:])})"
    if isinstance(pattern, PatternVar):
        return pattern.token
    if isinstance(pattern, dict):
        return f"{pattern_to_str(pattern['pattern'])} subject to a constraint"
    if isinstance(pattern, Number):
        return repr(pattern)
    return str(pattern)


# --- logical-unification and etuples (the [unify] extra) ------------------------------

_UNIFY_MODULES: dict[str, Any] = {}


def _unify_modules() -> dict[str, Any]:
    """Import logical-unification, cons and etuples once, and teach them graph terms:
    a Variable with an owner is the cons ``(op, *inputs)``; a constant unifies with an
    equal number or constant."""
    if _UNIFY_MODULES:
        return _UNIFY_MODULES
    try:
        cons_core = importlib.import_module("cons.core")
        ucore = importlib.import_module("unification.core")
        etuples = importlib.import_module("etuples")
        etuples_core = importlib.import_module("etuples.core")
    except ImportError as err:
        raise ImportError(
            "arignote.graph.rewriting.unify needs the 'logical-unification' and 'etuples' packages "
            "for etuplize/unify/reify: pip install 'arignote[unify]'"
        ) from err

    def car_variable(x: Variable) -> Any:
        if x.owner is None:
            raise cons_core.ConsError("a Variable without an owner is not a cons pair")
        return x.owner.op

    def cdr_variable(x: Variable) -> Any:
        if x.owner is None:
            raise cons_core.ConsError("a Variable without an owner is not a cons pair")
        return etuples.etuple(x.owner.op, *x.owner.inputs, evaled_obj=x)[1:]

    cons_core._car.add((Variable,), car_variable)
    cons_core._cdr.add((Variable,), cdr_variable)

    def unify_constant(u: Any, v: Any, s: Mapping) -> Any:
        a = u.data if isinstance(u, Constant) else u
        b = v.data if isinstance(v, Constant) else v
        try:
            yield s if np.array_equiv(a, b) else False
        except (TypeError, ValueError):
            yield False

    for left, right in ((Constant, Number), (Number, Constant), (Constant, Constant)):
        ucore._unify.add((left, right, Mapping), unify_constant)

    def as_term(v: Any) -> Any:
        if isinstance(v, Variable) and not isinstance(v, Constant) and v.owner is not None:
            return etuples.etuplize(v, shallow=True)
        return v

    def unify_term(u: Any, v: Any, s: Mapping) -> Any:
        # a Variable is iterable (its subtensors): unify it as the term e(op, *inputs)
        u, v = as_term(u), as_term(v)
        if isinstance(u, Variable) or isinstance(v, Variable):
            yield s if u is v else False
            return
        s = yield ucore._unify(u, v, s)
        yield s

    sequences = (etuples_core.ExpressionTuple, tuple)
    for seq in sequences:
        ucore._unify.add((seq, Variable, Mapping), unify_term)
        ucore._unify.add((Variable, seq, Mapping), unify_term)
    ucore._unify.add((Variable, Variable, Mapping), unify_term)
    _UNIFY_MODULES.update(
        unify=ucore.unify,
        reify=ucore.reify,
        etuple=etuples.etuple,
        etuplize=etuples.etuplize,
        ExpressionTuple=etuples_core.ExpressionTuple,
    )
    return _UNIFY_MODULES


def etuplize(x: Any, **kwargs: Any) -> Any:
    """``x`` as an expression tuple: a Variable computed by an Op is ``e(op, *inputs)``
    (recursively), evaluating back to ``x`` itself."""
    return _unify_modules()["etuplize"](x, **kwargs)


def etuple(*args: Any, **kwargs: Any) -> Any:
    """An expression tuple ``e(op, *args)`` (``etuples.etuple``); ``.evaled_obj`` builds it."""
    return _unify_modules()["etuple"](*args, **kwargs)


def unify(u: Any, v: Any, s: Mapping | None = None) -> Any:
    """logical-unification's ``unify``, with graph Variables as terms: a substitution
    (dict) or False."""
    return _unify_modules()["unify"](u, v, {} if s is None else s)


def reify(e: Any, s: Mapping) -> Any:
    """logical-unification's ``reify``; an expression tuple result evaluates to a Variable
    through its ``evaled_obj``."""
    return _unify_modules()["reify"](e, s)
