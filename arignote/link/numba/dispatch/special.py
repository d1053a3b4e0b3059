"""Numba functions of :mod:`arignote.tensor.special`: ``Softmax`` and ``LogSoftmax``, for both
Numba tiers: the whole-graph function (:func:`numba_funcify`) and the per-node kernel that
tier 2 swaps into the generated Python function (:func:`~arignote.link.numba.kernels.plan_op`,
a plan of kind ``"rows"``).

Both call one function written here, ``rows(x, o, start, stop)``: ``x`` and ``o`` are the
input and output seen as C-contiguous ``(A, n, B)`` arrays, ``n`` the length the Op
normalises over (the axes it names, which must be adjacent: ``axis=None`` is all of them),
and it computes ``x[start:stop]``. Where ``B == 1`` (the last axis, the common case) each row
is three passes over ``n`` contiguous values, each vectorised by LLVM: the maximum (LLVM's
``maxnum``, a NaN ignored: a NaN then makes its row NaN through the sum, as the reference
gives), ``exp(x - max)`` written out and summed (arignote's vectorised exp, accumulated in
float64 with ``reassoc``), and the division. Otherwise the same passes run over the ``B``
columns at once. float32 is computed in float64 and rounded once. As the reference does, a
row of ``-inf`` (or with ``+inf``) gives NaN for Softmax; LogSoftmax does not subtract an
infinite maximum.
"""

from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import (
    FLOATS,
    NoNumbaImpl,
    NumbaImpl,
    check_types,
    nb_dtype,
    numba_funcify,
)
from arignote.link.numba.kernels import KernelPlan, _key, plan_op
from arignote.link.numba.scalar_math import VECMATH_NAMES, helpers_for
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.special import LogSoftmax, Softmax

__all__ = ["rows_split", "rows_source"]

_EXP = VECMATH_NAMES["exp"]
_MAX = VECMATH_NAMES["maxnum"]

# one row q = f(r), r and q of length n (contiguous)
_ROW = {
    "softmax": f"""\
            m = -np.inf
            for j in range(n):
                m = {_MAX}(m, np.float64(r[j]))
            s = 0.0
            for j in range(n):
                e = {_EXP}(np.float64(r[j]) - m)
                q[j] = e
                s += e
            for j in range(n):
                q[j] = q[j] / s
""",
    "log_softmax": f"""\
            m = -np.inf
            for j in range(n):
                m = {_MAX}(m, np.float64(r[j]))
            if m - m != 0.0:
                m = 0.0
            s = 0.0
            for j in range(n):
                s += {_EXP}(np.float64(r[j]) - m)
            ls = np.log(s)
            for j in range(n):
                q[j] = (np.float64(r[j]) - m) - ls
""",
}

# the same over the B columns of one (n, B) block xi -> oi, with work rows m and s of B:
# each column's maximum first
_COLUMN_MAX = f"""\
            for b in range(nb):
                m[b] = -np.inf
                s[b] = 0.0
            for j in range(n):
                for b in range(nb):
                    m[b] = {_MAX}(m[b], np.float64(xi[j, b]))
"""
_COLUMNS = {
    "softmax": _COLUMN_MAX
    + f"""\
            for j in range(n):
                for b in range(nb):
                    e = {_EXP}(np.float64(xi[j, b]) - m[b])
                    oi[j, b] = e
                    s[b] += e
            for j in range(n):
                for b in range(nb):
                    oi[j, b] = oi[j, b] / s[b]
""",
    "log_softmax": _COLUMN_MAX
    + f"""\
            for b in range(nb):
                if m[b] - m[b] != 0.0:
                    m[b] = 0.0
            for j in range(n):
                for b in range(nb):
                    s[b] += {_EXP}(np.float64(xi[j, b]) - m[b])
            for b in range(nb):
                s[b] = np.log(s[b])
            for j in range(n):
                for b in range(nb):
                    oi[j, b] = (np.float64(xi[j, b]) - m[b]) - s[b]
""",
}


