"""What ``import arignote`` loads, and what is imported on first use instead (:mod:`arignote.lazy`).

Each check runs in a fresh interpreter: the test process has imported everything already.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from arignote.lazy import LazyAttribute, lazy_module, loaded_module

# imported on first use, never by ``import arignote``: SciPy's slow-to-import modules and the
# optional backends
NOT_IMPORTED = (
    "scipy.special",
    "scipy.linalg",
    "scipy.sparse",
    "scipy.signal",
    "scipy.optimize",
    "scipy.stats",
    "numpy.random",  # (NumPy imports it on first use of np.random: ~6 ms)
    "jax",
    "numba",
    "llvmlite",
)


#: the inputs of the fresh processes' functions, as source
_DATA = "xv = np.array([0.5, 1.5, 3.0]); av = np.array([[3.0, 1, 0], [1, 4, 1], [0, 1, 5]])"


def _values(out: str) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The inputs of _DATA and the values a child printed as ``value [...]`` lines."""
    xv = np.array([0.5, 1.5, 3.0])
    av = np.array([[3.0, 1, 0], [1, 4, 1], [0, 1, 5]])
    return xv, av, [np.array(eval(line[6:])) for line in out.splitlines() if line.startswith("value ")]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"stdout:\n{done.stdout[-1500:]}\nstderr:\n{done.stderr[-3000:]}"
    return done.stdout


def test_import_arignote_does_not_import_scipy_or_the_backends() -> None:
    out = _run(
        "import sys, arignote\n"
        f"print(sorted(m for m in {NOT_IMPORTED!r} if m in sys.modules))\n"
        "import arignote.tensor as pt\n"
        "x = pt.dvector('x')\n"
        "y = pt.gammaln(x) + pt.erfinv(x) + pt.linalg.solve(pt.eye(2), x[:2]).sum()\n"
        f"print(sorted(m for m in {NOT_IMPORTED!r} if m in sys.modules))\n"
    )
    # building graphs of SciPy-backed Ops imports nothing either: only running them does
    assert out.splitlines() == ["[]", "[]"]


def test_a_logistic_regression_compiles_and_runs_without_scipy_special() -> None:
    """The commonest model does not import scipy.special (~0.2 s) at its first compile and call:
    its stabilised gradient's sigmoid and softplus are computed with NumPy. Nor scipy.linalg
    (~0.13 s): its matrix-vector products call SciPy's BLAS module, loaded from its file."""
    out = _run(
        "import sys, numpy as np, arignote, arignote.tensor as pt\n"
        "rng = np.random.default_rng(0); X = rng.normal(size=(50, 4)); y = (rng.random(50) < 0.5) * 1.0\n"
        "w = pt.dvector('w'); z = pt.dot(X, w)\n"
        "cost = (pt.log1p(pt.exp(-z)) + (1 - y) * z).mean()\n"
        "f = arignote.function([w], [cost, arignote.grad(cost, w)])\n"
        "got = f(np.array([0.5, -1.0, 0.25, 2.0]))\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy.special') or m == 'scipy.linalg'))\n"
        "import scipy.linalg.blas as b\n"  # (a later import finds the loaded module)
        "print(b._fblas is sys.modules['scipy.linalg._fblas'], b.dgemv(2.0, np.eye(2), np.ones(2)).tolist())\n"
        "print(repr(float(got[0])), list(got[1]))\n"
    )
    imported, later, values = out.splitlines()[-3:]
    assert imported == "[]"
    assert later == "True [2.0, 2.0]"
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 4)), (rng.random(50) < 0.5) * 1.0
    z = X @ np.array([0.5, -1.0, 0.25, 2.0])
    cost, g = values.split(" ", 1)
    np.testing.assert_allclose(float(cost), (np.log1p(np.exp(-z)) + (1 - y) * z).mean(), rtol=1e-12)
    sig = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(eval(g), X.T @ (sig - y) / 50, rtol=1e-10)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_scipy_backed_ops_work_in_a_fresh_process(mode: str) -> None:
    """gammaln, erfinv (scalar ops whose ufunc is SciPy's) and a linear solve (scipy.linalg in
    ``perform``), compiled first thing in a fresh process, against SciPy."""
    out = _run(
        "import numpy as np, arignote, arignote.tensor as pt\n"
        "x = pt.dvector('x'); a = pt.dmatrix('a')\n"
        f"f = arignote.function([x, a], [pt.gammaln(x), pt.erfinv(x / 4), pt.linalg.solve(a, x)], mode={mode!r})\n"
        f"{_DATA}\n"
        "for value in f(xv, av):\n"
        "    print('value', repr(value.tolist()))\n"
    )
    import scipy.linalg
    import scipy.special

    xv, av, got = _values(out)
    assert len(got) == 3, out
    np.testing.assert_allclose(got[0], scipy.special.gammaln(xv), rtol=1e-12)
    np.testing.assert_allclose(got[1], scipy.special.erfinv(xv / 4), rtol=1e-12)
    np.testing.assert_allclose(got[2], scipy.linalg.solve(av, xv), rtol=1e-12)


