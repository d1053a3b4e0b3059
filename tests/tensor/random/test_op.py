"""RandomVariable: node building, errors, copy-on-draw, the in-place rule, shapes,
gradients, batching, printing, and the default_rng Op."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.compile.sharedvalue  # read as an attribute below
import arignote.tensor as pt
from arignote.compile.io import In
from arignote.gradient import DisconnectedInputError, Rop, grad, jacobian
from arignote.graph.basic import Variable
from arignote.graph.replace import batch_graph
from arignote.printing import debugprint
from arignote.tensor.random.basic import NormalRV
from arignote.tensor.random.op import RandomVariable, default_rng, parse_signature
from arignote.tensor.random.type import random_generator_type
from arignote.tensor.shape import shape_tuple
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import NoneConst
from tests.modes import fast_run_mode


def shared_rng(seed=0, name=None):
    return arignote.shared(np.random.default_rng(seed), name=name)


class ZipfRV(RandomVariable):
    """A user-defined random variable: the Generator method of the same name draws."""

    name = "zipf"
    signature = "()->()"
    dtype = "int64"


zipf = ZipfRV()


# --- the Op ----------------------------------------------------------------------------------


def test_parse_signature():
    assert parse_signature("(),()->()") == ([(), ()], ())
    assert parse_signature("(n),(n,n)->(n)") == ([("n",), ("n", "n")], ("n",))
    assert parse_signature("->(3)") == ([], ("3",))
    for bad in ("(n)(n)->(n)", "(n)->(n),(m)", "(n)", "(n->(n)", 3):
        with pytest.raises(ValueError, match="signature"):
            parse_signature(bad)


def test_op_props_and_construction():
    assert NormalRV() == pt.random.normal and hash(NormalRV()) == hash(pt.random.normal)
    assert NormalRV(dtype="float32") != pt.random.normal
    assert str(pt.random.normal) == 'normal_rv{"(),()->()"}'
    assert str(NormalRV(inplace=True)) == 'normal_rv{"(),()->()", inplace}'
    assert NormalRV(inplace=True).destroy_map == {0: [0]}
    assert pt.random.dirichlet.ndims_params == (1,) and pt.random.dirichlet.ndim_supp == 1
    legacy = ZipfRV(ndim_supp=0, ndims_params=[0], signature=None)
    assert legacy.ndims_params == (0,) and legacy.ndim_supp == 0
    with pytest.raises(TypeError, match="needs a name"):
        RandomVariable(signature="()->()")
    with pytest.raises(ValueError, match="give a signature"):
        RandomVariable(name="thing")
    with pytest.raises(ValueError, match="method must be"):
        pt.random.multivariate_normal(np.zeros(2), np.eye(2), method="qr")


def test_node_structure():
    rng = shared_rng()
    x = pt.random.normal(1.0, 2.0, size=(2, 3), rng=rng)
    node = x.owner
    assert node.op.default_output == 1 and node.outputs[1] is x
    assert node.inputs[0] is rng and node.inputs[1].data.tolist() == [2, 3]
    assert node.outputs[0].type == random_generator_type
    # the parameters are padded to the batch dimensions explicitly
    assert [p.type.ndim for p in node.inputs[2:]] == [2, 2]
    assert node.op.update(node) == {rng: node.outputs[0]}
    assert node.op.rng_param(node) is rng and node.op.size_param(node) is node.inputs[1]
    assert node.op.dist_params(node) == list(node.inputs[2:]) and node.op.batch_ndim(node) == 2
    assert pt.random.normal(size=None, rng=rng).owner.inputs[1] is NoneConst


def test_return_next_rng_and_name():
    rng = shared_rng()
    next_rng, x = pt.random.normal(rng=rng, return_next_rng=True, name="x")
    assert x.name == "x" and next_rng is x.owner.outputs[0]
    assert isinstance(next_rng, Variable) and next_rng.type == random_generator_type


def test_user_defined_random_variable():
    rng = shared_rng(5)
    x = zipf(2.0, size=4, rng=rng)
    assert x.dtype == "int64" and x.type.shape == (4,)
    np.testing.assert_array_equal(x.eval(), np.random.default_rng(5).zipf(2.0, size=4))


def test_no_rng_means_a_fresh_unseeded_generator():
    x = pt.random.normal(size=3)
    rng = x.owner.inputs[0]
    assert isinstance(rng, arignote.compile.sharedvalue.SharedVariable)
    assert pt.random.normal().owner.inputs[0] is not rng  # each draw its own
    f = arignote.function([], x)
    np.testing.assert_array_equal(f(), f())  # no update: the same draws every call


# --- build-time errors -----------------------------------------------------------------------


def test_rng_must_be_a_generator_variable():
    with pytest.raises(
        TypeError, match=r"rng must be a random generator variable .*RandomGeneratorType.*got v of Type"
    ):
        pt.random.normal(rng=pt.dvector("v"))
    with pytest.raises(TypeError, match="not a numpy Generator; wrap it"):
        pt.random.normal(rng=np.random.default_rng())
    with pytest.raises(TypeError, match="rng must be a random generator variable"):
        pt.random.normal(rng=3)


@pytest.mark.parametrize(
    "size, error, match",
    [
        (2.5, TypeError, "a float"),
        ((2.0, 3), TypeError, "entry 0 is float"),
        (True, TypeError, "a bool"),
        ("3", TypeError, "a str"),
        ((2, -1), ValueError, "negative"),
        (np.array([2.0]), TypeError, "dtype float64"),
        (np.ones((2, 2), dtype=int), TypeError, "2 dimensions"),
        (pt.lvector("s"), ValueError, "no static length"),
        (pt.dvector("s"), TypeError, "lengths are integers"),
        (pt.lmatrix("s"), TypeError, "a vector is needed"),
        ((pt.dscalar("a"), 2), TypeError, "an integer scalar is needed"),
    ],
)
def test_bad_size(size, error, match):
    with pytest.raises(error, match=match):
        pt.random.normal(size=size, rng=shared_rng())


def test_size_against_parameter_batch_shapes():
    rng = shared_rng()
    with pytest.raises(
        ValueError,
        match=r"size has 1 entries, fewer than the 2 batch dimension\(s\) of parameter 1 \(scale\)",
    ):
        pt.random.normal(0.0, np.ones((2, 3)), size=(3,), rng=rng)
    with pytest.raises(
        ValueError, match=r"size \(2, 4\) does not fit parameter 0 \(loc\) of batch shape \(3,\)"
    ):
        pt.random.normal(np.zeros(3), size=(2, 4), rng=rng)
    with pytest.raises(ValueError, match="batch shapes do not broadcast"):
        pt.random.normal(np.zeros(3), np.ones(2), rng=rng)
    with pytest.raises(ValueError, match="size .* does not fit parameter 0 \\(mean\\)"):
        pt.random.multivariate_normal(np.zeros((4, 2)), np.eye(2), size=(3,), rng=rng)
    # a symbolic length takes the parameter's static length (a valid call has it)
    n = pt.lscalar("n")
    assert pt.random.normal(np.zeros(3), size=(2, n), rng=rng).type.shape == (2, 3)


# --- what a call does to the generator ---------------------------------------------------------


def test_compiled_functions_draw_from_a_copy():
    rng = shared_rng(11)
    before = rng.get_value()
    x = pt.random.normal(size=4, rng=rng)
    f = arignote.function([], x)
    first = f()
    np.testing.assert_array_equal(f(), first)
    assert random_generator_type.values_eq(rng.get_value(borrow=True), before)
    np.testing.assert_array_equal(first, np.random.default_rng(11).normal(size=4))


def test_explicit_generator_input_is_not_mutated():
    r = pt.random.rng("r")
    next_r, x = r.normal(size=2)
    f = arignote.function([r], [next_r, x])
    g = np.random.default_rng(3)
    state = g.bit_generator.state
    g2, v1 = f(g)
    assert g.bit_generator.state == state and g2 is not g
    _, v2 = f(g2)
    ref = np.random.default_rng(3)
    np.testing.assert_array_equal(v1, ref.normal(size=2))
    np.testing.assert_array_equal(v2, ref.normal(size=2))
    # an input with an update is drawn from in place, on a copy of the caller's value
    # unless it is declared mutable (the default of In with an update, as in PyTensor)
    h = arignote.function([In(r, update=next_r, mutable=False)], x, mode=fast_run_mode())
    assert _inplace_flags(h) == [True]
    np.testing.assert_array_equal(h(g), v1)
    assert g.bit_generator.state == state


def _inplace_flags(f):
    return [n.op.inplace for n in f.maker.fgraph.toposort() if isinstance(n.op, RandomVariable)]


def test_update_moves_the_generator_on_in_place():
    rng = shared_rng(7)
    x = pt.random.uniform(size=3, rng=rng)
    f = arignote.function([], x, updates={rng: x.owner.outputs[0]}, mode=fast_run_mode())
    assert _inplace_flags(f) == [True]
    ref = np.random.default_rng(7)
    for _ in range(3):
        np.testing.assert_array_equal(f(), ref.uniform(size=3))
    assert random_generator_type.values_eq(rng.get_value(borrow=True), ref)
    assert _inplace_flags(arignote.function([], x, mode=fast_run_mode())) == [False]  # no update: copy


def test_in_place_rule_leaves_shared_generators_alone():
    rng = shared_rng(1)
    next_rng, x = pt.random.normal(rng=rng, return_next_rng=True)
    y = pt.random.uniform(rng=rng)  # a second reader of rng
    f = arignote.function([], [x, y], updates={rng: next_rng}, mode=fast_run_mode())
    assert _inplace_flags(f) == [False, False]
    x0, y0 = f()
    ref = np.random.default_rng(1)
    assert x0 == ref.normal() and y0 == np.random.default_rng(1).uniform()
    g = arignote.function(
        [], [x, rng], updates={rng: next_rng}, mode=fast_run_mode()
    )  # rng is also an output
    assert _inplace_flags(g) == [False]
    h = arignote.function(
        [], [x, next_rng], updates={rng: next_rng}, mode=fast_run_mode()
    )  # so is its next state
    assert _inplace_flags(h) == [False]
    _, returned = h()
    state = returned.bit_generator.state
    h()
    assert returned.bit_generator.state == state  # what the caller got does not move on


def test_chained_draws():
    rng = shared_rng(2)
    r1, a = pt.random.normal(size=2, rng=rng, return_next_rng=True)
    r2, b = pt.random.poisson(3.0, size=2, rng=r1, return_next_rng=True)
    f = arignote.function([], [a, b], updates={rng: r2}, mode=fast_run_mode())
    assert _inplace_flags(f) == [False, True]
    ref = np.random.default_rng(2)
    for _ in range(2):
        got_a, got_b = f()
        np.testing.assert_array_equal(got_a, ref.normal(size=2))
        np.testing.assert_array_equal(got_b, ref.poisson(3.0, size=2))


def test_default_update():
    rng = shared_rng(4)
    next_rng, x = pt.random.normal(rng=rng, return_next_rng=True)
    rng.default_update = next_rng
    f = arignote.function([], x)
    ref = np.random.default_rng(4)
    assert f() == ref.normal() and f() == ref.normal()
    frozen = arignote.function([], x, no_default_updates=True)
    assert frozen() == frozen()


# --- shapes ----------------------------------------------------------------------------------


def check_infer_shape(out, givens):
    """The draws' inferred shape (from symbolic input shapes) equals the computed one."""
    node = out.owner
    shapes = [shape_tuple(i) if isinstance(i.type, TensorType) else () for i in node.inputs]
    rng_shape, inferred = node.op.infer_shape(None, node, shapes)
    assert rng_shape is None
    symbolic = [s for s in inferred if isinstance(s, Variable)]
    fn = arignote.function(list(givens), [out, *symbolic], on_unused_input="ignore")
    value, *lengths = fn(*givens.values())
    it = iter(lengths)
    got = tuple(int(s) if not isinstance(s, Variable) else int(next(it)) for s in inferred)
    assert got == value.shape


