"""Random graphs, random edits: a FunctionGraph stays consistent with a plain model of it.

The model is the graph's bare structure kept on the side: the inputs, the outputs and, for
every node ever built, the list of its inputs. Each edit is applied to the model by hand
(``replace``: every node of the graph that uses ``var`` uses ``new`` instead, ...), and after
each step the FunctionGraph must agree with the model on everything: nodes, variables,
clients (recomputed from scratch), outputs, and the values the outputs evaluate to.
"""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from arignote.graph.basic import Apply, Variable
from arignote.graph.features import Feature, NodeFinder
from arignote.graph.fg import FunctionGraph, Output
from arignote.link.perform import evaluate
from tests.graph.test_fg import client_counter, graph_state
from tests.toy import add, divmod_op, double, integer, mul, neg, sub

OPS = [add, mul, sub, neg, divmod_op]
NIN = {add: 2, mul: 2, sub: 2, neg: 1, divmod_op: 2}
INPUT_VALUES = [1.5, -2.5, 0.75, 2.25, -0.5]  # input x<k> is worth INPUT_VALUES[k % 5]


def _divmod(a, b):
    q, r = divmod(a, b)
    return float(q), float(r)


# computed here, not by the Ops' perform: the model is independent of the graph code
PY = {
    add: lambda a, b: (a + b,),
    mul: lambda a, b: (a * b,),
    sub: lambda a, b: (a - b,),
    neg: lambda a: (-a,),
    divmod_op: _divmod,
}


class Live(Feature):
    """The set of nodes as told by on_import / on_prune (each told once)."""

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


class Model:
    def __init__(self):
        self.inputs: list = []
        self.outputs: list = []
        self.node_inputs: dict = {}  # every node ever built -> its inputs as the model sees them
        self.created: list = []  # every Variable ever built, in creation order

    def register(self, node: Apply) -> None:
        self.node_inputs[node] = list(node.inputs)
        for v in node.inputs + node.outputs:
            if v not in self.created_set:
                self.created.append(v)
                self.created_set.add(v)

    created_set: set

    def snapshot(self):
        return list(self.outputs), {n: list(i) for n, i in self.node_inputs.items()}

    def restore(self, snap):
        self.outputs, self.node_inputs = list(snap[0]), {n: list(i) for n, i in snap[1].items()}

    def nodes(self) -> set:
        seen: set = set()
        stack = [o.owner for o in self.outputs if o.owner is not None]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(i.owner for i in self.node_inputs[n] if i.owner is not None)
        return seen

    def has_cycle(self) -> bool:
        state: dict = {}  # 1 visiting, 2 done
        for root in [o.owner for o in self.outputs if o.owner is not None]:
            if state.get(root) == 2:
                continue
            stack = [(root, iter(self.node_inputs[root]))]
            state[root] = 1
            while stack:
                n, it = stack[-1]
                for i in it:
                    m = i.owner
                    if m is None or state.get(m) == 2:
                        continue
                    if state.get(m) == 1:
                        return True
                    state[m] = 1
                    stack.append((m, iter(self.node_inputs[m])))
                    break
                else:
                    stack.pop()
                    state[n] = 2
        return False

    def variables(self) -> set:
        vs = set(self.inputs) | set(self.outputs)
        for n in self.nodes():
            vs.update(self.node_inputs[n])
            vs.update(n.outputs)
        return vs

    def clients(self) -> dict:
        cl = {v: Counter() for v in self.variables()}
        for n in self.nodes():
            for i, v in enumerate(self.node_inputs[n]):
                cl[v][(n, i)] += 1
        for k, v in enumerate(self.outputs):
            cl[v][("output", k)] += 1
        return cl

    def evaluate(self, given: dict) -> list:
        vals = dict(given)
        for root in self.outputs:
            stack = [root]
            while stack:
                v = stack[-1]
                if v in vals:
                    stack.pop()
                    continue
                if v.owner is None:
                    vals[v] = v.data  # a constant (inputs are all given)
                    continue
                node = v.owner
                missing = [i for i in self.node_inputs[node] if i not in vals]
                if missing:
                    stack.extend(missing)
                    continue
                outs = PY[node.op](*(vals[i] for i in self.node_inputs[node]))
                vals.update(zip(node.outputs, outs))
        return [vals[o] for o in self.outputs]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _eval_or_error(fn):
    try:
        return fn(), None
    except ZeroDivisionError as err:
        return None, type(err)


