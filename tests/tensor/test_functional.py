"""``pt.vectorize`` (symbolic ``numpy.vectorize``) and ``vectorize_graph`` with any number of
batch dimensions (``arignote.graph.replace`` / ``arignote.tensor.functional``): values
against NumPy loops, static shapes, broadcasting of batch dimensions, outputs that do not
depend on the replaced inputs, gradients through the batched graph, errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.graph.replace import vectorize_graph
from arignote.graph.replace import vectorize_graph as tensor_vectorize_graph
from arignote.tensor.functional import vectorize
from tests.tensor.test_grad_ops import check_grad


def softmax(v):
    e = pt.exp(v - v.max())
    return e / e.sum()


def np_softmax(v):
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# --- vectorize_graph -----------------------------------------------------------------------------


def test_is_the_same_function_in_both_modules():
    assert pt.vectorize is vectorize
    x = pt.dvector("x")
    y = pt.exp(x)
    xs = pt.dmatrix("xs")
    assert vectorize_graph(y, {x: xs}).type == tensor_vectorize_graph(y, {x: xs}).type


@pytest.mark.parametrize("batch", [(4,), (2, 3), (2, 1, 3), ()])
def test_softmax_over_batch_dims(batch):
    x = pt.dvector("x")
    y = softmax(x)
    xb = pt.tensor("xb", dtype="float64", shape=(None,) * (len(batch) + 1))
    yb = vectorize_graph(y, {x: xb})
    assert yb.type.ndim == len(batch) + 1
    vals = np.random.default_rng(0).normal(size=(*batch, 5))
    np.testing.assert_allclose(function([xb], yb)(vals), np_softmax(vals), rtol=1e-12)


def test_batch_dims_broadcast_and_static_shapes():
    x, y, z = pt.dvector("x"), pt.dvector("y"), pt.dscalar("z")
    out = (x * y).sum() + z
    xb = pt.tensor("xb", dtype="float64", shape=(2, None, 4))
    yb = pt.tensor("yb", dtype="float64", shape=(3, 4))
    zb = pt.tensor("zb", dtype="float64", shape=(2, 1))
    res = vectorize_graph(out, {x: xb, y: yb, z: zb})
    assert res.type.shape == (2, 3)
    rng = np.random.default_rng(1)
    xv, yv, zv = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(2, 1))
    np.testing.assert_allclose(function([xb, yb, zb], res)(xv, yv, zv), (xv * yv).sum(-1) + zv, rtol=1e-12)


def test_one_batch_dim_is_batched_directly():
    x = pt.dvector("x")
    xb = pt.tensor("xb", dtype="float64", shape=(7, 3))
    res = vectorize_graph(pt.exp(x).sum(), {x: xb})
    assert res.type.shape == (7,)
    assert res.owner.inputs[0].owner.inputs[0] is xb  # no reshape in between


def test_outputs_and_replacements_without_batch_dims():
    x, z = pt.dvector("x"), pt.dscalar("z")
    out = x.sum() * z
    only_z = z * 2
    xb = pt.dmatrix("xb")
    res, unchanged = vectorize_graph([out, only_z], {x: xb})
    assert unchanged is only_z  # does not depend on x: returned as it is
    assert isinstance(vectorize_graph([out], {x: xb}), list)
    # a replacement of the same ndim just replaces (its dtype may differ)
    xi = pt.ivector("xi")
    same = vectorize_graph(out, {x: xi, z: pt.dvector("zs")})
    assert same.type.shape == (None,)
    got = same.eval({xi: np.array([1, 2, 3], dtype="int32"), same.owner.inputs[1]: np.array([1.0, 2.0])})
    np.testing.assert_allclose(got, [6.0, 12.0])
    assert vectorize_graph(out, {}) is out


def test_gradient_through_a_vectorized_graph():
    x = pt.dvector("x")
    y = softmax(x) * pt.arange(1, 4)

    def build(xb):
        return vectorize_graph(y, {x: xb})

    vals = np.random.default_rng(2).normal(size=(2, 2, 3))
    check_grad(build, [(pt.dtensor3("xb"), vals)])


def test_vectorize_graph_errors():
    x = pt.dvector("x")
    y = x.sum()
    with pytest.raises(ValueError, match="fewer dimensions"):
        vectorize_graph(y, {x: pt.dscalar()})
    with pytest.raises(ValueError, match="core dimension 0 has length 4, not 3"):
        vectorize_graph(pt.tensor("x3", shape=(3,)).sum(), {pt.tensor(shape=(3,)): pt.tensor(shape=(2, 4))})
    with pytest.raises(TypeError, match="must be a Variable"):
        vectorize_graph(y, {"x": pt.dmatrix()})
    a, b = pt.dvector("a"), pt.dvector("b")
    with pytest.raises(ValueError, match="do not broadcast"):
        vectorize_graph(a + b, {a: pt.tensor(shape=(2, 3, None)), b: pt.tensor(shape=(4, 3, None))})


# --- vectorize --------------------------------------------------------------------------------------


def test_vectorize_with_a_signature():
    vec = vectorize(softmax, signature="(a)->(a)")
    x = pt.dtensor3("x")
    y = vec(x)
    vals = np.random.default_rng(3).normal(size=(2, 3, 4))
    np.testing.assert_allclose(function([x], y)(vals), np_softmax(vals), rtol=1e-12)


def test_vectorize_matvec_broadcasts_batch_dims():
    vec = pt.vectorize(pt.dot, signature="(m,n),(n)->(m)")
    a = pt.tensor("a", dtype="float64", shape=(2, None, 3, 4))
    v = pt.tensor("v", dtype="float64", shape=(5, 4))
    out = vec(a, v)
    assert out.type.shape == (2, 5, 3)
    rng = np.random.default_rng(4)
    av, vv = rng.normal(size=(2, 5, 3, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(function([a, v], out)(av, vv), np.einsum("abmn,bn->abm", av, vv), rtol=1e-12)


def test_vectorize_several_outputs():
    first_last = vectorize(lambda v: (v[0], v[-1]), signature="(n)->(),()")
    x = pt.dmatrix("x")
    y1, y2 = first_last(x)
    got = function([x], [y1, y2])(np.array([[-10.0, 0.0, 10.0], [-11.0, 0.0, 11.0]]))
    np.testing.assert_array_equal(got[0], [-10.0, -11.0])
    np.testing.assert_array_equal(got[1], [10.0, 11.0])


def test_vectorize_without_signature_maps_scalars():
    def poly(a, b):
        return pt.stack([a * b, a + b])  # a vector per pair of scalars

    vec = vectorize(poly)
    a, b = pt.dmatrix("a"), pt.dvector("b")
    out = vec(a, b)
    assert out.type.ndim == 3
    av, bv = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
    want = np.stack([av * bv, av + bv], axis=-1)
    np.testing.assert_allclose(function([a, b], out)(av, bv), want)
    # NumPy arrays are accepted as arguments
    np.testing.assert_allclose(vec(av, bv).eval(), want)


def test_vectorize_gradient():
    vec = vectorize(lambda m, v: pt.exp(pt.dot(m, v)), signature="(m,n),(n)->(m)")
    rng = np.random.default_rng(5)
    check_grad(
        vec, [(pt.dtensor3("m"), rng.normal(size=(2, 3, 2))), (pt.dmatrix("v"), rng.normal(size=(2, 2)))]
    )
    check_grad(
        vec,
        [
            (pt.tensor3("m", dtype="float32"), rng.normal(size=(2, 3, 2))),
            (pt.fmatrix("v"), rng.normal(size=(2, 2))),
        ],
    )


def test_vectorize_errors():
    vec = vectorize(pt.dot, signature="(m,n),(n)->(m)")
    with pytest.raises(ValueError, match=r"takes 2 input\(s\), 1 given"):
        vec(pt.dmatrix())
    with pytest.raises(ValueError, match=r"input 0 .* fewer dimensions than its 2 core dimension\(s\)"):
        vec(pt.dvector(), pt.dvector())
    with pytest.raises(ValueError, match="core dimension 'n' .* length 4 in input 0 and 3 in input 1"):
        vec(pt.tensor(shape=(2, 4)), pt.tensor(shape=(3,)))
    with pytest.raises(ValueError, match="returned no outputs"):
        vectorize(lambda x: None)(pt.dvector())
    with pytest.raises(ValueError, match=r"has 2 output\(s\), the function returned 1"):
        vectorize(lambda x: x.sum(), signature="(n)->(),()")(pt.dmatrix())
    with pytest.raises(ValueError, match=r"output 0 of the function is .* has 0 core dimension\(s\)"):
        vectorize(lambda x: x * 2, signature="(n)->()")(pt.dmatrix())
    with pytest.raises(ValueError, match="not a gufunc signature"):
        vectorize(pt.dot, signature="(m,n),(n)")


def test_vectorize_graph_names_an_output_that_is_not_a_variable():
    x = pt.dvector("x")
    with pytest.raises(TypeError, match="output 1 must be a Variable, got float"):
        vectorize_graph([x.sum(), 2.0], {x: pt.dmatrix()})
