"""The matrix-product rules (arignote/tensor/rewriting/products.py), and constant folding's
treatment of a transposed constant: structure and values against the unrewritten graph."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.graph.basic import Constant
from arignote.graph.rewriting.basic import VIEW_FOLD_LIMIT
from arignote.graph.rewriting.db import rewrite_registry
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.products import Dot
from arignote.tensor.rewriting import products as rules
from arignote.tensor.type import tensor
from tests.tensor.rewriting.test_math import STRUCTURE, _ops, _value, check, rewrite_with

FLOATS = ["float64", "float32"]


def test_rules_are_registered_in_canonicalize() -> None:
    canon = {r.name for r in rewrite_registry.query("canonicalize", ["fast_run"])}
    assert {"local_dot_of_transposes", "local_dot_of_transposed_matrix_and_vector"} <= canon


@pytest.mark.parametrize("dtype", FLOATS)
def test_dot_of_transposes(dtype: str) -> None:
    x = tensor("x", dtype=dtype, shape=(None, 3))
    y = tensor("y", dtype=dtype, shape=(4, None))
    out = pt.dot(x.T, y.T)
    f = check(
        [x, y], out, [_value(tensor("a", dtype=dtype, shape=(2, 3))), _value(y.type.clone(shape=(4, 2))())]
    )
    dots = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Dot)]
    assert len(dots) == 1 and list(dots[0].inputs) == list(f.maker.fgraph.inputs[::-1])
    assert sum(isinstance(op, DimShuffle) for op in _ops(f)) == 1


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("matrix_first", [True, False])
def test_dot_of_a_transposed_matrix_and_a_vector_reads_the_matrix_as_it_is(
    dtypes: tuple[str, str], matrix_first: bool
) -> None:
    m = tensor("m", dtype=dtypes[0], shape=(None, None))
    v = tensor("v", dtype=dtypes[1], shape=(None,))
    out = pt.dot(m.T, v) if matrix_first else pt.dot(v, m.T)
    mv = _value(tensor("a", dtype=dtypes[0], shape=(5, 3)))
    vv = _value(tensor("b", dtype=dtypes[1], shape=(5 if matrix_first else 3,)))
    f = check([m, v], out, [mv, vv])
    (dot,) = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Dot)]
    assert not any(isinstance(op, DimShuffle) for op in _ops(f))
    ins = f.maker.fgraph.inputs
    assert list(dot.inputs) == ([ins[1], ins[0]] if matrix_first else [ins[0], ins[1]])
    # the vector-matrix product is what NumPy computes for the transposed one
    want = mv.T @ vv if matrix_first else vv @ mv.T
    np.testing.assert_allclose(f(mv, vv)[0], want, rtol=1e-5)


def test_dot_rule_declines_what_has_no_transposed_matrix() -> None:
    m, n, v = pt.matrix("m"), pt.matrix("n"), pt.vector("v")
    for out in (pt.dot(m, v), pt.dot(v, m), pt.dot(m.T, n), pt.dot(v, v)):
        _, count = rewrite_with(rules.local_dot_of_transposed_matrix_and_vector, [m, n, v], [out])
        assert count == 0, out


def test_the_gradient_of_a_product_by_a_constant_matrix_keeps_one_copy_of_it() -> None:
    """``grad(f(X @ w), w)`` is ``X.T @ g``: after rewriting, the constant ``X`` is read
    where it is (no transposed copy folded beside it)."""
    xv = np.random.default_rng(0).normal(size=(3000, 4))
    w = pt.vector("w")
    cost = pt.softplus(pt.dot(xv, w)).sum()
    g = arignote.grad(cost, w)
    f = function([w], [cost, g], mode=STRUCTURE)
    big = [
        c
        for n in f.maker.fgraph.apply_nodes
        for c in n.inputs
        if isinstance(c, Constant) and getattr(c.data, "size", 0) > 1000
    ]
    assert len({id(c.data) for c in big}) == 1 and big[0].data.shape == (3000, 4)
    wv = np.array([0.5, -1.0, 0.25, 2.0])
    z = xv @ wv
    np.testing.assert_allclose(f(wv)[1], xv.T @ (1 / (1 + np.exp(-z))), rtol=1e-10)


@pytest.mark.parametrize("n", [10, 1000])
def test_constant_folding_keeps_views_of_large_constants(n: int) -> None:
    """A transpose of a constant is folded when small, kept as a (free) view when its
    output has more than VIEW_FOLD_LIMIT elements."""
    data = np.arange(n * 7, dtype="float64").reshape(n, 7)
    y = pt.matrix("y")
    f = function([y], pt.dot(pt.constant(data).T, y), mode=STRUCTURE)
    transposes = [m for m in f.maker.fgraph.apply_nodes if isinstance(m.op, DimShuffle)]
    assert bool(transposes) == (data.size > VIEW_FOLD_LIMIT)
    yv = np.linspace(-1, 1, n * 2).reshape(n, 2)
    np.testing.assert_allclose(f(yv), data.T @ yv)
