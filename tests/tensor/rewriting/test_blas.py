"""BLAS rules: sums of scaled products become Gemm / Gemv / Ger where that keeps the dtype
exactly, and these write in place only where nobody can see it. Every case is checked
structurally (which Ops the compiled graph runs) and numerically (against the graph as
written, compiled without rewrites, on random inputs)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.tensor.blas import Gemm, Gemv, Ger
from arignote.tensor.products import Dot
from arignote.tensor.rewriting.blas import local_blas_inplace, local_blas_update
from tests.modes import function  # FAST_RUN's rewrites, on the run's linker

UNREWRITTEN = arignote.Mode(optimizer=None)
BLAS = (Gemm, Gemv, Ger)


def _blas_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, BLAS)]


def _kinds(f):
    return Counter(type(n.op).__name__ for n in f.maker.fgraph.toposort())


def _vals(inputs, *shapes):
    """Random values of the inputs' dtypes, of these shapes."""
    rng = np.random.default_rng(len(shapes))
    return [rng.normal(size=s).astype(v.type.dtype) for v, s in zip(inputs, shapes)]


def _check(inputs, outputs, expect, values, tol=None):
    """Compile with the default rewrites: the BLAS Ops run are ``expect`` (by class name);
    the values equal the unrewritten graph's on random inputs, which are left unchanged."""
    f = function(inputs, outputs, on_unused_input="ignore")
    got_kinds = Counter({k: c for k, c in _kinds(f).items() if k in ("Gemm", "Gemv", "Ger")})
    assert got_kinds == Counter(expect), f"expected {expect}, compiled {dict(_kinds(f))}"
    kept = [np.array(v, copy=True) for v in values]
    got = f(*values)
    want = function(inputs, outputs, mode=UNREWRITTEN, on_unused_input="ignore")(*values)
    outs = got if isinstance(outputs, list) else [got]
    wants = want if isinstance(outputs, list) else [want]
    for g, w in zip(outs, wants):
        assert g.dtype == w.dtype and g.shape == w.shape
        if tol is None:
            tol = 1e-4 if g.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    for v, k in zip(values, kept):  # no graph input is overwritten
        np.testing.assert_array_equal(v, k)
    return f


def test_the_rules_are_registered_and_tracked():
    assert Gemm in local_blas_inplace.tracks and Ger in local_blas_inplace.tracks
    assert local_blas_update.name == "local_blas_update"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sgd_update_of_a_weight_matrix(dtype):
    w, x, g = (pt.matrix(n, dtype=dtype) for n in "wxg")
    lr = np.asarray(0.1, dtype)
    f = _check([w, x, g], w - lr * pt.dot(x.T, g), {"Gemm": 1}, _vals([w, x, g], (4, 3), (5, 4), (5, 3)))
    (node,) = _blas_nodes(f)
    assert node.outputs[0].type.dtype == dtype
    assert not node.op.inplace  # w is a graph input


@pytest.mark.parametrize(
    "build",
    [
        lambda z, x, y, a, b: a * pt.dot(x, y) + b * z,
        lambda z, x, y, a, b: z + pt.dot(x, y),
        lambda z, x, y, a, b: pt.dot(x, y) + z,
        lambda z, x, y, a, b: z - pt.dot(x, y),
        lambda z, x, y, a, b: pt.dot(x, y) - z,
        lambda z, x, y, a, b: pt.dot(x, y) * a + z,
        lambda z, x, y, a, b: pt.dot(x, y) * 2.0 - z * b,
        lambda z, x, y, a, b: -pt.dot(x, y) + z,
        lambda z, x, y, a, b: z - a * (b * pt.dot(x, y)),
        lambda z, x, y, a, b: z + pt.dot(x, y) * pt.as_tensor(np.full((1, 1), 0.5)),
        lambda z, x, y, a, b: z + a.dimshuffle("x", "x") * pt.dot(x, y),
        lambda z, x, y, a, b: z + pt.dot(y.T, x.T).T,
        lambda z, x, y, a, b: (z + a * pt.dot(x, y)) - (b * z),
    ],
)
def test_gemm_forms(build):
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    a, b = pt.dscalar("a"), pt.dscalar("b")
    out = build(z, x, y, a, b)
    values = [*_vals([z, x, y], (3, 4), (3, 5), (5, 4)), np.asarray(1.7), np.asarray(-0.6)]
    _check([z, x, y, a, b], out, {"Gemm": 1}, values)


