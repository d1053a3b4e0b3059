"""ScalarLoop: a scalar op iterating a step of scalar ops, alone and inside Elemwise, against
plain Python loops; its errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.scalar import ScalarLoop
from arignote.scalar.basic import add, float32, float64, ge, identity, int64, mul, true_div
from arignote.tensor.elemwise import Elemwise


def _power_loop():
    x, a = float64("x"), float64("a")
    return ScalarLoop(init=[x], update=[mul(x, a)], constant=[a])


def _collatz_like():
    """Two states and a stop: halve ``x`` and count the steps, until ``x < 1``."""
    x, k = float64("x"), int64("k")
    half = true_div(x, 2.0)
    return ScalarLoop(init=[x, k], update=[half, add(k, 1)], until=~ge(half, 1.0))


def test_for_loop_values():
    loop = _power_loop()
    assert loop.nin == 3 and loop.nout == 1 and not loop.is_while
    for n in range(5):
        assert loop.impl(np.int64(n), 2.0, 3.0) == pytest.approx(2.0 * 3.0**n)
    n = pt.lscalar("n")
    x, a = pt.dscalars("x", "a")
    f = arignote.function([n, x, a], Elemwise(loop)(n, x, a))
    assert f(4, 1.5, 2.0) == pytest.approx(24.0)


def test_while_loop_stops_and_says_so():
    loop = _collatz_like()
    assert loop.is_while and loop.nout == 3
    x, k, done = loop.impl(np.int64(100), 20.0, np.int64(0))
    # 20 -> 10 -> 5 -> 2.5 -> 1.25 -> 0.625: five steps
    assert (x, k, done) == (0.625, 5, True)
    x, k, done = loop.impl(np.int64(2), 20.0, np.int64(0))  # the count runs out first
    assert (x, k, done) == (5.0, 2, False)
    assert loop.impl(np.int64(0), 20.0, np.int64(0)) == (20.0, 0, False)


def test_elemwise_each_element_its_own_count_and_stop():
    loop = _collatz_like()
    n = pt.lvector("n")
    x = pt.dvector("x")
    k = pt.lvector("k")
    outs = Elemwise(loop)(n, x, k)
    assert [o.type.dtype for o in outs] == ["float64", "int64", "bool"]
    f = arignote.function([n, x, k], outs)
    nv, xv, kv = np.array([100, 2, 0, 100]), np.array([20.0, 20.0, 20.0, 0.5]), np.zeros(4, "int64")
    got = f(nv, xv, kv)
    for i in range(4):  # each element as the scalar loop computes it
        want = loop.impl(np.int64(nv[i]), xv[i], np.int64(kv[i]))
        assert [g[i] for g in got] == list(want)


def test_broadcast_count_and_constants():
    loop = _power_loop()
    n = pt.lscalar("n")
    x = pt.dmatrix("x")
    a = pt.drow("a")
    f = arignote.function([n, x, a], Elemwise(loop)(n, x, a))
    xv, av = np.arange(6.0).reshape(2, 3), np.array([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(f(3, xv, av), xv * av**3)


def test_inputs_of_other_types_rebuild_the_step():
    loop = _power_loop()
    node = loop.make_node(int64("n"), float32("x"), float32("a"))
    assert node.op is not loop and node.outputs[0].type.dtype == "float32"
    assert node.op.impl(np.int64(2), np.float32(2.0), np.float32(3.0)) == np.float32(18.0)


def test_equality_hash_pickle_and_printing():
    assert _power_loop() == _power_loop() and hash(_power_loop()) == hash(_power_loop())
    assert _power_loop() != _collatz_like()
    loop = pickle.loads(pickle.dumps(_collatz_like()))
    assert loop.impl(np.int64(100), 20.0, np.int64(0)) == (0.625, 5, True)
    n, x = pt.lscalar("n"), pt.dscalar("x")
    out = Elemwise(_power_loop())(n, x, x)
    text = arignote.printing.debugprint(out, file="str")
    assert "scalarloop" in text.lower() and "Inner graphs" in text and "mul" in text


def test_not_fused_and_runs_in_a_fused_graph():
    loop = _power_loop()
    n = pt.lvector("n")
    x = pt.dvector("x")
    y = pt.exp(Elemwise(loop)(n, x + 1.0, x * 2.0)) - 1.0
    f = arignote.function([n, x], y)
    assert any(isinstance(nd.op, Elemwise) and nd.op.scalar_op == loop for nd in f.maker.fgraph.apply_nodes)
    nv, xv = np.array([0, 1, 2]), np.array([0.5, 1.0, 1.5])
    np.testing.assert_allclose(f(nv, xv), np.exp((xv + 1) * (2 * xv) ** nv) - 1.0)


def test_errors():
    x, y, a = float64("x"), float64("y"), float64("a")
    with pytest.raises(ValueError, match="an update must be given for each init"):
        ScalarLoop(init=[x, y], update=[x + 1.0])
    with pytest.raises(TypeError, match="init and update types must be the same"):
        ScalarLoop(init=[x], update=[float32("f")])
    with pytest.raises(ValueError, match="updates are init variables themselves"):
        ScalarLoop(init=[x, y], update=[y, x])
    with pytest.raises(TypeError, match="until condition must be a bool"):
        ScalarLoop(init=[x], update=[x + 1.0], until=x)
    with pytest.raises(TypeError, match="must be a free scalar Variable"):
        ScalarLoop(init=[pt.dscalar("t")], update=[x])
    ScalarLoop(init=[x, y], update=[identity(y), identity(x)])  # swapping through identity is fine
    loop = _power_loop()
    with pytest.raises(TypeError, match="n_steps must be an integer"):
        loop.make_node(float64("n"), x, a)
    with pytest.raises(TypeError, match="takes n_steps and 2 more inputs"):
        loop.make_node(int64("n"), x)
    with pytest.raises(TypeError, match="n_steps \\(input 0\\) must be an integer"):
        Elemwise(loop)(pt.dvector("n"), pt.dvector("x"), pt.dvector("a"))
    with pytest.raises(ValueError, match="n_steps is negative"):
        loop.impl(np.int64(-1), 1.0, 2.0)
    n, xv = pt.lscalar("n"), pt.dscalar("xv")
    with pytest.raises(Exception, match="ScalarLoop"):  # no derivative, as in PyTensor
        arignote.grad(Elemwise(loop)(n, xv, xv), xv)
