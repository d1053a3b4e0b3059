"""arignote.misc (pytensor.misc's path): OrderedSet, frozendict, may_share_memory and
StripPickler."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import scipy.sparse

import arignote
import arignote.tensor as pt
from arignote.misc.frozendict import frozendict
from arignote.misc.may_share_memory import may_share_memory
from arignote.misc.ordered_set import OrderedSet
from arignote.misc.pkl_utils import StripPickler


def test_ordered_set_keeps_first_insertion_order():
    s = OrderedSet(["b", "a", "b"])
    s.update(["c", "a"])
    s.discard("b")
    s.discard("missing")
    assert list(s) == ["a", "c"] and "a" in s and "b" not in s
    t = s.copy()
    t.add("z")
    assert list(s) == ["a", "c"] and list(t) == ["a", "c", "z"]
    t.difference_update(["a"])
    assert list(t) == ["c", "z"] and list(s.union(["z", "a"])) == ["a", "c", "z"]
    assert s == OrderedSet(["c", "a"])  # set equality, as MutableSet gives
    assert list(s | OrderedSet(["q"])) == ["a", "c", "q"]
    with pytest.raises(TypeError, match="ordered iterable"):
        OrderedSet({1, 2})


def test_frozendict_is_a_hashable_read_only_mapping():
    d = frozendict([("x", 1), ("y", 2)])
    assert d == {"x": 1, "y": 2} and list(d) == ["x", "y"] and len(d) == 2
    assert hash(d) == hash(frozendict(y=2, x=1)) and {d: "k"}[frozendict(x=1, y=2)] == "k"
    assert d.copy(y=3) == {"x": 1, "y": 3} and d["y"] == 2
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(TypeError):
        d["x"] = 5  # type: ignore[index]
    with pytest.raises(AttributeError):
        d.update({"x": 5})  # type: ignore[attr-defined]


def test_may_share_memory_dense_and_sparse():
    x = np.arange(10.0)
    assert may_share_memory(x, x[::2]) and not may_share_memory(x[:5], x[5:])
    m = scipy.sparse.csr_matrix(np.eye(4))
    c = m.copy()
    assert may_share_memory(m, m.indices) and not may_share_memory(m, c)
    assert may_share_memory(m, scipy.sparse.csr_matrix((m.data, m.indices, m.indptr), shape=m.shape))
    assert not may_share_memory(m, x)
    with pytest.raises(TypeError, match="got list"):
        may_share_memory(x, [1.0])
    assert may_share_memory([1.0], x, raise_other_type=False) is False


def test_strip_pickler_leaves_out_traces_and_listed_tags():
    x = pt.dvector("x")
    y = pt.exp(x) * 2
    y.tag.test_value = np.ones(2)
    y.tag.keep = "kept"
    y.tag.mine = "dropped"
    buffer = io.BytesIO()
    StripPickler(buffer, protocol=-1, extra_tag_to_remove="mine").dump([x, y])
    x2, y2 = pickle.loads(buffer.getvalue())
    assert all(node.trace is None for node in arignote.graph.traversal.applys_between([x2], [y2]))
    assert y2.tag.keep == "kept" and not hasattr(y2.tag, "mine") and not hasattr(y2.tag, "test_value")
    assert y.tag.mine == "dropped" and y.owner.trace is not None  # the original is untouched
    np.testing.assert_allclose(arignote.function([x2], y2)([0.0, 1.0]), 2 * np.exp([0.0, 1.0]))
