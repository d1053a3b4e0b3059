"""Both directions between arignote graphs and JAX: ``jax_function`` (a graph as a pure JAX
function that jax.grad/vmap/jit take) and ``wrap_jax`` (a JAX function as an Op, with its
gradient), checked against NumPy and arignote's own gradients."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.link.jax import jax_function, wrap_jax  # noqa: E402


def test_jax_function_values_grad_vmap_and_shared_constants() -> None:
    x = pt.dmatrix("x")
    w = arignote.shared(np.array([0.5, -1.0]), name="w")
    b = pt.dscalar("b")
    y = pt.tanh(x @ w + b)
    loss = (y**2).sum()
    f = jax_function(loss, [x, b])
    xv = np.array([[1.0, 2.0], [0.5, 0.1], [-1.0, 3.0]])
    expected = (np.tanh(xv @ w.get_value() + 0.3) ** 2).sum()
    np.testing.assert_allclose(float(f(xv, 0.3)), expected)
    # jax.grad against arignote's symbolic gradient
    gx, gb = arignote.grad(loss, [x, b])
    want = arignote.function([x, b], [gx, gb])(xv, 0.3)
    got = jax.grad(f, argnums=(0, 1))(xv, 0.3)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    # vmap over a batch of b, and jit
    batch = jax.jit(jax.vmap(f, in_axes=(None, 0)))(xv, jnp.array([0.3, 0.0]))
    np.testing.assert_allclose(batch[0], expected)
    # several outputs: a tuple; a FunctionGraph works as well (and is not rewritten in place)
    g = jax_function([y, loss], [x, b])
    assert isinstance(g(xv, 0.3), tuple) and len(g(xv, 0.3)) == 2
    from arignote.graph.fg import FunctionGraph

    v = pt.dvector("v")
    fgraph = FunctionGraph([v], [pt.exp(v).sum(), v * 2])
    n_nodes = len(fgraph.apply_nodes)
    total, doubled = jax_function(fgraph)(np.ones(2))
    np.testing.assert_allclose(total, 2 * np.e)
    np.testing.assert_allclose(doubled, [2.0, 2.0])
    assert len(fgraph.apply_nodes) == n_nodes
    with pytest.raises(TypeError, match="not both"):
        jax_function(fgraph, [v])


def test_jax_function_errors() -> None:
    x, z = pt.dvector("x"), pt.dvector("z")
    with pytest.raises(TypeError, match="not among the inputs"):
        jax_function(x + z, [x])
    with pytest.raises(TypeError, match="root Variable"):
        jax_function(x + z, [x, x + 1])


def test_wrap_jax_values_types_and_gradient() -> None:
    @wrap_jax
    def scaled_logsumexp(x, s):
        return s * jax.nn.logsumexp(x, axis=-1), jnp.cumsum(x, axis=-1)

    x = pt.dmatrix("x")
    s = pt.dscalar("s")
    lse, cs = scaled_logsumexp(x, s)
    assert lse.type.shape == (None,) and cs.type.shape == (None, None)
    cost = (lse * pt.arange(1, 3)).sum() + cs.sum()
    gx, gs = arignote.grad(cost, [x, s])
    xv = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
    for mode in ("FAST_RUN", "JAX"):
        f = arignote.function([x, s], [lse, cost, gx, gs], mode=mode)
        v_lse, v_cost, v_gx, v_gs = f(xv, 2.0)
        ref_lse = 2.0 * np.log(np.exp(xv).sum(-1))
        np.testing.assert_allclose(v_lse, ref_lse)
        np.testing.assert_allclose(v_cost, (ref_lse * [1, 2]).sum() + np.cumsum(xv, -1).sum())
        soft = np.exp(xv) / np.exp(xv).sum(-1, keepdims=True)
        np.testing.assert_allclose(v_gx, 2.0 * soft * np.array([[1.0], [2.0]]) + [3.0, 2.0, 1.0])
        np.testing.assert_allclose(v_gs, (ref_lse / 2.0 * [1, 2]).sum())


def test_wrap_jax_bad_function_names_it() -> None:
    @wrap_jax
    def broken(x):
        return x @ jnp.ones((7, 2))

    with pytest.raises(TypeError, match="broken"):
        broken(pt.tensor("x", dtype="float64", shape=(2, 3)))


def test_wrap_jax_takes_and_returns_pytrees_with_constants_among_them() -> None:
    # PyTensor 3's example: a keyword constant, a dict of results
    @arignote.wrap_jax
    def affine(params, x, scale=1.0):
        return {"y": (params["w"] * x + params["b"]) * scale, "label": "affine", "parts": (x, None)}

    w, x = pt.dvector("w"), pt.dvector("x")
    b = pt.dscalar("b")
    out = affine({"w": w, "b": b}, x, scale=2.0)
    assert out["label"] == "affine" and out["parts"][1] is None
    assert out["y"].owner.op.input_types == (b.type, w.type, x.type)  # (jax.tree's order: sorted keys)
    cost = out["y"].sum() + out["parts"][0].sum()
    wv, xv = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    for mode in ("FAST_RUN", "JAX"):
        f = arignote.function([w, b, x], [out["y"], *arignote.grad(cost, [w, b, x])], mode=mode)
        y, gw, gb, gx = f(wv, 1.5, xv)
        np.testing.assert_allclose(y, (wv * xv + 1.5) * 2.0)
        np.testing.assert_allclose(gw, 2.0 * xv)
        np.testing.assert_allclose(gb, 2.0 * 3)
        np.testing.assert_allclose(gx, 2.0 * wv + 1.0)


def test_wrap_jax_unknown_lengths_that_must_be_equal() -> None:
    # two vectors of unknown lengths: JAX cannot trace x + y with a length of its own for
    # each, and does with one length for both; the output's length is then unknown
    add = wrap_jax(jnp.add)
    x, y = pt.dvector("x"), pt.dvector("y")
    z = add(x, y)
    assert z.type.shape == (None,)
    np.testing.assert_allclose(arignote.function([x, y], z)(np.ones(2), np.arange(2.0)), [1.0, 2.0])
    # a length JAX does tie to an input's is known to shape inference
    doubled = wrap_jax(lambda v: jnp.concatenate([v, v]))(x)
    assert arignote.function([x], doubled.shape)(np.ones(3)).tolist() == [6]


def test_wrap_jax_example_lengths_where_tracing_needs_numbers() -> None:
    def tile_to_length(v):  # a length must be a number: jnp.ones(n * n) of a symbolic n fails below
        n = int(v.shape[0])
        return jnp.tile(v, n)

    s = arignote.shared(np.array([1.0, 2.0]))
    out = wrap_jax(tile_to_length)(s)  # s's length can be computed ahead: 2
    assert out.type.shape == (None,)
    np.testing.assert_allclose(out.eval(), [1.0, 2.0, 1.0, 2.0])
    with pytest.raises(
        ValueError, match="tile_to_length cannot be traced with unknown lengths.*specify_shape"
    ):
        wrap_jax(tile_to_length, allow_eval=False)(s)
    with pytest.raises(ValueError, match="depend on inputs of the graph.*specify_shape"):
        wrap_jax(tile_to_length)(pt.dvector("v"))
    fixed = wrap_jax(tile_to_length)(pt.specify_shape(pt.dvector("v"), (3,)))
    assert fixed.type.shape == (9,)


def test_jax_op_with_pytensor_signature() -> None:
    from arignote.link.jax import JAXOp

    vector = pt.TensorType("float32", shape=(None,))
    op = JAXOp(
        [vector, vector], [pt.TensorType("float32", shape=())], lambda a, b: (jnp.sum(a + b),), name="s"
    )
    same = JAXOp([vector, vector], [pt.TensorType("float32", shape=())], op.jax_func)
    assert op == same and hash(op) == hash(same) and str(op) == "JAXOp{s}"
    x, y = pt.tensor("x", dtype="float32", shape=(2,)), pt.tensor("y", dtype="float32", shape=(2,))
    out = op(x, y)
    f = arignote.function([x, y], [out, arignote.grad(out, x)])
    total, gx = f(np.array([2.0, 3.0], "float32"), np.array([4.0, 5.0], "float32"))
    assert total.dtype == np.float32 and total == 14.0
    np.testing.assert_allclose(gx, [1.0, 1.0])
    with pytest.raises(ValueError, match="takes 2 inputs, got 1"):
        op(x)
    with pytest.raises(TypeError, match="float32"):
        op(pt.dmatrix("m"), y)
    with pytest.raises(TypeError, match="must be TensorTypes"):
        JAXOp([vector], ["float32"], jnp.sum)
    with pytest.raises(TypeError, match="callable"):
        JAXOp([vector], [vector], "sum")


def test_wrap_jax_results_without_arrays_are_refused() -> None:
    with pytest.raises(TypeError, match="returned no array"):
        wrap_jax(lambda v: "nothing")(pt.dvector("v"))