def test_transposed_operands_and_a_transposed_product():
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    _check([z, x, y], z + pt.dot(x.T, y.T), {"Gemm": 1}, _vals([z, x, y], (3, 4), (5, 3), (4, 5)))
    _check([z, x, y], z + pt.dot(x, y).T, {"Gemm": 1}, _vals([z, x, y], (3, 4), (4, 5), (5, 3)))


def test_several_products_chain_and_other_terms_stay():
    z, x, y, u, v, w = (pt.dmatrix(n) for n in "zxyuvw")
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(6)]
    f = _check([z, x, y, u, v, w], z + pt.dot(x, y) - 2.0 * pt.dot(u, v), {"Gemm": 2}, vals)
    first, second = _blas_nodes(f)
    assert second.inputs[0] is first.outputs[0]  # one chain
    _check([z, x, y, u, v, w], z + pt.dot(x, y) + w * u, {"Gemm": 1}, vals)
    _check([z, x, y, u, v, w], pt.dot(x, y) + pt.dot(u, v), {"Gemm": 1}, vals)


def test_a_negated_term_read_elsewhere_keeps_its_sign():
    # ``upd + neg(x)`` with ``neg(x)`` also returned: the rule reads the term's negation to
    # know its sign, but rebuilds the sum from the term as the sum reads it (``neg(x)``,
    # added), not as ``x`` with the negation applied twice
    z, x, y = (pt.dmatrix(n) for n in "zxy")
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(3)]
    nz = -z
    f = _check([z, x, y], [nz, (z - 0.1 * pt.dot(x, y)) + nz], {"Gemm": 1}, vals)
    np.testing.assert_allclose(f(*vals)[1], -0.1 * vals[1] @ vals[2], atol=1e-12)
    nw = -(2.0 * z)  # a negation inside the term that must become the Gemm's beta
    _check([z, x, y], [nw, pt.dot(x, y) + nw], {"Gemm": 1}, vals)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemv_forms(dtype):
    A = pt.matrix("A", dtype=dtype)
    u, v = pt.vector("u", dtype=dtype), pt.vector("v", dtype=dtype)
    a = pt.scalar("a", dtype=dtype)
    rng = np.random.default_rng(0)
    vals = [
        rng.normal(size=(3, 4)).astype(dtype),
        rng.normal(size=3).astype(dtype),
        rng.normal(size=4).astype(dtype),
    ]
    al = np.asarray(0.3, dtype)
    _check([A, u, v], u + pt.dot(A, v), {"Gemv": 1}, vals)
    _check([A, u, v, a], v - a * pt.dot(u, A), {"Gemv": 1}, [*vals, al])
    _check([A, u, v, a], a * pt.dot(A, v) + a * u, {"Gemv": 1}, [*vals, al])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ger_forms(dtype):
    A = pt.matrix("A", dtype=dtype)
    u, v = pt.vector("u", dtype=dtype), pt.vector("v", dtype=dtype)
    a = pt.scalar("a", dtype=dtype)
    rng = np.random.default_rng(1)
    vals = [
        rng.normal(size=(3, 4)).astype(dtype),
        rng.normal(size=3).astype(dtype),
        rng.normal(size=4).astype(dtype),
    ]
    al = np.asarray(0.3, dtype)
    _check([A, u, v, a], A - a * pt.outer(u, v), {"Ger": 1}, [*vals, al])
    _check([A, u, v], A + pt.outer(u, v), {"Ger": 1}, vals)
    _check([A, u, v], A + pt.dot(u[:, None], v[None, :]), {"Ger": 1}, vals)
    # z scaled or subtracted: Ger has no beta, a Gemm of a column by a row does it
    _check([A, u, v, a], pt.outer(u, v) - a * A, {"Gemm": 1}, [*vals, al])


