"""``pt.einsum`` against ``numpy.einsum``: many subscripts (ellipses, diagonals, implicit
outputs, broadcasting, several operands), static and unknown shapes, dtypes, empty
operands; the graph it builds (one Dot / MatMul where one does, the greedy order avoiding
large intermediates, explicit paths); gradients through it; errors for bad subscripts.
"""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.graph.traversal import applys_between
from arignote.tensor.einsum import einsum
from arignote.tensor.products import Dot, MatMul
from tests.tensor.test_grad_ops import check_grad

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,i", [(4,), (4,)]),
    ("i,i->i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("b,A", [(2,), (3,)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bij,bjk->bki", [(5, 2, 3), (5, 3, 4)]),
    ("bji,bkj->bki", [(2, 4, 3), (2, 5, 4)]),
    ("bij,bj->bi", [(4, 2, 3), (4, 3)]),
    ("bi,bi->b", [(4, 3), (4, 3)]),
    ("bij,bjk->", [(5, 2, 3), (5, 3, 4)]),
    ("abc,cba->", [(2, 3, 4), (4, 3, 2)]),
    ("abcd,bd->ac", [(2, 3, 4, 5), (3, 5)]),
    ("abcd,dcbe->ae", [(2, 3, 4, 5), (5, 4, 3, 2)]),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 3), (3, 4)]),
    ("i...,i...->...", [(2, 3), (2,)]),
    ("ab...,b...->a...", [(2, 3, 4, 5), (3, 5)]),
    ("...", [(2, 3)]),
    ("i->i...", [(3,)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("ea,fb,abcd,gc,hd->efgh", [(3, 2), (4, 3), (2, 3, 4, 5), (2, 4), (3, 5)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("", [()]),
    ("->", [()]),
    (",", [(), ()]),
    ("i,->i", [(3,), ()]),
    ("ij,jk", [(0, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
]


def _static(shape):
    """Unknown lengths, but the 1s (they broadcast only when static)."""
    return tuple(1 if d == 1 else None for d in shape)


@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=[f"{s or 'empty'}" for s, _ in CASES])
@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown"])
def test_matches_numpy(subscripts, shapes, static):
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=s) for s in shapes]
    vs = [pt.tensor(dtype="float64", shape=s if static else _static(s)) for s in shapes]
    out = einsum(subscripts, *vs)
    want = np.einsum(subscripts, *arrays)
    got = function(vs, out)(*arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if static:  # the static shape is known
        assert out.type.shape == want.shape


def test_is_pt_einsum_and_spaces_are_ignored():
    assert pt.einsum is einsum
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    x, y = np.ones((2, 3)), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(pt.einsum(" ij , jk -> ik ", a, b).eval({a: x, b: y}), x @ y)


def test_array_operands_and_optimize_none():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(einsum("ij,kj->ik", x, x, optimize=None).eval(), x @ x.T)


@pytest.mark.parametrize(
    ("dtypes", "subscripts"),
    [
        (("int8", "int8"), "ij,jk->ik"),
        (("int8",), "ij->i"),
        (("int8", "float32"), "ij,jk->ik"),
        (("int64", "float32"), "i,i->"),
        (("float32", "float32"), "bij,bjk->bik"),
        (("float16",), "ii->"),
        (("complex128", "float64"), "ij,jk"),
        (("uint8", "int16"), "ij,ij->i"),
        (("bool", "bool"), "ij,jk->ik"),
        (("bool",), "ij->i"),
    ],
)
def test_dtypes_as_numpy(dtypes, subscripts):
    rng = np.random.default_rng(1)
    shapes = {"ij,jk->ik": [(2, 3), (3, 4)], "ij->i": [(2, 3)], "i,i->": [(5,), (5,)]}
    shapes.update({"bij,bjk->bik": [(2, 2, 3), (2, 3, 2)], "ii->": [(3, 3)], "ij,jk": [(2, 3), (3, 2)]})
    shapes["ij,ij->i"] = [(2, 3), (2, 3)]
    arrays = [
        (rng.random(s) > 0.5) if d == "bool" else (rng.normal(size=s) * 3).astype(d)
        for d, s in zip(dtypes, shapes[subscripts])
    ]
    if "complex128" in dtypes:
        arrays[0] = arrays[0] + 1j * rng.normal(size=arrays[0].shape)
    vs = [pt.tensor(dtype=d, shape=(None,) * a.ndim) for d, a in zip(dtypes, arrays)]
    out = einsum(subscripts, *vs)
    want = np.einsum(subscripts, *arrays)
    assert out.type.dtype == want.dtype.name
    got = function(vs, out)(*arrays)
    assert got.dtype == want.dtype
    rtol = {"float16": 1e-2, "float32": 1e-5}.get(want.dtype.name, 1e-12)
    np.testing.assert_allclose(got, want, rtol=rtol)


def test_int8_wraps_as_numpy():
    x = pt.bvector("x")
    v = np.full(200, 3, dtype="int8")
    assert einsum("i->", x).eval({x: v}) == np.einsum("i->", v)


# --- the graph ----------------------------------------------------------------------------------


def _ops(out):
    return [type(node.op) for node in applys_between([], [out])]


def test_a_matrix_product_is_one_dot_and_a_batched_one_one_matmul():
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    out = einsum("ij,jk->ik", a, b)
    assert isinstance(out.owner.op, Dot) and out.owner.inputs == [a, b]
    x, y = pt.dtensor3("x"), pt.dtensor3("y")
    out = einsum("bij,bjk->bik", x, y)
    assert isinstance(out.owner.op, MatMul) and out.owner.inputs == [x, y]


def _largest_intermediate(out):
    return max(
        int(np.prod(o.type.shape))
        for node in applys_between([], [out])
        for o in node.outputs
        if None not in o.type.shape
    )


def test_greedy_order_avoids_large_intermediates():
    a = pt.tensor("a", shape=(1000, 2))
    b = pt.tensor("b", shape=(2, 1000))
    c = pt.tensor("c", shape=(1000, 2))
    out = einsum("ij,jk,kl->il", a, b, c)
    assert _largest_intermediate(out) == 1000 * 2  # (b c) first: 2x2, never a 1000x1000
    left = einsum("ij,jk,kl->il", a, b, c, optimize=False)
    assert _largest_intermediate(left) == 1000 * 1000
    vals = [np.random.default_rng(2).normal(size=s) for s in ((1000, 2), (2, 1000), (1000, 2))]
    got = function([a, b, c], [out, left])(*vals)
    want = vals[0] @ vals[1] @ vals[2]
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-10)


def test_explicit_paths():
    a = pt.tensor("a", shape=(1000, 2))
    b = pt.tensor("b", shape=(2, 1000))
    c = pt.tensor("c", shape=(1000, 2))
    arrays = [np.ones((1000, 2)), np.ones((2, 1000)), np.ones((1000, 2))]
    path, _ = np.einsum_path("ij,jk,kl->il", *arrays, optimize="greedy")
    assert path[0] == "einsum_path"
    out = einsum("ij,jk,kl->il", a, b, c, optimize=path)
    assert _largest_intermediate(out) == 2000
    bad = einsum("ij,jk,kl->il", a, b, c, optimize=[(0, 1), (0, 1)])
    assert _largest_intermediate(bad) == 1000 * 1000
    all_at_once = einsum("ij,jk,kl->il", a, b, c, optimize=[(0, 1, 2)])
    got = function([a, b, c], [out, bad, all_at_once])(*arrays)
    for g in got:
        np.testing.assert_allclose(g, np.full((1000, 2), 2000.0))


def test_static_lengths_come_from_any_operand():
    x = pt.tensor("x", shape=(None, None))
    y = pt.tensor("y", shape=(3, 4))
    assert einsum("ij,jk->ik", x, y).type.shape == (None, 4)
    assert einsum("ij,jk->ikj", x, y).type.shape == (None, 4, 3)
    assert einsum("ii->i", pt.tensor(shape=(3, None))).type.shape == (3,)
    assert einsum("i,i->i", pt.tensor(shape=(1,)), pt.tensor(shape=(3,))).type.shape == (3,)


def test_diagonal_of_unknown_lengths_checked_at_run_time():
    x = pt.dmatrix("x")
    f = function([x], einsum("ii->i", x))
    np.testing.assert_array_equal(f(np.arange(9.0).reshape(3, 3)), [0.0, 4.0, 8.0])
    with pytest.raises(Exception, match="shape|length"):
        f(np.zeros((2, 3)))


# --- gradients -----------------------------------------------------------------------------------

GRAD_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("bij,bjk->bki", [(2, 2, 3), (2, 3, 2)]),
    ("bi,bi->b", [(3, 2), (3, 2)]),
    ("i...,i...->...", [(2, 3), (2,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("abcd,dcbe->ae", [(2, 1, 2, 3), (3, 2, 1, 2)]),
    ("i,j->ij", [(2,), (3,)]),
]


@pytest.mark.parametrize(("subscripts", "shapes"), GRAD_CASES, ids=[s for s, _ in GRAD_CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradients(subscripts, shapes, dtype):
    rng = np.random.default_rng(3)
    inputs = [(pt.tensor(dtype=dtype, shape=s), rng.normal(size=s)) for s in shapes]
    check_grad(lambda *xs: einsum(subscripts, *xs), inputs)


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subscripts", "shapes", "match"),
    [
        ("ij,jk", [(2, 3)], r"name 2 operand\(s\), 1 given"),
        ("ij", [(2, 3), (3,)], r"name 1 operand\(s\), 2 given"),
        ("ij", [(2, 3, 4)], r"operand 0 .* has 3 dimension\(s\), its subscripts 'ij' name 2"),
        ("ijk...", [(2, 3)], r"besides '...'"),
        ("i1->i", [(2, 3)], "invalid subscript '1'"),
        ("..i->i", [(2, 3)], "'.' that is not part of an ellipsis"),
        ("...i...", [(2, 3)], "more than one ellipsis"),
        ("ij->i->j", [(2, 3)], "at most one '->'"),
        ("ij-i", [(2, 3)], "at most one '->'"),
        ("ij->ii", [(3, 3)], "output subscript 'i' .* more than once"),
        ("ij->k", [(3, 3)], "output subscript 'k' .* is in no input"),
        ("i...->i", [(2, 3)], "add '...' to it"),
        ("i,i", [(3,), (4,)], "subscript 'i' .* different lengths: operand 0 dimension 0 has length 3"),
        ("ii", [(2, 3)], "repeated in operand 0 on dimensions of lengths 2 and 3"),
    ],
)
def test_bad_subscripts(subscripts, shapes, match):
    vs = [pt.tensor(shape=s) for s in shapes]
    with pytest.raises(ValueError, match=match):
        einsum(subscripts, *vs)


def test_bad_calls():
    with pytest.raises(ValueError, match="no operands"):
        einsum("")
    with pytest.raises(TypeError, match="subscripts must be a str"):
        einsum(["ij"], pt.dmatrix())
    a = pt.dmatrix()
    with pytest.raises(ValueError, match="optimize must be None, True or 'greedy'"):
        einsum("ij,jk", a, a, optimize="optimal")
    with pytest.raises(ValueError, match="leaves 2 operands"):
        einsum("ij,jk,kl", a, a, a, optimize=[(0, 1)])
    with pytest.raises(ValueError, match=r"path step \(0, 3\)"):
        einsum("ij,jk,kl", a, a, a, optimize=[(0, 3), (0, 1)])