def test_infer_shape():
    rng = shared_rng()
    m, s, a = pt.dvector("m"), pt.dmatrix("s"), pt.dvector("a")
    n, k = pt.lscalar("n"), pt.lscalar("k")
    cases = [
        (pt.random.normal(m, s, rng=rng), {m: np.zeros(3), s: np.ones((2, 3))}),
        (pt.random.normal(m, s, rng=rng), {m: np.zeros(3), s: np.ones((2, 1))}),
        (pt.random.normal(m, s, rng=rng), {m: np.zeros(1), s: np.ones((2, 4))}),
        (pt.random.normal(m, s, rng=rng), {m: np.zeros(0), s: np.ones((2, 1))}),
        (pt.random.normal(m, 1.0, size=(n, 3), rng=rng), {m: np.zeros(3), n: 4}),
        (pt.random.normal(size=pt.specify_shape(pt.lvector("z"), (2,)), rng=rng), {"z": np.array([2, 5])}),
        (pt.random.multivariate_normal(s, pt.dmatrix("c"), rng=rng), {s: np.zeros((4, 2)), "c": np.eye(2)}),
        (
            pt.random.multivariate_normal(m, pt.dmatrix("c"), size=(5, n), rng=rng),
            {m: np.zeros(2), "c": np.eye(2), n: 3},
        ),
        (pt.random.dirichlet(a, size=(n,), rng=rng), {a: np.ones(3), n: 2}),
        (pt.random.categorical(s, rng=rng), {s: np.full((3, 2), 0.5)}),
        (pt.random.multinomial(n, a, size=(2,), rng=rng), {a: np.ones(3) / 3, n: 5}),
        (pt.random.choice(a, size=(n, 2), replace=False, rng=rng), {a: np.arange(10.0), n: 2}),
        (pt.random.choice(a, size=(n, 2), rng=rng), {a: np.arange(10.0), n: 2}),
        (
            pt.random.choice(s, size=(n,), p=pt.dvector("p"), rng=rng),
            {s: np.ones((4, 3)), "p": np.ones(4) / 4, n: 2},
        ),
        (pt.random.permutation(k, rng=rng), {k: 6}),
        (pt.random.permutation(s, size=(n,), rng=rng), {s: np.ones((3, 2)), n: 2}),
    ]
    for out, givens in cases:
        givens = {(out_input(out, g) if isinstance(g, str) else g): v for g, v in givens.items()}
        check_infer_shape(out, givens)


