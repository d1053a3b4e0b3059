"""Every pushforward-catalogue case, run with the JAX implementations and compared with the
reference VM node by node (:func:`tests.link.jax.evaluate.check_nodes`).

The catalogue (``tests/test_pushforward_catalogue_*.py``) holds, for each Op class that has a
derivative rule, small graphs with test values: here each node of those graphs that has a JAX
implementation gets the reference values of its inputs and must give the reference values of
its outputs (values, shapes, dtypes), eagerly; the nodes of the case's own Op class run under
``jax.jit`` as well (they must trace: static shapes), except where the shape of the result
depends on the values (:data:`DATA_DEPENDENT`: there the error must say so). The float32
versions of the catalogue's float32 cases run eagerly, and the first case of each class runs
whole in ``mode="JAX"``.
"""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

import numpy as np  # noqa: E402

from arignote import function  # noqa: E402
from arignote.link.jax.dispatch import JAXNodeError  # noqa: E402
from arignote.link.jax.dispatch.static import DataDependentShapeError  # noqa: E402
from tests.link.jax.evaluate import REFERENCE, canonical, check_nodes  # noqa: E402
from tests.test_pushforward_catalogue import CASES  # noqa: E402
from tests.test_pushforward_catalogue_harness import case_params, resolve  # noqa: E402
from tests.test_pushforward_catalogue_linalg import F32 as LINALG_F32  # noqa: E402
from tests.test_pushforward_catalogue_ops import F32 as OPS_F32  # noqa: E402
from tests.test_pushforward_catalogue_optimize import F32 as OPTIMIZE_F32  # noqa: E402

#: Case id -> why its node cannot run under jax.jit: its result's shape depends on values
DATA_DEPENDENT: dict[str, str] = {
    "Subtensor[2]": "x[i:, i]: a slice bound that is an input decides the length",
    "AdvancedSubtensor[2]": "x[x > 0.2]: the number of True entries of a mask is the length",
    "Nonzero[0]": "the number of nonzero entries is the length",
    "Bincount[0]": "the largest value of x decides the length",
    "Unique[0]": "the number of distinct values is the length",
    "Unique[1]": "the number of distinct rows is the length",
    "Reshape[1]": "reshape(x, (a, b)) with a and b inputs: the new shape is values",
    "Join[2]": "an axis that is an input decides which dimension grows",
    "Split[1]": "split sizes that are an input are the lengths",
    "Alloc[2]": "alloc(s, n, 2) with n an input: n is the length",
    "ARange[0]": "arange of inputs: the length comes from their values",
    "Eye[0]": "eye(n, m, k) of computed lengths",
    "Repeat[0]": "the total of the repeat counts (an input) is the length",
}


def _of_class(node, cls: type) -> bool:
    return type(node.op) is cls or type(getattr(node.op, "core_op", None)) is cls


@pytest.mark.parametrize("name, builder", case_params(CASES))
def test_case_nodes_match_the_reference(request, name: str, builder) -> None:
    case_id = request.node.callspec.id
    case = builder("float64")
    cls = resolve(name)

    def under_jit(node) -> bool:
        return _of_class(node, cls)

    if case_id in DATA_DEPENDENT:
        check_nodes(case.inputs, case.outputs, case.values)  # eagerly: concrete values
        with pytest.raises(DataDependentShapeError, match="jax.jit"):
            check_nodes(case.inputs, case.outputs, case.values, jit=under_jit)
        return
    check_nodes(case.inputs, case.outputs, case.values, jit=under_jit)


F32 = {*OPS_F32, *LINALG_F32, *OPTIMIZE_F32, "Subtensor[0]", "AdvancedIncSubtensor[0]", "Eigvalsh[0]"}


@pytest.mark.parametrize("name, builder", [p for p in case_params(CASES) if p.id in F32])
def test_case_nodes_match_the_reference_in_float32(name: str, builder) -> None:
    """The same graphs in float32, eagerly: the dtypes of the results follow the Types."""
    case = builder("float32")
    check_nodes(case.inputs, case.outputs, case.values, rtol=2e-4, atol=1e-5)


def _first_cases() -> list:
    """One case per Op class (the first): each compiled whole, which costs a jit compilation."""
    return [p for p in case_params(CASES) if p.id.endswith("[0]")]


@pytest.mark.parametrize("name, builder", _first_cases())
def test_case_graph_in_jax_mode(request, name: str, builder) -> None:
    """The whole graph, rewritten and compiled by ``mode="JAX"`` (one ``jax.jit``), gives the
    reference VM's outputs; a graph that cannot be traced names a data-dependent node."""
    case = builder("float64")
    want = function(case.inputs, case.outputs, mode=REFERENCE, on_unused_input="ignore")(*case.values)
    try:
        got = function(case.inputs, case.outputs, mode="JAX", on_unused_input="ignore")(*case.values)
    except JAXNodeError as err:
        assert request.node.callspec.id in DATA_DEPENDENT, f"{name}: {err}"
        return
    for k, (out, g, w) in enumerate(zip(case.outputs, got, want)):
        g, w = canonical(out, g), canonical(out, w)
        assert g.shape == w.shape, f"{name} output {k}: shape {g.shape}, the reference {w.shape}"
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8, err_msg=f"{name} output {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{name} output {k}")
