"""The JAX backend checks ``Assert``/``CheckAndRaise`` conditions when the function runs, and
a call whose host code fails (a check, a SciPy routine) raises that code's own error, as the
other backends do: not JAX's ``JaxRuntimeError`` with the traceback as text."""

from __future__ import annotations

import logging

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from jax._src import dispatch as jax_dispatch  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.raise_op import Assert, CheckAndRaise  # noqa: E402


def test_assert_in_jax():
    x = pt.dvector("x")
    y = Assert("x must be positive")(x, pt.all(x > 0)) * 2.0
    f = arignote.function([x], y, mode="JAX")
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    for _ in range(2):  # the first call, and one through the settled call path
        with pytest.raises(AssertionError, match="x must be positive"):
            f(np.array([-1.0]))
    np.testing.assert_array_equal(f(np.array([3.0])), [6.0])
    g = arignote.function([x], CheckAndRaise(ValueError, "never")(x), mode="JAX")  # no condition
    np.testing.assert_array_equal(g(np.ones(2)), np.ones(2))


def test_a_check_raises_its_own_error_type_without_a_logged_traceback(caplog) -> None:
    x = pt.dvector("x")
    f = arignote.function(
        [x], CheckAndRaise(ZeroDivisionError, "x has a zero")(x, pt.all(pt.neq(x, 0))), mode="JAX"
    )
    with caplog.at_level(logging.ERROR):
        with pytest.raises(ZeroDivisionError, match="x has a zero") as info:
            f(np.array([1.0, 0.0]))
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not [r for r in caplog.records if "callback" in r.getMessage()]


def test_a_failing_scipy_routine_raises_its_own_error() -> None:
    """A singular solve (``on_error="raise"``, the default) runs SciPy on the host."""
    a, b = pt.dmatrix("a"), pt.dvector("b")
    f = arignote.function([a, b], pt.linalg.solve(a, b), mode="JAX")
    np.testing.assert_allclose(f(np.eye(2) * 2, np.ones(2)), [0.5, 0.5])
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        f(np.zeros((2, 2)), np.ones(2))


def test_the_inverse_of_a_singular_matrix_raises_as_numpys_does() -> None:
    x = pt.dmatrix("x")
    f = arignote.function([x], pt.linalg.inv(x), mode="JAX")
    np.testing.assert_allclose(f(np.eye(2) * 4), np.eye(2) / 4)
    with pytest.raises(np.linalg.LinAlgError, match=r"\(2, 2\) is singular"):
        f(np.ones((2, 2)))
    stack = pt.tensor3("s")
    g = arignote.function([stack], pt.linalg.inv(stack), mode="JAX")  # a Blockwise: vmap of the check
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        g(np.stack([np.eye(2), np.ones((2, 2))]))
    np.testing.assert_allclose(g(np.stack([np.eye(2), 2 * np.eye(2)]))[1], np.eye(2) / 2)


def test_a_raised_check_leaves_no_failure_for_jaxs_exit() -> None:
    """Once the call has raised a check's error, JAX holds no token of the failed program
    (off the CPU it would raise the failure again at exit, as an ignored exception)."""
    x = pt.dvector("x")
    f = arignote.function([x], Assert("x must be positive")(x, pt.all(x > 0)) * 2.0, mode="JAX")
    f(np.array([1.0]))
    with pytest.raises(AssertionError, match="x must be positive"):
        f(np.array([-1.0]))
    assert not jax_dispatch.runtime_tokens.output_runtime_tokens
    jax.effects_barrier()  # (nothing left to raise)


def test_a_check_is_staged_in_the_program_not_a_host_callback() -> None:
    """A compiled function's checks travel with its outputs (jax.experimental.checkify): no
    host callback runs on a call (100 µs on a CPU, a wait for the device on a GPU), the
    plain generated call is used, and a failed check still raises its own error, with the
    offending values in the message; the same graph as a pure JAX function (jax_function,
    traced by its user) keeps its checks as host callbacks."""
    from arignote.link.jax import jax_function
    from arignote.link.jax.linker import _may_fail

    x = pt.dvector("x")
    out = CheckAndRaise(ZeroDivisionError, "x has a zero")(x * 2.0, pt.all(pt.neq(x, 0)))
    f = arignote.function([x], out, mode="JAX")
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_array_equal(f(np.array([3.0])), [6.0])
    runner = f.vm
    assert set(runner._staged) == {ZeroDivisionError}  # (one entry per trace: a shape each)
    assert not _may_fail(runner._jitted.trace(*runner._args()).jaxpr.jaxpr)
    assert f._plain is not None  # the generated call, with its check
    for _ in range(2):
        with pytest.raises(ZeroDivisionError, match="x has a zero"):
            f(np.array([1.0, 0.0]))
    np.testing.assert_array_equal(f(np.array([5.0])), [10.0])
    pure = jax_function([out], [x])
    assert _may_fail(jax.make_jaxpr(pure)(np.ones(2)).jaxpr)


def test_a_staged_check_on_a_device_reads_its_flag_with_the_outputs(monkeypatch) -> None:
    """Where the outputs live on an accelerator (pretended here), the flag of the staged
    checks is copied to the host with the outputs, in one round trip; the values and the
    failed check's error are the same."""
    from arignote.link.jax import linker

    monkeypatch.setattr(linker, "_off_host", lambda value: True)
    x = pt.dvector("x")
    checked = Assert("x must be positive")(x, pt.all(x > 0))
    f = arignote.function([x], [checked * 2.0, checked.sum()], mode="JAX")
    for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        doubled, total = f(np.array(v))
        np.testing.assert_array_equal(doubled, np.array(v) * 2)
        assert total == sum(v)
    assert f.vm._on_device and f._plain is not None
    with pytest.raises(AssertionError, match="x must be positive"):
        f(np.array([1.0, -1.0]))