def out_input(out, name):
    from arignote.graph.traversal import graph_inputs

    (var,) = [v for v in graph_inputs([out]) if v.name == name]
    return var


# --- gradients -------------------------------------------------------------------------------


def test_draws_are_disconnected_from_their_parameters():
    mu, sigma = pt.dscalar("mu"), pt.dscalar("sigma")
    x = pt.random.normal(mu, sigma, size=3, rng=shared_rng())
    node = x.owner
    assert node.op.connection_pattern(node) == [[False, False]] * 4
    with pytest.raises(DisconnectedInputError):
        grad(x.sum(), mu)
    g_mu, g_sigma = grad(x.sum(), [mu, sigma], disconnected_inputs="ignore")
    assert float(g_mu.eval({mu: 0.0})) == 0.0 and float(g_sigma.eval({sigma: 1.0})) == 0.0
    with pytest.raises(DisconnectedInputError):
        Rop(x, mu, pt.dscalar("v"))


def test_draws_as_constants_in_a_differentiable_graph():
    rng = shared_rng(9)
    w = pt.dvector("w")
    z = pt.random.normal(size=3, rng=rng)
    f = arignote.function([w], [grad((w * z).sum(), w), z])
    g, draws = f(np.ones(3))
    np.testing.assert_array_equal(g, draws)
    np.testing.assert_array_equal(g, np.random.default_rng(9).normal(size=3))
    J = jacobian(w * z, w)
    np.testing.assert_array_equal(
        arignote.function([w], J, on_unused_input="ignore")(np.ones(3)), np.diag(draws)
    )


