"""take_along_axis, choose, nonzero_values, permute_row_elements,
inverse_permutation, mgrid/ogrid — against NumPy, with gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
import arignote.tensor.basic as ptb
from arignote import function
from tests.tensor.test_grad_ops import check_grad

RNG = np.random.default_rng(8)


def ev(out, givens=None):
    return out.eval(givens or {})


def test_reachable_under_basic():
    for name in (
        "take_along_axis",
        "choose",
        "nonzero_values",
        "permute_row_elements",
        "inverse_permutation",
        "mgrid",
        "ogrid",
    ):
        assert getattr(ptb, name) is getattr(pt, name)


# --- take_along_axis -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "ashape, ishape, axis",
    [
        ((5,), (3,), 0),
        ((3, 4), (3, 2), 1),
        ((3, 4), (2, 4), 0),
        ((3, 4), (1, 6), -1),  # the index broadcasts along axis 0
        ((1, 4), (3, 2), 1),  # arr broadcasts along axis 0
        ((2, 3, 4), (2, 3, 4), 1),
        ((3, 4), (3, 0), 1),
        ((3, 4), (5,), None),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_take_along_axis(ashape, ishape, axis, dtype):
    a = pt.tensor("a", dtype=dtype, shape=tuple(1 if s == 1 else None for s in ashape))
    i = pt.tensor("i", dtype="int64", shape=tuple(1 if s == 1 else None for s in ishape))
    A = RNG.integers(-9, 9, size=ashape).astype(dtype)
    n = A.size if axis is None else ashape[axis]
    Idx = RNG.integers(-n, n, size=ishape)  # negative indices count from the end
    out = pt.take_along_axis(a, i, axis=axis)
    assert out.type.dtype == dtype
    np.testing.assert_array_equal(ev(out, {a: A, i: Idx}), np.take_along_axis(A, Idx, axis=axis))


def test_take_along_axis_static_shape_bool_errors_grad():
    a = pt.tensor("a", dtype="float64", shape=(3, 4))
    i = pt.tensor("i", dtype="int64", shape=(3, 2))
    assert pt.take_along_axis(a, i, axis=1).type.shape == (3, 2)
    b = pt.vector("b", dtype="bool")
    v = pt.dvector("v")
    np.testing.assert_array_equal(
        ev(pt.take_along_axis(v, b), {v: np.array([1.0, 2.0]), b: np.array([True, False])}), [2.0, 1.0]
    )
    with pytest.raises(ValueError, match="as many dimensions as arr"):
        pt.take_along_axis(a, pt.lvector(), axis=1)
    with pytest.raises(TypeError, match="indices must be integers"):
        pt.take_along_axis(a, pt.dmatrix(), axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        pt.take_along_axis(a, i, axis=2)
    with pytest.raises(IndexError):
        ev(pt.take_along_axis(v, pt.constant(np.array([5]))), {v: np.ones(3)})
    m = pt.dmatrix("m")
    for dtype in ("float64", "float32"):
        m = pt.matrix("m", dtype=dtype)
        check_grad(
            lambda m: pt.take_along_axis(m, [[0, 0, 2], [1, 2, 1]], axis=1), [(m, RNG.normal(size=(2, 3)))]
        )


# --- choose --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_list_broadcast(mode):
    a = pt.lmatrix("a")
    c0, c1, c2 = pt.dvector("c0"), pt.dmatrix("c1"), pt.fvector("c2")
    A = np.array([[0, 1, 2], [2, 1, 0]]) if mode == "raise" else np.array([[0, 4, -1], [2, 7, -5]])
    C0, C1, C2 = RNG.normal(size=3), RNG.normal(size=(2, 3)), RNG.normal(size=3).astype("float32")
    out = pt.choose(a, [c0, c1, c2], mode=mode)
    assert out.type.dtype == "float64"
    got = ev(out, {a: A, c0: C0, c1: C1, c2: C2})
    np.testing.assert_array_equal(got, np.choose(A, [C0, C1, C2], mode=mode))


def test_choose_tensor_of_choices_and_scalars():
    a, c = pt.lvector("a"), pt.dmatrix("c")
    A, C = np.array([1, 0, 2, 1]), RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(ev(pt.choose(a, c), {a: A, c: C}), np.choose(A, C))
    s = pt.lscalar("s")
    assert ev(pt.choose(s, [10, 20, 30]), {s: 2}) == 30
    c3 = pt.tensor("c3", dtype="float64", shape=(None, 1, None))  # broadcasts along axis 1
    m = pt.lmatrix("m")
    C3, M = RNG.normal(size=(2, 1, 4)), RNG.integers(0, 2, size=(3, 4))
    np.testing.assert_array_equal(ev(pt.choose(m, c3), {m: M, c3: C3}), np.choose(M, C3))


def test_choose_errors():
    a = pt.lvector("a")
    c = [pt.dvector("x"), pt.dvector("y")]
    fn = function([a, *c], pt.choose(a, c))
    with pytest.raises(ValueError, match=r"choose: an index is outside \[0, len\(choices\)\); got"):
        fn(np.array([0, 2]), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="choose: an index is outside"):
        fn(np.array([0, -1]), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="mode must be"):
        pt.choose(a, c, mode="nope")
    with pytest.raises(TypeError, match="choose: a must be integers"):
        pt.choose(pt.dvector(), c)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        pt.choose(pt.constant(np.zeros(3, dtype="int64")), [pt.constant(np.zeros(4))])
    with pytest.raises(ValueError, match="choices is empty"):
        pt.choose(a, [])
    with pytest.raises(ValueError, match="choose: an index is outside"):
        pt.choose(pt.constant([0, 3]), [pt.constant([1.0, 2.0])] * 2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_choose_grad(dtype):
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    A = np.array([0, 1, 1, 0])
    check_grad(lambda x, y: pt.choose(A, [x, y]), [(x, RNG.normal(size=4)), (y, RNG.normal(size=4))])


# --- nonzero_values ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (3, 4), (0, 2)])
def test_nonzero_values(shape):
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    X = RNG.integers(-1, 2, size=shape).astype("float64")
    np.testing.assert_array_equal(ev(pt.nonzero_values(x), {x: X}), X[np.nonzero(X)])
    if shape == (3, 4):
        check_grad(lambda x: pt.nonzero_values(x), [(x, np.arange(1.0, 13.0).reshape(3, 4))])


# --- permutations --------------------------------------------------------------------------


@pytest.mark.parametrize("inverse", [False, True])
def test_permute_row_elements(inverse):
    x, y = pt.dmatrix("x"), pt.lvector("y")
    X, P = RNG.normal(size=(3, 4)), np.array([2, 0, 3, 1])
    got = ev(pt.permute_row_elements(x, y, inverse=inverse), {x: X, y: P})
    if inverse:
        expected = np.empty_like(X)
        expected[:, P] = X
    else:
        expected = X[:, P]
    np.testing.assert_array_equal(got, expected)
    ym = pt.lmatrix("ym")
    Ps = np.stack([RNG.permutation(4) for _ in range(3)])
    got = ev(pt.permute_row_elements(x, ym, inverse=inverse), {x: X, ym: Ps})
    for r in range(3):
        if inverse:
            np.testing.assert_array_equal(got[r, Ps[r]], X[r])
        else:
            np.testing.assert_array_equal(got[r], X[r, Ps[r]])
    v = pt.dvector("v")  # one row, several permutations
    got = ev(pt.permute_row_elements(v, ym), {v: X[0], ym: Ps})
    np.testing.assert_array_equal(got, X[0][Ps])


def test_permute_row_elements_errors_and_grad():
    x = pt.tensor("x", dtype="float64", shape=(2, 3))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        pt.permute_row_elements(x, pt.tensor(dtype="int64", shape=(4,)))
    with pytest.raises(TypeError, match="y must be integers"):
        pt.permute_row_elements(x, pt.dvector())
    with pytest.raises(TypeError, match="at least one dimension"):
        pt.permute_row_elements(x, pt.lscalar())
    d = pt.dmatrix("d")
    with pytest.raises(ValueError):
        ev(pt.permute_row_elements(d, pt.lvector("p")), {d: np.ones((2, 3)), "p": np.array([1, 0])})
    for inverse in (False, True):
        check_grad(
            lambda d, inverse=inverse: pt.permute_row_elements(d, [2, 0, 1], inverse=inverse),
            [(d, RNG.normal(size=(2, 3)))],
        )


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_inverse_permutation(dtype):
    p = pt.vector("p", dtype=dtype)
    P = RNG.permutation(6).astype(dtype)
    out = pt.inverse_permutation(p)
    assert out.type.dtype == dtype
    got = ev(out, {p: P})
    np.testing.assert_array_equal(got, np.argsort(P))
    np.testing.assert_array_equal(got[P], np.arange(6))
    pm = pt.matrix("pm", dtype=dtype)
    Ps = np.stack([RNG.permutation(5) for _ in range(3)]).astype(dtype)
    np.testing.assert_array_equal(ev(pt.inverse_permutation(pm), {pm: Ps}), np.argsort(Ps, axis=1))
    with pytest.raises(TypeError, match="perm must be integers"):
        pt.inverse_permutation(pt.dvector())
    with pytest.raises(TypeError, match="at least one dimension"):
        pt.inverse_permutation(pt.lscalar())


# --- mgrid / ogrid -------------------------------------------------------------------------


def test_mgrid_ogrid_match_numpy():
    for key in [(slice(0, 3), slice(0, 2)), (slice(1, 10, 3), slice(-2, 2), slice(0, 1))]:
        dense = pt.mgrid[key]
        for got, expected in zip(dense, np.mgrid[key]):
            np.testing.assert_array_equal(ev(got), expected)
        sparse = pt.ogrid[key]
        for got, expected in zip(sparse, np.ogrid[key]):
            np.testing.assert_array_equal(ev(got), expected)
    np.testing.assert_array_equal(ev(pt.mgrid[0:5]), np.mgrid[0:5])
    np.testing.assert_array_equal(ev(pt.ogrid[2:8:2]), np.ogrid[2:8:2])
    got = pt.mgrid[0:1:5j, 0:3]
    assert all(g.type.dtype == "float64" for g in got)
    for g, e in zip(got, np.mgrid[0:1:5j, 0:3]):
        np.testing.assert_allclose(ev(g), e)
    assert [g.type.shape for g in pt.ogrid[0:3, 0:4]] == [(3, 1), (1, 4)]
    assert [g.type.shape for g in pt.mgrid[0:3, 0:4]] == [(3, 4), (3, 4)]
    assert repr(pt.mgrid) == "mgrid" and repr(pt.ogrid) == "ogrid"


def test_mgrid_symbolic_and_errors():
    n = pt.lscalar("n")
    rows, cols = pt.mgrid[0:n, 0:2]
    np.testing.assert_array_equal(ev(rows, {n: 3}), np.mgrid[0:3, 0:2][0])
    with pytest.raises(TypeError, match="index with slices"):
        pt.mgrid[3]
    with pytest.raises(ValueError, match="needs a stop value"):
        pt.ogrid[0:]
