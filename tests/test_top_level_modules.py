"""``arignote.basic``, ``arignote.utils`` and ``arignote.npy_2_compat`` (PyTensor's top-level
helper modules)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import basic, npy_2_compat, utils
from arignote.tensor.type_other import NoneConst, SliceConstant


def test_as_symbolic():
    x = pt.dvector("x")
    assert basic.as_symbolic(x) is x
    v = basic.as_symbolic(np.arange(3.0), name="v")
    assert v.type == pt.TensorType("float64", (3,)) and v.name == "v"
    assert basic.as_symbolic(3, dtype="float32").type.dtype == "float32"
    assert basic.as_symbolic(None) is NoneConst
    s = basic.as_symbolic(slice(1, None, 2))
    assert isinstance(s, SliceConstant) and s.data == slice(1, None, 2)
    a = pt.lscalar("a")
    assert basic.as_symbolic(slice(a, None)).eval({a: 2}) == slice(2, None)
    with pytest.raises(TypeError):
        basic.as_symbolic(object())


def test_utils():
    assert utils.flatten([1, (2, [3, {4}]), []]) == [1, 2, 3, 4]
    deep: list = [5]
    for _ in range(5000):
        deep = [deep]
    assert utils.flatten(deep) == [5]
    assert utils.uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert utils.uniq([[1], [1], [2]]) == [[1], [2]]
    assert utils.difference([1, 2, 3, 2], [2]) == [1, 3]
    assert utils.difference([[1], [2]], [[2]]) == [[1]]
    h = utils.hash_from_code("a")
    assert h.startswith("m") and len(h) == 65 and h == utils.hash_from_code(b"a")
    assert utils.to_return_values([1]) == 1 and utils.to_return_values([1, 2]) == [1, 2]
    assert utils.from_return_values(1) == [1] and utils.from_return_values((1, 2)) == (1, 2)
    assert utils.unzip([(1, 2), (3, 4)], 2) == ((1, 3), (2, 4))
    assert utils.unzip([], 3) == ((), (), ())
    with pytest.raises(ValueError, match="every group must have 2 items"):
        utils.unzip([(1, 2), (3,)], 2, strict=True)


def test_old_np_unique():
    a = np.array([[3, 1], [1, 3]])
    values, index, inverse, counts = npy_2_compat.old_np_unique(
        a, return_index=True, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(values, [1, 3])
    np.testing.assert_array_equal(inverse, [1, 0, 0, 1])
    np.testing.assert_array_equal(values[inverse], a.ravel())
    np.testing.assert_array_equal(counts, [2, 2])
    _, inverse = npy_2_compat.old_np_unique(a, return_inverse=True, axis=0)
    np.testing.assert_array_equal(inverse, [1, 0])
    np.testing.assert_array_equal(npy_2_compat.old_np_unique(a), [1, 3])