def test_lazy_module_imports_on_first_access_then_reads_like_the_module() -> None:
    out = _run(
        "import sys\n"
        "from arignote.lazy import lazy_module\n"
        "sp = lazy_module('scipy.special')\n"
        "print('scipy.special' in sys.modules, type(sp).__name__)\n"
        "f = sp.gammaln\n"
        "real = sys.modules['scipy.special']\n"
        "print('scipy.special' in sys.modules, f is real.gammaln, sp.erf is real.erf)\n"
        "print('__getattr__' in vars(sp), vars(sp)['psi'] is real.psi)\n"
    )
    # the hook is gone once the names are copied: reads are plain module reads
    assert out.splitlines() == ["False module", "True True True", "False True"]


def test_lazy_attribute_replaces_itself_on_its_class() -> None:
    import scipy.special

    class Base:
        ufunc = LazyAttribute("scipy.special", "gammaln")
        plain = LazyAttribute("scipy.special", "polygamma")  # a Python function, not a ufunc

    class Child(Base):
        pass

    assert isinstance(Base.__dict__["ufunc"], LazyAttribute)
    assert Child().ufunc is scipy.special.gammaln  # read through a subclass instance
    assert Base.__dict__["ufunc"] is scipy.special.gammaln  # then a plain class attribute
    # a function stays unbound when read from an instance, as it was before it was stored
    assert Base().plain(1, 2.0) == scipy.special.polygamma(1, 2.0)
    assert Base().plain(1, 2.0) == scipy.special.polygamma(1, 2.0)


def test_a_missing_name_says_what_is_needed() -> None:
    lazy = lazy_module("scipy.special")
    for _ in range(2):  # the first access (which imports) and a later one say the same
        with pytest.raises(
            AttributeError, match=r"module 'scipy\.special' has no attribute 'no_such_function'"
        ):
            lazy.no_such_function

    class Op:
        ufunc = LazyAttribute("scipy.special", "no_such_function")

    with pytest.raises(ImportError, match=r"installed scipy\.special .* has no 'no_such_function'"):
        Op().ufunc
    with pytest.raises(ImportError, match=r"No module named 'no_such_module'"):
        lazy_module("no_such_module").f


def test_lazy_module_is_for_other_packages() -> None:
    with pytest.raises(ValueError, match="arignote's own modules are imported at the top"):
        lazy_module("arignote.sparse")
    assert loaded_module("numpy") is np
    assert loaded_module("no_such_module") is None


def test_sparse_is_imported_on_first_access() -> None:
    out = _run(
        "import sys, arignote\n"
        "print('sparse' in dir(arignote), 'arignote.sparse' in sys.modules, 'scipy.sparse' in sys.modules)\n"
        "import scipy.sparse as sp, numpy as np\n"
        "x = arignote.sparse.csr_matrix('x', dtype='float64')\n"
        "f = arignote.function([x], arignote.sparse.sp_sum(x))\n"
        "print(f(sp.csr_matrix(np.eye(3))), arignote.sparse is sys.modules['arignote.sparse'])\n"
    )
    assert out.splitlines() == ["True False False", "3.0 True"]
    import arignote

    with pytest.raises(AttributeError, match="module 'arignote' has no attribute 'no_such_name'"):
        arignote.no_such_name


def test_a_pickled_function_of_scipy_backed_ops_runs_in_a_fresh_process(tmp_path) -> None:
    """Compiled and pickled in one fresh process, unpickled and called in another (each with
    nothing of SciPy imported up front)."""
    import scipy.linalg
    import scipy.special

    path = tmp_path / "f.pkl"
    _run(
        "import pickle, arignote, arignote.tensor as pt\n"
        "x = pt.dvector('x'); a = pt.dmatrix('a')\n"
        "f = arignote.function([x, a], [pt.gammaln(x) + pt.erfinv(x / 4), pt.linalg.solve(a, x)])\n"
        f"open({str(path)!r}, 'wb').write(pickle.dumps(f))\n"
    )
    out = _run(
        "import pickle, sys, numpy as np\n"
        f"f = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        f"{_DATA}\n"
        "for value in f(xv, av):\n"
        "    print('value', repr(value.tolist()))\n"
    )
    xv, av, got = _values(out)
    assert len(got) == 2, out
    np.testing.assert_allclose(got[0], scipy.special.gammaln(xv) + scipy.special.erfinv(xv / 4), rtol=1e-12)
    np.testing.assert_allclose(got[1], scipy.linalg.solve(av, xv), rtol=1e-12)
