"""A FunctionGraph rewritten with the JAX mode's rewrites and turned into a JAX function by
``jax_funcify``, by hand: how PyMC's JAX samplers (NumPyro, BlackJAX) use PyTensor, with
shared variables replaced by constants, a Supervisor over the inputs and a user's own
``jax_funcify`` of an Op. The function must take JAX values, jit, grad and vmap."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.compile import SharedVariable, Supervisor, mode  # noqa: E402
from arignote.graph.fg import FunctionGraph  # noqa: E402
from arignote.graph.replace import clone_replace  # noqa: E402
from arignote.graph.traversal import graph_inputs  # noqa: E402
from arignote.link.jax.dispatch import jax_funcify  # noqa: E402
from arignote.raise_op import Assert  # noqa: E402

DATA = np.random.default_rng(0).normal(1.0, 2.0, size=50)


def _rewritten(inputs: list, outputs: list) -> FunctionGraph:
    shared = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
    outputs = clone_replace(outputs, replace={v: pt.constant(v.get_value(borrow=True)) for v in shared})
    fgraph = FunctionGraph(inputs=inputs, outputs=outputs, clone=True)
    fgraph.attach_feature(
        Supervisor(
            i for i in fgraph.inputs if not (hasattr(fgraph, "destroyers") and fgraph.has_destroyers([i]))
        )
    )
    fgraph.rewrite_timings = mode.JAX.optimizer.rewrite(fgraph)
    return fgraph


def _jaxified(inputs: list, outputs: list):
    return jax_funcify(_rewritten(inputs, outputs))


def _logp_graph():
    mu, log_sigma = pt.dscalar("mu"), pt.dscalar("log_sigma")
    data = arignote.shared(DATA, name="data")
    sigma = Assert("sigma > 0")(pt.exp(log_sigma), pt.gt(pt.exp(log_sigma), 0))
    logp = (-0.5 * ((data - mu) / sigma) ** 2 - pt.log(sigma)).sum() - 0.5 * mu**2
    return [mu, log_sigma], logp


def _numpy_logp(mu: float, log_sigma: float) -> float:
    sigma = np.exp(log_sigma)
    return float((-0.5 * ((DATA - mu) / sigma) ** 2 - np.log(sigma)).sum() - 0.5 * mu**2)


def test_the_rewritten_graph_is_a_jax_function_that_jits_grads_and_vmaps():
    inputs, logp = _logp_graph()
    fn = _jaxified(inputs, [logp])
    (value,) = fn(jnp.float64(1.0), jnp.float64(0.5))
    np.testing.assert_allclose(value, _numpy_logp(1.0, 0.5))

    def logp_fn(x):
        return fn(*x)[0]

    g_mu, g_ls = jax.jit(jax.grad(logp_fn))([jnp.float64(1.0), jnp.float64(0.5)])
    want_mu, want_ls = arignote.function(inputs, arignote.grad(logp, inputs))(1.0, 0.5)
    np.testing.assert_allclose([g_mu, g_ls], [want_mu, want_ls])
    batch = jax.vmap(logp_fn)([jnp.arange(3.0), jnp.zeros(3)])
    np.testing.assert_allclose(batch, [_numpy_logp(m, 0.0) for m in range(3)])


def test_the_jax_mode_rewrites_ran_and_left_no_in_place_node():
    inputs, logp = _logp_graph()
    fgraph = _rewritten(inputs, [pt.log(1 + pt.exp(logp))])
    # (the JAX mode leaves out the in-place and fusion stages: XLA does both)
    assert "inplace" not in fgraph.rewrite_timings and "fusion" not in fgraph.rewrite_timings
    assert not any(getattr(n.op, "destroy_map", None) for n in fgraph.apply_nodes)
    ops = sorted(str(n.op) for n in fgraph.apply_nodes)
    assert any("softplus" in op.lower() for op in ops), ops  # log(1 + exp(.)) stabilised


def test_a_users_jax_funcify_of_an_op_replaces_the_backends():
    # PyMC registers a pass-through Assert (its check cannot run on traced values); the
    # registration must take effect, and the backend's own must be back afterwards
    own = jax_funcify.dispatch(Assert)

    def pass_through(op, **kwargs):
        def assert_fn(value, *conditions):
            return value

        return assert_fn

    jax_funcify.register(Assert)(pass_through)
    try:
        x = pt.dscalar("x")
        checked = Assert("x > 0")(x, pt.gt(x, 0))
        (value,) = _jaxified([x], [checked * 2])(jnp.float64(-1.0))
        np.testing.assert_allclose(value, -2.0)  # not checked: the user's choice
    finally:
        jax_funcify.register(Assert)(own)
    assert jax_funcify.dispatch(Assert) is own


def test_jax_typify_converts_constants_by_their_class():
    import scipy.sparse as scipy_sparse
    from jax.experimental.sparse import BCOO

    from arignote.graph.basic import Apply, Constant
    from arignote.graph.op import Op
    from arignote.graph.type import Type
    from arignote.link.jax.dispatch import jax_typify

    assert isinstance(jax_typify(scipy_sparse.csr_matrix(np.eye(2))), BCOO)
    assert jax_typify(np.random.default_rng(0)).dtype == jax.random.key(0).dtype
    assert jax_typify(2, dtype="float32").dtype == np.float32
    data = np.ones(2)
    assert jax_typify(data) is data  # (JAX takes NumPy data as compile-time constants)

    class Scale:  # a value of a user's own Type
        def __init__(self, factor):
            self.factor = factor

    class ScaleType(Type):
        def filter(self, data, strict=False, allow_downcast=None):
            return data

    class Scaled(Op):
        __props__ = ()

        def make_node(self, x, scale):
            x = pt.as_tensor_variable(x)
            return Apply(self, [x, scale], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * inputs[1].factor

    @jax_funcify.register(Scaled)
    def _scaled(op, **kwargs):
        return lambda x, factor: x * factor  # receives what jax_typify made of the Scale

    jax_typify.register(Scale)(lambda scale, **kwargs: jnp.float64(scale.factor))
    x = pt.dvector("x")
    out = Scaled()(x, Constant(ScaleType(), Scale(3.0)))
    np.testing.assert_allclose(arignote.function([x], out, mode="JAX")(np.array([1.0, 2.0])), [3.0, 6.0])
