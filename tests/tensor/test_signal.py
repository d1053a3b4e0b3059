"""``pt.signal.convolve1d`` / ``convolve2d`` and their core Ops, against SciPy: values over
modes, boundaries, dtypes and batch dimensions; static shapes and infer_shape; pullbacks
against finite differences (float64 and float32, every mode, batched); pushforwards
against finite-difference JVPs; errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

import arignote
import arignote.tensor as pt
from arignote.gradient import disconnected_type, grad, jacobian
from arignote.graph.replace import clone_replace
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.signal import convolve1d, convolve2d
from arignote.tensor.signal.conv import Convolve1d, Convolve2d
from tests.tensor.test_grad_ops import _check_pushforward, check_grad
from tests.tensor.utils import assert_infer_shape

MODES = ["full", "valid", "same"]
# (in1 length, in2 length): in1 longer, in2 longer, equal, a 1-long kernel
SHAPES_1D = [(5, 3), (3, 6), (4, 4), (6, 1)]
# 2-d: in1 dominates, in2 dominates, equal
SHAPES_2D = [((5, 4), (2, 3)), ((2, 3), (4, 4)), ((3, 3), (3, 3))]


def _rand(shape: tuple, seed: int = 0, dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


# --- values --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,k", SHAPES_1D)
def test_convolve1d_matches_scipy(mode, n, k):
    x, h = pt.dvector("x"), pt.dvector("h")
    xv, hv = _rand(n), _rand(k, 1)
    out = convolve1d(x, h, mode=mode)
    expected = scipy.signal.convolve(xv, hv, mode=mode)
    np.testing.assert_allclose(out.eval({x: xv, h: hv}), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,k", SHAPES_2D)
@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
def test_convolve2d_matches_scipy(mode, n, k, method):
    x, h = pt.dmatrix("x"), pt.dmatrix("h")
    xv, hv = _rand(n), _rand(k, 1)
    out = convolve2d(x, h, mode=mode, method=method)
    expected = scipy.signal.convolve2d(xv, hv, mode=mode)
    np.testing.assert_allclose(out.eval({x: xv, h: hv}), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("boundary,fillvalue", [("fill", 1.5), ("fill", 0), ("wrap", 0), ("symm", 0)])
@pytest.mark.parametrize("n,k", [((5, 6), (3, 2)), ((4, 4), (4, 5)), ((2, 3), (5, 4))])
def test_convolve2d_boundaries_match_scipy(mode, boundary, fillvalue, n, k):
    x, h = pt.dmatrix("x"), pt.dmatrix("h")
    xv, hv = _rand(n), _rand(k, 1)
    out = convolve2d(x, h, mode=mode, boundary=boundary, fillvalue=fillvalue)
    expected = scipy.signal.convolve2d(xv, hv, mode=mode, boundary=boundary, fillvalue=fillvalue)
    np.testing.assert_allclose(out.eval({x: xv, h: hv}), expected, rtol=1e-12, atol=1e-12)


def test_boundary_aliases_and_symbolic_fillvalue():
    x, h, c = pt.dmatrix("x"), pt.dmatrix("h"), pt.dscalar("c")
    xv, hv = _rand((4, 5)), _rand((3, 2), 1)
    got = convolve2d(x, h, mode="same", boundary="symmetric").eval({x: xv, h: hv})
    np.testing.assert_allclose(got, scipy.signal.convolve2d(xv, hv, mode="same", boundary="symm"))
    got = convolve2d(x, h, boundary="circular").eval({x: xv, h: hv})
    np.testing.assert_allclose(got, scipy.signal.convolve2d(xv, hv, boundary="wrap"))
    got = convolve2d(x, h, fillvalue=c).eval({x: xv, h: hv, c: -2.0})
    np.testing.assert_allclose(got, scipy.signal.convolve2d(xv, hv, fillvalue=-2.0))


@pytest.mark.parametrize(
    "d1,d2", [("int8", "int8"), ("int32", "float32"), ("float32", "float32"), ("float32", "float64")]
)
def test_dtypes_follow_numpy(d1, d2):
    x, h = pt.tensor("x", dtype=d1, shape=(None,)), pt.tensor("h", dtype=d2, shape=(None,))
    xv, hv = np.array([1, 2, 3], dtype=d1), np.array([2, 1], dtype=d2)
    expected = np.convolve(xv, hv)
    out = convolve1d(x, h)
    assert out.type.dtype == expected.dtype.name
    got = out.eval({x: xv, h: hv})
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    m1, m2 = pt.tensor("m1", dtype=d1, shape=(None, None)), pt.tensor("m2", dtype=d2, shape=(None, None))
    out2 = convolve2d(m1, m2)
    expected2 = scipy.signal.convolve2d(xv[None], hv[:, None])
    assert out2.type.dtype == expected2.dtype.name
    np.testing.assert_array_equal(out2.eval({m1: xv[None], m2: hv[:, None]}), expected2)


def test_convolve1d_batches_broadcast():
    x = pt.tensor("x", dtype="float64", shape=(2, 1, None))
    h = pt.dmatrix("h")
    xv, hv = _rand((2, 1, 7)), _rand((3, 4), 1)
    for mode in MODES:
        out = convolve1d(x, h, mode=mode)
        assert isinstance(out.owner.op, Blockwise)
        expected = np.array(
            [[scipy.signal.convolve(xv[i, 0], hv[j], mode=mode) for j in range(3)] for i in range(2)]
        )
        got = out.eval({x: xv, h: hv})
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_convolve2d_batches_and_boundary_padding_with_batch_dims():
    x, h = pt.tensor("x", dtype="float64", shape=(None, 1, None, None)), pt.dtensor3("h")
    xv, hv = _rand((2, 1, 5, 6)), _rand((3, 2, 3), 1)
    for mode, boundary in [("valid", "fill"), ("same", "wrap"), ("full", "symm")]:
        out = convolve2d(x, h, mode=mode, boundary=boundary)
        expected = np.array(
            [
                [scipy.signal.convolve2d(xv[i, 0], hv[j], mode=mode, boundary=boundary) for j in range(3)]
                for i in range(2)
            ]
        )
        np.testing.assert_allclose(out.eval({x: xv, h: hv}), expected, rtol=1e-12, atol=1e-12)


def test_empty_batch():
    x, h = pt.dmatrix("x"), pt.dvector("h")
    got = convolve1d(x, h, mode="same").eval({x: np.zeros((0, 5)), h: np.ones(3)})
    assert got.shape == (0, 5)


# --- static shapes and infer_shape -----------------------------------------------------------------


@pytest.mark.parametrize("mode,expected", [("full", (7, 6)), ("valid", (3, 2)), ("same", (5, 4))])
def test_static_output_shapes(mode, expected):
    x = pt.tensor("x", dtype="float64", shape=(5, 4))
    h = pt.tensor("h", dtype="float64", shape=(3, 3))
    assert convolve2d(x, h, mode=mode).type.shape == expected
    v = pt.tensor("v", dtype="float64", shape=(3,))
    w = pt.tensor("w", dtype="float64", shape=(5,))
    assert convolve1d(v, w, mode=mode).type.shape == ({"full": 7, "valid": 3, "same": 3}[mode],)
    partial = pt.tensor("p", dtype="float64", shape=(5, None))
    assert convolve2d(partial, h, mode=mode).type.shape[1] is None


@pytest.mark.parametrize("mode", MODES)
def test_infer_shape(mode):
    x, h = pt.dvector("x"), pt.dvector("h")
    for n, k in [(5, 3), (3, 5)]:
        assert_infer_shape(Convolve1d(mode)(x, h), {x: _rand(n), h: _rand(k)})
    m, g = pt.dmatrix("m"), pt.dmatrix("g")
    for n, k in SHAPES_2D:
        assert_infer_shape(Convolve2d(mode)(m, g), {m: _rand(n), g: _rand(k)})
    b, c = pt.dtensor3("b"), pt.dmatrix("c")
    assert_infer_shape(convolve1d(b, c, mode), {b: _rand((2, 3, 6)), c: _rand((3, 2))})


def test_ops_props_signature_and_printing():
    assert Convolve1d("valid") == Convolve1d("valid") != Convolve1d("full")
    assert Convolve2d("full", "fft") != Convolve2d("full", "direct")
    assert hash(Convolve2d("same")) == hash(Convolve2d("same"))
    assert Convolve1d().gufunc_signature == "(n0),(k0)->(o0)"
    assert Convolve2d("same").gufunc_signature == "(n0,n1),(k0,k1)->(n0,n1)"
    assert str(Convolve2d("valid", "direct")) == "Convolve2d{mode=valid, method=direct}"
    x, h = pt.dvector("x"), pt.dvector("h")
    assert isinstance(convolve1d(x, h).owner.op, Convolve1d)  # no Blockwise without batch dims


# --- gradients -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", MODES)
def test_convolve1d_grad(mode, dtype):
    for n, k in SHAPES_1D:
        x = pt.tensor("x", dtype=dtype, shape=(None,))
        h = pt.tensor("h", dtype=dtype, shape=(None,))
        check_grad(lambda a, b: convolve1d(a, b, mode), [(x, _rand(n)), (h, _rand(k, 1))], dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", MODES)
def test_convolve2d_grad(mode, dtype):
    for n, k in SHAPES_2D:
        # unknown lengths (pads computed at run time) and static ones (pads folded)
        for shapes in [((None, None), (None, None)), (n, k)]:
            x = pt.tensor("x", dtype=dtype, shape=shapes[0])
            h = pt.tensor("h", dtype=dtype, shape=shapes[1])
            check_grad(lambda a, b: convolve2d(a, b, mode), [(x, _rand(n)), (h, _rand(k, 1))], dtype=dtype)


def test_grad_batched_and_broadcast():
    x, h = pt.dtensor3("x"), pt.dmatrix("h")
    check_grad(lambda a, b: convolve1d(a, b, "same"), [(x, _rand((2, 3, 5))), (h, _rand((3, 2), 1))])
    x4 = pt.tensor("x4", dtype="float64", shape=(2, 1, None, None))
    h3 = pt.dtensor3("h3")
    check_grad(lambda a, b: convolve2d(a, b, "valid"), [(x4, _rand((2, 1, 4, 4))), (h3, _rand((3, 2, 3), 1))])


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
def test_grad_through_boundaries(boundary):
    x, h, c = pt.dmatrix("x"), pt.dmatrix("h"), pt.dscalar("c")
    check_grad(
        lambda a, b, v: convolve2d(a, b, "same", boundary=boundary, fillvalue=v),
        [(x, _rand((4, 3))), (h, _rand((3, 2), 1)), (c, 0.7)],
        wrt=[0, 1, 2] if boundary == "fill" else [0, 1],
    )


def test_second_derivative():
    x, h = pt.dvector("x"), pt.dvector("h")
    cost = (convolve1d(x, h, "valid") ** 2).sum()
    gx = grad(cost, x)
    check_grad(lambda a, b: clone_replace(gx, {x: a, h: b}), [(x, _rand(5)), (h, _rand(3, 1))])


def test_grad_of_unused_output_is_disconnected():
    x, h = pt.dvector("x"), pt.dvector("h")
    node = Convolve1d()(x, h).owner
    assert all(
        isinstance(t.type, type(disconnected_type().type))
        for t in node.op.pullback(node.inputs, node.outputs, [disconnected_type()])
    )


def test_vectorised_jacobian_matches_the_loop():
    x, h = pt.dvector("x"), pt.dvector("h")
    out = convolve1d(x, h, "same")
    fast = jacobian(out, [x, h], vectorize=True)
    xv, hv = _rand(5), _rand(3, 1)
    got = arignote.function([x, h], fast)(xv, hv)
    # the convolution is linear in each input: its Jacobian in x is the matrix of the map
    eye = np.eye(5)
    expected_x = np.stack([scipy.signal.convolve(eye[i], hv, mode="same") for i in range(5)], axis=1)
    np.testing.assert_allclose(got[0], expected_x, atol=1e-12)
    eye3 = np.eye(3)
    expected_h = np.stack([scipy.signal.convolve(xv, eye3[i], mode="same") for i in range(3)], axis=1)
    np.testing.assert_allclose(got[1], expected_h, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_pushforward(mode):
    x, h = pt.dvector("x"), pt.dvector("h")
    xv, hv = _rand(6), _rand(3, 1)
    out = Convolve1d(mode)(x, h)
    _check_pushforward(out, [x, h], [xv, hv], [_rand(6, 2), _rand(3, 3)])
    _check_pushforward(out, [x, h], [xv, hv], [None, _rand(3, 3)])
    m, g = pt.dmatrix("m"), pt.dmatrix("g")
    out2 = Convolve2d(mode)(m, g)
    mv, gv = _rand((4, 5)), _rand((2, 3), 1)
    _check_pushforward(out2, [m, g], [mv, gv], [_rand((4, 5), 2), None])
    _check_pushforward(out2, [m, g], [mv, gv], [_rand((4, 5), 2), _rand((2, 3), 3)])
    node = out.owner
    assert isinstance(
        node.op.pushforward(node.inputs, node.outputs, [disconnected_type(), disconnected_type()])[0].type,
        type(disconnected_type().type),
    )


def test_pushforward_batched():
    x, h = pt.dtensor3("x"), pt.dmatrix("h")
    out = convolve1d(x, h, "valid")
    assert isinstance(out.owner.op, Blockwise)
    xv, hv = _rand((2, 3, 5)), _rand((3, 2), 1)
    _check_pushforward(out, [x, h], [xv, hv], [_rand((2, 3, 5), 2), _rand((3, 2), 3)])


# --- errors ------------------------------------------------------------------------------------------


def test_bad_arguments_are_reported():
    x, h = pt.dvector("x"), pt.dvector("h")
    with pytest.raises(ValueError, match="mode must be one of"):
        convolve1d(x, h, mode="middle")
    with pytest.raises(ValueError, match="mode must be one of"):
        Convolve2d("middle")
    with pytest.raises(ValueError, match="method must be one of"):
        convolve2d(pt.dmatrix(), pt.dmatrix(), method="winograd")
    with pytest.raises(ValueError, match="boundary must be"):
        convolve2d(pt.dmatrix(), pt.dmatrix(), boundary="reflect")
    with pytest.raises(ValueError, match="fillvalue must be a scalar"):
        convolve2d(pt.dmatrix(), pt.dmatrix(), fillvalue=[1.0, 2.0])
    with pytest.raises(ValueError, match="in1 must have at least 2 dimension"):
        convolve2d(x, pt.dmatrix())
    with pytest.raises(ValueError, match="in2 must have at least 1 dimension"):
        convolve1d(x, pt.dscalar("s"))
    with pytest.raises(ValueError, match="in2 must be 1-d"):
        Convolve1d()(x, pt.dmatrix("m"))


def test_static_shape_errors_at_build_time():
    a = pt.tensor("a", dtype="float64", shape=(3, 2))
    b = pt.tensor("b", dtype="float64", shape=(2, 3))
    with pytest.raises(ValueError, match=r"at least as large as the other along every axis.*\(3, 2\)"):
        convolve2d(a, b, mode="valid")
    convolve2d(a, b, mode="full")  # fine in the other modes
    e = pt.tensor("e", dtype="float64", shape=(0,))
    with pytest.raises(ValueError, match="is empty"):
        convolve1d(e, pt.dvector())


def test_runtime_shape_errors():
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    f = arignote.function([a, b], convolve2d(a, b, mode="valid"))
    with pytest.raises(ValueError, match=r"in1 has shape \(3, 2\), in2 has shape \(2, 3\)"):
        f(np.ones((3, 2)), np.ones((2, 3)))
    x, h = pt.dvector("x"), pt.dvector("h")
    g = arignote.function([x, h], convolve1d(x, h))
    with pytest.raises(ValueError, match="cannot convolve an empty array"):
        g(np.ones(3), np.ones(0))