def rows_source(kind: str, name: str, decorator: str) -> str:
    """The text of ``name(x, o, start, stop)`` for ``kind`` (``"softmax"`` or
    ``"log_softmax"``), under ``decorator`` (see the module's doc)."""
    return (
        f"{decorator}\n"
        f"def {name}(x, o, start, stop):\n"
        "    n = x.shape[1]\n"
        "    nb = x.shape[2]\n"
        "    if nb == 1:\n"
        "        xr = x.reshape((x.shape[0], n))\n"
        "        orr = o.reshape((o.shape[0], n))\n"
        "        for i in range(start, stop):\n"
        "            r = xr[i]\n"
        "            q = orr[i]\n"
        f"{_ROW[kind]}"
        "    else:\n"
        "        m = np.empty(nb, np.float64)\n"
        "        s = np.empty(nb, np.float64)\n"
        "        for i in range(start, stop):\n"
        "            xi = x[i]\n"
        "            oi = o[i]\n"
        f"{_COLUMNS[kind]}"
    )


def rows_split(axis: tuple | None, ndim: int) -> tuple[int, int] | None:
    """``(first, last + 1)``: the adjacent axes ``axis`` names (None: all), or None when they
    are not adjacent."""
    axes = tuple(range(ndim)) if axis is None else normalize_axis(axis, ndim)
    if not axes:
        return None
    lo, hi = min(axes), max(axes) + 1
    return (lo, hi) if len(axes) == hi - lo else None


def _kind(op: Softmax | LogSoftmax) -> str:
    return "softmax" if isinstance(op, Softmax) else "log_softmax"


_FASTMATH = "{'reassoc'}"  # the sums vectorise; vecmath's own instructions are not reassociated


def _shape_lines(nd: int, lo: int, hi: int, x: str) -> list[str]:
    prod = lambda ds: " * ".join(f"{x}.shape[{d}]" for d in ds) or "1"  # noqa: E731
    return [
        f"    sa = {prod(range(lo))}",
        f"    sn = {prod(range(lo, hi))}",
        f"    sb = {prod(range(hi, nd))}",
    ]


@numba_funcify.register(Softmax)
@numba_funcify.register(LogSoftmax)
def _softmax_op(op: Softmax | LogSoftmax, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    x = node.inputs[0]
    nd = x.type.ndim
    odt = node.outputs[0].type.dtype
    if odt not in FLOATS or x.type.dtype not in FLOATS or nd == 0:
        raise NoNumbaImpl(f"{op}: only float arrays")
    split = rows_split(op.axis, nd)
    if split is None:
        raise NoNumbaImpl(f"{op}: over axes that are not adjacent")
    kind = _kind(op)
    name = f"_arignote_{kind}_rows"
    helper = rows_source(kind, name, f"@numba.njit(nogil=True, error_model='numpy', fastmath={_FASTMATH})")
    cast = nb_dtype(odt)
    lines = ["def impl(x):", *_shape_lines(nd, *split, "x")]
    lines += [
        f"    xc = np.ascontiguousarray(x).astype({cast})"
        if x.type.dtype != odt
        else "    xc = np.ascontiguousarray(x)",
        f"    o = np.empty(x.shape, {cast})",
        "    if sa * sn * sb:",
        f"        {name}(xc.reshape((sa, sn, sb)), o.reshape((sa, sn, sb)), 0, sa)",
        "    return o",
    ]
    return NumbaImpl("\n".join(lines) + "\n", helpers=(*helpers_for(helper), helper))


# -- the per-node kernel ---------------------------------------------------------------------

#: ns per element: NumPy's max, subtraction, exp, sum and division (with their temporaries)
#: against the kernel's three passes (bench/backend.py softmax1, 4000 x 4000)
_COSTS = (7.0, 2.0)


@plan_op.register(Softmax)
@plan_op.register(LogSoftmax)
def _plan_softmax(op: Softmax | LogSoftmax, node: Apply) -> KernelPlan | None:
    x = node.inputs[0]
    odt = node.outputs[0].type.dtype
    if odt not in FLOATS or x.type.dtype != odt or x.type.ndim == 0:
        return None
    split = rows_split(op.axis, x.type.ndim)
    if split is None:
        return None
    t = f"{odt}[:, :, ::1]"
    header = [
        "import numba",
        "import numpy as np",
        "",
        "",
        f"@numba.njit(['void({t}, {t}, int64, int64)'], cache=True, nogil=True, error_model='numpy', "
        f"boundscheck=False, fastmath={_FASTMATH})",
    ]
    body = rows_source(_kind(op), "kernel", header.pop())
    source = "\n".join([*header, *(text + "\n\n" for text in helpers_for(body))]) + body
    return KernelPlan(
        "rows",
        source,
        _key(source),
        (),
        (x.type.broadcastable,),
        (odt,),
        _COSTS,
        keep=split,
    )