# --- batching --------------------------------------------------------------------------------


def test_vectorize_graph_batches_parameters():
    rng = shared_rng()
    x, xs = pt.dscalar("x"), pt.dvector("xs")
    centres = np.array([0.0, 100.0, 1000.0])
    y = pt.random.normal(x, 1e-3, size=(2,), rng=rng)
    (yb,) = batch_graph([y], {x: xs})
    assert yb.type.ndim == 2
    np.testing.assert_allclose(yb.eval({xs: centres}), np.repeat(centres[:, None], 2, axis=1), atol=0.05)
    y2 = pt.random.normal(x, np.full(2, 1e-3), rng=rng)  # an unbatched parameter with a batch dimension
    (yb2,) = batch_graph([y2], {x: xs})
    assert yb2.type.shape == (None, 2)
    np.testing.assert_allclose(yb2.eval({xs: centres}), np.repeat(centres[:, None], 2, axis=1), atol=0.05)
    m, ms = pt.dvector("m"), pt.dmatrix("ms")
    z = pt.random.multivariate_normal(m, 1e-6 * np.eye(2), rng=rng)
    (zb,) = batch_graph([z], {m: ms})
    np.testing.assert_allclose(zb.eval({ms: np.array([[1.0, 2.0], [3.0, 4.0]])}), [[1, 2], [3, 4]], atol=0.05)


# --- printing and default_rng ---------------------------------------------------------------


def test_dprint_is_readable():
    rng = shared_rng(name="rng")
    x = pt.random.normal(0.0, 1.0, size=(2,), rng=rng)
    text = debugprint(x, file="str")
    assert 'normal_rv{"(),()->()"}.1' in text and "rng" in text
    f = arignote.function([], x, updates={rng: x.owner.outputs[0]}, mode=fast_run_mode())
    assert 'normal_rv{"(),()->()", inplace}' in debugprint(f, file="str")
    unnamed = shared_rng()
    assert str(unnamed).startswith("RNG(Generator(PCG64)")


def test_default_rng_op():
    g = default_rng(3)
    assert g.type == random_generator_type
    x = pt.random.normal(size=2, rng=g)
    np.testing.assert_array_equal(x.eval(), np.random.default_rng(3).normal(size=2))
    seed = pt.lscalar("seed")
    f = arignote.function([seed], pt.random.uniform(rng=default_rng(seed)))
    assert f(5) == np.random.default_rng(5).uniform() and f(5) == f(5)
    fresh = arignote.function([], pt.random.uniform(size=4, rng=default_rng()))
    assert not np.array_equal(fresh(), fresh())  # no seed: new entropy each call (never folded)
    with pytest.raises(TypeError, match="integer"):
        default_rng(1.5)
