"""``ScalarLoop``: a scalar op that iterates a graph of scalar ops (PyTensor's
``pytensor.scalar.loop``), for series and fixed-point iterations inside elementwise code.

``ScalarLoop(init, update, constant, until)`` holds a step: the scalar Variables ``init``
(the state) and ``constant`` are the step's inputs, ``update`` (one per state variable, of
its Type) the next state and ``until`` (a bool, optional) the stopping condition. Applied as
``loop(n_steps, *initial_state, *constants)`` it computes::

    state = initial_state
    for _ in range(n_steps):        # with until: stop after the step where until is true
        state, done = step(state, constants)
    return state (, done)           # done: whether until stopped the loop

A loop without ``until`` must have ``n_steps >= 0``. Wrapped in ``Elemwise`` (``Elemwise(loop)``)
it runs over arrays, each element with its own ``n_steps`` and its own stop. As in PyTensor
the loop has no gradient (``grad`` through it is an error naming it).

>>> import numpy as np
>>> from arignote.scalar.basic import float64, mul
>>> x, a = float64("x"), float64("a")
>>> loop = ScalarLoop(init=[x], update=[mul(x, a)], constant=[a])  # x * a ** n_steps
>>> n = np.int64(3)
>>> float(loop.impl(n, 2.0, 10.0))
2000.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable, clone
from arignote.graph.fg import FunctionGraph
from arignote.graph.null_type import disconnected_type, grad_not_implemented
from arignote.graph.op import HasInnerGraph
from arignote.scalar.composite import Composite
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import ScalarType, as_scalar

__all__ = ["ScalarLoop"]


def _rebuild(inputs: Sequence[Variable], outputs: Sequence[Variable], new_inputs: Sequence[Variable]) -> list:
    """``outputs`` recomputed from ``new_inputs`` (in place of ``inputs``) by each node's
    ``make_node``: output Types follow the new input Types."""
    env: dict = dict(zip(inputs, new_inputs))
    for node in FunctionGraph(list(inputs), list(outputs), clone=False).toposort():
        new = node.op.make_node(*[env.get(i, i) for i in node.inputs])
        env.update(zip(node.outputs, new.outputs))
    return [env.get(o, o) for o in outputs]


class ScalarLoop(ScalarOp, HasInnerGraph):
    """A scalar op running a scalar step ``n_steps`` times (see the module). Inputs:
    ``n_steps`` (an integer) and the step's inputs (the initial state, then the constants);
    outputs: the final state, and with ``until`` a bool saying whether it stopped the loop.
    Two loops with the same step (structure, constants, Types) are equal."""

    fusable = False  # a loop stays its own Elemwise node: not inlined into a fused body

    def __init__(
        self,
        init: Sequence[Variable],
        update: Sequence[Variable],
        constant: Sequence[Variable] | None = None,
        until: Variable | None = None,
        name: str = "ScalarLoop",
    ):
        init, update, constant = list(init), list(update), list(constant or [])
        if len(init) != len(update):
            raise ValueError(
                f"ScalarLoop: an update must be given for each init variable, got {len(init)} init and "
                f"{len(update)} update"
            )
        if not init:
            raise ValueError("ScalarLoop: the loop needs at least one state variable (init)")
        for what, group in (("init", init), ("constant", constant)):
            for k, v in enumerate(group):
                if not isinstance(getattr(v, "type", None), ScalarType) or isinstance(v, Constant):
                    raise TypeError(
                        f"ScalarLoop: {what} {k} ({v}) must be a free scalar Variable, got "
                        f"{type(v).__name__} of Type {getattr(v, 'type', None)}"
                    )
        update = [as_scalar(u) for u in update]
        for k, (i, u) in enumerate(zip(init, update)):
            if i.type != u.type:
                raise TypeError(
                    f"ScalarLoop: init and update types must be the same: init {k} is {i} ({i.type}), "
                    f"its update {u} ({u.type}) (cast the update)"
                )
        if set(init) & set(update):
            raise ValueError(
                "ScalarLoop: some updates are init variables themselves; to carry a state unchanged, "
                "wrap it in an identity op"
            )
        outputs = list(update)
        if until is not None:
            until = as_scalar(until)
            if until.type.dtype != "bool":
                raise TypeError(f"ScalarLoop: the until condition must be a bool, got {until} ({until.type})")
            outputs.append(until)
        inner_inputs, inner_outputs = clone([*init, *constant], outputs)
        self.is_while = until is not None
        self.n_update = len(update)
        self._step = Composite(inner_inputs, inner_outputs, name=f"{name}_step")
        self.nin = 1 + len(inner_inputs)
        self.nout = len(outputs)
        super().__init__(None, name=name)

    # -- inner graph and identity ---------------------------------------------------------

    @property
    def fgraph(self) -> FunctionGraph:
        """The step: inputs ``[*state, *constants]``, outputs ``[*next_state(, until)]``."""
        return self._step.fgraph

    @property
    def init(self) -> list[Variable]:
        return self.inner_inputs[: self.n_update]

    @property
    def constant(self) -> list[Variable]:
        return self.inner_inputs[self.n_update :]

    @property
    def update(self) -> list[Variable]:
        return self.inner_outputs[: self.n_update]

    @property
    def until(self) -> Variable | None:
        return self.inner_outputs[-1] if self.is_while else None

    def clone(self) -> ScalarLoop:
        return self  # immutable: the step is a Composite, itself never changed

    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(self) is type(other)
            and self.is_while == other.is_while
            and self.n_update == other.n_update
            and self._step == other._step
        )

    def __hash__(self) -> int:
        return hash((type(self), self.is_while, self.n_update, self._step))

    def __str__(self) -> str:
        return self.name

    # -- typing ---------------------------------------------------------------------------

    def output_types(self, types: Sequence[ScalarType]) -> list[ScalarType]:
        expected = [v.type for v in self.inner_inputs]
        if len(types) != self.nin:
            raise TypeError(
                f"{self} takes {self.nin} inputs (n_steps and {self.nin - 1} more), got {len(types)}"
            )
        if np.dtype(types[0].dtype).kind not in "iu":
            raise TypeError(f"{self}: n_steps (input 0) must be an integer, got {types[0].dtype}")
        if list(types[1:]) != expected:
            raise TypeError(
                f"{self} takes the step's input types ({', '.join(str(t) for t in expected)}) after "
                f"n_steps, got ({', '.join(str(t) for t in types[1:])})"
            )
        return [v.type for v in self.inner_outputs]

    def make_node(self, n_steps: Any, *inputs: Any) -> Apply:
        """As PyTensor's: inputs of other scalar Types make a loop whose step is rebuilt for
        them (its updates must keep the state's new Types)."""
        if len(inputs) != self.nin - 1:
            raise TypeError(f"{self} takes n_steps and {self.nin - 1} more inputs, got {len(inputs)} more")
        n_steps = as_scalar(n_steps)
        if np.dtype(n_steps.type.dtype).kind not in "iu":
            raise TypeError(
                f"{self}: n_steps must be an integer scalar, got {n_steps} ({n_steps.type.dtype})"
            )
        inputs = [as_scalar(i) for i in inputs]
        if [i.type for i in inputs] == [v.type for v in self.inner_inputs]:
            return super().make_node(n_steps, *inputs)
        fresh = [i.type() for i in inputs]
        outs = _rebuild(self.inner_inputs, self.inner_outputs, fresh)
        until = outs[-1] if self.is_while else None
        op = ScalarLoop(
            fresh[: self.n_update], outs[: self.n_update], fresh[self.n_update :], until, name=self.name
        )
        return op.make_node(n_steps, *inputs)

    # -- running --------------------------------------------------------------------------

    def impl(self, n_steps: Any, *inputs: Any) -> Any:
        step = self._step.impl
        k = self.n_update
        state, constant = list(inputs[:k]), inputs[k:]
        if not self.is_while and np.any(np.asarray(n_steps) < 0):
            raise ValueError(
                f"{self}: n_steps is negative ({n_steps}); a loop without until needs n_steps >= 0"
            )
        if all(np.ndim(v) == 0 for v in (n_steps, *inputs)):
            done = False
            for _ in range(int(n_steps)):
                out = step(*state, *constant)
                out = [out] if self.nout == 1 else list(out)
                if self.is_while:
                    *state, done = out
                    if done:
                        break
                else:
                    state = out
            return self._results(state, done)
        # arrays (inside Elemwise): every element runs its own count and stops on its own
        shape = np.broadcast_shapes(*(np.shape(v) for v in (n_steps, *inputs)))
        n_steps = np.broadcast_to(n_steps, shape)
        state = [np.array(np.broadcast_to(v, shape)) for v in state]
        done = np.zeros(shape, dtype=bool)
        for i in range(int(n_steps.max(initial=0))):
            active = (i < n_steps) & ~done
            if not active.any():
                break
            out = step(*state, *constant)
            out = [out] if self.nout == 1 else list(out)
            for s, new in zip(state, out[:k]):
                np.copyto(s, new, where=active, casting="unsafe")
            if self.is_while:
                done |= active & np.asarray(out[k], dtype=bool)
        return self._results(state, done)

    def _results(self, state: list, done: Any) -> Any:
        results = [np.asarray(s, dtype=v.type.dtype)[()] for s, v in zip(state, self.update)]
        if self.is_while:
            results.append(np.asarray(done, dtype=bool)[()])
        return results[0] if len(results) == 1 else tuple(results)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for cell, out, value in zip(output_storage, node.outputs, results):
            cell[0] = np.asarray(value).astype(out.type.dtype)[()]

    # -- gradient -------------------------------------------------------------------------

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False] * self.nout] + [[True] * self.nout for _ in range(self.nin - 1)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        why = "(a ScalarLoop has no derivative here, as in PyTensor)"
        return [disconnected_type()] + [
            grad_not_implemented(self, k, x, why) for k, x in enumerate(inputs) if k > 0
        ]
