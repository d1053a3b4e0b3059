"""``Assert`` and ``CheckAndRaise`` (``arignote.raise_op``): values pass, failures raise the
chosen exception, gradients pass through, nothing is folded away."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.replace import vectorize_graph
from arignote.raise_op import Assert, CheckAndRaise, assert_op, exception_type


def test_assert_passes_the_value_and_raises_with_its_message():
    x = pt.dvector("x")
    y = Assert("x must be positive")(x, pt.all(x > 0))
    assert y.type == x.type and str(y.owner.op) == "Assert{msg='x must be positive'}"
    f = arignote.function([x], y * 2)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(AssertionError, match="x must be positive"):
        f(np.array([1.0, -2.0]))


def test_check_and_raise_with_several_conditions_and_its_identity():
    x, n = pt.dvector("x"), pt.lscalar("n")
    op = CheckAndRaise(ValueError, "n must be below the length")
    y = op(x, n >= 0, n < x.shape[0])
    f = arignote.function([x, n], y[n])
    assert f(np.arange(3.0), 2) == 2.0
    with pytest.raises(ValueError, match="n must be below the length"):
        f(np.arange(3.0), 3)
    assert op == CheckAndRaise(ValueError, "n must be below the length")
    assert op != CheckAndRaise(TypeError, "n must be below the length")
    assert assert_op == Assert() and assert_op.msg == "Assert failed!"
    assert exception_type.filter(KeyError) is KeyError


def test_constant_conditions_are_checked_when_the_function_runs():
    x = pt.dvector("x")
    f = arignote.function([x], assert_op(x, pt.constant(np.bool_(False))))
    with pytest.raises(AssertionError, match="Assert failed!"):
        f(np.ones(2))
    g = arignote.function([x], assert_op(x, True))  # a Python bool is a condition too
    np.testing.assert_array_equal(g(np.ones(2)), np.ones(2))


def test_gradient_and_shape_pass_through():
    x = pt.dvector("x")
    y = Assert("positive")(x, pt.all(x > 0))
    g = arignote.grad((y**2).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.array([1.0, 3.0])}), [2.0, 6.0])
    f = arignote.function([x], y.shape)
    assert list(f(np.array([-1.0, 2.0, 3.0]))) == [3]  # the shape does not need the check


def test_vectorized_check_holds_for_every_batch_member():
    x = pt.dvector("x")
    y = Assert("positive")(x, pt.all(x > 0))
    xs = pt.dmatrix("xs")
    ys = vectorize_graph(y, {x: xs})
    f = arignote.function([xs], ys)
    np.testing.assert_array_equal(f(np.ones((2, 3))), np.ones((2, 3)))
    with pytest.raises(AssertionError, match="positive"):
        f(np.array([[1.0, 1.0], [1.0, -1.0]]))


def test_errors():
    with pytest.raises(TypeError, match="exc_type must be an Exception class"):
        CheckAndRaise("ValueError", "msg")
    x = pt.dvector("x")
    with pytest.raises(TypeError, match="condition 0 .* must be a scalar"):
        Assert("m")(x, x > 0)
    with pytest.raises(TypeError, match="ExceptionType holds exception classes"):
        exception_type.filter(3)


def test_assert_rewrites_drop_true_constant_conditions_and_all_asserts_on_request():
    import numpy as _np

    import arignote
    import arignote.tensor as _pt
    from arignote.compile.mode import get_mode
    from arignote.raise_op import Assert, CheckAndRaise, assert_op

    def checks(f):
        return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, CheckAndRaise)]

    x = _pt.dvector("x")
    good, bad = _np.array([1.0, 2.0]), _np.array([-1.0, 2.0])
    y = assert_op(x, _np.bool_(True), _pt.all(x > 0)) * 2
    f = arignote.function([x], y)
    (node,) = checks(f)
    assert len(node.inputs) == 2  # the constant-true condition is gone, the other stays
    _np.testing.assert_array_equal(f(good), good * 2)
    with pytest.raises(AssertionError):
        f(bad)
    # only true constants: no check left
    assert not checks(arignote.function([x], assert_op(x, _np.bool_(True), _np.int8(1)) * 2))
    # a false constant stays and fails at run time
    g = arignote.function([x], assert_op(x, _np.bool_(False)) * 2)
    assert checks(g)
    with pytest.raises(AssertionError):
        g(good)
    # unsafe, on request only: every Assert removed (FAST_RUN and FAST_COMPILE), by name or tag
    for mode in (
        get_mode("FAST_RUN").including("local_remove_all_assert"),
        get_mode("FAST_COMPILE").including("unsafe"),
    ):
        h = arignote.function([x], y, mode=mode)
        assert not checks(h)
        _np.testing.assert_array_equal(h(bad), bad * 2)
    # a CheckAndRaise of another exception type is not an Assert: it stays
    z = CheckAndRaise(ValueError, "negative")(x, _pt.all(x > 0))
    k = arignote.function([x], z, mode=get_mode("FAST_RUN").including("local_remove_all_assert"))
    assert checks(k) and not isinstance(checks(k)[0].op, Assert)
    with pytest.raises(ValueError, match="negative"):
        k(bad)