def test_the_gradient_of_a_one_sample_layer_is_a_rank_one_update():
    W = arignote.shared(np.random.default_rng(0).normal(size=(4, 3)), name="W")
    x = pt.dvector("x")
    cost = pt.sum(pt.tanh(pt.dot(x, W)) ** 2)
    f = function([x], cost, updates=[(W, W - 0.1 * arignote.grad(cost, W))])
    assert _kinds(f)["Ger"] == 1
    (node,) = _blas_nodes(f)
    assert node.op.inplace  # the shared weight is the function's state
    w0 = W.get_value()
    xv = np.arange(4.0) / 4
    f(xv)
    h = np.tanh(xv @ w0)
    np.testing.assert_allclose(W.get_value(), w0 - 0.1 * np.outer(xv, 2 * h * (1 - h**2)))


@pytest.mark.parametrize(
    "build",
    [
        # the product in float32 then the sum in float64 (0.1 is a float64 constant)
        lambda: (lambda z, x, y: ([z, x, y], z - 0.1 * pt.dot(x, y)))(
            pt.fmatrix(), pt.fmatrix(), pt.fmatrix()
        ),
        # the product promotes a float32 operand: computed in float64 by Dot, not by BLAS
        lambda: (lambda z, x, y: ([z, x, y], z + pt.dot(x, y)))(pt.dmatrix(), pt.fmatrix(), pt.dmatrix()),
        # integers
        lambda: (lambda z, x, y: ([z, x, y], z + pt.dot(x, y)))(pt.lmatrix(), pt.lmatrix(), pt.lmatrix()),
        # the float32 product upcast to float64 by z
        lambda: (lambda z, x, y: ([z, x, y], z + pt.dot(x, y)))(pt.dmatrix(), pt.fmatrix(), pt.fmatrix()),
    ],
)
def test_no_rewrite_where_it_would_change_the_dtype(build):
    inputs, out = build()
    vals = [
        (np.random.default_rng(k).normal(size=(3, 3)) * 3).astype(v.type.dtype) for k, v in enumerate(inputs)
    ]
    _check(inputs, out, {}, vals)


def test_an_upcast_z_is_cast_as_the_sum_did():
    z, x, y = pt.fmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    vals = [
        np.random.default_rng(k).normal(size=(3, 3)).astype(v.type.dtype) for k, v in enumerate((z, x, y))
    ]
    f = _check([z, x, y], z + pt.dot(x, y), {"Gemm": 1}, vals)
    assert _blas_nodes(f)[0].outputs[0].type.dtype == "float64"


def test_no_rewrite_when_the_product_is_used_elsewhere_or_z_broadcasts():
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(3)]
    d = pt.dot(x, y)
    f = _check([z, x, y], [z + d, d], {}, vals)
    assert _kinds(f)["Dot"] == 1
    s = 2.0 * pt.dot(x, y)
    _check([z, x, y], [z + s, s * z], {}, vals)
    row = pt.matrix("row", dtype="float64", shape=(1, None))
    _check([row, x, y], pt.dot(x, y) + row, {}, [vals[0][:1], vals[1], vals[2]])
    _check([z, x, y], pt.dot(x, y) * z + z, {}, vals)  # not a scale: an elementwise product


def test_the_rules_can_be_excluded():
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    f = function([z, x, y], z + pt.dot(x, y), mode=arignote.get_mode("FAST_RUN").excluding("blas"))
    assert not _blas_nodes(f) and any(isinstance(n.op, Dot) for n in f.maker.fgraph.toposort())


# --- in place ----------------------------------------------------------------------------------


def test_in_place_into_an_intermediate_nobody_else_reads():
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(3)]
    f = _check([z, x, y], pt.exp(z) + pt.dot(x, y), {"Gemm": 1}, vals)
    assert _blas_nodes(f)[0].op.inplace


