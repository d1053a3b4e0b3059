"""The Python backend's dispatcher: a registration's thunk runs only where it computes what
``perform`` does; everything else gets the Op's own ``make_thunk``."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.link.python import python_thunk
from arignote.link.python.dispatch import accepts_plain
from arignote.tensor.elemwise import Elemwise


def _cells(node):
    storage = {v: [None] for v in (*node.inputs, *node.outputs)}
    compute = {v: [False] for v in (*node.inputs, *node.outputs)}
    return storage, compute


def test_a_registration_runs_only_where_perform_s_result_is_assured():
    x = pt.dvector("x")
    node = pt.exp(x).owner
    storage, compute = _cells(node)
    fast = python_thunk(node.op, node, storage, compute, [], None)
    generic = node.op.make_thunk(node, storage, compute, [], None)
    assert fast.__qualname__ != generic.__qualname__  # the registration's own thunk
    thunk = python_thunk(node.op, node, storage, compute, [node.outputs[0]], None)
    assert thunk.__qualname__ == generic.__qualname__  # an output to clear: the Op's own
    with pytest.raises(ValueError, match="no implementation 'c'"):  # the Op answers for 'c'
        python_thunk(node.op, node, storage, compute, [], "c")
    storage[x][0] = np.array([0.0, 1.0])
    thunk = python_thunk(node.op, node, storage, compute, [node.outputs[0]], None)
    thunk()
    np.testing.assert_allclose(storage[node.outputs[0]][0], np.exp([0.0, 1.0]))


def test_accepts_plain_refuses_subclasses_that_redefine_perform():
    class Custom(Elemwise):
        def perform(self, node, inputs, output_storage):
            return super().perform(node, inputs, output_storage)

    accepts = accepts_plain(Elemwise)
    assert accepts(pt.exp(pt.dvector()).owner.op)
    assert not accepts(Custom(pt.exp(pt.dvector()).owner.op.scalar_op))
