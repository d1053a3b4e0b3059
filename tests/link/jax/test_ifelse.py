"""``ifelse`` under JAX is lazy: the nodes only one branch needs run inside that branch's
function of ``lax.cond``, so the branch not taken is not computed. Checked on the traced
structure (``jax.make_jaxpr``), with a side effect that counts which branch ran
(``jax.debug.callback``), and on values against the reference VM: nested, multi-output,
shared values, under ``grad``, with constant conditions and shape errors."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.compile.mode import Mode  # noqa: E402
from arignote.ifelse import ifelse  # noqa: E402
from arignote.link.jax import jax_function, wrap_jax  # noqa: E402
from arignote.link.jax.dispatch import JAXNodeError  # noqa: E402
from arignote.link.jax.dispatch.branches import branch_locations  # noqa: E402

REFERENCE = Mode(linker="py", optimizer=None)


def _values(inputs, outputs, *values):
    """Results of mode="JAX" and of the reference VM for the same graph and values."""
    got = arignote.function(inputs, outputs, mode="JAX")(*values)
    want = arignote.function(inputs, outputs, mode=REFERENCE)(*values)
    got, want = (got, want) if isinstance(got, list) else ([got], [want])
    for a, b in zip(got, want):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-12)
    return got


def _primitives(jaxpr) -> list[str]:
    return [eqn.primitive.name for eqn in jaxpr.eqns]


def _conds(jaxpr) -> list:
    return [eqn for eqn in jaxpr.eqns if eqn.primitive.name == "cond"]


def _branch(cond_eqn, which: str):
    """The jaxpr of a cond equation's then or else branch (lax.cond lists else first)."""
    return cond_eqn.params["branches"][1 if which == "then" else 0].jaxpr


def test_branch_only_nodes_run_inside_the_cond() -> None:
    c, x = pt.dscalar("c"), pt.dvector("x")
    both = (x * 3.0).sum()  # needed by both branches: computed once, outside
    out = ifelse(c > 0, pt.exp(x).sum() + both, pt.log(x).sum() * both)
    fn = jax_function([out], [c, x])
    jaxpr = jax.make_jaxpr(fn)(1.0, np.array([1.0, 2.0])).jaxpr
    top = _primitives(jaxpr)
    assert "exp" not in top and "log" not in top
    assert "mul" in top and "reduce_sum" in top  # the shared term
    (cond,) = _conds(jaxpr)
    assert "exp" in _primitives(_branch(cond, "then")) and "log" not in _primitives(_branch(cond, "then"))
    assert "log" in _primitives(_branch(cond, "else")) and "exp" not in _primitives(_branch(cond, "else"))
    for cv in (1.0, -1.0):
        _values([c, x], out, cv, np.array([1.0, 2.0]))


def test_untaken_branch_is_not_evaluated() -> None:
    ran: list[str] = []

    def counted(name):
        def fn(v):
            jax.debug.callback(lambda: ran.append(name))
            return jnp.sqrt(v)

        fn.__name__ = name
        return wrap_jax(fn)

    then_op, else_op = counted("then"), counted("else")
    c, x = pt.dscalar("c"), pt.dvector("x")
    out = ifelse(c > 0, then_op(x), else_op(-x))
    f = arignote.function([c, x], out, mode="JAX")
    np.testing.assert_allclose(f(1.0, np.array([4.0, 9.0])), [2.0, 3.0])
    jax.effects_barrier()
    assert ran == ["then"]
    ran.clear()
    # the then branch would give NaN here (sqrt of negatives); it is not computed
    np.testing.assert_allclose(f(-1.0, np.array([-4.0, -9.0])), [2.0, 3.0])
    jax.effects_barrier()
    assert ran == ["else"]


def test_nested_ifelse() -> None:
    a, b, x = pt.dscalar("a"), pt.dscalar("b"), pt.dvector("x")
    inner = ifelse(b > 0, pt.exp(x), pt.sin(x))
    out = ifelse(a > 0, inner * 2.0, pt.cos(x))
    jaxpr = jax.make_jaxpr(jax_function([out], [a, b, x]))(1.0, 1.0, np.ones(3)).jaxpr
    (outer,) = _conds(jaxpr)
    assert not {"exp", "sin", "cos"} & set(_primitives(jaxpr))
    assert _primitives(_branch(outer, "else")) == ["cos"]
    then = _branch(outer, "then")
    (nested,) = _conds(then)  # the inner ifelse runs only where the outer takes its then branch
    assert "exp" in _primitives(_branch(nested, "then")) and "sin" in _primitives(_branch(nested, "else"))
    xv = np.array([0.1, 0.5, 2.0])
    results = {(av, bv): _values([a, b, x], out, av, bv, xv)[0] for av in (1.0, -1.0) for bv in (1.0, -1.0)}
    np.testing.assert_allclose(results[1.0, 1.0], 2 * np.exp(xv))
    np.testing.assert_allclose(results[1.0, -1.0], 2 * np.sin(xv))
    np.testing.assert_allclose(results[-1.0, 1.0], np.cos(xv))


