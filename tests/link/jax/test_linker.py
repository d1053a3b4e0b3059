"""JAXLinker and ``mode="JAX"``: results equal the reference VM's, shared variables and
their updates across calls (kept on the device), NumPy or device outputs, static integer
arguments, clear errors for graphs JAX cannot trace, and the rewrites the mode leaves out."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.compile.mode import Mode, get_mode  # noqa: E402
from arignote.ifelse import ifelse  # noqa: E402
from arignote.link.jax import JAXLinker  # noqa: E402
from arignote.link.jax.dispatch import JAXNodeError  # noqa: E402
from arignote.link.jax.linker import JAX_EXCLUDED  # noqa: E402

REFERENCE = Mode(linker="py", optimizer=None)


def both(inputs, outputs, *values, **kwargs):
    """The results of the JAX mode and of the reference VM for the same graph."""
    f = arignote.function(inputs, outputs, mode="JAX", **kwargs)
    g = arignote.function(inputs, outputs, mode=REFERENCE, **kwargs)
    return f(*values), g(*values)


def assert_same(got, want, rtol=1e-7):
    got, want = (got, want) if isinstance(got, list) else ([got], [want])
    for a, b in zip(got, want):
        assert isinstance(a, np.ndarray | np.generic), type(a)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=rtol)


def test_import_arignote_does_not_import_jax() -> None:
    code = (
        "import sys, arignote, arignote.tensor, arignote.compile.mode as m\n"
        "assert 'jax' not in sys.modules\n"
        "m.get_mode('FAST_RUN')\n"
        "assert 'jax' not in sys.modules\n"
        "m.get_mode('JAX')\n"
        "assert 'jax' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_modes_and_linker_names() -> None:
    mode = get_mode("JAX")
    assert isinstance(mode.linker, JAXLinker) and mode.name == "JAX"
    for tag in JAX_EXCLUDED:
        assert tag in mode.query.exclude
    assert isinstance(Mode(linker="jax").linker, JAXLinker)
    assert Mode(linker="jax").linker == JAXLinker()


def test_values_dtypes_and_numpy_outputs() -> None:
    x, y = pt.dvector("x"), pt.fmatrix("y")
    i = pt.lvector("i")
    outs = [
        pt.exp(x) * 2 + pt.log1p(x),
        (y.T @ y).sum(axis=0),
        y + i[:, None],  # float32 + int64: float64, as NumPy (JAX alone says float32)
        pt.max(y, axis=1),
        pt.argmax(y, axis=0),
        (i // 2) % 3,
        x.mean() - y.std(),
    ]
    xv = np.linspace(0.1, 1.0, 3)
    yv = np.arange(9, dtype="float32").reshape(3, 3) / 7
    iv = np.array([1, -4, 7])
    got, want = both([x, y, i], outs, xv, yv, iv)
    assert_same(got, want, rtol=1e-6)


def test_device_outputs() -> None:
    x = pt.dvector("x")
    f = arignote.function([x], x * 2, mode=Mode(JAXLinker(device_outputs=True), get_mode("JAX").query))
    out = f(np.ones(3))
    assert isinstance(out, jax.Array)
    np.testing.assert_array_equal(np.asarray(out), 2 * np.ones(3))


def test_shared_updates_stay_on_the_device_across_calls() -> None:
    w = arignote.shared(np.zeros(3), name="w")
    x = pt.dvector("x")
    f = arignote.function([x], w.sum(), updates={w: w + x}, mode="JAX")
    assert f(np.ones(3)) == 0.0
    assert f(np.ones(3)) == 3.0
    stored = w.container.storage[0]
    assert isinstance(stored, jax.Array)  # not copied back to the host between calls
    value = w.get_value()
    assert isinstance(value, np.ndarray) and value.flags.writeable
    np.testing.assert_array_equal(value, [2.0, 2.0, 2.0])
    assert w.get_value(borrow=True, return_internal_type=True) is stored
    # another backend reads the same variable: it gets the host value
    g = arignote.function([], w * 10)
    np.testing.assert_array_equal(g(), [20.0, 20.0, 20.0])
    np.testing.assert_array_equal(f(np.ones(3)), 6.0)
    np.testing.assert_array_equal(w.get_value(), [3.0, 3.0, 3.0])
    w.set_value(np.full(3, 5.0))
    assert f(np.zeros(3)) == 15.0
    # pickling a shared variable that holds a device value stores the host value
    again = pickle.loads(pickle.dumps(w))
    np.testing.assert_array_equal(again.get_value(), [5.0, 5.0, 5.0])


def test_swapping_updates_and_outputs_read_in_place_on_the_cpu() -> None:
    a, b = arignote.shared(np.zeros(2), name="a"), arignote.shared(np.ones(2), name="b")
    x = pt.dvector("x")
    f = arignote.function([x], [a.sum() + x, b * x], updates={a: b, b: a + x}, mode="JAX")
    s, p = f(np.full(2, 2.0))
    np.testing.assert_array_equal(s, [2.0, 2.0])
    np.testing.assert_array_equal(p, [2.0, 2.0])
    np.testing.assert_array_equal(a.get_value(), [1.0, 1.0])
    np.testing.assert_array_equal(b.get_value(), [2.0, 2.0])
    f(np.zeros(2))
    np.testing.assert_array_equal(a.get_value(), [2.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [1.0, 1.0])
    # NumPy reads CPU buffers in place: no early copies to the host are started there
    assert f.vm._async_copies is (jax.devices()[0].platform != "cpu")
    assert not s.flags.writeable  # (a view of JAX's buffer: read-only)


def test_read_only_shared_value_is_copied_to_the_device_once() -> None:
    w = arignote.shared(np.arange(4.0), name="w")
    x = pt.dvector("x")
    f = arignote.function([x], x * w, mode="JAX")
    np.testing.assert_array_equal(f(np.ones(4)), np.arange(4.0))
    cached = f.vm._device_cache
    (entry,) = cached.values()
    f(np.ones(4))
    assert next(iter(cached.values()))[1] is entry[1]  # the same device array, reused
    w.set_value(np.ones(4))  # a new value is copied again
    np.testing.assert_array_equal(f(np.ones(4)), np.ones(4))


def test_static_integer_argument() -> None:
    n = pt.lscalar("n")
    x = pt.dvector("x")
    f = arignote.function([n, x], [pt.zeros(n) + x.sum(), pt.arange(n) * 2], mode="JAX")
    a, b = f(3, np.ones(2))
    np.testing.assert_array_equal(a, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(b, [0, 2, 4])
    a, b = f(5, np.ones(2))  # another value: another compilation
    assert a.shape == (5,) and b.dtype == np.int64


def test_arithmetic_on_a_static_argument_stays_static() -> None:
    """``i + 1`` of a static integer input is computed on the host while tracing: a slice
    bound made of it is static (this used to retrace forever)."""
    d, i = pt.dmatrix("d"), pt.lscalar("i")
    f = arignote.function([d, i], d[i:, : i + 1], mode="JAX")
    value = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(f(value, 1), value[1:, :2])
    np.testing.assert_array_equal(f(value, 2), value[2:, :3])


def test_a_length_static_arguments_cannot_fix_raises() -> None:
    """The length depends on a float input's values as well as on an integer input: making
    the integer static does not help, and the call raises (it used to retry forever)."""
    x, i = pt.dvector("x"), pt.lscalar("i")
    f = arignote.function([x, i], x[: pt.argmax(x) + i], mode="JAX")
    with pytest.raises(JAXNodeError, match="Subtensor"):
        f(np.array([1.0, 3.0, 2.0]), 1)


def test_an_empty_slice_of_a_concatenation_compiles() -> None:
    """``concatenate([x, y])[len(x):]`` with ``y`` empty: XLA's CPU compiler of jaxlib 0.10
    aborts the process on it, so an empty traced value is made afresh (graph.py)."""
    x, y = pt.dvector("x"), pt.dvector("y")
    f = arignote.function([x, y], pt.concatenate([x, y])[x.shape[0] :], mode="JAX")
    assert f(np.ones(3), np.zeros(0)).shape == (0,)
    np.testing.assert_array_equal(f(np.ones(3), np.array([5.0, 6.0])), [5.0, 6.0])


def test_a_node_error_is_also_the_standard_error_of_its_cause() -> None:
    """Shapes that do not fit raise a ValueError under every backend: under JAX a
    JAXNodeError naming the node, which is a ValueError too (JAX itself raises TypeError)."""
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    f = arignote.function([x, y], x * y, mode="JAX")
    with pytest.raises(ValueError, match="Mul") as info:
        f(np.ones((2, 3)), np.ones((3, 2)))
    assert isinstance(info.value, JAXNodeError) and info.value.node.op.__class__.__name__ == "Elemwise"
    with pytest.raises(ValueError):  # the reference's error class, for the same call
        arignote.function([x, y], x * y, mode="FAST_COMPILE")(np.ones((2, 3)), np.ones((3, 2)))


def test_untraceable_shape_names_the_node() -> None:
    x = pt.dvector("x")
    # the length comes from the values of a float vector: no integer input to make static
    f = arignote.function([x], pt.zeros(pt.cast(x.sum(), "int64")), mode="JAX")
    with pytest.raises(JAXNodeError, match="Alloc") as info:
        f(np.ones(3))
    assert "abstract values" in str(info.value)
    assert info.value.node.op.__class__.__name__ == "Alloc"


def test_missing_implementation_names_the_op() -> None:
    from arignote.graph.basic import Apply
    from arignote.graph.op import Op

    class Mystery(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0]

    x = pt.dvector("x")
    with pytest.raises(NotImplementedError, match="Mystery"):
        arignote.function([x], Mystery()(x), mode="JAX")


def test_rewrites_left_out_and_fast_run_graphs_still_run() -> None:
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    z = pt.dmatrix("z")
    out = pt.exp(x) * 2 + pt.sin(y) + 0.5 * z + x @ y
    f = arignote.function([x, y, z], out, mode="JAX")
    ops = {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    scalar_ops = {type(getattr(n.op, "scalar_op", None)).__name__ for n in f.maker.fgraph.apply_nodes}
    assert "Composite" not in scalar_ops and "Gemm" not in ops
    assert not any(getattr(n.op, "destroy_map", None) for n in f.maker.fgraph.apply_nodes)
    # FAST_RUN's rewrites (fusion, BLAS, in-place) with the JAX linker: same values
    g = arignote.function([x, y, z], out, mode=Mode(linker="jax"))
    fused = {type(getattr(n.op, "scalar_op", None)).__name__ for n in g.maker.fgraph.apply_nodes}
    assert "Composite" in fused
    rng = np.random.default_rng(0)
    vals = [rng.normal(size=(3, 3)) for _ in range(3)]
    want = arignote.function([x, y, z], out, mode=REFERENCE)(*vals)
    np.testing.assert_allclose(f(*vals), want)
    np.testing.assert_allclose(g(*vals), want)


def test_ifelse_and_op_from_graph() -> None:
    from arignote.compile.builders import OpFromGraph

    a, b = pt.dscalar("a"), pt.dvector("b")
    inner_x = pt.dvector()
    ofg = OpFromGraph([inner_x], [pt.exp(inner_x).sum(), inner_x * 2])
    s, d = ofg(b)
    out = ifelse(a > 0, s * b, d)
    for av in (1.0, -1.0):
        got, want = both([a, b], [out, s], av, np.array([0.5, 1.5]))
        assert_same(got, want)


def test_gradient_graph() -> None:
    x = pt.dvector("x")
    mu = pt.dscalar("mu")
    logp = -0.5 * ((x - mu) ** 2).sum() - pt.log(pt.sqrt(2 * np.pi)) * x.shape[0]
    g = arignote.grad(logp, [x, mu])
    got, want = both([x, mu], [logp, *g], np.array([0.1, 0.5, 2.0]), 0.3)
    assert_same(got, want)


def test_scalar_output_and_constant_output() -> None:
    x = pt.dscalar("x")
    got, want = both([x], [x * 2, pt.constant(np.arange(3.0))], 1.5)
    assert_same(got, want)


def test_debugmode_thunks_are_refused() -> None:
    x = pt.dvector("x")
    fgraph = arignote.function([x], x + 1, mode="JAX").maker.fgraph
    with pytest.raises(ValueError, match="DebugMode"):
        JAXLinker().make_vm(fgraph, [[None]], [], thunk_maker=lambda node: None)


def test_outputs_never_alias_inputs_or_each_other() -> None:
    x = pt.dvector("x")
    f = arignote.function([x], [x, x, x * 1], mode="JAX")
    a = np.arange(3.0)
    outs = f(a)
    for k, o in enumerate(outs):
        assert not np.shares_memory(o, a)
        for p in outs[k + 1 :]:
            assert not np.shares_memory(o, p)
    a[0] = 7.0  # the caller's array changes: the outputs do not
    assert outs[0][0] == 0.0


def test_shapes_computed_from_shapes_stay_static() -> None:
    """Arithmetic on shapes runs on the host while tracing: its result is a static length
    (there is no integer input to make static here)."""
    x = pt.dvector("x")
    out = pt.zeros(x.shape[0] * 2 + 1) + x.sum()
    f = arignote.function([x], out, mode=Mode(linker="jax", optimizer=None))
    np.testing.assert_array_equal(f(np.ones(3)), np.full(7, 3.0))
    np.testing.assert_array_equal(f(np.ones(2)), np.full(5, 2.0))


def test_plain_calls_go_straight_to_the_compiled_function_and_still_check_inputs() -> None:
    mu, z = pt.dscalar("mu"), pt.dvector("z")
    logp = -0.5 * ((z - mu) ** 2).sum()
    outs = [logp, *arignote.grad(logp, [mu, z])]
    f = arignote.function([mu, z], outs, mode="JAX")
    one = arignote.function([mu, z], logp, mode=Mode(JAXLinker(device_outputs=True), get_mode("JAX").query))
    ref = arignote.function([mu, z], outs, mode=REFERENCE)
    zs = np.linspace(-1.0, 1.0, 5)
    for k in range(3):  # the first call settles the compiled function, the next ones skip the bookkeeping
        assert_same(f(0.5 * k, zs), ref(0.5 * k, zs))
        got = one(0.5 * k, zs)
        assert isinstance(got, jax.Array) and got.shape == ()
        np.testing.assert_allclose(np.asarray(got), ref(0.5 * k, zs)[0])
    assert f.vm._direct is not None and one.vm._direct is not None
    # bad inputs: the error names the input and its Type, as on any call
    with pytest.raises(TypeError, match=r"input 1 \('z'\).*expected Type Vector\(float64"):
        f(0.5, np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"input 0 \('mu'\).*Scalar\(float64"):
        f("a", zs)
    assert_same(f(0.5, zs), ref(0.5, zs))
    # updates, outputs borrowed or shared values keep the general path
    acc = arignote.shared(np.float64(0.0), name="acc")
    g = arignote.function([mu], acc, updates={acc: acc + mu}, mode="JAX")
    assert g._direct is None
    g(1.0), g(2.0)
    assert float(acc.get_value()) == 3.0
