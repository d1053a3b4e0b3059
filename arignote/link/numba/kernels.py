"""Numba kernel source for fused nodes: the text of a module, generated from a node's structure.

Two kinds of node get a kernel (:func:`plan_node`):

* ``"map"``: an ``Elemwise`` of a ``Composite`` (a fused chain of elementwise ops): one loop
  nest over the output, the body's scalar ops written out inside it, each input read at the
  element's index (index 0 on the dimensions where its Type is broadcastable);
* ``"reduce"``: a ``CAReduce`` (sum, product, max, min) of the output of such a fused node
  that nobody else reads: the body is computed inside the reduction loop, so the fused
  intermediate array is never made.

The text depends only on the structure: ops, wiring, dtypes, ranks, broadcastable patterns
and layout. Constants of a body are kernel arguments (:attr:`KernelPlan.consts`), never part
of the text, so ``x * 2`` and ``x * 3`` share one kernel, and the text's hash is the kernel's
content key in the disk cache (:mod:`arignote.link.numba.cache`). Nothing here imports
Numba: the text is written to a file and imported where Numba runs it.

Each kernel is ``kernel(*inputs, *consts, *outputs, start, stop)``: it computes the slice
``start:stop`` of the output's first (for a reduction: first kept) dimension, so that the
caller may split a call over threads (the kernels release the GIL), and returns whether the
caller must compute the call on tier 1 instead (a sin or cos argument beyond what the
vectorised math reduces: :attr:`KernelPlan.guarded`). Inputs and outputs are C-contiguous
arrays (LLVM vectorises no loop over several arrays of any layout: the caller copies other
inputs); outputs are made by the caller (NumPy's allocator: DESIGN.md 3b), except those a
map kernel writes over an input's elements (:attr:`KernelPlan.inplace`: not passed).

Whether a kernel pays is :func:`pays`: a per-element cost model from measurements on this
project's 2-core machine (bench/backend.py), NumPy's vectorised math against the kernel's:
exp, log1p, sin, cos and tanh are arithmetic LLVM vectorises (:mod:`.scalar_math`,
:mod:`.vecmath`), the other transcendental functions scalar libm calls (no SVML in the
llvmlite builds we get).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.link.numba.scalar_math import TANH_NAME, VECMATH_NAMES, helpers_for, libm_where_long, trig_guard
from arignote.scalar import basic as psb
from arignote.scalar import special as pss
from arignote.scalar.composite import Composite
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import get_scalar_type
from arignote.tensor.elemwise import CAReduce, Elemwise

__all__ = ["KernelPlan", "plan_node", "plan_op", "plan_reduction", "pays", "KERNEL_FORMAT"]

#: bumped when the generated text changes meaning (part of every key)
KERNEL_FORMAT = 2

_FLOATS = ("float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_DTYPES = (*_FLOATS, *_INTS, "bool")
_NB_TYPE = {"bool": "boolean", **{d: d for d in _FLOATS + _INTS}}

# -- scalar ops as expressions ------------------------------------------------------------
#
# ``template(args, in_dtypes, out_dtype)`` gives a Numba expression, or None where the op
# on these dtypes is not one we write (its node then keeps its tier-1 implementation).
# ``np.<ufunc>`` on scalars, not ``math.<fn>``: NumPy's semantics (no domain errors: NaN).


def _all_float(ins: tuple, out: str) -> bool:
    return out in _FLOATS and all(d in _FLOATS for d in ins)


def _unary(fn: str):  # a float -> float function of NumPy's
    def template(args: list[str], ins: tuple, out: str) -> str | None:
        return f"np.{fn}({args[0]})" if _all_float(ins, out) else None

    return template


def _vec(fn: str):  # a float -> float function of arignote.link.numba.vecmath (in float64)
    name = VECMATH_NAMES[fn]

    def template(args: list[str], ins: tuple, out: str) -> str | None:
        return f"{name}(np.float64({args[0]}))" if _all_float(ins, out) else None

    return template


def _arith(symbol: str, floats_only: bool = False):
    def template(args: list[str], ins: tuple, out: str) -> str | None:
        if out == "bool" or (floats_only and out not in _FLOATS):
            return None
        return "(" + f" {symbol} ".join(args) + ")"

    return template


def _compare(symbol: str):
    def template(args: list[str], ins: tuple, out: str) -> str | None:
        return f"({args[0]} {symbol} {args[1]})" if "bool" not in ins else None

    return template


def _max(args: list[str], ins: tuple, out: str) -> str | None:
    a, b = args  # NaN wins, as np.maximum
    return f"({a} if (({a} >= {b}) | ({a} != {a})) else {b})" if out != "bool" else None


def _min(args: list[str], ins: tuple, out: str) -> str | None:
    a, b = args
    return f"({a} if (({a} <= {b}) | ({a} != {a})) else {b})" if out != "bool" else None


def _cast(args: list[str], ins: tuple, out: str) -> str | None:
    # float -> int casts of NaN/inf are undefined in C and NumPy alike: left to tier 1
    if out == "bool":
        return f"({args[0]} != 0)"
    if out in _INTS and ins[0] in _FLOATS:
        return None
    return f"np.{out}({args[0]})"


def _pow(args: list[str], ins: tuple, out: str) -> str | None:
    return f"({args[0]} ** {args[1]})" if out in _FLOATS else None


def _abs(args: list[str], ins: tuple, out: str) -> str | None:
    return f"abs({args[0]})" if out != "bool" and not out.startswith("uint") else None


def _reciprocal(args: list[str], ins: tuple, out: str) -> str | None:
    return f"(np.{out}(1) / {args[0]})" if _all_float(ins, out) else None


def _sigmoid(args: list[str], ins: tuple, out: str) -> str | None:
    exp = VECMATH_NAMES["exp"]  # (vectorised: see _vec)
    a = f"np.float64({args[0]})"
    return f"(1.0 / (1.0 + {exp}(-{a})))" if _all_float(ins, out) else None


def _softplus(args: list[str], ins: tuple, out: str) -> str | None:
    # log(1 + exp(x)) as NumPy's logaddexp(0, x) computes it, max(x, 0) + log1p(exp(-|x|)):
    # no overflow for large x; NaN stays NaN (through exp), -inf gives 0, inf gives inf
    exp, log1p = VECMATH_NAMES["exp"], VECMATH_NAMES["log1p"]
    x = f"np.float64({args[0]})"
    if not _all_float(ins, out):
        return None
    return f"(({x} if {x} > 0.0 else 0.0) + {log1p}({exp}(-abs({x}))))"


def _log1mexp(args: list[str], ins: tuple, out: str) -> str | None:
    # log(1 - exp(x)), x <= 0: log(-expm1(x)) near 0, log1p(-exp(x)) below -log(2)
    x = args[0]
    if not _all_float(ins, out):
        return None
    return f"(np.log(-np.expm1({x})) if {x} > np.{out}(-0.6931471805599453) else np.log1p(-np.exp({x})))"


def _sign(args: list[str], ins: tuple, out: str) -> str | None:
    x = args[0]  # NaN stays NaN, as np.sign
    if out == "bool" or out.startswith("uint"):
        return None
    return f"({x} if {x} != {x} else (1 if {x} > 0 else (-1 if {x} < 0 else 0)))"


def _switch(args: list[str], ins: tuple, out: str) -> str | None:
    c, a, b = args
    return f"({a} if {c} else {b})"


def _clip(args: list[str], ins: tuple, out: str) -> str | None:
    x, lo, hi = args  # NaN stays NaN, as np.clip
    return f"({lo} if {x} < {lo} else ({hi} if {x} > {hi} else {x}))" if out != "bool" else None


_TEMPLATES: dict[type, Any] = {
    psb.Add: _arith("+"),
    psb.Mul: _arith("*"),
    psb.Sub: _arith("-"),
    psb.TrueDiv: _arith("/", floats_only=True),
    psb.Neg: lambda a, i, o: f"(-{a[0]})" if o != "bool" and not o.startswith("uint") else None,
    psb.Abs: _abs,
    psb.Sqr: lambda a, i, o: f"({a[0]} * {a[0]})" if o != "bool" else None,
    psb.Sqrt: _unary("sqrt"),
    psb.Pow: _pow,
    psb.Maximum: _max,
    psb.Minimum: _min,
    psb.Clip: _clip,
    psb.Reciprocal: _reciprocal,
    psb.EQ: _compare("=="),
    psb.NEQ: _compare("!="),
    psb.LT: _compare("<"),
    psb.LE: _compare("<="),
    psb.GT: _compare(">"),
    psb.GE: _compare(">="),
    psb.Switch: _switch,
    psb.IsNan: lambda a, i, o: f"np.isnan({a[0]})" if i[0] in _FLOATS else None,
    psb.IsInf: lambda a, i, o: f"np.isinf({a[0]})" if i[0] in _FLOATS else None,
    psb.Identity: lambda a, i, o: a[0],
    psb.Second: lambda a, i, o: a[1],
    psb.Cast: _cast,
    psb.Floor: _unary("floor"),
    psb.Ceil: _unary("ceil"),
    psb.Trunc: _unary("trunc"),
    # (libm's exp, log1p, sin, cos are calls LLVM cannot vectorise: ours are arithmetic,
    # see scalar_math and vecmath; sin and cos need a guard on their argument, _GUARDED)
    psb.Exp: _vec("exp"),
    psb.Exp2: _unary("exp2"),
    psb.Expm1: _unary("expm1"),
    psb.Log: _unary("log"),
    psb.Log2: _unary("log2"),
    psb.Log10: _unary("log10"),
    psb.Log1p: _vec("log1p"),
    psb.Sin: _vec("sin"),
    psb.Cos: _vec("cos"),
    psb.Tan: _unary("tan"),
    psb.ArcSin: _unary("arcsin"),
    psb.ArcCos: _unary("arccos"),
    psb.ArcTan: _unary("arctan"),
    psb.Sinh: _unary("sinh"),
    psb.Cosh: _unary("cosh"),
    # (libm's tanh is a call LLVM cannot vectorise: ours is arithmetic, see scalar_math)
    psb.Tanh: lambda a, i, o: f"{TANH_NAME}(np.float64({a[0]}))" if _all_float(i, o) else None,
    psb.ArcSinh: _unary("arcsinh"),
    psb.ArcCosh: _unary("arccosh"),
    psb.ArcTanh: _unary("arctanh"),
    psb.ArcTan2: lambda a, i, o: f"np.arctan2({a[0]}, {a[1]})" if _all_float(i, o) else None,
    pss.Sigmoid: _sigmoid,
    pss.Softplus: _softplus,
    pss.Log1mexp: _log1mexp,
    psb.Sign: _sign,
    # floor division and its remainder: Python's semantics are NumPy's (a division by zero
    # that Numba refuses raises: the whole-graph function then leaves the call to tier 1)
    psb.IntDiv: lambda a, i, o: f"({a[0]} // {a[1]})" if o != "bool" else None,
    psb.Mod: lambda a, i, o: f"({a[0]} % {a[1]})" if o != "bool" else None,
    psb.AND: lambda a, i, o: f"({a[0]} & {a[1]})" if o in ("bool", *_INTS) else None,
    psb.OR: lambda a, i, o: f"({a[0]} | {a[1]})" if o in ("bool", *_INTS) else None,
    psb.XOR: lambda a, i, o: f"({a[0]} ^ {a[1]})" if o in ("bool", *_INTS) else None,
    psb.Invert: lambda a, i, o: f"(not {a[0]})" if o == "bool" else (f"(~{a[0]})" if o in _INTS else None),
}

#: ops whose generated call is valid only where a guard expression of its first argument is
#: false (sin and cos: |x| <= vecmath.TRIG_MAX); a loop ORs them and leaves the call to tier 1
_GUARDED = (psb.Sin, psb.Cos)
#: integer divisions: a zero divisor is the reference's ZeroDivisionError, not NumPy's 0
_INT_DIVISIONS = (psb.IntDiv, psb.Mod)

# -- the cost model (ns per element, measured: bench/backend.py "ops" table) -----------------
#
# NumPy: one ufunc pass, its temporary's memory traffic included; Numba: the scalar op in
# the fused loop. NumPy's exp/log/log1p/expm1 are SIMD (AVX-512 here); in Numba, exp,
# log1p, sin and cos are arignote's vectorised arithmetic (vecmath), the others libm calls:
# a body of those runs faster as NumPy calls. Arithmetic fuses to nearly nothing.
_ARITH = (1.7, 0.3)
_COST: dict[type, tuple[float, float]] = {
    psb.Exp: (0.8, 1.4),
    psb.Exp2: (1.0, 4.4),
    psb.Expm1: (1.5, 6.0),
    psb.Log: (1.0, 9.7),
    psb.Log2: (1.0, 9.7),
    psb.Log10: (1.2, 9.7),
    psb.Log1p: (1.0, 2.0),
    psb.Sin: (8.3, 2.2),
    psb.Cos: (8.3, 2.2),
    psb.Sqrt: (1.5, 0.6),
    psb.TrueDiv: (1.8, 0.8),
    psb.Reciprocal: (1.8, 0.8),
    psb.Pow: (12.0, 12.0),
    pss.Sigmoid: (5.0, 2.5),
    pss.Softplus: (10.0, 4.0),
    psb.Tanh: (2.1, 1.5),
}
_OTHER = (10.0, 10.0)  # libm-bound in both (tan, arcsin, ...)
#: NumPy's reduction pass over a temporary (ns per element); Numba's accumulation
_REDUCE_COST = (1.0, 0.4)
#: Numba's accumulation where it differs, by (op, reduced axes innermost), measured on 2000²
#: and 256x512 (``bench/backend.py`` and single calls): a sum along rows vectorises into
#: partial sums (0.08-0.19 ns an element); a max or min along rows keeps NaN, a select LLVM
#: does not vectorise (1.4 ns, where NumPy's loop takes 0.2: a kernel there made FAST_RUN's
#: ``X.max(axis=1)`` 3x slower than NumPy's); down columns both run in blocks (0.2-0.4 ns).
_REDUCE_NUMBA = {
    (psb.Add, True): 0.2,
    (psb.Mul, True): 0.2,
    (psb.Maximum, True): 1.4,
    (psb.Minimum, True): 1.4,
}

# NumPy's float32 loops are SIMD over twice the lanes and half the bytes, its transcendental
# ones too (sin and cos 16x faster than in float64), where a kernel computes a float32
# element's math in float64 (vecmath, scalar_math) at about float64's cost. Measured with
# ``bench/backend.py --ops`` and the same ufunc passes over 2**20 elements of each dtype:
# NumPy's float32 time over its float64 time. (Without this a fused float32 ``tanh`` node, an
# MLP's hidden layer, ran as a kernel at 2.7 ns an element where NumPy took 0.8.)
_F32_NUMPY = {
    psb.Exp: 0.56,
    psb.Log: 0.46,
    psb.Log1p: 0.42,
    psb.Sin: 0.06,
    psb.Cos: 0.06,
    psb.Tanh: 0.21,
    psb.Sqrt: 0.29,
    psb.Exp2: 0.31,
    psb.Expm1: 0.32,
    psb.Log2: 0.27,
    psb.Log10: 0.10,
    psb.Pow: 0.27,
    psb.Reciprocal: 0.31,
    psb.TrueDiv: 0.31,
}
#: the same ratio for arithmetic (multiply 0.39) and the rest (tan 0.29, arcsin 0.39, ...)
_F32_OTHER = 0.33


def _numpy_scale(op: ScalarOp | None, dtype: str) -> float:
    """NumPy's cost of ``op`` (None: a plain pass) on ``dtype`` against the tables' float64."""
    if dtype != "float32":
        return 1.0
    return _F32_NUMPY.get(type(op), _F32_OTHER)


def _op_cost(op: ScalarOp, dtype: str = "float64") -> tuple[float, float]:
    """(NumPy's, the kernel's) ns per element of ``op`` with a ``dtype`` result."""
    t = type(op)
    if t in _COST:
        a, b = _COST[t]
    elif t in (psb.Exp, psb.Log, psb.Sin, psb.Cos) or issubclass(t, psb.FloatUnary):
        a, b = _OTHER
    else:
        a, b = _ARITH
    return a * _numpy_scale(op, dtype), b


# -- plans ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelPlan:
    """A node's kernel: ``source`` (the module text; its function is ``kernel``), ``key``
    (its content hash), ``consts`` (the values of the body's constants, passed in order),
    ``in_ndim``/``in_broadcastable`` (the inputs' static patterns, checked by the caller),
    ``out_dtypes``, ``kind`` (``"map"``, ``"reduce"`` or ``"rows"``: :func:`plan_op`),
    ``costs`` (NumPy's and the kernel's estimated ns per element), ``keep`` (a reduction's
    kept input dimensions; for ``"rows"``, the first and past-the-last axes it runs along) and,
    for a reduction, ``op_name`` and ``empty_ok`` (whether an empty reduction has a value),
    ``guarded``: whether the kernel may return True, asking its caller to compute the call on
    tier 1 instead (an argument of sin or cos beyond the vectorised reduction, an integer
    division by zero: no output written in place of an input then), and ``inplace``, a map
    kernel's ``(output, input)`` pairs computed over the input (not passed to the kernel;
    the caller hands it a private input there: :func:`_inplace_outputs`)."""

    kind: str
    source: str
    key: str
    consts: tuple
    in_broadcastable: tuple
    out_dtypes: tuple
    costs: tuple[float, float]
    keep: tuple = ()
    empty_ok: bool = True
    guarded: bool = False
    inplace: tuple = ()


def _template(op: ScalarOp) -> Any:
    if "impl" in op.__dict__ or "ufunc" in op.__dict__:  # an instance with its own function
        return None
    return _TEMPLATES.get(type(op))


def _body_lines(
    comp: Composite,
    in_names: list[str],
    indent: str,
    consts: list,
    const_names: dict,
    guards: list[str] | None = None,
) -> tuple[list[str], list[str], tuple[float, float]] | None:
    """Statements computing ``comp``'s outputs from ``in_names`` (scalars), the names of
    its outputs, and its cost; None when an op or dtype is not one we write. The guard
    expressions of the body's sin and cos calls (:data:`_GUARDED`) and integer divisions
    (:data:`_INT_DIVISIONS`: a zero divisor) are appended to ``guards``; without a list (a
    caller that cannot leave a call to tier 1) sin and cos call libm and a zero divisor
    raises ``ZeroDivisionError``."""
    names: dict[Variable, str] = dict(zip(comp.inner_inputs, in_names))
    lines: list[str] = []
    numpy_cost = numba_cost = 0.0
    for v in comp.inner_inputs:
        if v.type.dtype not in _DTYPES:
            return None
    for k, node in enumerate(comp.fgraph.toposort()):
        template = _template(node.op)
        if template is None or len(node.outputs) != 1:
            return None
        args = []
        for v in node.inputs:
            if v not in names:
                if not isinstance(v, Constant) or v.type.dtype not in _DTYPES:
                    return None
                const_names[v] = names[v] = f"c{len(consts)}"
                consts.append(np.dtype(v.type.dtype).type(v.data))
            args.append(names[v])
        (out,) = node.outputs
        odt = out.type.dtype
        if odt not in _DTYPES:
            return None
        in_dtypes = tuple(v.type.dtype for v in node.inputs)
        guarded = isinstance(node.op, _GUARDED) and _all_float(in_dtypes, odt)
        if guarded and guards is None:
            template = _unary(type(node.op).__name__.lower())
        expr = template(args, in_dtypes, odt)
        if expr is None:
            return None
        if guarded and guards is not None:
            guards.append(trig_guard(f"np.float64({args[0]})"))
        if isinstance(node.op, _INT_DIVISIONS) and all(d in _INTS for d in in_dtypes):
            # NumPy (and Numba's error model) give 0 for an integer division by zero; the
            # reference raises: a loop leaves such a call to tier 1, a 0-d body raises
            if guards is not None:
                guards.append(f"({args[1]} == 0)")
            else:
                lines.append(f"{indent}if {args[1]} == 0:")
                lines.append(f"{indent}    raise ZeroDivisionError('integer division by zero')")
        cast = "np.bool_" if odt == "bool" else f"np.{odt}"
        names[out] = f"v{k}"
        lines.append(f"{indent}v{k} = {cast}({expr})")
        a, b = _op_cost(node.op, odt)
        numpy_cost += a
        numba_cost += b
    outs = []
    for v in comp.inner_outputs:
        if v not in names:  # a constant output
            if not isinstance(v, Constant) or v.type.dtype not in _DTYPES:
                return None
            names[v] = f"c{len(consts)}"
            consts.append(np.dtype(v.type.dtype).type(v.data))
        outs.append(names[v])
    return lines, outs, (numpy_cost, numba_cost)


def _array_type(dtype: str, ndim: int, c_contiguous: bool) -> str:
    dims = [":"] * ndim
    if c_contiguous and ndim:
        dims[-1] = "::1"
    return f"{_NB_TYPE[dtype]}[{', '.join(dims)}]"


def _with_helpers(lines: list[str]) -> str:
    """The module's text, with the definitions of the :mod:`scalar_math` functions it calls
    after its imports."""
    body = libm_where_long("\n".join(lines[4:]) + "\n")
    return "\n".join([*lines[:4], *(text + "\n\n" for text in helpers_for(body))]) + body


def _header(signature: str, fastmath: Any) -> list[str]:
    return [
        "import numba",
        "import numpy as np",
        "",
        "",
        f"@numba.njit([{signature!r}], cache=True, nogil=True, error_model='numpy', "
        f"boundscheck=False, fastmath={fastmath!r})",
    ]


def _key(source: str) -> str:
    return hashlib.sha256(f"arignote-kernel-{KERNEL_FORMAT}\n{source}".encode()).hexdigest()[:40]


def _index(bcast: tuple, loop_vars: list[str]) -> str:
    return ", ".join("0" if b else j for b, j in zip(bcast, loop_vars))


def _fused_inputs(node: Apply) -> tuple | None:
    """The dtypes and broadcastable patterns of an Elemwise(Composite) node's inputs."""
    op = node.op
    if not isinstance(op, Elemwise) or not isinstance(op.scalar_op, Composite):
        return None
    return tuple(v.type.dtype for v in node.inputs), tuple(v.type.broadcastable for v in node.inputs)


def _as_body(op: Elemwise, node: Apply) -> Composite | None:
    """The scalar body of an Elemwise node: its Composite, or its one scalar op as one."""
    if isinstance(op.scalar_op, Composite):
        return op.scalar_op
    if op.nout != 1 or _template(op.scalar_op) is None:
        return None
    ins = [get_scalar_type(v.type.dtype)() for v in node.inputs]
    try:
        return Composite(ins, [op.scalar_op(*ins)], clone=False)
    except (TypeError, ValueError):
        return None


def plan_node(node: Apply) -> KernelPlan | None:
    """The ``"map"`` kernel of an ``Elemwise(Composite)`` node (None: not one we write)."""
    found = _fused_inputs(node)
    if found is None:
        return None
    in_dtypes, bcasts = found
    ndim = node.outputs[0].type.ndim
    if ndim == 0 or any(d not in _DTYPES for d in in_dtypes):
        return None
    out_dtypes = tuple(v.type.dtype for v in node.outputs)
    if any(d not in _DTYPES for d in out_dtypes):
        return None
    loop = [f"j{d}" for d in range(ndim)]
    ins = [f"a{k}" for k in range(len(node.inputs))]
    consts: list = []
    indent = "    " * (ndim + 1)
    guards: list[str] = []
    made = _body_lines(node.op.scalar_op, [f"x{k}" for k in range(len(ins))], indent, consts, {}, guards)
    if made is None:
        return None
    body, outs, costs = made
    cs = [f"c{k}" for k in range(len(consts))]
    os_ = [f"o{k}" for k in range(len(outs))]
    inplace = () if guards else _inplace_outputs(node, bcasts)
    own = [j for j in range(len(os_)) if j not in dict(inplace)]  # (outputs the caller makes)
    # (C-contiguous inputs: LLVM vectorises no loop over several any-layout arrays; the
    # caller copies others)
    sig = ", ".join(
        [_array_type(d, ndim, True) for d in in_dtypes]
        + [_NB_TYPE[np.asarray(c).dtype.name] for c in consts]
        + [_array_type(out_dtypes[j], ndim, True) for j in own]
        + ["int64", "int64"]
    )
    lines = _header(f"boolean({sig})", False)
    lines.append(f"def kernel({', '.join([*ins, *cs, *(os_[j] for j in own), 'start', 'stop'])}):")
    shaped = os_[own[0]] if own else ins[inplace[0][1]]
    for d in range(1, ndim):
        lines.append(f"    n{d} = {shaped}.shape[{d}]")
    lines.append("    beyond = False")
    ins_s = _sliced(lines, ins, bcasts)
    os_s = _sliced(lines, [os_[j] for j in own], [(False,)] * len(own))
    for j, i in inplace:  # (the input's own rows by the same name: see _inplace_outputs)
        os_s.insert(j, ins_s[i])
    lines.append("    for j0 in range(stop - start):")
    for d in range(1, ndim):
        lines.append(f"{'    ' * (d + 1)}for j{d} in range(n{d}):")
    idx = ", ".join(loop)
    for k, (a, b) in enumerate(zip(ins_s, bcasts)):
        lines.append(f"{indent}x{k} = {a}[{_index(b, loop)}]")
    lines += body
    lines += _guard_lines(guards, indent)
    for o, name in zip(os_s, outs):
        lines.append(f"{indent}{o}[{idx}] = {name}")
    lines.append("    return beyond")
    source = _with_helpers(lines)
    return KernelPlan(
        "map",
        source,
        _key(source),
        tuple(consts),
        bcasts,
        out_dtypes,
        (costs[0] + _ARITH[0] * _numpy_scale(None, out_dtypes[0]), costs[1]),
        guarded=bool(guards),
        inplace=inplace,
    )


def _inplace_outputs(node: Apply, bcasts: tuple) -> tuple[tuple[int, int], ...]:
    """The ``(output, input)`` pairs of a map kernel that writes an output over its input
    (the node's ``inplace_pattern``, where the input has the output's dtype and pattern and
    is not broadcast along the first dimension). The kernel stores into the input's array
    under the name it loads from: passed as an output of its own, the same memory under two
    names, LLVM's run-time overlap check finds them overlapping and runs the scalar copy of
    the loop (measured: ``tanh`` of 131,072 float32, 2.4 ms against 0.3)."""
    pairs = []
    taken = set()
    for j, i in node.op.inplace_pattern:
        ov, iv = node.outputs[j], node.inputs[i]
        if (
            i not in taken
            and ov.type.dtype == iv.type.dtype
            and bcasts[i] == ov.type.broadcastable
            and not bcasts[i][0]
        ):
            pairs.append((j, i))
            taken.add(i)
    return tuple(pairs)


def _sliced(lines: list[str], names: list[str], bcasts: list | tuple) -> list[str]:
    """Statements making each array of ``names`` its rows ``start:stop`` (those not
    broadcastable at dimension 0), and the names to index then, from row 0: a loop from 0
    LLVM vectorises better than one from ``start`` (measured on the ew kernel: 8.4 -> 5.3 ms
    of CPU)."""
    out = []
    for a, b in zip(names, bcasts):
        if b[0]:
            out.append(a)
        else:
            lines.append(f"    {a}s = {a}[start:stop]")
            out.append(f"{a}s")
    return out


def _guard_lines(guards: list[str], indent: str) -> list[str]:
    """The statement ORing a body's guards into ``beyond`` (none without guards)."""
    return [f"{indent}beyond = beyond | {' | '.join(guards)}"] if guards else []


_REDUCERS = {
    psb.Add: ("{a} = {a} + {v}", "0", ("reassoc",), True),
    psb.Mul: ("{a} = {a} * {v}", "1", ("reassoc",), True),
    psb.Maximum: ("{a} = {v} if (({v} > {a}) | ({v} != {v})) else {a}", "-np.inf", False, False),
    psb.Minimum: ("{a} = {v} if (({v} < {a}) | ({v} != {v})) else {a}", "np.inf", False, False),
}


def plan_reduction(node: Apply, producer: Apply | None) -> KernelPlan | None:
    """The ``"reduce"`` kernel of a ``CAReduce`` node of a float dtype, computing its input
    from ``producer``'s inputs (an ``Elemwise(Composite)`` node whose output only it reads)
    or, with ``producer`` None, reading its input. The accumulation is in ``acc_dtype``;
    sums and products may reassociate (``fastmath`` reassoc: vectorised partial sums, as
    NumPy's pairwise sums also reorder), max/min propagate NaN as NumPy's."""
    op = node.op
    if not isinstance(op, CAReduce) or type(op.scalar_op) not in _REDUCERS or "impl" in op.scalar_op.__dict__:
        return None
    (x,) = node.inputs
    out = node.outputs[0]
    nd = x.type.ndim
    acc = op.acc_dtype or out.type.dtype
    if nd == 0 or out.type.dtype not in _FLOATS or acc not in _FLOATS or x.type.dtype not in _FLOATS:
        return None
    axes = tuple(range(nd)) if op.axis is None else op.axis
    keep = tuple(d for d in range(nd) if d not in axes)
    if not axes:  # nothing reduced: a copy, tier 1's
        return None
    loop = [f"j{d}" for d in range(nd)]
    consts: list = []
    guards: list[str] = []
    step, init, fastmath, empty_ok = _REDUCERS[type(op.scalar_op)]
    if producer is not None:
        if not isinstance(producer.op, Elemwise) or producer.outputs != [x]:
            return None
        comp = _as_body(producer.op, producer)
        in_dtypes = tuple(v.type.dtype for v in producer.inputs)
        bcasts = tuple(v.type.broadcastable for v in producer.inputs)
        if comp is None or any(d not in _DTYPES for d in in_dtypes):
            return None
        made = _body_lines(comp, [f"x{k}" for k in range(len(in_dtypes))], "", consts, {}, guards)
        if made is None:
            return None
        body, (value,), costs = made
    else:
        in_dtypes, bcasts = (x.type.dtype,), (x.type.broadcastable,)
        body, value, costs = [], "x0", (0.0, 0.0)
    ins = [f"a{k}" for k in range(len(in_dtypes))]
    cs = [f"c{k}" for k in range(len(consts))]
    sig = ", ".join(
        [_array_type(d, nd, True) for d in in_dtypes]
        + [_NB_TYPE[np.asarray(c).dtype.name] for c in consts]
        + [_array_type(out.type.dtype, len(keep), True) if keep else _array_type(out.type.dtype, 1, True)]
        + ["int64", "int64"]
    )
    lines = _header(f"boolean({sig})", set(fastmath) if fastmath else False)
    lines.append(f"def kernel({', '.join([*ins, *cs, 'o0', 'start', 'stop'])}):")
    lines.append("    beyond = False")
    # a 0-d output is passed as a 1-element array
    kept_idx = ", ".join(loop[d] for d in keep) if keep else "0"
    p = keep[0] if keep else None  # the dimension the start:stop slice runs over
    src = "a0" if producer is None else ins[0]
    shape = [f"{src}.shape[{d}]" for d in range(nd)]
    for k, b in enumerate(bcasts):  # an input broadcastable there: another input's length
        for d in range(nd):
            if not b[d]:
                shape[d] = f"a{k}.shape[{d}]"
    trailing = all(d > max(keep, default=-1) for d in axes)  # reduced dims innermost
    accumulate = _REDUCE_NUMBA.get((type(op.scalar_op), trailing), _REDUCE_COST[1])
    if p == 0:  # (rows start:stop as views, the loop from 0: see _sliced)
        ins_at, out_at = _sliced(lines, ins, bcasts), _sliced(lines, ["o0"], [(False,)])[0]
    else:
        ins_at, out_at = ins, "o0"
    ind = "    "
    step_at = None  # the indentation depth where the accumulator starts and is stored
    if not trailing:  # the output is the accumulator
        lines.append(f"{ind}o0[start:stop] = {init}")
    elif not keep:
        lines.append(f"{ind}acc = np.{acc}({init})")
        step_at = 1
    if nd == 2 and axes == (0,):  # a column reduction: rows in blocks (column_block_lines)
        lines += column_block_lines(
            ins_at,
            bcasts,
            body,
            guards,
            value,
            step,
            f"np.{acc}",
            shape[0],
            "range(start, stop)",
            "o0",
            COLUMN_BLOCK if producer is None else COLUMN_BLOCK // 2,
        )
    depth = 1
    for d in range(nd):
        if nd == 2 and axes == (0,) and d == 0:  # (the rows the blocks left)
            lines.append(f"{ind}for j0 in range(j0, {shape[0]}):")
            depth += 1
            continue
        if trailing and keep and d == axes[0]:
            lines.append(f"{ind * depth}acc = np.{acc}({init})")
            step_at = depth
        rng = ("range(stop - start)" if p == 0 else "range(start, stop)") if d == p else f"range({shape[d]})"
        lines.append(f"{ind * depth}for j{d} in {rng}:")
        depth += 1
    pad = ind * depth
    for k, (a, b) in enumerate(zip(ins_at, bcasts)):
        lines.append(f"{pad}x{k} = {a}[{_index(b, loop)}]")
    lines += [f"{pad}{line}" for line in body]
    lines += _guard_lines(guards, pad)
    if trailing:
        lines.append(pad + step.format(a="acc", v=f"np.{acc}({value})"))
        lines.append(f"{ind * step_at}{out_at}[{kept_idx}] = acc")
    else:
        lines.append(f"{pad}v = np.{acc}({value})")
        lines.append(f"{pad}a = np.{acc}({out_at}[{kept_idx}])")
        lines.append(pad + step.format(a="a", v="v"))
        lines.append(f"{pad}{out_at}[{kept_idx}] = a")
    lines.append("    return beyond")
    source = _with_helpers(lines)
    return KernelPlan(
        "reduce",
        source,
        _key(source),
        tuple(consts),
        bcasts,
        (out.type.dtype,),
        (costs[0] + _REDUCE_COST[0] * _numpy_scale(None, x.type.dtype), costs[1] + accumulate),
        keep=keep,
        empty_ok=empty_ok,
        guarded=bool(guards),
    )


#: rows of a matrix a column reduction reads per pass over its output (4 with a fused body,
#: which is written out once per row)
COLUMN_BLOCK = 8


def column_block_lines(
    ins: list[str],
    bcasts: tuple,
    body: list[str],
    guards: list[str],
    value: str,
    update: str,
    cast: str,
    rows: str,
    cols: str,
    out: str,
    block: int = COLUMN_BLOCK,
) -> list[str]:
    """The loop of a reduction over the rows of a matrix that takes them ``block`` at a time:
    each output element ``out[j1]`` (``j1`` over ``cols``) is loaded and stored once per
    block, not once per row, which bound the vectorised loop (the max over axis 0 of
    4000x4000 float64: 8.2 -> 5.3 ms of CPU in the whole-graph function, 13.5 -> 7.4 ms in
    the per-node kernel). Each column still takes its rows in order: the bits of the
    row-at-a-time loop. ``update`` is a statement template (``{a}``, ``{v}``); the row
    counter ``j0`` is left at the first row the blocks did not take."""
    ind = "    "
    lines = [f"{ind}j0 = 0", f"{ind}while j0 + {block} <= {rows}:", f"{ind * 2}for j1 in {cols}:"]
    lines.append(f"{ind * 3}a = {cast}({out}[j1])")
    for k in range(block):
        for i, (a, bc) in enumerate(zip(ins, bcasts)):
            lines.append(f"{ind * 3}x{i} = {a}[{_index(bc, [f'j0 + {k}', 'j1'])}]")
        lines += [f"{ind * 3}{line}" for line in body]
        lines += _guard_lines(guards, ind * 3)
        lines.append(f"{ind * 3}{update.format(a='a', v=f'{cast}({value})')}")
    lines += [f"{ind * 3}{out}[j1] = a", f"{ind * 2}j0 += {block}"]
    return lines


@functools.singledispatch
def plan_op(op: Any, node: Apply) -> KernelPlan | None:
    """The per-node kernel of a node of another Op than the fused ones above, registered by
    Op type from :mod:`arignote.link.numba.dispatch` (None: none). A plan of kind ``"rows"``
    (Softmax, LogSoftmax) is ``kernel(x, o, start, stop)`` over the input and output seen as
    C-contiguous ``(A, n, B)`` arrays, ``n`` the product of the lengths of the axes
    ``keep[0]:keep[1]``, computing ``x[start:stop]``."""
    return None


def has_plan_op(op: Any) -> bool:
    """Whether ``op``'s type has a :func:`plan_op` registration."""
    return plan_op.dispatch(type(op)) is not plan_op.dispatch(object)


def pays(plan: KernelPlan) -> bool:
    """Whether the kernel is expected to beat tier 1's NumPy calls per element (the cost
    model above; threads and sizes are the caller's choice)."""
    numpy_cost, numba_cost = plan.costs
    return numba_cost < 0.8 * numpy_cost
