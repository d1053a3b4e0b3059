"""Features of a FunctionGraph: callbacks, History, Validator, ReplaceValidate, NodeFinder,
cloning and pickling."""

# the tests unpack whole fixture graphs, (x, y, a, b, c), and use a few names of each

from __future__ import annotations

import pickle
import warnings

import pytest

from arignote.graph.basic import Apply, equal_computations
from arignote.graph.features import (
    AlreadyThere,
    Bookkeeper,
    Feature,
    History,
    NodeFinder,
    ReplacementDidNotRemoveError,
    ReplaceValidate,
    Validator,
)
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.op import Op
from arignote.graph.utils import InconsistencyError, MissingInputError
from arignote.link.perform import evaluate
from tests.graph.test_fg import assert_clients_consistent, graph_state
from tests.toy import add, as_double, double, mul, neg, sub

# --- test features (module level so that they pickle) ----------------------------------------


class Recorder(Feature):
    """Records every callback, with the graph it came from."""

    def __init__(self):
        self.events: list = []
        self.graphs: list = []

    def _log(self, fgraph, *event):
        self.graphs.append(fgraph)
        self.events.append(event)

    def on_attach(self, fgraph):
        self._log(fgraph, "attach")

    def on_detach(self, fgraph):
        self._log(fgraph, "detach")

    def on_import(self, fgraph, node, reason):
        self._log(fgraph, "import", node, reason)

    def on_prune(self, fgraph, node, reason):
        self._log(fgraph, "prune", node, reason)

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        self._log(fgraph, "change", node, i, var, new_var, reason)


class Live(Feature):
    """Keeps the set of live nodes from on_import/on_prune and checks they alternate."""

    def __init__(self):
        self.live: set = set()

    def on_attach(self, fgraph):
        self.live = set(fgraph.apply_nodes)

    def on_import(self, fgraph, node, reason):
        assert node not in self.live
        self.live.add(node)

    def on_prune(self, fgraph, node, reason):
        assert node in self.live
        self.live.remove(node)


class NoSub(Feature):
    """A validator: a graph with a ``sub`` node is inconsistent."""

    def validate(self, fgraph):
        if any(n.op == sub for n in fgraph.apply_nodes):
            raise InconsistencyError("sub is not allowed here")


