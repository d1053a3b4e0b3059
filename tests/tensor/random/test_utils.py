"""RandomStream and the size / parameter helpers."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.tensor.random.utils import (
    RandomStream,
    broadcast_params,
    copy_generator,
    explicit_expand_dims,
    normalize_size_param,
    params_broadcast_shapes,
    static_size_entries,
)
from arignote.tensor.type_other import NoneConst


def child_rngs(seed, n):
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


# --- RandomStream ----------------------------------------------------------------------------


def test_stream_draws_follow_spawned_seeds():
    srng = RandomStream(seed=42)
    x = srng.normal(size=3)
    k = srng.integers(0, 10, size=2)
    f = arignote.function([], [x, k])
    gx, gk = child_rngs(42, 2)
    for _ in range(3):  # default updates: each call draws anew, as NumPy would next
        xs, ks = f()
        np.testing.assert_array_equal(xs, gx.normal(size=3))
        np.testing.assert_array_equal(ks, gk.integers(0, 10, size=2))


def test_stream_seed_resets_all_generators():
    srng = RandomStream(seed=1)
    x = srng.uniform(size=2)
    y = srng.poisson(3.0, size=2)
    f = arignote.function([], [x, y])
    first = f()
    f()
    srng.seed(1)
    np.testing.assert_array_equal(f()[0], first[0])
    srng.seed(99)
    gx, gy = child_rngs(99, 2)
    xs, ys = f()
    np.testing.assert_array_equal(xs, gx.uniform(size=2))
    np.testing.assert_array_equal(ys, gy.poisson(3.0, size=2))
    srng.seed()  # back to the stream's own seed
    np.testing.assert_array_equal(f()[1], first[1])


def test_stream_gen_and_updates():
    srng = RandomStream(seed=5)
    x = srng.gen(pt.random.normal, 0.0, 1.0, size=2)
    ((rng, next_rng),) = srng.updates()
    assert rng.default_update is next_rng and next_rng is x.owner.outputs[0]
    assert x.owner.inputs[0] is rng
    np.testing.assert_array_equal(x.eval(), child_rngs(5, 1)[0].normal(size=2))
    # functions that are not wrappers of one node (chisquare) update correctly too
    c = srng.chisquare(3.0, size=2)
    f = arignote.function([], c)
    g = child_rngs(5, 2)[1]
    np.testing.assert_array_equal(f(), g.chisquare(3.0, size=2))
    np.testing.assert_array_equal(f(), g.chisquare(3.0, size=2))


def test_stream_choice_and_permutation():
    srng = RandomStream(seed=8)
    c = srng.choice(10, size=(3,), replace=False)
    p = srng.permutation(5)
    f = arignote.function([], [c, p])
    gc, gp = child_rngs(8, 2)
    cs, ps = f()
    np.testing.assert_array_equal(cs, gc.choice(10, size=3, replace=False))
    np.testing.assert_array_equal(ps, gp.permutation(5))


def test_stream_errors():
    srng = RandomStream(seed=0)
    with pytest.raises(AttributeError, match="no distribution"):
        srng.no_such_distribution
    with pytest.raises(ValueError, match="rng="):
        srng.normal(rng=arignote.shared(np.random.default_rng()))
    with pytest.raises(ValueError, match="return_next_rng"):
        srng.normal(return_next_rng=True)


def test_stream_custom_namespace_and_constructor():
    import arignote.tensor.random.basic as ns

    made = []

    def ctor(seed_seq):
        made.append(seed_seq)
        return np.random.Generator(np.random.Philox(seed_seq))

    srng = RandomStream(seed=3, namespace=ns, rng_ctor=ctor)
    x = srng.normal()
    assert len(made) == 1 and isinstance(x.owner.inputs[0].get_value().bit_generator, np.random.Philox)


# --- helpers ---------------------------------------------------------------------------------


def test_normalize_size_param():
    assert normalize_size_param(None) is NoneConst
    assert normalize_size_param(3).data.tolist() == [3]
    assert normalize_size_param(np.int32(2)).data.dtype == np.int64
    assert normalize_size_param(()).type.shape == (0,)
    n = pt.iscalar("n")
    v = normalize_size_param((n, 2))
    assert v.type.shape == (2,) and v.type.dtype == "int64"
    assert static_size_entries(v) == [None, 2]
    one = normalize_size_param(n)
    assert one.type.shape == (1,) and one.type.dtype == "int64"
    fixed = normalize_size_param(pt.specify_shape(pt.lvector("s"), (3,)))
    assert fixed.type.shape == (3,) and static_size_entries(fixed) == [None] * 3


def test_explicit_expand_dims():
    a, b = pt.dvector("a"), pt.dmatrix("b")
    pa, pb = explicit_expand_dims([a, b], [0, 2])
    assert pa is a and pb.type.ndim == 3  # b gets the batch dimension of a
    pa, pb = explicit_expand_dims([a, b], [0, 2], size_length=3)
    assert pa.type.ndim == 3 and pb.type.ndim == 5


def test_broadcast_helpers():
    assert params_broadcast_shapes([(3,), (2, 1, 3, 3)], [1, 2]) == [(2, 1, 3), (2, 1, 3, 3)]
    assert params_broadcast_shapes([(4,), ()], [0, 0]) == [(4,), (4,)]
    mean, cov = broadcast_params([np.zeros(2), np.stack([np.eye(2)] * 3)], [1, 2])
    assert mean.shape == (3, 2) and cov.shape == (3, 2, 2)
    with pytest.raises(ValueError):
        params_broadcast_shapes([(3,), (2,)], [0, 0])


def test_copy_generator_is_independent():
    g = np.random.default_rng(12)
    g.normal()
    c = copy_generator(g)
    assert c.bit_generator is not g.bit_generator
    assert c.normal() == g.normal()
    c.normal()
    assert c.bit_generator.state != g.bit_generator.state
    # the seed sequence is copied too: spawning from the copy leaves the original alone
    c.spawn(2)
    assert g.bit_generator.seed_seq.n_children_spawned == 0


def test_compute_batch_shape_and_supp_shape_from_ref_param_shape():
    import arignote.tensor as _pt
    from arignote.tensor.random.utils import compute_batch_shape, supp_shape_from_ref_param_shape

    mu, cov = _pt.dtensor3("mu"), _pt.dmatrix("cov")
    vals = {mu: np.zeros((2, 4, 3)), cov: np.eye(3)}
    shape = compute_batch_shape([mu, cov], [1, 2])
    assert tuple(shape.eval({mu: vals[mu]})) == (2, 4)
    a, b = _pt.tensor("a", dtype="float64", shape=(None, 1)), _pt.dvector("b")  # a static 1 broadcasts
    got = compute_batch_shape([a, b], [0, 0]).eval({a: np.zeros((5, 1)), b: np.zeros(3)})
    assert tuple(got) == np.broadcast_shapes((5, 1), (3,))
    with pytest.raises(ValueError, match="core dims"):
        compute_batch_shape([b], [2])
    with pytest.raises(ValueError, match="2 parameters but 1"):
        compute_batch_shape([a, b], [0])

    supp = supp_shape_from_ref_param_shape(ndim_supp=1, dist_params=[mu, cov], ref_param_idx=0)
    assert tuple(supp.eval({mu: vals[mu]})) == (3,)
    assert supp_shape_from_ref_param_shape(
        ndim_supp=2, dist_params=[mu, cov], param_shapes=[(2, 4, 3), (3, 3)], ref_param_idx=1
    ) == (3, 3)
    with pytest.raises(ValueError, match="greater than 0"):
        supp_shape_from_ref_param_shape(ndim_supp=0, dist_params=[mu], ref_param_idx=0)
    with pytest.raises(ValueError, match="fewer than"):
        supp_shape_from_ref_param_shape(ndim_supp=2, dist_params=[b], ref_param_idx=0)
