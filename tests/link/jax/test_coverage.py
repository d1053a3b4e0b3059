"""Every Op class of arignote has a JAX implementation, or is in :data:`EXCEPTIONS` with why.

A class is covered by a ``jax_funcify`` registration for itself or for a base class (e.g.
``SolveBase`` covers ``Solve``, ``SolveTriangular`` and ``CholeskySolve``). The exceptions are
whole families that JAX cannot hold as values, and abstract bases whose subclasses are each
registered; the list is checked for stale entries too.
"""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

from tests.link.jax.evaluate import registered  # noqa: E402
from tests.op_classes import all_op_classes, subclasses  # noqa: E402

#: dotted class name (or ``package.*`` for every class under it) -> why it has no JAX function
EXCEPTIONS: dict[str, str] = {
    "arignote.assumptions.specify.SpecifyAssumptions": (
        "a declaration of matrix facts: canonicalize moves it into the graph's AssumptionFeature "
        "and removes the node, so no linker runs it"
    ),
    "arignote.tensor.breakpoint.PdbBreakpoint": (
        "opens a debugger when its condition holds: a traced jax.jit function has no values to stop on"
    ),
    "arignote.graph.fg.Output": (
        "the client node that marks a FunctionGraph's output: it computes nothing, and no linker runs it"
    ),
    "arignote.tensor.random.op.RNGConsumerOp": "base of the random variables (each registered)",
    "arignote.tensor.sort._SortBase": "abstract base of SortOp, ArgSortOp, PermuteAlongAxis (each registered)",
    "arignote.tensor.special._SoftmaxBase": "abstract base of Softmax and LogSoftmax (each registered)",
    "arignote.sparse.comparison._Comparison": (
        "abstract base of ComparisonSS and ComparisonSD (each registered, covering their subclasses)"
    ),
    "arignote.graph.op.PassThroughOp": (
        "base of ViewOp and DeepCopyOp (each registered) and of SpecifyAssumptions (an exception of its own)"
    ),
}


def _excepted(name: str) -> str | None:
    for key in EXCEPTIONS:
        if name == key or (key.endswith(".*") and name.startswith(key[:-1])):
            return key
    return None


def test_every_op_class_has_a_jax_implementation_or_a_reason() -> None:
    classes = all_op_classes()
    assert len(classes) > 150  # the walk found the Ops
    missing = sorted(name for name, cls in classes.items() if not registered(cls) and _excepted(name) is None)
    assert not missing, f"Op classes without a JAX implementation and not in EXCEPTIONS: {missing}"


def test_the_exceptions_are_not_stale() -> None:
    classes = all_op_classes()
    for key, reason in EXCEPTIONS.items():
        named = [n for n in classes if _excepted(n) == key]
        assert named, f"EXCEPTIONS names {key}, which matches no Op class (renamed?)"
        assert reason
        done = [n for n in named if registered(classes[n])]
        assert not done, f"{done} have a JAX implementation now: drop them from EXCEPTIONS"
        if not key.endswith(".*"):  # a base: each of its subclasses is registered
            subs = [c for c in subclasses(classes[key]) if c.__module__.startswith("arignote.")]
            covered = [registered(c) or _excepted(f"{c.__module__}.{c.__qualname__}") for c in subs]
            assert all(covered), f"{key}: a subclass is neither registered nor an exception"
