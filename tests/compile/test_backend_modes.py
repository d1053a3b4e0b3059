"""The backend modes and JAX entry points at PyTensor's paths: ``arignote.compile.JAX``,
``arignote.compile.NUMBA`` (and ``NUMBA_KERNELS``) and the top-level ``arignote.wrap_jax``.
They exist with or without the optional backends installed, and ``import arignote`` (or reading
them) imports neither JAX nor Numba: JAX is imported when the JAX mode first links a graph or
``wrap_jax`` is first called, and says how to install it when it is missing."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import arignote
import arignote.compile
import arignote.tensor as pt
from arignote.compile.mode import JAX_EXCLUDED, get_mode


def _run(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok", done.stdout


def test_reading_the_backend_names_imports_no_backend() -> None:
    _run(
        "import sys, arignote, arignote.compile as c\n"
        "modes = (c.JAX, c.NUMBA, c.NUMBA_KERNELS, arignote.wrap_jax)\n"
        "loaded = [m for m in ('jax', 'jaxlib', 'numba', 'llvmlite') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "print('ok')\n"
    )


def test_without_jax_the_names_exist_and_using_them_says_what_is_missing() -> None:
    _run(
        "import sys\n"
        "sys.modules['jax'] = None  # import jax fails, as where it is not installed\n"
        "import arignote, arignote.tensor as pt\n"
        "from arignote.compile import JAX\n"
        "assert JAX.name == 'JAX'\n"
        "x = pt.dvector('x')\n"
        "for use in (lambda: arignote.function([x], x, mode=JAX), lambda: arignote.wrap_jax(abs)):\n"
        "    try:\n"
        "        use()\n"
        "    except ImportError as err:\n"
        '        assert "arignote[jax]" in str(err), err\n'
        "    else:\n"
        "        raise AssertionError('no error without JAX')\n"
        "print('ok')\n"
    )


def test_the_jax_mode_object_is_the_jax_mode() -> None:
    pytest.importorskip("jax")
    from arignote.link.jax.linker import JAXLinker

    mode = arignote.compile.JAX
    assert mode.name == "JAX" and mode.query == get_mode("JAX").query
    assert set(JAX_EXCLUDED) <= mode.query.exclude
    x = pt.dvector("x")
    out = pt.exp(x).sum() * x
    value = np.array([0.5, -1.0, 2.0])
    got = arignote.function([x], out, mode=mode)(value)
    np.testing.assert_allclose(got, np.exp(value).sum() * value, rtol=1e-12)
    assert isinstance(mode.linker.resolve(), JAXLinker)
    assert mode.linker.device_outputs is False  # attributes are the JAXLinker's


def test_top_level_wrap_jax_builds_a_jax_op_with_its_gradient() -> None:
    jnp = pytest.importorskip("jax.numpy")
    from arignote.link.jax.ops import JAXOp

    @arignote.wrap_jax
    def softplus_sum(v):
        return jnp.sum(jnp.logaddexp(0.0, v))

    named = arignote.wrap_jax(name="sq")(lambda v: v * v)
    x = pt.dvector("x")
    y = softplus_sum(x)
    assert isinstance(y.owner.op, JAXOp) and isinstance(named(x).owner.op, JAXOp)
    f = arignote.function([x], [y, arignote.grad(y, x), named(x)])
    value = np.array([-1.0, 0.0, 3.0])
    total, grad, sq = f(value)
    np.testing.assert_allclose(total, np.logaddexp(0.0, value).sum(), rtol=1e-12)
    np.testing.assert_allclose(grad, 1 / (1 + np.exp(-value)), rtol=1e-12)
    np.testing.assert_allclose(sq, value**2)


@pytest.mark.parametrize("name", ["NUMBA", "NUMBA_KERNELS"])
def test_numba_modes_are_the_named_modes(name: str) -> None:
    mode = getattr(arignote.compile, name)
    assert mode is get_mode(name) and mode.name == name
    pytest.importorskip("numba")
    x = pt.dvector("x")
    got = arignote.function([x], pt.sin(x) * 2 + 1, mode=mode)(np.array([0.0, 1.0]))
    np.testing.assert_allclose(got, np.sin([0.0, 1.0]) * 2 + 1)
