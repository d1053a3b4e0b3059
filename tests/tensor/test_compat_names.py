"""PyTensor 3 names of the tensor package that are small on their own: ``TensorLike``,
``register_transfer``/``transfer`` under ``tensor.basic``, ``NoneConst``."""

from __future__ import annotations

import typing

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.graph import type as graph_type
from arignote.graph.basic import Variable


def test_tensor_like_is_the_annotation_of_tensor_arguments():
    args = typing.get_args(pt.TensorLike)
    assert Variable in args and any(typing.get_origin(a) is not None for a in args)

    def double(x: pt.TensorLike) -> pt.TensorVariable:
        return pt.as_tensor_variable(x) * 2

    assert typing.get_type_hints(double)["x"] == pt.TensorLike
    np.testing.assert_array_equal(double([1.0, 2.0]).eval(), [2.0, 4.0])


def test_register_transfer_under_tensor_basic():
    x = pt.dvector("x")
    moved = pt.dvector("moved")

    def to_test_device(var, target):
        return moved if target == "test-device" and var is x else None

    assert pt.basic.register_transfer is graph_type.register_transfer
    pt.basic.register_transfer(to_test_device)
    try:
        assert pt.transfer(x, "test-device") is moved and x.transfer("test-device") is moved
        with pytest.raises(ValueError, match="Cannot transfer x to target 'elsewhere'"):
            pt.basic.transfer(x, "elsewhere")
    finally:
        graph_type._transfer_fns.remove(to_test_device)
    with pytest.raises(TypeError, match="needs a callable"):
        pt.basic.register_transfer(3)


def test_none_const():
    assert pt.NoneConst.data is None and pt.NoneConst.type == pt.none_type_t
    with pytest.raises(TypeError, match="only holds None"):
        pt.none_type_t.filter(0)


def test_exceptions_module_and_values_eq_approx_always_true():
    assert pt.exceptions.NotScalarConstantError is pt.NotScalarConstantError
    with pytest.raises(pt.exceptions.NotScalarConstantError):
        pt.get_underlying_scalar_constant_value(pt.dscalar("x"))
    assert issubclass(pt.exceptions.ShapeError, ValueError)
    assert pt.values_eq_approx_always_true(np.zeros(2), np.array([np.nan, 1.0])) is True


def test_blas_gemm_and_gemv_are_the_instances_that_return_new_arrays():
    import arignote
    from arignote.tensor import blas

    assert blas.gemm is blas.gemm_no_inplace and blas.gemv is blas.gemv_no_inplace
    z, a, x, y, b = pt.dmatrix("z"), pt.dscalar("a"), pt.dmatrix("x"), pt.dmatrix("y"), pt.dscalar("b")
    rng = np.random.default_rng(0)
    zv, xv, yv = rng.normal(size=(2, 3)), rng.normal(size=(2, 4)), rng.normal(size=(4, 3))
    f = arignote.function([z, a, x, y, b], blas.gemm(z, a, x, y, b), mode="FAST_COMPILE")
    np.testing.assert_allclose(f(zv, 2.0, xv, yv, 0.5), 0.5 * zv + 2.0 * xv @ yv)
