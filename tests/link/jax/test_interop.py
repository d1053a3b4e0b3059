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