def test_value_used_by_the_rest_of_the_graph_stays_outside() -> None:
    c, x = pt.dscalar("c"), pt.dvector("x")
    e = pt.exp(x)
    out = ifelse(c > 0, e.sum(), pt.tanh(x).sum())
    jaxpr = jax.make_jaxpr(jax_function([out, e], [c, x]))(1.0, np.ones(2)).jaxpr
    assert "exp" in _primitives(jaxpr) and "tanh" not in _primitives(jaxpr)
    for cv in (1.0, 0.0):
        _values([c, x], [out, e], cv, np.array([0.3, -0.2]))


def test_multi_output_ifelse() -> None:
    c, x, y = pt.dscalar("c"), pt.dvector("x"), pt.dmatrix("y")
    outs = ifelse(c > 0, [pt.exp(x), y.sum(axis=0)], [x * 0.5, pt.tanh(y).max(axis=1)])
    jaxpr = jax.make_jaxpr(jax_function(outs, [c, x, y]))(1.0, np.ones(3), np.ones((3, 3))).jaxpr
    assert not {"exp", "tanh"} & set(_primitives(jaxpr))
    (cond,) = _conds(jaxpr)
    assert len(cond.outvars) == 2
    xv, yv = np.array([0.1, 0.2, 0.3]), np.arange(9.0).reshape(3, 3) / 9
    for cv in (2.0, 0.0):
        _values([c, x, y], outs, cv, xv, yv)


def test_ifelse_under_grad() -> None:
    c, x = pt.dscalar("c"), pt.dvector("x")
    cost = ifelse(c > 0, pt.exp(x).sum(), (pt.log(x) ** 2).sum())
    g = arignote.grad(cost, x)
    # the gradient picks the output gradient with ifelse nodes (zeros for the branch not
    # taken) and pulls it back through both branches' nodes, outside: that pullback needs
    # exp(x) and log(x), so they are computed once, outside, for the cost too
    jaxpr = jax.make_jaxpr(jax_function([cost, g], [c, x]))(1.0, np.ones(2)).jaxpr
    assert _conds(jaxpr)
    # without the gradient, the cost alone stays lazy
    jaxpr = jax.make_jaxpr(jax_function([cost], [c, x]))(1.0, np.ones(2)).jaxpr
    assert not {"exp", "log"} & set(_primitives(jaxpr))
    xv = np.array([0.5, 2.0])
    value, grad = _values([c, x], [cost, g], 1.0, xv)
    np.testing.assert_allclose(grad, np.exp(xv))
    value, grad = _values([c, x], [cost, g], -1.0, xv)
    np.testing.assert_allclose(grad, 2 * np.log(xv) / xv)


def test_shared_variable_update_in_a_branch() -> None:
    c = pt.dscalar("c")
    w = arignote.shared(np.array([1.0, 2.0]), name="w")
    step = ifelse(c > 0, w * 2.0, w - 1.0)
    f = arignote.function([c], step, updates={w: step}, mode="JAX")
    np.testing.assert_allclose(f(1.0), [2.0, 4.0])
    np.testing.assert_allclose(f(-1.0), [1.0, 3.0])
    np.testing.assert_allclose(w.get_value(), [1.0, 3.0])


def test_constant_condition_traces_one_branch() -> None:
    x = pt.dvector("x")
    out = ifelse(pt.constant(np.int8(1)), pt.exp(x), pt.concatenate([x, x]))
    fn = jax_function([out], [x])
    jaxpr = jax.make_jaxpr(fn)(np.ones(2)).jaxpr
    assert "exp" in _primitives(jaxpr) and "concatenate" not in _primitives(jaxpr) and not _conds(jaxpr)
    np.testing.assert_allclose(fn(np.array([0.0, 1.0]))[0], np.exp([0.0, 1.0]))


def test_branches_of_different_shapes_are_named() -> None:
    c, x = pt.dscalar("c"), pt.dvector("x")
    out = ifelse(c > 0, pt.exp(x), pt.concatenate([x, x]))
    f = arignote.function([c, x], out, mode="JAX")
    with pytest.raises(JAXNodeError, match=r"output 0 has shape \(2,\) in the then branch and \(4,\)"):
        f(1.0, np.ones(2))


def test_branch_locations() -> None:
    c, x = pt.dscalar("c"), pt.dvector("x")
    e, s, both = pt.exp(x), pt.sin(x), x * 2.0
    then = e + both
    out = ifelse(c > 0, then, s + both)
    fg = arignote.graph.fg.FunctionGraph([c, x], [out], clone=False)
    where = branch_locations(fg.toposort(), fg.outputs)
    node = out.owner
    assert where[e.owner] == ((node, 0),) and where[then.owner] == ((node, 0),)
    assert where[s.owner] == ((node, 1),)
    assert where[both.owner] == () and where[node] == () and where[node.inputs[0].owner] == ()
    assert branch_locations([e.owner], [e]) == {}
