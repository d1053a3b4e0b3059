"""The shared machinery of the scalar ops whose values come from SciPy: output dtypes,
complex arguments with real parameters, and the impl wrappers (``_SciPyImpl``,
``_Float64Impl``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.scalar.basic import (
    _const,
    mul,
)
from arignote.scalar.op import ScalarOp, upgrade_to_float
from arignote.scalar.type import ScalarType, complex_types, get_scalar_type

__all__: list[str] = []

_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _real_params_complex_arg(*types: ScalarType) -> list[ScalarType]:
    """The float dtype of the inputs (PyTensor's ``upgrade_to_float``), complex when the
    last input (the argument) is: SciPy's Bessel and hypergeometric functions take a
    complex argument but only real orders and parameters."""
    for i, t in enumerate(types[:-1]):
        if t.dtype in complex_types:
            raise TypeError(
                f"input {i} (an order or parameter) must be real, got {t.dtype}; only the last "
                "input (the argument) may be complex"
            )
    return upgrade_to_float(*types)


def _out_dtypes(args: Sequence[Any]) -> tuple[str, str]:
    """The output dtype for these NumPy arguments (as the types rule gives it) and the
    matching real dtype (the orders and parameters are computed in it)."""
    (out,) = upgrade_to_float(*(get_scalar_type(np.asarray(a).dtype.name) for a in args))
    return out.dtype, _REAL_OF.get(out.dtype, out.dtype)


class _SciPyImpl:
    """Mixin of the scalar ops below: ``impl`` by a SciPy ufunc in the output's precision:
    the parameters in the real dtype, the argument (last input) in the output dtype, the
    result cast back (SciPy has no float16 loops)."""

    def impl(self, *args: Any) -> Any:
        dtype, real_dtype = _out_dtypes(args)
        *params, arg = args
        with np.errstate(all="ignore"):
            result = self.ufunc(
                *(np.asarray(p, dtype=real_dtype) for p in params), np.asarray(arg, dtype=dtype)
            )
        return result if result.dtype == dtype else result.astype(dtype)


def _order_not_implemented(op: ScalarOp, v: Variable) -> Variable:
    return grad_not_implemented(
        op, 0, v, f"The derivative of {op} in its order v has no closed form (and no scalar op computes it)."
    )


def _half(x: Variable) -> Variable:
    return mul(_const(0.5, x), x)


# --- Bessel functions of real order -----------------------------------------------------------


# --- Owen's T and the incomplete gamma functions ----------------------------------------------


class _Float64Impl:
    """Mixin of the scalar ops below: ``impl`` computes a real special function of two
    arguments in float64 (``compute``, SciPy's) and returns it in the output dtype."""

    nin = 2

    def impl(self, *args: Any) -> Any:
        dtype, _ = _out_dtypes(args)
        with np.errstate(all="ignore"):
            result = np.asarray(self.compute(*(np.asarray(a, dtype=np.float64) for a in args)))
        return result.astype(dtype)[()]

    def compute(self, *args: np.ndarray) -> np.ndarray:
        return self.ufunc(*args)


# --- inverses of the regularized incomplete gamma and beta functions ----------------------------
# y = f^-1(k, p) solves f(k, y) = p: dy/dp = 1 / (df/dy) and dy/dk = -(df/dk) / (df/dy), the
# derivatives taken at (k, y), y being the op's output.


# --- the Gauss hypergeometric function -----------------------------------------------------------