def check(fg: FunctionGraph, model: Model) -> None:
    fg.check_integrity()
    assert fg.inputs == model.inputs
    assert len(fg.outputs) == len(model.outputs)
    assert all(a is b for a, b in zip(fg.outputs, model.outputs))
    nodes = model.nodes()
    assert fg.apply_nodes == nodes
    for n in nodes:
        assert len(n.inputs) == len(model.node_inputs[n])
        assert all(a is b for a, b in zip(n.inputs, model.node_inputs[n]))
    assert fg.variables == model.variables()
    expected = model.clients()
    assert set(fg.clients) == set(expected)
    for v, c in expected.items():
        assert client_counter(fg, v) == c, v
        for node, i in fg.clients[v]:
            assert node.inputs[i] is v
            if isinstance(node.op, Output):
                assert fg.outputs[node.op.idx] is v
    # the clients a fresh graph computes from scratch from (inputs, outputs)
    fresh = FunctionGraph(fg.inputs, fg.outputs, clone=False)
    assert set(fresh.clients) == set(fg.clients)
    for v in fg.clients:
        assert client_counter(fresh, v) == client_counter(fg, v)
    # the features heard every import and prune
    live = next(f for f in fg._features if isinstance(f, Live))
    assert live.live == fg.apply_nodes
    for op in OPS:
        assert set(fg.get_nodes(op)) == {n for n in nodes if n.op == op}
    # values
    given = {v: INPUT_VALUES[int(v.name[1:]) % len(INPUT_VALUES)] for v in fg.inputs}
    got, got_err = _eval_or_error(lambda: evaluate(fg.outputs, given))
    want, want_err = _eval_or_error(lambda: model.evaluate(given))
    assert got_err == want_err
    if want is not None:
        assert len(got) == len(want)
        assert all(_same(a, b) for a, b in zip(got, want)), (got, want)


# --- drawing ----------------------------------------------------------------------------------


def _pick(data, seq, label):
    return seq[data.draw(st.integers(0, len(seq) - 1), label=label)]


def graph_vars(fg: FunctionGraph, model: Model) -> list:
    return [v for v in model.created if v in fg.variables]


def graph_nodes(fg: FunctionGraph, model: Model) -> list:
    seen: list = []
    for v in model.created:
        n = v.owner
        if n is not None and n in fg.apply_nodes and n not in seen:
            seen.append(n)
    return seen


def new_var(data, model: Model, pool: list) -> Variable:
    """A new node's output, computed from ``pool`` (and maybe a constant)."""
    op = data.draw(st.sampled_from(OPS), label="op")
    args = []
    for _ in range(NIN[op]):
        if data.draw(st.integers(0, 5), label="const?") == 5:
            args.append(double.make_constant(float(data.draw(st.integers(-3, 3), label="c"))))
        else:
            args.append(_pick(data, pool, "arg"))
    node = op.make_node(*args)
    model.register(node)
    return _pick(data, node.outputs, "out")


def build(data):
    model = Model()
    model.created_set = set()
    n_inputs = data.draw(st.integers(1, 3), label="n_inputs")
    inputs = [double(f"x{k}") for k in range(n_inputs)]
    model.inputs = list(inputs)
    model.created.extend(inputs)
    model.created_set.update(inputs)
    pool = list(inputs)
    last = None
    for _ in range(data.draw(st.integers(1, 30), label="n_nodes")):
        last = new_var(data, model, pool)
        pool.extend(v for v in last.owner.outputs if v not in pool)
    outputs = [last] + [_pick(data, pool, "output") for _ in range(data.draw(st.integers(0, 3)))]
    model.outputs = list(outputs)
    fg = FunctionGraph(inputs, outputs, clone=False, features=[Live(), NodeFinder()])
    return fg, model


STEPS = [
    "replace",
    "replace_new",
    "add_output",
    "remove_output",
    "remove_node",
    "change_input",
    "type",
    "add_input",
    "remove_input",
]


