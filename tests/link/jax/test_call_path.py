"""What a call of a ``mode="JAX"`` function does around the compiled program: the generated
plain call (inputs checked as on any call, the general path taking over when the call is not
plain), the buffers of updated shared variables donated to the program (not when a failed
call would lose them), and fills of a
batch's shape staged in the program rather than embedded as constants."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.compile.mode import Mode, get_mode  # noqa: E402
from arignote.link.jax import JAXLinker  # noqa: E402
from arignote.link.jax.dispatch.graph import HOST_MAX_ELEMENTS  # noqa: E402
from arignote.tensor.raising import Assert  # noqa: E402

REFERENCE = Mode(linker="py", optimizer=None)
DEVICE = Mode(JAXLinker(device_outputs=True), get_mode("JAX").query, name="JAX")


def _logp_graph():
    mu, z = pt.dscalar("mu"), pt.dvector("z")
    logp = -0.5 * ((z - mu) ** 2).sum()
    return [mu, z], [logp, *arignote.grad(logp, [mu, z])]


def _check(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12)


def test_plain_call_is_generated_after_the_first_call_and_checks_inputs() -> None:
    ins, outs = _logp_graph()
    f = arignote.function(ins, outs, mode="JAX")
    ref = arignote.function(ins, outs, mode=REFERENCE)
    zs = np.linspace(-1.0, 1.0, 5)
    assert f._plain is None
    _check(f(0.5, zs), ref(0.5, zs))  # settles the compiled function
    _check(f(0.25, zs), ref(0.25, zs))
    assert f._plain is not None
    # values converted through the Types' filters, as on any call
    _check(f(1, [0.0, 1.0]), ref(1, [0.0, 1.0]))
    _check(f(np.float32(2.0), np.arange(3)), ref(2.0, np.arange(3.0)))
    # refused values: the error names the input, its Type and what arrived
    with pytest.raises(
        TypeError,
        match=r"input 1 \('z'\).*expected Type Vector\(float64.*ndarray of dtype float64 and shape \(2, 2\)",
    ):
        f(0.5, np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"input 0 \('mu'\).*Scalar\(float64"):
        f("a", zs)
    with pytest.raises(TypeError, match=r"input 1 \('z'\).*complex128"):
        f(0.5, zs + 1j)  # a cast that would lose the imaginary part
    # names, output subsets and wrong counts take the general path
    _check(f(mu=0.5, z=zs), ref(0.5, zs))
    _check(f(0.5, zs, output_subset=[2]), [ref(0.5, zs)[2]])
    with pytest.raises(TypeError, match="takes 2 input"):
        f(0.5, zs, zs)
    with pytest.raises(TypeError, match="missing input"):
        f(0.5)
    _check(f(0.5, zs), ref(0.5, zs))


def test_plain_call_single_output_and_device_outputs() -> None:
    ins, outs = _logp_graph()
    one = arignote.function(ins, outs[0], mode=DEVICE)
    zs = np.linspace(-1.0, 1.0, 4)
    for k in range(3):
        got = one(0.1 * k, zs)
        assert isinstance(got, jax.Array) and got.shape == ()
        np.testing.assert_allclose(float(got), -0.5 * ((zs - 0.1 * k) ** 2).sum())
    assert one._plain is not None


def test_plain_call_follows_trust_input_and_profile_changes() -> None:
    ins, outs = _logp_graph()
    f = arignote.function(ins, outs, mode="JAX")
    ref = arignote.function(ins, outs, mode=REFERENCE)
    zs = np.linspace(0.0, 2.0, 3)
    f(0.0, zs), f(0.0, zs)
    assert f._plain is not None
    with pytest.raises(TypeError, match="missing input"):  # not plain after all: the general path's
        f(0.0)
    f.trust_input = True
    assert f._plain is None  # made again for the new setting
    _check(f(np.array(0.5), zs), ref(0.5, zs))
    _check(f(np.array(0.5), zs), ref(0.5, zs))
    assert f._plain is not None
    profiled = arignote.function(ins, outs, mode="JAX", profile=True)
    for _ in range(3):  # a profiled call is recorded: the general path
        _check(profiled(0.5, zs), ref(0.5, zs))
    assert profiled._plain is None and profiled.profile is not None
    g = f.copy(share_memory=True)
    g(0.5, zs), g(0.5, zs)
    assert g._plain is not None
    _check(g(1.5, zs), ref(1.5, zs))


def test_plain_calls_from_threads() -> None:
    ins, outs = _logp_graph()
    f = arignote.function(ins, outs[0], mode="JAX")
    zs = np.linspace(-1.0, 1.0, 6)
    f(0.0, zs), f(0.0, zs)
    errors: list = []

    def work(k: int) -> None:
        try:
            for j in range(50):
                mu = 0.01 * (k * 50 + j)
                np.testing.assert_allclose(f(mu, zs), -0.5 * ((zs - mu) ** 2).sum(), rtol=1e-12)
        except Exception as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def _sgd_step():
    rng = np.random.default_rng(0)
    w = arignote.shared(rng.normal(size=(3, 2)), name="w")
    b = arignote.shared(np.zeros(2), name="b")
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    loss = ((pt.tanh(x @ w + b) - y) ** 2).mean()
    gw, gb = arignote.grad(loss, [w, b])
    return w, b, [x, y], loss, {w: w - 0.1 * gw, b: b - 0.1 * gb}


def test_updated_shared_buffers_are_donated() -> None:
    w, b, ins, loss, updates = _sgd_step()
    w0, b0 = w.get_value(), b.get_value()
    f = arignote.function(ins, loss, updates=updates, mode="JAX")
    read = arignote.function([], [w.sum(), b.sum()], mode="JAX")  # reads them, updates nothing
    rng = np.random.default_rng(1)
    xv, yv = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    # the same steps in NumPy
    w_np, b_np = w0.copy(), b0.copy()
    for step in range(4):
        before = w.get_value(borrow=True, return_internal_type=True)
        got = f(xv, yv)
        h = np.tanh(xv @ w_np + b_np)
        np.testing.assert_allclose(got, ((h - yv) ** 2).mean(), rtol=1e-12)
        d = 2 * (h - yv) / h.size * (1 - h**2)
        w_np, b_np = w_np - 0.1 * xv.T @ d, b_np - 0.1 * d.sum(axis=0)
        np.testing.assert_allclose(w.get_value(), w_np, rtol=1e-12)
        np.testing.assert_allclose(read(), [w_np.sum(), b_np.sum()], rtol=1e-12)
        if step:  # the buffer the previous step left went into this step's program
            assert isinstance(before, jax.Array) and before.is_deleted()
    runner = f.vm
    assert sorted(runner.donate_argnums) == sorted(runner.donations) and len(runner.donations) == 2
    # the compiled program writes each update over its shared variable's buffer
    hlo = runner._jit().lower(*runner._args()).as_text()
    assert hlo.count("tf.aliasing_output") == 2
    # a NumPy value set by the user is copied to the device, never overwritten
    mine = np.ones((3, 2))
    w.set_value(mine, borrow=True)
    f(xv, yv)
    np.testing.assert_array_equal(mine, np.ones((3, 2)))


def test_update_of_another_shape_is_not_donated_and_does_not_warn() -> None:
    q = arignote.shared(np.ones(2), name="q")
    p = arignote.shared(np.ones(2), name="p")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = arignote.function([], q.sum(), updates={q: pt.concatenate([q, q]), p: p * 2}, mode="JAX")
        assert [float(f()) for _ in range(3)] == [2.0, 4.0, 8.0]
    np.testing.assert_array_equal(p.get_value(), np.full(2, 8.0))
    p_index = [c is p.container for c in f.input_storage].index(True)
    assert list(f.vm.donations) == [p_index] and f.vm.donate_argnums == (p_index,)


def test_static_shared_counter_is_not_donated() -> None:
    """An integer shared variable that a shape needs becomes a static argument, which is
    never donated."""
    n = arignote.shared(np.int64(2), name="n")
    f = arignote.function([], pt.zeros(n), updates={n: n + 1}, mode="JAX")
    assert [f().shape for _ in range(3)] == [(2,), (3,), (4,)]
    assert int(n.get_value()) == 5
    runner = f.vm
    assert not set(runner.donate_argnums) & set(runner.static_argnums)


def test_large_fills_are_staged_not_embedded() -> None:
    """A gradient's fill of a batch's shape is computed in the program (a broadcast), not
    made on the host while tracing and embedded as a constant of that size."""
    x = pt.dmatrix("x")
    cost = (pt.tanh(x) * 3.0).mean()
    f = arignote.function([x], arignote.grad(cost, x), mode="JAX")
    xv = np.random.default_rng(2).normal(size=(200, 10))
    np.testing.assert_allclose(f(xv), 3.0 * (1 - np.tanh(xv) ** 2) / xv.size, rtol=1e-12)
    runner = f.vm
    consts = jax.make_jaxpr(runner.traced_function())(*runner._args()).consts
    assert all(np.size(c) <= HOST_MAX_ELEMENTS for c in consts), [np.shape(c) for c in consts]


def test_a_program_that_may_fail_donates_nothing() -> None:
    """A check that fails while the program runs fails the call: the shared values must
    be the ones from before it, so such a program gets no donated buffers."""
    p = arignote.shared(np.ones(3), name="p")
    x = pt.dscalar("x")
    f = arignote.function(
        [x], p.sum(), updates={p: p * Assert("x must be positive")(x, pt.gt(x, 0))}, mode="JAX"
    )
    assert [float(f(2.0)) for _ in range(2)] == [3.0, 6.0]
    assert f.vm.donate_argnums == () and not f.vm.donations
    with pytest.raises(Exception, match="x must be positive"):
        f(-1.0)
    np.testing.assert_array_equal(p.get_value(), np.full(3, 4.0))
    assert float(f(0.5)) == 12.0
    np.testing.assert_array_equal(p.get_value(), np.full(3, 2.0))


def test_device_arrays_of_the_inputs_type_pass_as_they_are(monkeypatch) -> None:
    # (on a GPU, going through the filter would copy the array to the host and back)
    import jax.numpy as jnp

    from arignote.tensor.type import TensorType

    filtered: list[str] = []
    original = TensorType.filter

    def spy(self, data, *args, **kwargs):
        filtered.append(type(data).__name__)
        return original(self, data, *args, **kwargs)

    x = pt.dvector("x")
    w = arignote.shared(np.zeros(3))
    monkeypatch.setattr(TensorType, "filter", spy)
    device = Mode(JAXLinker(device_outputs=True), get_mode("JAX").query)
    plain = arignote.function([x], pt.exp(x), mode=device)
    stateful = arignote.function([x], w.sum(), updates={w: w + x}, mode="JAX")
    value = jnp.array([0.0, 1.0, 2.0])
    out = plain(value)
    out = plain(out)  # a device output chained into the next call
    stateful(value)
    stateful(x=value)
    assert filtered == []
    np.testing.assert_allclose(out, np.exp(np.exp([0.0, 1.0, 2.0])))
    np.testing.assert_allclose(w.get_value(), [0.0, 2.0, 4.0])
    # another dtype, rank or static length goes through the filter as any value does
    np.testing.assert_allclose(plain(jnp.ones(3, dtype="float32")), np.full(3, np.e))
    assert filtered == ["ArrayImpl"]
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        plain(jnp.ones((2, 2)))
    y = pt.tensor("y", dtype="float64", shape=(2,))
    static = arignote.function([y], pt.exp(y), mode="JAX")
    static(jnp.ones(2))
    assert filtered == ["ArrayImpl", "ArrayImpl"]  # (the matrix above)
    with pytest.raises(TypeError, match="shape"):
        static(jnp.ones(3))
    # the other backends take NumPy values: a device array is converted
    np.testing.assert_allclose(arignote.function([x], pt.exp(x))(value), np.exp([0.0, 1.0, 2.0]))


def test_outputs_off_the_host_keep_the_plain_call_and_start_every_copy(monkeypatch) -> None:
    """Where outputs live on an accelerator (pretended here: on the CPU no copy is made), the
    plain call is generated as on the CPU, and it starts the copies of all outputs to the
    host before it waits for the first."""
    from arignote.link.jax import linker

    monkeypatch.setattr(linker, "_off_host", lambda value: True)
    started = []
    real = linker._starting_copies

    def spying(jitted, host_outputs):
        program = real(jitted, host_outputs)

        def run(*args):
            started.append(host_outputs)
            return program(*args)

        return run

    monkeypatch.setattr(linker, "_starting_copies", spying)
    ins, outs = _logp_graph()
    f = arignote.function(ins, outs, mode="JAX")
    ref = arignote.function(ins, outs, mode=REFERENCE)
    zs = np.linspace(-1.0, 1.0, 5)
    for mu in (0.5, 0.25, 1.0):
        _check(f(mu, zs), ref(mu, zs))
    assert f._plain is not None and f.vm._async_copies
    assert started == [(0, 1, 2), (0, 1, 2)]  # the calls after the first: all three outputs


def test_a_constant_read_by_several_nodes_is_held_once() -> None:
    """A regression's design matrix, a constant read by the forward product and by its
    gradient's, is one constant of the traced program (not one per node casting it), as in
    JAX's own gradient."""
    # (large enough that its transpose is not folded into a constant: VIEW_FOLD_LIMIT)
    x_val = np.random.default_rng(7).normal(size=(1000, 5))
    y_val = (np.arange(1000) % 2).astype("float64")
    w = pt.dvector("w")
    eta = pt.dot(pt.constant(x_val), w)
    logp = (y_val * eta - pt.softplus(eta)).sum()
    outs = [logp, arignote.grad(logp, w)]
    f = arignote.function([w], outs, mode="JAX")
    ref = arignote.function([w], outs, mode=REFERENCE)
    w_val = np.array([0.1, -0.2, 0.3, 0.0, 0.05])
    _check(f(w_val), ref(w_val))
    jaxpr = jax.make_jaxpr(f.vm.traced_function())(w_val)
    assert [v.aval.shape for v in jaxpr.jaxpr.constvars] == [(1000, 5), (1000,)], jaxpr
