"""vectorize_graph batches the outputs of Ops that are not float tensors (bool flags,
integer counts, scalar-typed outputs) like any other output."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import arignote
import arignote.tensor as pt
from arignote.compile.ops import as_op
from arignote.graph.replace import vectorize_graph
from arignote.scalar.type import ScalarType
from tests.toy import double


def test_root_success_flag_is_batched():
    x, a = pt.dscalar("x"), pt.dscalar("a")
    sol, success = pt.optimize.root(x**2 - a, x)
    assert isinstance(success.type, ScalarType) and success.type.dtype == "bool"
    a_batch = pt.dvector("a_batch")
    sols, flags = vectorize_graph([sol, success], {a: a_batch})
    assert flags.type.dtype == "bool" and flags.type.shape == (None,) and sols.type.shape == (None,)
    values = np.array([4.0, 9.0, -1.0])
    got_sol, got_flag = arignote.function([a_batch, x], [sols, flags])(values, 1.0)
    for k, v in enumerate(values):
        ref = scipy.optimize.root(lambda t, v=v: t**2 - v, 1.0)
        assert got_flag[k] == ref.success
        if ref.success:
            assert np.isclose(got_sol[k], ref.x[0])
    # the flag used downstream, through the scalar-to-tensor conversion
    y = pt.switch(success, sol, np.nan)
    ys = vectorize_graph(y, {a: a_batch})
    np.testing.assert_allclose(arignote.function([a_batch, x], ys)(values, 1.0), [2.0, 3.0, np.nan])


def test_minimize_success_with_two_batch_dimensions():
    x, a = pt.dscalar("x"), pt.dscalar("a")
    sol, success = pt.optimize.minimize((x - a) ** 2, x)
    a_batch = pt.dmatrix("a_batch")
    sols, flags = vectorize_graph([sol, success], {a: a_batch})
    assert flags.type.ndim == 2 and flags.type.dtype == "bool"
    values = np.arange(6.0).reshape(2, 3)
    got_sol, got_flag = arignote.function([a_batch, x], [sols, flags])(values, 0.0)
    np.testing.assert_allclose(got_sol, values, atol=1e-6)
    assert got_flag.shape == (2, 3) and got_flag.all()


def test_integer_and_scalar_outputs_of_an_op_without_a_batching_rule():
    @as_op(itypes=[pt.dvector], otypes=[pt.lscalar, pt.dvector])
    def count_positive(v):
        return np.int64((v > 0).sum()), np.sort(v)

    v = pt.dvector("v")
    count, ordered = count_positive(v)
    m = pt.dmatrix("m")
    counts, rows = vectorize_graph([count, ordered], {v: m})
    assert counts.type.dtype == "int64" and counts.type.ndim == 1 and rows.type.ndim == 2
    value = np.array([[1.0, -2.0, 3.0], [-1.0, -1.0, 0.5]])
    got_counts, got_rows = arignote.function([m], [counts, rows])(value)
    np.testing.assert_array_equal(got_counts, [2, 1])
    np.testing.assert_array_equal(got_rows, np.sort(value, axis=1))


def test_an_output_that_cannot_be_stacked_is_a_clear_error():
    @as_op(itypes=[pt.dvector], otypes=[double])
    def total(v):
        return float(v.sum())

    v = pt.dvector("v")
    with pytest.raises(NotImplementedError, match="output Type .* is neither a tensor nor a scalar"):
        vectorize_graph(total(v), {v: pt.dmatrix("m")})