def test_no_in_place_into_an_input_or_a_value_read_later():
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(3)]
    f = _check([z, x, y], z + pt.dot(x, y), {"Gemm": 1}, vals)
    assert not _blas_nodes(f)[0].op.inplace
    e = pt.exp(z)
    f = _check([z, x, y], [e + pt.dot(x, y), e], {"Gemm": 1}, vals)  # e is returned too
    assert not _blas_nodes(f)[0].op.inplace
    # e is read by a node that needs the Gemm's result: it cannot be overwritten first
    g = e + pt.dot(x, y)
    f = _check([z, x, y], g * e, {"Gemm": 1}, vals)
    assert not _blas_nodes(f)[0].op.inplace


def test_no_in_place_into_an_operand_of_the_product():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    e = pt.exp(x)
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(2)]
    f = _check([x, y], e + pt.dot(e, y), {"Gemm": 1}, vals)
    assert not _blas_nodes(f)[0].op.inplace
    f = _check([x, y], e + pt.dot(y, e.T), {"Gemm": 1}, vals)
    assert not _blas_nodes(f)[0].op.inplace


def test_a_mutable_input_gives_the_right_values():
    z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
    f = function([arignote.In(z, mutable=True), x, y], z - 0.5 * pt.dot(x, y))
    assert len(_blas_nodes(f)) == 1
    Z, X, Y = (np.random.default_rng(k).normal(size=(3, 3)) for k in range(3))
    want = Z - 0.5 * X @ Y
    np.testing.assert_allclose(f(Z, X, Y), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_sgd_step_updates_the_weights_in_place(dtype):
    rng = np.random.default_rng(3)
    n_in, n_hid, n_out, batch = 8, 6, 4, 5
    sh = lambda name, *s: arignote.shared((rng.normal(size=s) * 0.3).astype(dtype), name=name)  # noqa: E731
    params = [sh("w1", n_in, n_hid), sh("b1", n_hid), sh("w2", n_hid, n_out), sh("b2", n_out)]
    w1, b1, w2, b2 = params
    x, t = pt.matrix("x", dtype=dtype), pt.matrix("t", dtype=dtype)
    h = pt.tanh(pt.dot(x, w1) + b1)
    cost = pt.mean((pt.dot(h, w2) + b2 - t) ** 2)
    lr = np.asarray(0.05, dtype)
    updates = [(p, p - lr * g) for p, g in zip(params, arignote.grad(cost, params))]
    f = function([x, t], cost, updates=updates)
    # the weight updates write into the shared weights (the forward pass's
    # ``dot(h, w2) + b2 - t`` is a Gemm into a copy of the input t too)
    gemms = [n for n in _blas_nodes(f) if isinstance(n.op, Gemm) and n.inputs[0].name in ("w1", "w2")]
    assert len(gemms) == 2 and all(n.op.inplace for n in gemms)
    # the same steps without rewrites, from the same start
    start = [p.get_value() for p in params]
    ref_params = [arignote.shared(v.copy()) for v in start]
    ref_updates = [(r, e) for r, (_, e) in zip(ref_params, updates)]
    ref = function([x, t], cost, updates=ref_updates, givens=dict(zip(params, ref_params)), mode=UNREWRITTEN)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for _ in range(3):
        X = rng.normal(size=(batch, n_in)).astype(dtype)
        T = rng.normal(size=(batch, n_out)).astype(dtype)
        np.testing.assert_allclose(f(X, T), ref(X, T), rtol=tol * 10, atol=tol)
        for p, r in zip(params, ref_params):
            assert p.get_value().dtype == dtype
            np.testing.assert_allclose(p.get_value(), r.get_value(), rtol=tol * 10, atol=tol)


def test_two_updates_each_reading_what_the_other_overwrites():
    x, y, u, v = (pt.dmatrix(n) for n in "xyuv")
    a, b = pt.exp(x), pt.exp(y)
    outs = [a + pt.dot(b, u), b + pt.dot(a, v)]  # at most one of them may work in place
    vals = [np.random.default_rng(k).normal(size=(3, 3)) for k in range(4)]
    f = _check([x, y, u, v], outs, {"Gemm": 2}, vals)
    assert sum(n.op.inplace for n in _blas_nodes(f)) == 1
