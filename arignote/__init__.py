"""arignote: compile symbolic array expressions into fast callables.

The public API follows PyTensor 3's, so ``import arignote as pytensor`` is meant to work
for what is implemented.
"""

from typing import Any

# importing arignote.tensor registers the tensor shared-variable constructor and the
# tensor rewrite rules
import arignote.tensor  # noqa: F401
from arignote import assumptions, misc  # noqa: F401  (pytensor.assumptions, pytensor.misc)
from arignote._gradient.derivatives import Lop, Rop, grad, pullback, pushforward
from arignote.compile import In, Mode, Out, function, get_mode, shared, wrap_py
from arignote.compile.builders import OpFromGraph
from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.type import Type
from arignote.ifelse import ifelse
from arignote.printing import debugprint, dprint, pprint, pydotprint
from arignote.scan import foldl, foldr, map, reduce, scan

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``arignote.sparse`` without ``import arignote.sparse`` (as in PyTensor): the sparse
    package is imported on first access, since it imports ``scipy.sparse`` (~0.2 s)."""
    if name == "sparse":
        import arignote.sparse  # lazy: scipy.sparse is slow to import and most programs never use it

        return arignote.sparse
    raise AttributeError(f"module 'arignote' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "sparse"})


def wrap_jax(jax_function: Any = None, *, allow_eval: bool = True, name: str | None = None) -> Any:
    """A JAX function as an arignote Op: :func:`arignote.link.jax.ops.wrap_jax` (see there),
    importing the JAX backend when first called, so that ``import arignote`` never imports
    JAX (an optional dependency: ``pip install 'arignote[jax]'``)."""
    try:
        from arignote.link.jax.ops import wrap_jax as wrap  # JAX is optional: imported on use
    except ModuleNotFoundError as err:
        if err.name is None or err.name.split(".")[0] not in ("jax", "jaxlib"):
            raise
        raise ImportError("wrap_jax needs JAX, which is not installed: pip install 'arignote[jax]'") from err
    return wrap(jax_function, allow_eval=allow_eval, name=name)


__all__ = [
    "Apply",
    "Constant",
    "Lop",
    "Rop",
    "In",
    "Mode",
    "Out",
    "FunctionGraph",
    "Op",
    "OpFromGraph",
    "Type",
    "Variable",
    "__version__",
    "config",
    "foldl",
    "foldr",
    "debugprint",
    "dprint",
    "function",
    "grad",
    "get_mode",
    "ifelse",
    "map",
    "pprint",
    "pullback",
    "pushforward",
    "pydotprint",
    "reduce",
    "scan",
    "shared",
    "wrap_jax",
    "wrap_py",
]
