"""Scalar math functions written out for the generated Numba code, where libm's are slow.

Numba compiles ``np.tanh(x)`` on a scalar to a call of libm's ``tanh`` (the llvmlite builds
here have no SVML), which LLVM cannot vectorise: 13-17 ns per element on this project's
machine, against about 2 ns for NumPy's SIMD loop. A tanh RNN's step spends most of its time
there. :data:`TANH` is the text of a function of plain arithmetic, inlined into the loop that
calls it (``inline='always'``), which LLVM vectorises: about 1.1-1.5 ns per element, within
2 ulp of the exact value (measured against an exact rational evaluation; libm's ``tanh`` is
within 1.7 ulp, NumPy's within 1.1).

How: for ``a = |x|``, ``tanh(a) = e / (e + 2)`` with ``e = expm1(2a)``; ``expm1(y)`` for
``y = k ln2 + r`` (``k = floor(y / ln2)``, so ``0 <= r < ln2``: no cancellation below) is
``(2**k - 1) + 2**k * expm1(r)``, where ``2**k`` is an integer shift made a float (exact) and
``expm1(r)`` is its Taylor polynomial to ``r**17`` (the first term left out is below
``1e-17 * r``). ``ln2`` is split in two parts (Cody and Waite) so that ``k * ln2_hi`` is exact.
Beyond ``|x| = 20`` tanh rounds to 1, so ``a`` is clamped there (``k <= 57``: the shift stays
in range); the sign is put back at the end; NaN, ``+0.0`` and ``-0.0`` are returned as given.

exp, log1p, sin and cos are LLVM IR emitted by Numba intrinsics
(:mod:`arignote.link.numba.vecmath`, which imports Numba): a generated source calling
``_arignote_exp(`` and the others imports them under those names, and the import line carries a
hash of that module's file, so that a change there changes every kernel's content key. sin and
cos reduce their argument for ``|x| <= TRIG_MAX`` only: a loop calling them also tests
:data:`TRIG_BEYOND_NAME` on each argument and leaves the call to tier 1 (NumPy) where it is
true (:func:`trig_guard`).

Only the text lives here (nothing imports Numba): :func:`helpers_for` gives the definitions a
generated source needs, which the writers put at the head of its module, so that the text is
part of the module's content key in the disk cache.
"""

from __future__ import annotations

import functools
import hashlib
import math
from pathlib import Path

__all__ = [
    "INLINE_MAX",
    "TANH",
    "TANH_NAME",
    "TRIG_BEYOND_NAME",
    "VECMATH_NAMES",
    "helper_import",
    "helpers_for",
    "libm_where_long",
    "trig_guard",
]

#: the generated code's name of each function of :mod:`arignote.link.numba.vecmath`
VECMATH_NAMES = {
    "exp": "_arignote_exp",
    "log1p": "_arignote_log1p",
    "sin": "_arignote_sin",
    "cos": "_arignote_cos",
    "trig_beyond": "_arignote_trig_beyond",
    "maxnum": "_arignote_maxnum",
}
TRIG_BEYOND_NAME = VECMATH_NAMES["trig_beyond"]


#: the files whose code each module of generated-code helpers compiles into its callers
_HELPER_FILES = {
    "vecmath": ("vecmath.py",),
    "hugepages": ("hugepages.py",),
    "numpy_blas": ("numpy_blas.py", "hugepages.py"),
}


@functools.cache
def _helper_hash(module: str) -> str:
    here = Path(__file__).parent
    return hashlib.sha256(b"".join((here / f).read_bytes() for f in _HELPER_FILES[module])).hexdigest()[:16]


def helper_import(module: str, fn: str, name: str) -> str:
    """The line of a generated source importing ``fn`` of ``arignote.link.numba.<module>``
    (:data:`_HELPER_FILES`) as ``name``, with a hash of the code that module compiles into
    its callers: Numba's cache of a caller does not notice a change there, the source's key
    then does."""
    return f"from arignote.link.numba.{module} import {fn} as {name}  # {module} {_helper_hash(module)}"


def trig_guard(arg: str) -> str:
    """The expression, true where the float64 ``arg`` is finite and beyond what the generated
    sin and cos reduce (their result there is NaN: the caller leaves the call to tier 1)."""
    return f"{TRIG_BEYOND_NAME}({arg})"


TANH_NAME = "_arignote_tanh"

_TAYLOR = "\n".join(f"    p = p * r + 1.0 / {math.factorial(n)}.0" for n in range(16, 1, -1))

#: the definition of ``_arignote_tanh(x)`` (float64 in, float64 out); see the module's doc
TANH = f"""@numba.njit(inline='always', nogil=True, error_model='numpy')
def {TANH_NAME}(x):
    a = -x if x < 0.0 else x
    a = 20.0 if a > 20.0 else a
    a = 0.0 if a != a else a
    y = a + a
    k = np.int64(y * 1.4426950408889634)
    kf = np.float64(k)
    r = (y - kf * 0.6931471803691238) - kf * 1.9082149292705877e-10
    p = 1.0 / 355687428096000.0
{_TAYLOR}
    q = r + r * (r * p)
    s = np.float64(np.int64(1) << k)
    e = (s - 1.0) + s * q
    t = e / (e + 2.0)
    t = -t if x < 0.0 else t
    return x if (x != x or x == 0.0) else t
"""

_ALL = {TANH_NAME: TANH}

#: libm's function for each of this module's, where a source calls ours too often
_LIBM = {TANH_NAME: "np.tanh"}

#: calls of one arithmetic helper a source may inline: each copy is some forty Numba IR
#: statements with branches, and Numba's data-flow analyses grow faster than linearly in a
#: function's size (a fused chain of 170 tanh took minutes to compile, 60 took 26 s, 8
#: about 1.5 s). A body that long spends little of its time in the call it saves.
INLINE_MAX = 8


def helpers_for(source: str) -> list[str]:
    """The definitions of the functions of this module that ``source`` calls, in order (for
    the vectorised math: import lines)."""
    out = [text for name, text in _ALL.items() if f"{name}(" in source]
    out += [helper_import("vecmath", fn, name) for fn, name in VECMATH_NAMES.items() if f"{name}(" in source]
    return out


def libm_where_long(source: str) -> str:
    """``source`` with the calls of a function of this module made libm's where it has more
    than :data:`INLINE_MAX` of them (see there)."""
    for name, libm in _LIBM.items():
        if source.count(f"{name}(") > INLINE_MAX:
            source = source.replace(f"{name}(", f"{libm}(")
    return source
