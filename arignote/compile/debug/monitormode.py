"""MonitorMode: call your functions before and after every node of a compiled function.

``MonitorMode(pre_func=..., post_func=...)`` runs like ``FAST_RUN`` (rewritten the same
way, on the reference VM) and calls ``pre_func(fgraph, i, node, fn)`` before the ``i``-th
node of ``fgraph.toposort()`` runs and ``post_func(fgraph, i, node, fn)`` after it;
``fn.inputs`` and ``fn.outputs`` are the node's storage cells (``fn.outputs[k][0]`` is
the value of output ``k`` once it ran). :func:`detect_nan` is a ready-made ``post_func``.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> seen = []
>>> def post(fgraph, i, node, fn):
...     seen.append((i, str(node.op), fn.outputs[0][0].tolist()))
>>> x = pt.dvector("x")
>>> f = arignote.function([x], pt.exp(x) * 2.0, mode=MonitorMode(post_func=post, optimizer=None))
>>> f(np.zeros(2)).tolist()
[2.0, 2.0]
>>> seen[0], seen[-1]
((0, 'Exp', [1.0, 1.0]), (2, 'Mul', [2.0, 2.0]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.compile.debug.debugmode import make_checked_vm
from arignote.compile.mode import Mode, predefined_linkers
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.link.python import python_thunk
from arignote.link.vm import VMLinker

__all__ = ["MonitorLinker", "MonitorMode", "detect_nan"]

Hook = Callable[[FunctionGraph, int, Apply, Any], Any]


class _MonitoredThunk:
    """A node's thunk (the Python backend's) between the two hooks."""

    def __init__(
        self,
        fgraph: FunctionGraph,
        index: int,
        node: Apply,
        storage_map: dict,
        compute_map: dict,
        pre: Hook | None,
        post: Hook | None,
    ):
        self.fgraph = fgraph
        self.index = index
        self.node = node
        self.real = python_thunk(node.op, node, storage_map, compute_map, [], None)
        self.lazy = bool(getattr(self.real, "lazy", False))
        self.inputs = [storage_map[v] for v in node.inputs]
        self.outputs = [storage_map[v] for v in node.outputs]
        self.perform = getattr(self.real, "perform", None)
        self.pre = pre
        self.post = post
        self._started = False

    def __call__(self) -> Any:
        # a lazy node (IfElse) may be called again once the inputs it asked for are
        # computed: the hooks see it once, before its first call and after its last
        if self.pre is not None and not self._started:
            self.pre(self.fgraph, self.index, self.node, self)
        needed = self.real()
        if needed and self.lazy:
            self._started = True
            return needed
        self._started = False
        if self.post is not None:
            self.post(self.fgraph, self.index, self.node, self)
        return needed


class MonitorLinker(VMLinker):
    """The reference VM with ``pre_func``/``post_func`` called around each node."""

    __props__ = ("allow_gc", "pre_func", "post_func")

    def __init__(self, pre_func: Hook | None = None, post_func: Hook | None = None, allow_gc: bool = True):
        super().__init__(allow_gc=allow_gc)
        for what, fn in (("pre_func", pre_func), ("post_func", post_func)):
            if fn is not None and not callable(fn):
                raise TypeError(f"MonitorMode: {what} must be callable (fgraph, i, node, fn), got {fn!r}")
        self.pre_func = pre_func
        self.post_func = post_func

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[Any, list[list]]:
        order = {node: i for i, node in enumerate(fgraph.toposort())}

        def wrap(node: Apply, storage_map: dict, compute_map: dict) -> Callable:
            return _MonitoredThunk(
                fgraph, order[node], node, storage_map, compute_map, self.pre_func, self.post_func
            )

        return make_checked_vm(self, fgraph, input_storage, no_recycling, profile, wrap)


@dataclass(frozen=True, init=False)
class MonitorMode(Mode):
    """A Mode whose functions call ``pre_func(fgraph, i, node, fn)`` before and
    ``post_func(fgraph, i, node, fn)`` after running each node (see the module docstring).

    ``optimizer``: as for :class:`Mode` (``"default"``: ``"fast_run"``). ``linker``: ``None``
    or a VM linker (only its ``allow_gc`` is kept: the mode runs its own). ``db``: accepted
    for compatibility.
    """

    pre_func: Any = None
    post_func: Any = None

    def __init__(
        self,
        pre_func: Hook | None = None,
        post_func: Hook | None = None,
        optimizer: Any = "default",
        linker: Any = None,
        db: Any = None,
        name: str = "MonitorMode",
    ):
        object.__setattr__(self, "pre_func", pre_func)
        object.__setattr__(self, "post_func", post_func)
        object.__setattr__(self, "optimizer", "fast_run" if optimizer == "default" else optimizer)
        object.__setattr__(self, "linker", linker)
        object.__setattr__(self, "name", name)
        self.__post_init__()

    def __post_init__(self) -> None:
        linker = self.linker
        if isinstance(linker, str):
            if linker not in predefined_linkers:
                raise ValueError(f"Unknown linker {linker!r}; known: {sorted(predefined_linkers)}")
            linker = predefined_linkers[linker]
        if isinstance(linker, MonitorLinker):
            allow_gc = linker.allow_gc
        elif linker is None or isinstance(linker, VMLinker):
            allow_gc = linker.allow_gc if linker is not None else True
        else:
            raise ValueError(
                f"MonitorMode runs the reference VM with its hooks; got linker={linker!r} "
                "(pass None, or a VMLinker to choose allow_gc)"
            )
        object.__setattr__(self, "linker", MonitorLinker(self.pre_func, self.post_func, allow_gc=allow_gc))
        super().__post_init__()

    def eval(self, fgraph: FunctionGraph, i: int, node: Apply, fn: Callable) -> None:
        """Run the thunk ``fn`` of ``node`` between the two hooks (what each node does)."""
        if self.pre_func is not None:
            self.pre_func(fgraph, i, node, fn)
        fn()
        if self.post_func is not None:
            self.post_func(fgraph, i, node, fn)

    def __str__(self) -> str:
        return (
            f"{self.name}(pre_func={self.pre_func!r}, post_func={self.post_func!r}, optimizer={self.query})"
        )


def detect_nan(fgraph: FunctionGraph, i: int, node: Apply, fn: Any) -> None:
    """A ``post_func`` that prints the node, its inputs and outputs when an output holds NaN."""
    for k, cell in enumerate(fn.outputs):
        value = cell[0]
        if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc" and np.isnan(value).any():
            print(f"*** NaN detected in output {k} of node {i}: {node}")
            print("  inputs:", [c[0] for c in fn.inputs])
            print("  outputs:", [c[0] for c in fn.outputs])
            break