class PAdd(Op):
    """A picklable addition (the toy Ops hold lambdas)."""

    __props__ = ()

    def make_node(self, a, b):
        return Apply(self, [as_double(a), as_double(b)], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + inputs[1]


class PNeg(Op):
    __props__ = ()

    def make_node(self, a):
        return Apply(self, [as_double(a)], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = -inputs[0]


padd, pneg = PAdd(), PNeg()


def _graph(features=()):
    x, y = double("x"), double("y")
    a = neg(x)
    b = add(a, y)
    c = mul(b, a)
    fg = FunctionGraph([x, y], [c], features=list(features), clone=False)
    return (x, y, a, b, c), fg


# --- callbacks --------------------------------------------------------------------------------


def test_callbacks_during_construction():
    rec = Recorder()
    (x, y, a, b, c), fg = _graph([rec])
    assert rec.events == [
        ("attach",),
        ("import", a.owner, "init"),
        ("import", b.owner, "init"),
        ("import", c.owner, "init"),
    ]
    assert all(g is fg for g in rec.graphs)


def test_callbacks_of_replace_in_order():
    rec = Recorder()
    (x, y, a, b, c), fg = _graph([rec])
    del rec.events[:]
    new = sub(x, 1.0)
    fg.replace(a, new, reason="r1")
    assert rec.events == [
        ("import", new.owner, "r1"),
        ("change", b.owner, 0, a, new, "r1"),
        ("prune", a.owner, "r1"),
        ("change", c.owner, 1, a, new, "r1"),
    ]
    assert all(g is fg for g in rec.graphs)


def test_callbacks_of_change_node_input_and_outputs():
    rec = Recorder()
    (x, y, a, b, c), fg = _graph([rec])
    del rec.events[:]
    ((out_node, _),) = fg.clients[c]
    fg.change_node_input(out_node, 0, b, reason="r2")
    assert rec.events == [("prune", c.owner, "r2"), ("change", out_node, 0, c, b, "r2")]
    del rec.events[:]
    fg.change_node_input(b.owner, 1, y, reason="same")  # no change: no callback
    assert rec.events == []
    n = neg(b)
    fg.add_output(n, reason="r3")
    assert rec.events == [("import", n.owner, "r3")]
    del rec.events[:]
    fg.remove_output(0, reason="r4")
    assert rec.events == []  # b is still used by n
    fg.remove_output(0, reason="r5")
    assert rec.events == [("prune", n.owner, "r5"), ("prune", b.owner, "r5"), ("prune", a.owner, "r5")]


def test_callbacks_of_remove_node():
    rec = Recorder()
    (x, y, a, b, c), fg = _graph([rec])
    del rec.events[:]
    fg.remove_node(b.owner, reason="rm")
    assert [e[0] for e in rec.events] == ["prune"] * 3
    assert {e[1] for e in rec.events} == {a.owner, b.owner, c.owner}
    assert {e[2] for e in rec.events} == {"rm"}
    pos = {e[1]: k for k, e in enumerate(rec.events)}
    assert pos[c.owner] < pos[b.owner]  # users leave before what they use
    assert fg.outputs == [] and fg.apply_nodes == set()


def test_attach_detach_and_attaching_twice():
    (x, y, a, b, c), fg = _graph()
    rec = Recorder()
    fg.attach_feature(rec)
    fg.attach_feature(rec)
    assert rec.events == [("attach",)]
    assert fg._features.count(rec) == 1
    fg.remove_feature(rec)
    assert rec.events == [("attach",), ("detach",)]
    assert rec not in fg._features
    fg.replace(a, y)
    assert rec.events == [("attach",), ("detach",)]  # detached: hears nothing
    fg.remove_feature(rec)  # unknown now: ignored
    fg.remove_feature(Recorder())
    assert rec.events == [("attach",), ("detach",)]


def test_already_there_declines():
    class Once(Recorder):
        def on_attach(self, fgraph):
            if hasattr(fgraph, "once"):
                raise AlreadyThere("there")
            fgraph.once = self
            super().on_attach(fgraph)

    (x, y, a, b, c), fg = _graph()
    f1, f2 = Once(), Once()
    fg.attach_feature(f1)
    fg.attach_feature(f2)
    assert f1 in fg._features and f2 not in fg._features
    fg.replace(a, y)
    assert f2.events == [] and len(f1.events) > 1


def test_builtin_features_decline_duplicates():
    (x, y, a, b, c), fg = _graph()
    n_features = len(fg._features)
    fg.attach_feature(ReplaceValidate())
    fg.attach_feature(History())
    fg.attach_feature(Validator())
    assert len(fg._features) == n_features
    assert [type(f) for f in fg._features] == [ReplaceValidate]


def test_bookkeeper_replays_the_graph():
    class Book(Bookkeeper):
        def __init__(self):
            self.events = []

        def on_import(self, fgraph, node, reason):
            self.events.append(("import", node, reason))

        def on_prune(self, fgraph, node, reason):
            self.events.append(("prune", node, reason))

    (x, y, a, b, c), fg = _graph()
    book = Book()
    fg.attach_feature(book)
    assert book.events == [("import", n, "on_attach") for n in (a.owner, b.owner, c.owner)]
    del book.events[:]
    fg.remove_feature(book)
    assert sorted(map(id, (e[1] for e in book.events))) == sorted(map(id, (a.owner, b.owner, c.owner)))
    assert {e[0] for e in book.events} == {"prune"}


def test_execute_and_collect_callbacks():
    class Custom(Feature):
        def __init__(self):
            self.calls = []

        def on_custom(self, fgraph, *args):
            self.calls.append((fgraph, args))
            return "ignored"

        def answer(self, v):
            return v * 2

    (x, y, a, b, c), fg = _graph()
    f = Custom()
    fg.attach_feature(f)
    fg.execute_callbacks("on_custom", 1, 2)
    assert f.calls == [(fg, (1, 2))]
    assert fg.collect_callbacks("answer", 21) == {f: 42}


def test_execute_callbacks_times():
    rec = Recorder()
    (x, y, a, b, c), fg = _graph([rec])
    fg.replace(a, sub(x, y))
    times = fg.execute_callbacks_times
    assert set(times) == set(fg._features)
    assert times[rec] > 0.0
    assert all(t >= 0.0 for t in times.values())
    assert fg.execute_callbacks_time == pytest.approx(sum(times.values()))
    assert fg.execute_callbacks_time > 0.0


# --- History ----------------------------------------------------------------------------------


def test_history_checkpoint_revert_restores_the_exact_graph():
    live = Live()
    (x, y, a, b, c), fg = _graph([NodeFinder(), live])
    s0 = graph_state(fg)
    chk0 = fg.checkpoint()
    fg.replace(a, sub(x, 2.0))  # imports a node and a constant, prunes neg
    fg.replace(b, y)  # prunes add
    s1 = graph_state(fg)
    chk1 = fg.checkpoint()
    assert chk1 > chk0
    ((out_node, _),) = [(n, i) for n, i in fg.clients[c] if isinstance(n.op, Output)]
    fg.change_node_input(out_node, 0, add(x, 5.0))  # prunes c and the sub node
    fg.replace_all([(x, neg(x)), (y, mul(y, y))])
    assert graph_state(fg) != s1
    fg.revert(chk1)
    assert graph_state(fg) == s1
    fg.check_integrity()
    fg.revert(chk0)
    assert graph_state(fg) == s0
    assert fg.outputs == [c] and c.owner.inputs == [b, a] and b.owner.inputs == [a, y]
    fg.check_integrity()
    assert live.live == fg.apply_nodes
    assert set(fg.get_nodes(neg)) == {a.owner}
    assert fg.get_nodes(sub) == []
    assert fg.checkpoint() == chk0
    assert evaluate(fg.outputs, {x: 2.0, y: 3.0}) == [-2.0]


def test_history_ignores_its_own_revert():
    (x, y, a, b, c), fg = _graph()
    chk = fg.checkpoint()
    fg.replace(a, y)
    fg.revert(chk)
    assert fg.checkpoint() == chk
    fg.revert(chk)  # nothing to undo
    fg.check_integrity()


def test_history_forget_drops_the_replaced_variables():
    import gc
    import weakref

    (x, y, a, b, c), fg = _graph()
    old = weakref.ref(b.owner)
    fg.replace(b, y)
    del b
    gc.collect()
    assert old() is not None  # the record of the change holds it (to revert)
    fg.forget_history()
    assert fg.checkpoint() == 0
    gc.collect()
    assert old() is None
    fg.check_integrity()


def test_a_compiled_function_keeps_no_record_of_its_rewrites():
    import arignote
    import arignote.tensor as pt

    v = pt.dvector("v")
    f = arignote.function([v], pt.exp(pt.log(v)) * 1.0)
    assert f.maker.fgraph.checkpoint() == 0


def test_history_detach():
    (x, y, a, b, c), fg = _graph()
    (rv,) = fg._features
    fg.remove_feature(rv)
    for attr in ("checkpoint", "revert", "forget_history", "validate", "consistent", "replace_validate"):
        assert not hasattr(fg, attr)
    h = History()
    fg.attach_feature(h)
    chk = fg.checkpoint()
    s0 = graph_state(fg)
    fg.replace(b, x)
    fg.revert(chk)
    assert graph_state(fg) == s0
    fg.remove_feature(h)
    assert not hasattr(fg, "checkpoint") and fg not in h.history


# --- Validator and ReplaceValidate -------------------------------------------------------------


def test_validator_validate_and_consistent():
    (x, y, a, b, c), fg = _graph([NoSub()])
    assert fg.validate() is True
    assert fg.consistent() is True
    assert fg.validate_time >= 0.0
    fg.replace(a, sub(x, 1.0))
    with pytest.raises(InconsistencyError, match="sub"):
        fg.validate()
    assert fg.consistent() is False


def test_consistent_does_not_swallow_other_errors():
    class Broken(Feature):
        def validate(self, fgraph):
            raise RuntimeError("bug")

    (x, y, a, b, c), fg = _graph([Broken()])
    with pytest.raises(RuntimeError):
        fg.consistent()


def test_replace_validate_success():
    (x, y, a, b, c), fg = _graph([NoSub()])
    new = add(x, 1.0)
    fg.replace_validate(a, new, reason="ok")
    assert c.owner.inputs == [b, new]
    fg.check_integrity()


def test_replace_validate_reverts_on_inconsistency():
    finder = NodeFinder()
    (x, y, a, b, c), fg = _graph([NoSub(), finder])
    s0 = graph_state(fg)
    with pytest.raises(InconsistencyError):
        fg.replace_validate(a, sub(x, 1.0))
    assert graph_state(fg) == s0
    fg.check_integrity()
    assert fg.get_nodes(sub) == []


def test_replace_all_validate_reverts_every_replacement():
    (x, y, a, b, c), fg = _graph([NoSub()])
    s0 = graph_state(fg)
    with pytest.raises(InconsistencyError):
        fg.replace_all_validate([(a, add(x, 1.0)), (b, sub(y, 1.0))])
    assert graph_state(fg) == s0
    fg.check_integrity()


@pytest.mark.parametrize("error", ["missing", "cycle", "type"])
def test_replace_all_validate_reverts_on_a_failing_replacement(error):
    (x, y, a, b, c), fg = _graph()
    s0 = graph_state(fg)
    if error == "missing":
        second, exc = (b, add(x, double("z"))), MissingInputError
    elif error == "cycle":
        second, exc = (b, neg(c)), ValueError
    else:
        from tests.toy import integer

        second, exc = (b, integer("i")), TypeError
    with pytest.raises(exc):
        fg.replace_all_validate([(a, mul(x, 3.0)), second])
    assert graph_state(fg) == s0
    fg.check_integrity()


def test_replace_all_validate_remove():
    (x, y, a, b, c), fg = _graph()
    s0 = graph_state(fg)
    # replacing b keeps a (c still uses it): asking that a.owner go is an error
    with pytest.warns(UserWarning, match="still in the graph"):
        with pytest.raises(ReplacementDidNotRemoveError):
            fg.replace_all_validate_remove([(b, y)], remove=[a.owner])
    assert graph_state(fg) == s0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ReplacementDidNotRemoveError):
            fg.replace_all_validate_remove([(b, y)], remove=[a], warn=False)
    assert graph_state(fg) == s0
    fg.replace_all_validate_remove([(b, y), (a, x)], remove=[a.owner, b, a])
    assert fg.apply_nodes == {c.owner} and c.owner.inputs == [y, x]
    fg.check_integrity()


# --- NodeFinder -------------------------------------------------------------------------------


def test_node_finder_tracks_imports_and_prunes():
    finder = NodeFinder()
    (x, y, a, b, c), fg = _graph([finder])
    assert fg.get_nodes(neg) == [a.owner]
    assert fg.get_nodes(add) == [b.owner]
    assert fg.get_nodes(sub) == []
    n1 = neg(y)
    fg.replace(b, add(n1, 1.0))
    assert set(fg.get_nodes(neg)) == {a.owner, n1.owner}
    (new_add,) = fg.get_nodes(add)
    assert new_add is c.owner.inputs[0].owner
    fg.replace(a, x)
    assert fg.get_nodes(neg) == [n1.owner]
    fg.remove_output(0)
    assert fg.get_nodes(neg) == [] and fg.get_nodes(add) == [] and fg.get_nodes(mul) == []
    fg.remove_feature(finder)
    assert not hasattr(fg, "get_nodes")


def test_node_finder_serves_one_graph():
    finder = NodeFinder()
    (x, y, a, b, c), fg = _graph([finder])
    (_, fg2) = _graph()
    fg2.attach_feature(finder)
    assert finder not in fg2._features and not hasattr(fg2, "get_nodes")
    fg.attach_feature(NodeFinder())
    assert sum(isinstance(f, NodeFinder) for f in fg._features) == 1
    # once detached, it can serve another graph
    fg.remove_feature(finder)
    fg2.attach_feature(finder)
    assert fg2.get_nodes(mul) == [fg2.outputs[0].owner]


# --- clone --------------------------------------------------------------------------------------


def test_clone_keeps_features_and_is_independent():
    rec = Recorder()
    (x, y, a, b, c), fg = _graph([NodeFinder(), rec, NoSub()])
    s0 = graph_state(fg)
    n_events = len(rec.events)
    fg2 = fg.clone()
    assert sorted(type(f).__name__ for f in fg2._features) == sorted(type(f).__name__ for f in fg._features)
    assert not set(map(id, fg2._features)) & set(map(id, fg._features))
    assert equal_computations(fg.outputs, fg2.outputs, fg.inputs, fg2.inputs)
    assert not fg2.variables & fg.variables and not fg2.apply_nodes & fg.apply_nodes
    fg2.check_integrity()
    assert_clients_consistent(fg2)
    (na,) = fg2.get_nodes(neg)
    assert na in fg2.apply_nodes
    assert fg2.consistent() and any(isinstance(f, NoSub) for f in fg2._features)
    x2 = fg2.inputs[0]
    with pytest.raises(InconsistencyError):
        fg2.replace_validate(na.outputs[0], sub(x2, 1.0))
    fg2.replace(na.outputs[0], x2)
    fg2.check_integrity()
    assert fg2.get_nodes(neg) == []
    assert graph_state(fg) == s0 and len(rec.events) == n_events
    assert fg.get_nodes(neg) == [a.owner]
    fg.check_integrity()


def test_clone_get_equiv():
    (x, y, a, b, c), fg = _graph([NodeFinder()])
    fg2, equiv = fg.clone_get_equiv()
    assert fg2.inputs == [equiv[x], equiv[y]] and fg2.outputs == [equiv[c]]
    assert {equiv[n] for n in fg.apply_nodes} == fg2.apply_nodes
    assert {equiv[v] for v in fg.variables} == fg2.variables
    assert equiv[c].owner is equiv[c.owner]
    assert evaluate(fg2.outputs, {equiv[x]: 2.0, equiv[y]: 7.0}) == evaluate(fg.outputs, {x: 2.0, y: 7.0})
    fg3, _ = fg.clone_get_equiv(attach_feature=False)
    assert [type(f) for f in fg3._features] == [ReplaceValidate]
    assert not hasattr(fg3, "get_nodes")


# --- pickle -------------------------------------------------------------------------------------


def _pgraph():
    x, y = double("x"), double("y")
    a = pneg(x)
    b = padd(a, y)
    c = padd(b, a)
    return FunctionGraph([x, y], [c, a], features=[NodeFinder(), NoSub()])


def test_pickle_round_trip():
    fg = _pgraph()
    fg2 = pickle.loads(pickle.dumps(fg))
    fg2.check_integrity()
    assert_clients_consistent(fg2)
    assert sorted(type(f).__name__ for f in fg2._features) == ["NoSub", "NodeFinder", "ReplaceValidate"]
    assert equal_computations(fg.outputs, fg2.outputs, fg.inputs, fg2.inputs)
    assert not fg2.variables & fg.variables
    x2, y2 = fg2.inputs
    assert evaluate(fg2.outputs, {x2: 2.0, y2: 7.0}) == [3.0, -2.0]
    # the features work on the copy
    (na,) = fg2.get_nodes(pneg)
    assert na in fg2.apply_nodes
    assert fg2.consistent()
    s0 = graph_state(fg2)
    with pytest.raises(InconsistencyError):
        fg2.replace_validate(na.outputs[0], sub(x2, 1.0))
    assert graph_state(fg2) == s0
    chk = fg2.checkpoint()
    fg2.replace_validate(na.outputs[0], padd(x2, 1.0))
    assert fg2.get_nodes(pneg) == [] and len(fg2.get_nodes(padd)) == 3
    fg2.revert(chk)
    assert graph_state(fg2) == s0
    assert fg2.get_nodes(pneg) == [na]
    fg2.check_integrity()
    # and the original never noticed
    fg.check_integrity()
    assert len(fg.get_nodes(padd)) == 2


def test_pickle_of_a_pickled_graph():
    fg = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(_pgraph()))))
    fg.check_integrity()
    assert hasattr(fg, "replace_validate") and len(fg.get_nodes(padd)) == 2