def step(data, fg: FunctionGraph, model: Model, kind: str, structural: bool = True) -> None:
    pool = graph_vars(fg, model)
    if not pool and kind != "add_input":
        return
    if kind in ("replace", "replace_new"):
        var = _pick(data, pool, "var")
        new = _pick(data, pool, "new") if kind == "replace" else new_var(data, model, pool)
        snap = model.snapshot()
        users = model.nodes()
        for n in users:
            model.node_inputs[n] = [new if i is var else i for i in model.node_inputs[n]]
        model.outputs = [new if o is var else o for o in model.outputs]
        if model.has_cycle():
            event("replace refused: it would make a cycle")
            model.restore(snap)
            before = graph_state(fg)
            try:
                fg.replace(var, new, reason="prop")
            except ValueError as err:
                assert "cycle" in str(err)
            else:
                raise AssertionError(f"replace({var}, {new}) should have been refused: it makes a cycle")
            assert graph_state(fg) == before
        else:
            fg.replace(var, new, reason="prop")
    elif kind == "change_input":
        nodes = graph_nodes(fg, model)
        n_out = len(fg.outputs)
        k = data.draw(st.integers(0, len(nodes) + n_out - 1), label="node") if nodes or n_out else None
        if k is None:
            return
        new = _pick(data, pool, "new") if data.draw(st.booleans()) else new_var(data, model, pool)
        snap = model.snapshot()
        if k < len(nodes):
            node = nodes[k]
            i = data.draw(st.integers(0, len(node.inputs) - 1), label="i")
            model.node_inputs[node][i] = new
        else:
            idx = k - len(nodes)
            (node,) = [
                n for n, _ in fg.clients[fg.outputs[idx]] if isinstance(n.op, Output) and n.op.idx == idx
            ]
            i = 0
            model.outputs[idx] = new
        if model.has_cycle():
            event("change_node_input skipped: it would make a cycle")
            model.restore(snap)  # change_node_input does not check for cycles: skip it
            return
        fg.change_node_input(node, i, new, reason="prop", check=True)
    elif kind == "add_output" and structural:
        var = _pick(data, pool, "var") if data.draw(st.booleans()) else new_var(data, model, pool)
        fg.add_output(var, reason="prop")
        model.outputs.append(var)
    elif kind == "remove_output" and structural:
        if not fg.outputs:
            return
        idx = data.draw(st.integers(0, len(fg.outputs) - 1), label="idx")
        fg.remove_output(idx, reason="prop")
        model.outputs.pop(idx)
    elif kind == "remove_node" and structural:
        nodes = graph_nodes(fg, model)
        if not nodes:
            return
        node = _pick(data, nodes, "node")
        doomed = {node}
        changed = True
        live = model.nodes()
        while changed:
            changed = False
            for n in live - doomed:
                if any(i.owner in doomed for i in model.node_inputs[n]):
                    doomed.add(n)
                    changed = True
        fg.remove_node(node, reason="prop")
        model.outputs = [o for o in model.outputs if o.owner not in doomed]
    elif kind == "add_input" and structural:
        var = double(f"x{len(model.created)}")
        model.created.append(var)
        model.created_set.add(var)
        fg.add_input(var)
        model.inputs.append(var)
    elif kind == "remove_input" and structural:
        if not fg.inputs:
            return
        idx = data.draw(st.integers(0, len(fg.inputs) - 1), label="input")
        var = fg.inputs[idx]
        live = model.nodes()
        doomed = {n for n in live if var in model.node_inputs[n]}
        changed = True
        while changed:
            changed = False
            for n in live - doomed:
                if any(i.owner in doomed for i in model.node_inputs[n]):
                    doomed.add(n)
                    changed = True
        fg.remove_input(idx, reason="prop")
        model.outputs = [o for o in model.outputs if o is not var and o.owner not in doomed]
        model.inputs.pop(idx)
    elif kind == "type":
        var = _pick(data, pool, "var")
        before = graph_state(fg)
        try:
            fg.replace(var, integer("i"))
        except TypeError as err:
            assert "int" in str(err) and "double" in str(err)
        else:
            raise AssertionError("replacing a double by an int should be a TypeError")
        assert graph_state(fg) == before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_keep_the_graph_consistent(data):
    fg, model = build(data)
    check(fg, model)
    for _ in range(data.draw(st.integers(1, 12), label="n_steps")):
        step(data, fg, model, data.draw(st.sampled_from(STEPS), label="kind"))
        check(fg, model)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_revert_undoes_random_replacements(data):
    fg, model = build(data)
    before = graph_state(fg)
    snap = model.snapshot()
    chk = fg.checkpoint()
    for _ in range(data.draw(st.integers(1, 8), label="n_steps")):
        kind = data.draw(st.sampled_from(["replace", "replace_new", "change_input", "type"]), label="kind")
        step(data, fg, model, kind, structural=False)
        check(fg, model)
    fg.revert(chk)
    model.restore(snap)
    assert graph_state(fg) == before
    check(fg, model)
