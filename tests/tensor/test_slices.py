"""Slices as graph values: ``make_slice``, ``slicetype``, ``NoneSliceConst``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.tensor.type_other import MakeSlice, NoneConst, SliceConstant, SliceType


def test_make_slice_values_and_types():
    a, b = pt.lscalar("a"), pt.iscalar("b")
    s = pt.make_slice(a, b, None)
    assert s.type == pt.slicetype and str(s.type) == "slice"
    assert s.owner.inputs[2] is NoneConst
    f = arignote.function([a, b], s)
    assert f(1, 5) == slice(1, 5, None)
    assert type(f(1, 5).start) is int
    assert pt.make_slice(slice(2, None, -1)).eval() == slice(2, None, -1)
    assert pt.make_slice(np.int64(1), 4, 2).eval() == slice(1, 4, 2)
    assert pt.make_slice(a, None, None) is not pt.make_slice(a, None, None)
    assert pt.make_slice(a, None, None).owner.op == MakeSlice()


def test_none_slice_const_and_slice_constants():
    assert pt.NoneSliceConst.data == slice(None) and str(pt.NoneSliceConst) == "slice(None)"
    assert pt.NoneSliceConst.type == SliceType()
    c = SliceConstant(pt.slicetype, slice(np.int64(1), np.int32(3)))
    assert c.data == slice(1, 3) and type(c.data.start) is int
    assert c.equals(SliceConstant(pt.slicetype, slice(1, 3)))
    assert pickle.loads(pickle.dumps(pt.NoneSliceConst)).data == slice(None)


def test_slice_type_filter_and_errors():
    assert pt.slicetype.filter(slice(1)) == slice(1)
    with pytest.raises(TypeError, match="SliceType holds Python slices, got int"):
        pt.slicetype.filter(3)
    with pytest.raises(TypeError, match="slice bound must be None or an integer scalar"):
        pt.make_slice(pt.dscalar("x"))
    with pytest.raises(TypeError, match="slice bound must be None or an integer scalar"):
        pt.make_slice(pt.lvector("v"))
    with pytest.raises(TypeError, match="give a slice object alone"):
        pt.make_slice(slice(1, 2), 3)
    with pytest.raises(TypeError, match="SliceConstant holds a slice"):
        SliceConstant(pt.slicetype, 3)
    a = pt.lscalar("a")
    assert arignote.grad(pt.cast(a, "float64"), a, disconnected_inputs="ignore") is not None
