"""The generated function's pure form (``program``): a graph whose every node is written out
as a NumPy call is also compiled as a function of the input values returning the outputs,
which a compiled function's plain call runs with no cell read or written, no lock taken."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import In, Mode, Out, function
from arignote.compile.sharedvalue import shared
from tests.concurrency import wrong_in_threads

GEN_MODE = Mode(linker="pygen")


def _settled(f, *args):
    for _ in range(2):  # the first call finds the program, the second goes through it
        f(*args)
    return f


def test_a_pure_graph_gets_a_program_and_a_plain_call():
    x, y = pt.dvectors("x", "y")
    f = function([x, y], [pt.exp(x) * y + 1, x - y], mode=GEN_MODE)
    assert f.vm.program_source.startswith("def program(x, y):")
    assert "_in_x" not in f.vm.program_source and "_out0" not in f.vm.program_source  # no cells
    a, b = np.arange(3.0), np.array([2.0, -1.0, 0.5])
    _settled(f, a, b)
    assert f._plain is not None and f.vm.direct_program[0] is f.vm.__globals__["program"]
    before = [c[0] for c in f.output_storage]
    got = f(a, b)
    np.testing.assert_allclose(got[0], np.exp(a) * b + 1)
    np.testing.assert_allclose(got[1], a - b)
    assert [c[0] for c in f.output_storage] == before  # the plain call left the cells alone
    x0 = pt.dscalar("x0")
    g = _settled(function([x0], x0 + 1, mode=GEN_MODE), np.array(1.0))
    out = g(np.array(2.5))
    assert isinstance(out, np.ndarray) and out.shape == () and out == 3.5


@pytest.mark.parametrize(
    "build",
    [
        lambda x: ([x], [x * 2, x]),  # an output that is an input
        lambda x: ([x], [pt.dot(x, x) + 1]),  # a node run by its thunk
        lambda x: ([x], [x[1:] * 2]),  # a view (Subtensor) runs by its thunk
    ],
)
def test_graphs_that_are_not_pure_have_no_program(build):
    x = pt.dvector("x")
    ins, outs = build(x)
    f = function(ins, outs, mode=GEN_MODE)
    assert getattr(f.vm, "program_source", None) is None
    f(np.arange(3.0))
    f(np.arange(3.0))
    assert f._plain is None


def test_updates_shared_values_and_borrowed_outputs_keep_the_general_path():
    x = pt.dvector("x")
    s = shared(np.zeros(3), name="s")
    with_update = function([x], x * 2, updates=[(s, s + x)], mode=GEN_MODE)
    reads_shared = function([x], x * s, mode=GEN_MODE)
    borrowed = function([x], Out(x * 2, borrow=True), mode=GEN_MODE)
    mutable = function([In(x, mutable=True)], x * 2, mode=GEN_MODE)
    a = np.arange(3.0)
    for f in (with_update, reads_shared, borrowed):
        _settled(f, a)
    assert with_update._plain is None and reads_shared._plain is None and borrowed._plain is None
    np.testing.assert_allclose(s.get_value(), 2 * a)  # both updates applied
    np.testing.assert_allclose(reads_shared(a), a * 2 * a)
    mine = a.copy()
    _settled(mutable, mine)  # (may compute in place, into the array given)
    np.testing.assert_allclose(mutable(a.copy()), 2 * a)


def test_a_failing_node_is_named_in_the_plain_call():
    x, y = pt.dvectors("x", "y")
    f = _settled(function([x, y], (x + y) * 2, mode=GEN_MODE), np.ones(3), np.ones(3))
    assert f._plain is not None
    with pytest.raises(ValueError, match="shape mismatch at dimension 0") as info:
        f(np.ones(3), np.ones(4))
    (note,) = info.value.__notes__  # the reference VM's note, its input values read from the frame
    assert note.startswith("Apply node that caused the error: Composite{((i0 + i1) * 2.0)}(x, y)")
    assert "input 1 (y): Type Vector(float64, shape=(?,)), shape (4,)" in note


def test_a_bad_input_names_the_input_in_the_plain_call():
    x = pt.dvector("x")
    f = _settled(function([x], x * 2, mode=GEN_MODE), np.ones(2))
    with pytest.raises(TypeError, match=r"Bad input 0 \('x'\) .*expected Type"):
        f("text")
    np.testing.assert_allclose(f([1, 2]), [2.0, 4.0])  # a list goes through the Type's filter


def test_plain_calls_from_threads_get_their_own_values():
    x = pt.dvector("x")
    f = _settled(function([x], pt.sin(x) * x + 3, mode=GEN_MODE), np.ones(5))

    def call_ok(k: int) -> bool:
        a = np.full(1000, float(k))
        return np.allclose(f(a), np.sin(a) * a + 3)

    assert wrong_in_threads(call_ok) == []


def test_the_tiered_linker_offers_the_program_once_the_whole_graph_is_settled():
    pytest.importorskip("numba")
    from arignote.link.numba import NumbaLinker

    x = pt.dscalar("x")
    f = function([x], x + 1, mode=Mode(NumbaLinker(jit="background"), "fast_run"))
    f(np.array(1.0))
    f(np.array(1.0))
    assert f.vm.whole.state == "probing" and f._plain is None  # the probe still counts calls
    never = function([x], x + 1, mode=Mode(NumbaLinker(jit="background", whole_graph="never"), "fast_run"))
    _settled(never, np.array(1.0))
    assert never._plain is not None and never(np.array(1.5)) == 2.5


def test_the_plain_call_is_the_functions_own_call_with_the_body_written_in():
    from arignote.compile.executor import Function

    x = pt.dscalar("x")
    f = _settled(function([x], x + 1, mode=GEN_MODE), np.array(1.0))
    assert isinstance(f, Function) and type(f) is not Function and type(f).__name__ == "Function"
    assert type(f).__call__ is f._plain
    text = f.vm.direct_program[0].body.source
    # the body itself, no call of program; its inputs checked first, so no result check
    assert text.startswith("def __call__(self, x=__M, /, *rest, **kw):")
    assert "program(" not in text and "_finish" not in text
    assert "_finish" in f.vm.program_source  # (the program is also called on unchecked cells)
    out = f(np.array(2.5))
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == () and out == 3.5
    assert f(2) == 3.0 and f(np.float32(0.5)) == 1.5  # other values through the Type's filter
    # a trusted call is not checked (the caller vouches for its values): none of it in the text
    t = _settled(function([x], x + 1, mode=GEN_MODE, trust_input=True), np.array(1.0))
    assert "__filter" not in t.vm.direct_program[0].body.source and t(np.array(1.5)) == 2.5
    Function.__call__(f, np.array(1.0))  # the general path, called as such, keeps the class
    assert type(f).__mro__[1] is Function
    f.trust_input = True  # a setting the plain call read: back to the general path, and the class
    assert type(f) is Function and f._plain is None
    _settled(f, np.array(1.0))
    assert type(f) is not Function and f(np.array(0.5)) == 1.5


def test_calls_that_are_not_plain_take_the_general_path():
    x, y = pt.dvectors("x", "y")
    f = _settled(function([x, y], [x * y, x - y], mode=GEN_MODE), np.ones(2), np.ones(2))
    a, b = np.arange(2.0), np.array([3.0, 4.0])
    np.testing.assert_allclose(f(x=a, y=b)[0], a * b)  # by name
    np.testing.assert_allclose(f(a, y=b)[1], a - b)
    (only,) = f(a, b, output_subset=[1])
    np.testing.assert_allclose(only, a - b)
    with pytest.raises(TypeError, match="missing input"):
        f(a)
    with pytest.raises(TypeError, match="takes 2 input"):
        f(a, b, b)
    with pytest.raises(TypeError, match=r"Bad input 1 \('y'\)"):
        f(a, "text")


def test_inputs_named_like_the_calls_own_parameters():
    s, r, k = pt.dvector("self"), pt.dvector("rest"), pt.dvector("kw")
    f = _settled(function([s, r, k], s * r - k, mode=GEN_MODE), np.ones(2), np.ones(2), np.ones(2))
    a, b, c = np.arange(2.0), np.array([3.0, 4.0]), np.array([0.5, 0.25])
    np.testing.assert_allclose(f(a, b, c), a * b - c)
    np.testing.assert_allclose(f(a, b, kw=c), a * b - c)


def test_a_function_with_its_own_call_pickles_and_copies():
    import copy
    import pickle

    from arignote.compile.executor import Function

    x = pt.dvector("x")
    f = _settled(function([x], pt.exp(x) * 2, mode=GEN_MODE), np.ones(3))
    assert type(f) is not Function
    for g in (pickle.loads(pickle.dumps(f)), copy.copy(f), f.copy()):
        assert type(g) is Function  # made as the general path; its own call comes with calls
        np.testing.assert_allclose(_settled(g, np.ones(3))(np.zeros(2)), [2.0, 2.0])
