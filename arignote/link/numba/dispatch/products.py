"""Numba functions of :mod:`arignote.tensor.products` (``Dot``) and
:mod:`arignote.tensor.gemm` (``Gemv``, ``Gemm``: ``beta * target + alpha * dot``).

Float operands of the output's dtype go to BLAS: two matrices, or a matrix and a vector,
through :mod:`arignote.link.numba.numpy_blas` (NumPy's BLAS library, whose thread pool tier 1
and the user's NumPy code use too); other dtypes (integers, mixed) are a plain loop in the
output's dtype. Inner lengths that differ raise, as the reference VM does.
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
from arignote.link.numba.scalar_math import helper_import
from arignote.tensor.gemm import Gemm, Gemv
from arignote.tensor.products import Dot

__all__ = ["calls_gemm"]

_CHECK = (
    "    if {a}.shape[{da}] != {b}.shape[{db}]:\n        raise ValueError('{what}: inner lengths differ')\n"
)


#: the generated code's names of :func:`arignote.link.numba.numpy_blas.matmul` and ``matvec``
BLAS_NAMES = {"matmul": "_arignote_matmul", "matvec": "_arignote_matvec"}


def _helpers(lines: list[str]) -> tuple[str, ...]:
    """The import lines the statements ``lines`` need."""
    return tuple(
        helper_import("numpy_blas", fn, name)
        for fn, name in BLAS_NAMES.items()
        if any(f"{name}(" in line for line in lines)
    )


def _dot_lines(a: str, b: str, nda: int, ndb: int, odt: str, blas: bool, result: str) -> list[str]:
    """Statements setting ``result`` to ``dot(a, b)`` (a scalar for two vectors). Two
    vectors are a loop, not BLAS: it is bound by memory either way, and a threaded BLAS on a
    busy machine can cost a thousand times more (measured: 14 ms for 80,000 elements)."""
    if blas and nda == ndb == 2:
        return [f"    {result} = {BLAS_NAMES['matmul']}({a}, {b})"]
    if blas and nda == 2 and ndb == 1:
        return [f"    {result} = {BLAS_NAMES['matvec']}({a}, {b})"]
    if blas and nda == 1 and ndb == 2:
        return [f"    {result} = {BLAS_NAMES['matvec']}({b}.T, {a})"]
    cast = nb_dtype(odt)
    if nda == 1 and ndb == 1:
        return [
            f"    {result} = {cast}(0)",
            f"    for k in range({a}.shape[0]):",
            f"        {result} += {cast}({a}[k]) * {cast}({b}[k])",
        ]
    if nda == 2 and ndb == 1:
        return [
            f"    {result} = np.zeros({a}.shape[0], {cast})",
            f"    for i in range({a}.shape[0]):",
            f"        for k in range({a}.shape[1]):",
            f"            {result}[i] += {cast}({a}[i, k]) * {cast}({b}[k])",
        ]
    if nda == 1 and ndb == 2:
        return [
            f"    {result} = np.zeros({b}.shape[1], {cast})",
            f"    for k in range({a}.shape[0]):",
            f"        for j in range({b}.shape[1]):",
            f"            {result}[j] += {cast}({a}[k]) * {cast}({b}[k, j])",
        ]
    return [
        f"    {result} = np.zeros(({a}.shape[0], {b}.shape[1]), {cast})",
        f"    for i in range({a}.shape[0]):",
        f"        for k in range({a}.shape[1]):",
        f"            for j in range({b}.shape[1]):",
        f"                {result}[i, j] += {cast}({a}[i, k]) * {cast}({b}[k, j])",
    ]


def _blas(node: Apply, operands: list) -> bool:
    odt = node.outputs[0].type.dtype
    return odt in FLOATS and all(v.type.dtype == odt for v in operands)


def calls_gemm(node: Apply) -> bool:
    """Whether ``node``'s Numba implementation calls BLAS's matrix-matrix product (``np.dot``
    of two matrices of the output's float dtype)."""
    op = node.op
    if isinstance(op, Dot):
        x, y = node.inputs
        return x.type.ndim == y.type.ndim == 2 and _blas(node, [x, y])
    return isinstance(op, Gemm) and _blas(node, node.inputs[2:4])


@numba_funcify.register(Dot)
def _dot(op: Dot, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    x, y = node.inputs
    nda, ndb = x.type.ndim, y.type.ndim
    if nda not in (1, 2) or ndb not in (1, 2):
        raise NoNumbaImpl(f"{op}: ranks {nda} and {ndb}")
    odt = node.outputs[0].type.dtype
    lines = ["def impl(a, b):", _CHECK.format(a="a", da=nda - 1, b="b", db=0, what="Dot").rstrip("\n")]
    lines += _dot_lines("a", "b", nda, ndb, odt, _blas(node, [x, y]), "r")
    lines.append(f"    return {nb_dtype(odt)}(r)" if nda == ndb == 1 else "    return r")
    return NumbaImpl("\n".join(lines) + "\n", (), _helpers(lines))


def _update_lines(odt: str, ndim: int) -> list[str]:
    # beta == 0: the target is not read (BLAS's rule, as the reference's). ``p`` is the
    # product just made, of the output's dtype: scaled and added to in place, one pass and
    # no temporary (in a loop's step, each temporary was an allocation per step)
    loops = [f"    {'    ' * d}for i{d} in range(p.shape[{d}]):" for d in range(ndim)]
    at = ", ".join(f"i{d}" for d in range(ndim))
    pad = "    " * (ndim + 1)
    cast = nb_dtype(odt)
    return [
        "    if beta != 0:",
        *("    " + line for line in loops),
        f"    {pad}p[{at}] = {cast}(alpha * p[{at}] + beta * t[{at}])",
        "    elif alpha != 1:",
        *("    " + line for line in loops),
        f"    {pad}p[{at}] = {cast}(alpha * p[{at}])",
        "    return p",
    ]


@numba_funcify.register(Gemv)
def _gemv(op: Gemv, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    _, _, A, x, _ = node.inputs
    odt = node.outputs[0].type.dtype
    lines = [
        "def impl(t, alpha, a, b, beta):",
        _CHECK.format(a="a", da=1, b="b", db=0, what="Gemv").rstrip("\n"),
        _CHECK.format(a="t", da=0, b="a", db=0, what="Gemv").rstrip("\n"),
    ]
    lines += _dot_lines("a", "b", 2, 1, odt, _blas(node, [A, x]), "p")
    return NumbaImpl("\n".join(lines + _update_lines(odt, 1)) + "\n", (), _helpers(lines))


@numba_funcify.register(Gemm)
def _gemm(op: Gemm, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    _, _, x, y, _ = node.inputs
    odt = node.outputs[0].type.dtype
    lines = [
        "def impl(t, alpha, a, b, beta):",
        _CHECK.format(a="a", da=1, b="b", db=0, what="Gemm").rstrip("\n"),
        _CHECK.format(a="t", da=0, b="a", db=0, what="Gemm").rstrip("\n"),
        _CHECK.format(a="t", da=1, b="b", db=1, what="Gemm").rstrip("\n"),
    ]
    lines += _dot_lines("a", "b", 2, 2, odt, _blas(node, [x, y]), "p")
    return NumbaImpl("\n".join(lines + _update_lines(odt, 2)) + "\n", (), _helpers(lines))
