"""``as_op``/``wrap_py`` (a Python function as an Op), ``ViewOp`` and ``DeepCopyOp``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.ops import DeepCopyOp, FromFunctionOp, as_op, deep_copy_op, view_op, wrap_py
from arignote.gradient import NullTypeGradError, verify_grad
from tests.compile.asop_funcs import np_cumsum


def test_as_op_runs_the_function():
    @as_op(itypes=[pt.dmatrix, pt.dmatrix], otypes=[pt.dmatrix])
    def np_dot(a, b):
        return np.dot(a, b)

    assert isinstance(np_dot, FromFunctionOp) and str(np_dot) == "FromFunctionOp{np_dot}"
    assert arignote.wrap_py is wrap_py is as_op and arignote.compile.as_op is as_op
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    f = arignote.function([x, y], np_dot(x, y) + 1.0)
    np.testing.assert_allclose(f(a, b), a @ b + 1.0)


def test_as_op_with_several_outputs_and_type_errors():
    @as_op(itypes=[pt.dvector], otypes=[pt.dvector, pt.lscalar])
    def sorted_and_argmax(a):
        return np.sort(a), np.argmax(a)

    x = pt.dvector("x")
    s, k = sorted_and_argmax(x)
    f = arignote.function([x], [s, k])
    got_s, got_k = f(np.array([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(got_s, [1.0, 2.0, 3.0])
    assert int(got_k) == 0 and got_k.dtype == np.int64
    with pytest.raises(TypeError, match="input 0 .* has Type Vector\\(float32"):
        sorted_and_argmax(pt.fvector())

    @as_op(itypes=[pt.dvector], otypes=[pt.dvector])
    def wrong_rank(a):
        return np.outer(a, a)

    with pytest.raises(TypeError, match="output 0 of the function .* is no value of its Type Vector"):
        wrong_rank(x).eval({x: np.ones(2)})
    with pytest.raises(TypeError, match="itypes\\[0\\] must be a Type"):
        as_op(itypes=[np.float64], otypes=[pt.dvector])(np.sin)


def test_as_op_infer_shape_spares_running_the_function():
    calls = []

    def infer_shape(fgraph, node, shapes):
        return [shapes[0]]

    @as_op(itypes=[pt.dvector], otypes=[pt.dvector], infer_shape=infer_shape)
    def doubled(a):
        calls.append(1)
        return a * 2

    x = pt.dvector("x")
    out = doubled(x)
    f = arignote.function([x], out.shape[0])
    assert int(f(np.ones(5))) == 5 and not calls  # the shape came from infer_shape
    np.testing.assert_array_equal(doubled(x).eval({x: np.ones(2)}), [2.0, 2.0])
    assert calls


def test_as_op_gradient_is_given_or_not_implemented():
    x = pt.dvector("x")
    with pytest.raises(NullTypeGradError, match="FromFunctionOp\\{np_cumsum\\} has no gradient"):
        arignote.grad(np_cumsum(x).sum(), x)

    def cumsum_grad(inputs, output_grads):
        (g,) = output_grads
        return [g[::-1].cumsum()[::-1]]

    @as_op(itypes=[pt.dvector], otypes=[pt.dvector], grad=cumsum_grad)
    def cumsum_with_grad(a):
        return np.cumsum(a)

    verify_grad(
        lambda v: cumsum_with_grad(v) ** 2, [np.array([0.3, -1.2, 2.0])], rng=np.random.default_rng(1)
    )


def test_as_op_equality_and_pickling():
    assert np_cumsum == pickle.loads(pickle.dumps(np_cumsum))
    x = pt.dvector("x")
    f = arignote.function([x], np_cumsum(x))
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(np.array([1.0, 2.0])), [1.0, 3.0])

    @as_op(itypes=[pt.dvector], otypes=[pt.dvector])
    def local(a):
        return a

    with pytest.raises(TypeError, match="not importable by name"):
        pickle.dumps(local)


def test_view_and_deep_copy_ops():
    x = pt.dvector("x")
    assert view_op(x).owner.op.view_map == {0: [0]} and isinstance(deep_copy_op, DeepCopyOp)
    value = np.array([1.0, 2.0])
    f = arignote.function([x], [view_op(x) * 1.0, deep_copy_op(x)], mode=arignote.Mode(optimizer=None))
    a, b = f(value)
    np.testing.assert_array_equal(b, value)
    assert not np.shares_memory(b, value)
    verify_grad(lambda v: deep_copy_op(v) ** 2, [value], rng=np.random.default_rng(2))
