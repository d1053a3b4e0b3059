"""``arignote.tensor.utils`` (PyTensor's ``tensor.utils`` helpers) and the
``tensor.random.variable`` face."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.graph.fg import FunctionGraph
from arignote.tensor import utils


def test_broadcast_static_dim_lengths():
    assert utils.broadcast_static_dim_lengths([1, None]) is None
    assert utils.broadcast_static_dim_lengths([1, 1]) == 1
    assert utils.broadcast_static_dim_lengths([3, None, 1]) == 3
    with pytest.raises(ValueError, match="cannot be broadcast"):
        utils.broadcast_static_dim_lengths([2, 3])


def test_normalize_reduce_axis():
    assert utils.normalize_reduce_axis((1, 0), 3) == (1, 0)
    assert utils.normalize_reduce_axis(-1, 3) == (2,)
    assert utils.normalize_reduce_axis(None, 3) is None
    assert utils.normalize_reduce_axis([], 3) == ()
    with pytest.raises(ValueError, match="repeated axis"):
        utils.normalize_reduce_axis((0, -3), 3)
    with pytest.raises(np.exceptions.AxisError):
        utils.normalize_reduce_axis(3, 3)
    with pytest.raises(TypeError, match="axis must be an int"):
        utils.normalize_reduce_axis(1.5, 3)


def test_signature_hash_index_helpers():
    assert utils.safe_signature([2, 1, 0], [1]) == "(i00,i01),(i10),()->(o00)"
    a = np.arange(6.0).reshape(2, 3)
    assert utils.hash_from_ndarray(a) == utils.hash_from_ndarray(np.asfortranarray(a))
    assert utils.hash_from_ndarray(a) != utils.hash_from_ndarray(a.astype("float32"))
    assert utils.hash_from_ndarray(a) != utils.hash_from_ndarray(a.reshape(3, 2))
    assert list(utils.faster_ndindex((2, 2))) == list(np.ndindex(2, 2))
    assert utils.faster_broadcast_to(np.ones(3), (2, 3)).shape == (2, 3)
    n = pt.lscalar("n")
    assert utils.get_static_shape_from_size_variables([pt.constant(3), n, 4]) == (3, None, 4)


def test_shape_of_variables():
    x = pt.dmatrix("x")
    y = x[:, :2].sum(axis=0)
    z = pt.concatenate([y, pt.exp(y)])
    fg = FunctionGraph([x], [z], clone=False)
    shapes = utils.shape_of_variables(fg, {x: (4, 5)})
    assert shapes[x] == (4, 5) and shapes[y] == (2,) and shapes[z] == (4,)
    with pytest.raises(ValueError, match="not inputs of the FunctionGraph"):
        utils.shape_of_variables(FunctionGraph([x], [z]), {x: (4, 5)})
    v = pt.lvector("v")
    fg = FunctionGraph([v], [pt.zeros(v[0])], clone=False)
    with pytest.raises(ValueError, match="depends on the values of the inputs"):
        utils.shape_of_variables(fg, {v: (3,)})


def test_random_variable_face():
    from arignote.tensor.random import var, variable

    assert variable.RandomGeneratorSharedVariable is var.RandomGeneratorSharedVariable
    assert variable.shared_rng is var.shared_rng
