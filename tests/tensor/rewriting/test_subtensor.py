"""The Subtensor rules (arignote/tensor/rewriting/subtensor.py): each is checked to fire
(the compiled graph) and to compute what the graph as written computes."""

from __future__ import annotations

from typing import Any

import numpy as np

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.tensor.rewriting.subtensor import (
    local_subtensor_of_shape,
    local_subtensor_of_static_shape,
    local_useless_subtensor,
)
from arignote.tensor.shape import Shape, Shape_i, reshape
from arignote.tensor.subtensor import Subtensor
from arignote.tensor.type import tensor, tensor3

UNREWRITTEN = arignote.Mode(optimizer=None)


def _ops(f: Any) -> list:
    return [n.op for n in f.maker.fgraph.toposort()]


def test_the_rules_track_subtensor() -> None:
    for rule in (local_subtensor_of_static_shape, local_subtensor_of_shape, local_useless_subtensor):
        assert rule.tracks == (Subtensor,)


def test_shape_of_index_becomes_shape_i() -> None:
    x = tensor3("x", dtype="float64")
    f = function([x], [x.shape[0], x.shape[-1]])
    ops = _ops(f)
    assert Shape_i(0) in ops and Shape_i(2) in ops
    assert not any(isinstance(op, (Subtensor, Shape)) for op in ops)
    assert [int(v) for v in f(np.zeros((2, 3, 4)))] == [2, 4]
    unrewritten = function([x], [x.shape[0], x.shape[-1]], mode=UNREWRITTEN)
    assert any(isinstance(op, Subtensor) for op in _ops(unrewritten))
    assert [int(v) for v in unrewritten(np.zeros((2, 3, 4)))] == [2, 4]


def test_static_length_of_shape_becomes_a_constant() -> None:
    x = tensor("x", dtype="float64", shape=(2, None))
    y = x.shape[0] * x.shape[1]
    f = function([x], y)
    assert not any(isinstance(op, (Subtensor, Shape)) for op in _ops(f))
    assert [type(op) for op in _ops(f)].count(Shape_i) == 1
    assert int(f(np.zeros((2, 5)))) == 10 == int(function([x], y, mode=UNREWRITTEN)(np.zeros((2, 5))))


def test_useless_subtensor_is_removed() -> None:
    x = pt.dmatrix("x")
    for out in (x[:] * 2, x[::1, :] * 2, x[:, ::1] * 2):
        f = function([x], out)
        assert not any(isinstance(op, Subtensor) for op in _ops(f))
        xv = np.arange(6.0).reshape(2, 3)
        np.testing.assert_array_equal(f(xv), xv * 2)
        np.testing.assert_array_equal(function([x], out, mode=UNREWRITTEN)(xv), xv * 2)
    f = function([x], x[::-1] * 2)  # not a full slice: kept
    assert any(isinstance(op, Subtensor) for op in _ops(f))
    np.testing.assert_array_equal(f(np.arange(4.0).reshape(2, 2)), [[4, 6], [0, 2]])


def test_shape_entries_in_graphs() -> None:
    x = pt.dmatrix("x")
    out = reshape(x, (x.shape[1], x.shape[0]))
    got = function([x], out)(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(got, np.arange(6.0).reshape(3, 2))
