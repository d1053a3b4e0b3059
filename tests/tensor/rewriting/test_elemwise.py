"""The Elemwise rules (arignote/tensor/rewriting/elemwise.py): each is checked to fire
(the compiled graph) and to compute what the graph as written computes."""

from __future__ import annotations

import numpy as np

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.graph.basic import Constant
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.rewriting.elemwise import upcast_constant_inputs
from arignote.tensor.ufuncs import lt

UNREWRITTEN = arignote.Mode(optimizer=None)


def _constants(f) -> list:
    return [i for n in f.maker.fgraph.toposort() for i in n.inputs if isinstance(i, Constant)]


def test_upcast_constant_inputs_tracks_elemwise() -> None:
    assert upcast_constant_inputs.tracks == (Elemwise,)


def test_constants_take_the_dtype_the_elemwise_computes_in() -> None:
    x = pt.dvector("x")
    out = x + 1
    assert out.owner.inputs[1].dtype == "int8"
    f = function([x], out)
    assert [c.dtype for c in _constants(f)] == ["float64"]
    xv = np.array([0.5, 2.0])
    np.testing.assert_array_equal(f(xv), function([x], out, mode=UNREWRITTEN)(xv))


def test_a_constant_that_does_not_convert_exactly_is_kept() -> None:
    x = pt.fvector("x")
    out = x + np.float64(0.1)  # 0.1 is not a float32: the addition computes in float64
    f = function([x], out)
    assert "float64" in [c.dtype for c in _constants(f)]
    xv = np.array([0.5, 2.0], dtype="float32")
    np.testing.assert_array_equal(f(xv), function([x], out, mode=UNREWRITTEN)(xv))


def test_comparisons_keep_their_constants() -> None:
    x = pt.dvector("x")
    out = lt(x, 1)  # computes in float64 but outputs bool: no simple promotion
    f = function([x], out)
    assert [c.dtype for c in _constants(f)] == ["int8"]
    xv = np.array([0.5, 2.0])
    np.testing.assert_array_equal(f(xv), [True, False])
