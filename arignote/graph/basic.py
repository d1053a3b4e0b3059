"""The nodes of a graph: :class:`Variable`, :class:`Constant` and :class:`Apply`.

A graph is bipartite: a Variable points at the Apply that produced it through ``owner``
(``None`` for graph inputs and constants), and an Apply points at its ``inputs`` and
``outputs``. Variables and Applies compare by identity; Ops and Types compare by value.

>>> from arignote.graph.basic import Apply, Variable
>>> from arignote.graph.op import Op
>>> from arignote.graph.type import Type
>>> class Anything(Type):
...     def filter(self, data, strict=False, allow_downcast=None):
...         return data
>>> class Pair(Op):
...     __props__ = ()
...     def make_node(self, a, b):
...         return Apply(self, [a, b], [a.type()])
...     def perform(self, node, inputs, output_storage):
...         output_storage[0][0] = tuple(inputs)
>>> t = Anything()
>>> x, y = t("x"), t("y")
>>> z = Pair()(x, y)
>>> z.owner.inputs == [x, y], z.owner.op
(True, Pair)
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterable, Sequence
from copy import copy
from typing import TYPE_CHECKING, Any

from arignote.graph.pickling import ORDER_KEY, new_object, node_order_hint
from arignote.graph.utils import MissingInputError, Scratchpad, format_site, gc_paused, user_frame_site

if TYPE_CHECKING:
    from arignote.graph.op import Op
    from arignote.graph.type import Type

__all__ = [
    "Apply",
    "AtomicVariable",
    "Constant",
    "FrozenApply",
    "Node",
    "NominalVariable",
    "Variable",
    "as_string",
    "clone",
    "clone_get_equiv",
    "equal_computations",
]


class Node:
    """Common base of :class:`Apply` and :class:`Variable`: something with parents."""

    __slots__ = ()

    def get_parents(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must define get_parents")


def _get_tag(self: Any) -> Scratchpad:
    tag = self._tag
    if tag is None:
        tag = self._tag = Scratchpad()
    return tag


def _set_tag(self: Any, value: Scratchpad) -> None:
    self._tag = value


# ``tag`` is made on first use: most nodes and Variables never touch it, and building a
# graph of 100k nodes should not pay for 100k empty scratchpads.
_tag_property = property(_get_tag, _set_tag, doc="A free-form scratchpad, made on first use.")


class Apply(Node):
    """One application of an :class:`~arignote.graph.op.Op` to input Variables.

    ``Apply(op, inputs, outputs)`` takes ownership of ``outputs``: each gets ``owner`` set
    to the new node and ``index`` to its position. An output that already belongs to
    another Apply is an error, as is an output that is also an input.

    The user's ``file:line`` where the node was created is recorded in ``trace`` so that
    a later runtime error can point at it.
    """

    __slots__ = ("__weakref__", "_tag", "inputs", "op", "outputs", "trace")

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.op = op
        self.inputs = _checked_inputs(op, inputs)
        self.outputs = outs = list(outputs)
        # Check every output before taking ownership of any: a rejected node must not
        # leave its would-be outputs (possibly graph inputs) pointing at it.
        ins = self.inputs
        for i, out in enumerate(outs):
            if not isinstance(out, Variable):
                raise TypeError(
                    f"Apply of {op}: output {i} must be a Variable, got {type(out).__name__} {out!r}"
                )
            if out.owner is None:
                if isinstance(out, AtomicVariable):
                    raise TypeError(
                        f"Apply of {op}: output {i} is a {type(out).__name__}; "
                        "constants and nominal variables cannot be computed"
                    )
            elif out.owner is not self or out.index != i:
                raise ValueError(
                    f"Apply of {op}: output {i} ({out}) is already the output of another node "
                    f"({out.owner}); make a fresh Variable with `type()` instead"
                )
            if any(out is inp for inp in ins):
                raise ValueError(f"Apply of {op}: {out} is both an input and an output; that is a cycle")
        if len(outs) > 1 and len({id(o) for o in outs}) != len(outs):
            raise ValueError(f"Apply of {op}: the same Variable is given as several outputs")
        for i, out in enumerate(outs):
            out.owner = self
            out.index = i
        self._tag = None
        self.trace = user_frame_site()

    @classmethod
    def _unchecked(cls, op: Op, inputs: list, outputs: list, trace: Any) -> Apply:
        """Build a node whose inputs/outputs are known good (cloning); no frame walk."""
        node = object.__new__(cls)
        node.op = op
        node.inputs = inputs
        node.outputs = outputs
        for i, out in enumerate(outputs):
            out.owner = node
            out.index = i
        node._tag = None
        node.trace = trace
        return node

    tag = _tag_property

    # -- accessors ------------------------------------------------------------------------

    def default_output(self) -> Variable:
        """The output that ``op(*inputs)`` returns: ``outputs[op.default_output]``.

        With no ``default_output`` declared, the only output; several outputs and no
        declaration is an error.
        """
        do = getattr(self.op, "default_output", None)
        if do is None:
            if len(self.outputs) == 1:
                return self.outputs[0]
            raise ValueError(
                f"{self.op} has {len(self.outputs)} outputs and no default_output; "
                "pick one with node.outputs[i]"
            )
        if not isinstance(do, int) or not -len(self.outputs) <= do < len(self.outputs):
            raise ValueError(f"{self.op}.default_output={do!r} is not a valid output index")
        return self.outputs[do]

    @property
    def out(self) -> Variable:
        """Alias of :meth:`default_output`."""
        return self.default_output()

    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    @property
    def params_type(self) -> Any:
        return getattr(self.op, "params_type", None)

    def run_params(self) -> Any:
        """The parameters passed to ``perform`` as ``params`` (``op.get_params(node)``)."""
        get_params = getattr(self.op, "get_params", None)
        if get_params is None:
            raise AttributeError(f"{self.op} has no get_params")
        return get_params(self)

    def get_parents(self) -> list[Variable]:
        return list(self.inputs)

    def dprint(self, **kwargs: Any) -> Any:
        """Print the graph that computes this node's outputs
        (:func:`arignote.printing.debugprint`, which takes the same keyword arguments)."""
        return dprint_graph(self, **kwargs)

    @property
    def creation_site(self) -> str:
        """Where the user created this node, as ``File "...", line N, in f`` + source."""
        return format_site(self.trace)

    # -- copies ---------------------------------------------------------------------------

    def clone(self, clone_inner_graph: bool = False) -> Apply:
        """A new node with the same op and inputs and fresh (cloned) outputs."""
        op = self.op
        if clone_inner_graph and isinstance(op, _has_inner_graph()):
            op = op.clone()
        cp = Apply._unchecked(op, list(self.inputs), [o.clone() for o in self.outputs], self.trace)
        if self._tag is not None:
            cp._tag = copy(self._tag)
        return cp

    def clone_with_new_inputs(
        self, inputs: Sequence[Variable], strict: bool = True, clone_inner_graph: bool = False
    ) -> Apply:
        """A node computing the same thing from ``inputs``.

        With ``strict`` each new input is first filtered through the old input's Type
        (narrowing allowed, an incompatible Type is a ``TypeError``). Where the Types then
        differ from the old ones the node is rebuilt with ``op.make_node`` so output Types
        are recomputed; otherwise outputs are cloned as they are.
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(
                f"{self.op} takes {len(self.inputs)} inputs; clone_with_new_inputs got {len(inputs)}"
            )
        new_inputs = list(inputs)
        remake = False
        for i, (curr, new) in enumerate(zip(self.inputs, new_inputs)):
            if curr.type != new.type:
                if strict:
                    new = curr.type.filter_variable(new)
                    new_inputs[i] = new
                    if curr.type != new.type:
                        remake = True
                else:
                    remake = True
        if remake:
            new_node = self.op.make_node(*new_inputs)
            if self._tag is not None:
                new_node.tag = copy(self._tag).__update__(new_node.tag)
            new_node.trace = self.trace
            return new_node
        op = self.op
        if clone_inner_graph and isinstance(op, _has_inner_graph()):
            op = op.clone()
        cp = Apply._unchecked(op, new_inputs, [o.clone() for o in self.outputs], self.trace)
        if self._tag is not None:
            cp._tag = copy(self._tag)
        return cp

    # -- pickling (iterative at any depth: see arignote.graph.pickling) -------------------

    def __reduce_ex__(self, protocol: int) -> Any:
        # State ``(order hint, fields)``: the hint, saved first, lists the ancestors still
        # to pickle in topological order, so pickle never recurses along the graph.
        fields = {k: getattr(self, k) for k in _APPLY_FIELDS}
        return (new_object(protocol), (type(self),), (node_order_hint(self), fields))

    def __setstate__(self, state: tuple) -> None:
        _, fields = state
        for k, v in fields.items():
            setattr(self, k, v)

    def __copy__(self) -> Apply:
        cp = object.__new__(type(self))
        for k in _APPLY_FIELDS:
            setattr(cp, k, getattr(self, k))
        return cp

    def __str__(self) -> str:
        return as_string(self)

    __repr__ = __str__


_APPLY_FIELDS = ("op", "inputs", "outputs", "_tag", "trace")


def _checked_inputs(op: Any, inputs: Iterable) -> list:
    ins = list(inputs)
    for i, inp in enumerate(ins):
        if not isinstance(inp, Variable):
            raise TypeError(f"Apply of {op}: input {i} must be a Variable, got {type(inp).__name__} {inp!r}")
    return ins


def _without_fn_cache(state: Any) -> Any:
    """A root Variable's pickled state without ``eval()``'s compiled functions: a cache, and
    one that refers back to the Variable, so that loading it would link those functions
    before the Variable has its own state (its ``type``, a Constant's ``data``). Interned
    constants (``as_tensor_variable(2.0)``) carry the cache of any earlier ``eval()``."""
    if isinstance(state, tuple):  # (dict, slots)
        return (_without_fn_cache(state[0]), *state[1:])
    if isinstance(state, dict):
        state = dict(state)
        state.pop("_fn_cache", None)
    return state


def _has_inner_graph() -> type:
    from arignote.graph.op import HasInnerGraph

    return HasInnerGraph


class Variable(Node):
    """A value in a graph: an input, a constant, or the output of an :class:`Apply`.

    Fields: ``type`` (its :class:`~arignote.graph.type.Type`), ``owner`` (the Apply that
    computes it, or ``None``), ``index`` (its position in ``owner.outputs``), ``name``
    and ``tag`` (a free-form scratchpad). Variables compare and hash by identity.
    """

    __count__ = 0  # for auto_name; a class-level counter avoids id() reuse collisions

    def __init__(
        self, type: Type, owner: Apply | None = None, index: int | None = None, name: str | None = None
    ):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self._tag = None

    tag = _tag_property

    @property
    def auto_name(self) -> str:
        """A stable name unique to this Variable, for printing and code generation."""
        name = self.__dict__.get("_auto_name")
        if name is None:
            Variable.__count__ += 1
            name = self.__dict__["_auto_name"] = f"auto_{Variable.__count__}"
        return name

    def get_parents(self) -> list[Apply]:
        return [self.owner] if self.owner is not None else []

    @property
    def owner_op(self) -> Any:
        """The Op of the Apply that computes this Variable, or None for a graph input or a
        constant."""
        owner = self.owner
        return None if owner is None else owner.op

    @property
    def owner_op_and_inputs(self) -> tuple:
        """``(op, *inputs)`` of the Apply that computes this Variable (for matching a
        pattern in one unpacking), or ``(None,)`` when nothing computes it."""
        owner = self.owner
        return (None,) if owner is None else (owner.op, *owner.inputs)

    # -- pickling (iterative at any depth: see arignote.graph.pickling) -------------------

    def __reduce_ex__(self, protocol: int) -> Any:
        owner = self.owner
        if owner is None:  # a root: nothing deep behind it
            reduced = object.__reduce_ex__(self, protocol)
            if "_fn_cache" in self.__dict__:  # (see _without_fn_cache)
                reduced = (*reduced[:2], _without_fn_cache(reduced[2]), *reduced[3:])
            return reduced
        state = self.__getstate__()
        if isinstance(state, dict):
            state = dict(state)
            state.pop("_fn_cache", None)  # compiled functions of eval(): a cache
            hint = node_order_hint(owner)
            if hint is not None:  # saved first: the ancestors, in topological order
                state = {ORDER_KEY: hint, **state}
        return (new_object(protocol), (type(self),), state)

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple):  # (dict, slots) of a subclass with __slots__
            state, slots = state
            for k, v in (slots or {}).items():
                setattr(self, k, v)
        if state:
            if ORDER_KEY in state:
                state = dict(state)
                del state[ORDER_KEY]
            self.__dict__.update(state)

    def __copy__(self) -> Variable:
        cls = type(self)
        getnewargs = getattr(self, "__getnewargs__", None)
        cp = cls.__new__(cls, *getnewargs()) if getnewargs is not None else cls.__new__(cls)
        if cp is not self:
            cp.__dict__.update(self.__dict__)
        return cp

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        owner = self.owner
        if owner is not None:
            if self.index == owner.op.default_output:
                return f"{owner.op}.out"
            return f"{owner.op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        return str(self)

    def clone(self, **kwargs: Any) -> Variable:
        """A new Variable of the same Type and name, with a copy of ``tag`` and no owner.

        Keyword arguments override attributes of the copy (``name=``, ``type=``).
        """
        if not kwargs:  # the hot path of graph cloning
            cp = self.__class__(self.type, None, None, self.name)
        else:
            cp = self.__class__(kwargs.pop("type", self.type), None, None, kwargs.pop("name", self.name))
            for k, v in kwargs.items():
                setattr(cp, k, v)
        tag = self._tag
        if tag is not None:
            cp._tag = copy(tag)
        return cp

    def transfer(self, target: str) -> Variable:
        """Move this Variable's value to ``target`` through the registered transfer functions."""
        from arignote.graph.type import transfer

        return transfer(self, target)

    def dprint(self, **kwargs: Any) -> Any:
        """Print the graph that computes this Variable (:func:`arignote.printing.debugprint`,
        which takes the same keyword arguments; ``file="str"`` returns the text).

        >>> from arignote.graph.type import Type
        >>> class Num(Type):
        ...     def filter(self, data, strict=False, allow_downcast=None):
        ...         return float(data)
        >>> print(Num()("x").dprint(file="str"), end="")
        x [id A]
        """
        return dprint_graph(self, **kwargs)

    def eval(self, inputs_to_values: dict | None = None, **kwargs: Any) -> Any:
        """Compute this Variable's value, given values for the graph inputs it needs.

        ``inputs_to_values`` maps input Variables (or their names) to values; each value
        is filtered through its Variable's Type first. The compiled function is cached on
        the Variable, keyed by the inputs given (and keyword arguments, passed to
        :func:`arignote.function`, e.g. ``mode=``), so repeated calls do not recompile.

        >>> from arignote.graph.type import Type
        >>> from arignote.graph.op import Op
        >>> class Num(Type):
        ...     def filter(self, data, strict=False, allow_downcast=None):
        ...         return float(data)
        >>> class Twice(Op):
        ...     __props__ = ()
        ...     def make_node(self, x):
        ...         return Apply(self, [x], [x.type()])
        ...     def perform(self, node, inputs, output_storage):
        ...         output_storage[0][0] = 2 * inputs[0]
        >>> x = Num()("x")
        >>> Twice()(x).eval({x: 3})
        6.0
        """
        from arignote.compile.function import function
        from arignote.link.perform import resolve_inputs

        values = resolve_inputs([self], inputs_to_values or {})
        key = (tuple(values), tuple(sorted(kwargs.items())))
        cache = self.__dict__.setdefault("_fn_cache", {})
        try:
            fn = cache.get(key)
        except TypeError:  # unhashable keyword arguments: compile without caching
            fn, key = None, None
        if fn is None:
            try:
                fn = function(list(values), self, **kwargs)
            except MissingInputError as err:
                var = err.variable
                raise MissingInputError(
                    f"eval: no value given for input {var} of Type {getattr(var, 'type', '?')}; pass it "
                    f"in the dict, e.g. .eval({{{var}: value}}). ({err})",
                    variable=var,
                ) from None
            if key is not None:
                cache[key] = fn
        return fn(*values.values())


class AtomicVariable(Variable):
    """A Variable that cannot have an owner (constants and nominal variables)."""

    def __init__(self, type: Type, name: str | None = None, **kwargs: Any):
        super().__init__(type, None, None, name=name, **kwargs)

    @property
    def owner(self) -> None:
        return None

    @owner.setter
    def owner(self, value: Any) -> None:
        if value is not None:
            raise ValueError(f"{type(self).__name__} {self} cannot have an owner")

    @property
    def index(self) -> None:
        return None

    @index.setter
    def index(self, value: Any) -> None:
        if value is not None:
            raise ValueError(f"{type(self).__name__} {self} cannot have an index")

    def signature(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define signature")

    def merge_signature(self) -> Any:
        return self.signature()

    def equals(self, other: Any) -> bool:
        """Whether ``other`` stands for the same value (used to merge duplicates)."""
        return isinstance(other, type(self)) and self.signature() == other.signature()

    def clone(self, **kwargs: Any) -> AtomicVariable:
        return self


class NominalVariable(AtomicVariable):
    """A placeholder identified by ``(id, type)``: two with the same pair are the same object.

    Used where a graph must be keyed independently of object identity (inner graphs
    of Ops, caches).
    """

    __instances__: dict = {}

    def __new__(cls, id: Any, typ: Type, **kwargs: Any) -> NominalVariable:
        key = (typ, id)
        inst = cls.__instances__.get(key)
        if inst is None:
            inst = super().__new__(cls)
            inst._nominal_id = id
            cls.__instances__[key] = inst
        return inst

    def __init__(self, id: Any, typ: Type, name: str | None = None):
        if "type" in self.__dict__:
            return
        self.id = id
        super().__init__(typ, name=name if name is not None else f"*{id}-{typ}")

    def __getnewargs__(self) -> tuple:
        return (self.id, self.type)

    def signature(self) -> tuple:
        return (self.type, self.id)


class Constant(AtomicVariable):
    """A Variable with a fixed value, ``data``, filtered through its Type at creation.

    A Constant never needs to be passed as a function input (passing one is an error)
    and an Op must never modify it. Two Constants that :meth:`equals` each other (same
    Type and same data) are merged by the rewriter. Cloning returns the Constant itself.
    """

    def __init__(self, type: Type, data: Any, name: str | None = None):
        super().__init__(type, name=name)
        self.data = type.filter(data)

    @property
    def value(self) -> Any:
        return self.data

    def signature(self) -> tuple:
        return (self.type, self.data)

    def get_test_value(self) -> Any:
        return self.data

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        data = str(self.data)
        if len(data) > 20:
            data = data[:10].strip() + " ... " + data[-10:].strip()
        return f"{type(self).__name__}{{{data}}}"


class FrozenApply(Apply):
    """An immutable Apply that exists once per ``(op, inputs, output Types)``.

    Building one with the same Op (equal by ``__props__``), the same inputs and the same
    output Types returns the existing node, so equal subgraphs built from frozen nodes are
    one object. Inputs are keyed by identity, except Constants, keyed by value (equal
    constants give one node). ``inputs`` and ``outputs`` are tuples: the node cannot be
    rewired. Frozen graphs (:class:`~arignote.graph.fg.FrozenFunctionGraph`) are made of
    them; they are the graphs Ops can hold and hash.

    >>> from arignote.graph.type import Type
    >>> from arignote.graph.op import Op
    >>> class Num(Type):
    ...     __props__ = ()
    ...     def filter(self, data, strict=False, allow_downcast=None):
    ...         return float(data)
    >>> class Twice(Op):
    ...     __props__ = ()
    ...     def make_node(self, x):
    ...         return Apply(self, [x], [x.type()])
    ...     def perform(self, node, inputs, output_storage):
    ...         output_storage[0][0] = 2 * inputs[0]
    >>> x = NominalVariable(0, Num())
    >>> a = FrozenApply(Twice(), (x,), (Num(),))
    >>> a is FrozenApply(Twice(), (x,), (Num(),))
    True
    """

    __slots__ = ()
    # values are weak: a node nobody holds goes, and with it its entry (the key holds only
    # ids of inputs, which the node itself keeps alive while it exists)
    _cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def __new__(cls, op: Op, inputs: Sequence[Variable], output_types: Sequence[Type]) -> FrozenApply:
        inputs = tuple(inputs)
        output_types = tuple(output_types)
        key = (op, tuple(_frozen_input_key(i) for i in inputs), output_types)
        try:
            node = cls._cache.get(key)
        except TypeError as err:  # an unhashable Op or Type
            raise TypeError(f"FrozenApply needs a hashable Op and output Types ({op}): {err}") from None
        if node is None:
            node = super().__new__(cls)
            Apply.__init__(node, op, list(inputs), [t() for t in output_types])
            node.inputs = inputs
            node.outputs = tuple(node.outputs)
            cls._cache[key] = node
        return node

    def __init__(self, op: Op, inputs: Sequence[Variable], output_types: Sequence[Type]):
        pass  # made once, in __new__

    def __reduce__(self) -> tuple:
        return (FrozenApply, (self.op, self.inputs, tuple(o.type for o in self.outputs)))

    def clone(self, clone_inner_graph: bool = False) -> FrozenApply:
        """A frozen node is immutable: it is its own clone."""
        return self


def _frozen_input_key(var: Variable) -> Any:
    if isinstance(var, Constant):
        try:
            key = ("constant", type(var), var.merge_signature())
            hash(key)
            return key
        except (TypeError, NotImplementedError):
            pass
    return id(var)


# --- graph-wide helpers -----------------------------------------------------------------


def as_string(node: Apply) -> str:
    """``op(input, input, ...)``: the printed form of an Apply."""
    return f"{node.op}({', '.join(str(i) for i in node.inputs)})"


def clone(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool | None = None,
    clone_inner_graphs: bool = False,
) -> tuple[list[Variable], list[Variable]]:
    """Copy the graph between ``inputs`` and ``outputs``; return the new inputs and outputs."""
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans, clone_inner_graphs=clone_inner_graphs)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def clone_get_equiv(
    inputs: Iterable[Variable],
    outputs: Iterable[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool = True,
    memo: dict | None = None,
    clone_inner_graphs: bool = False,
    **kwargs: Any,
) -> dict:
    """Copy a graph; return a dict mapping every old Variable and Apply to its copy.

    ``memo`` may be pre-filled with ``{old: new}`` entries: those Variables are not
    copied but replaced by ``new`` (whose own ancestry is left alone), which is how
    :func:`~arignote.graph.replace.clone_replace` works. Inputs are copied when
    ``copy_inputs``; variables with no owner that are not listed inputs (orphans) when
    ``copy_orphans``. Constants are never copied.

    ``merge=True`` (a keyword): the copy is merged as it is made: equal constants become
    one, and a node with the same Op and (copied) inputs as one already copied is that
    node (except Ops that overwrite an input): what the merge pass would do, without
    building the duplicates and replacing them one by one. ``new_nodes`` (a keyword, a
    list): the copied nodes are appended to it, each after the nodes it reads.
    """
    if memo is None:
        memo = {}
    with gc_paused():
        return _clone_get_equiv(
            list(inputs), list(outputs), copy_inputs, copy_orphans, memo, clone_inner_graphs, kwargs
        )


def _clone_get_equiv(
    inputs: list,
    outputs: list,
    copy_inputs: bool,
    copy_orphans: bool,
    memo: dict,
    clone_inner_graphs: bool,
    kwargs: dict,
) -> dict:
    from arignote.graph.traversal import io_toposort

    for inp in inputs:
        if inp not in memo:
            memo[inp] = inp.clone() if copy_inputs else inp
    stop = list(memo)
    strict = kwargs.get("strict", True)
    merged = _MergingTable() if kwargs.get("merge") else None
    made = kwargs.get("new_nodes")
    if made is None:
        made = []
    for node in io_toposort(stop, outputs):
        new_inputs = []
        changed = False
        for inp in node.inputs:
            new = memo.get(inp)
            if new is None:
                new = inp.clone() if copy_orphans else inp
                if merged is not None and isinstance(new, AtomicVariable):
                    new = merged.constant(new)
                memo[inp] = new
            if new is not inp and new.type is not inp.type and new.type != inp.type:
                changed = True
            new_inputs.append(new)
        key = None
        if merged is not None:
            key = merged.ops.key(node.op, new_inputs)
            same = None if key is None else merged.nodes.get(key)
            if same is not None and all(a.type == b.type for a, b in zip(node.outputs, same.outputs)):
                memo[node] = same
                for old_out, new_out in zip(node.outputs, same.outputs):
                    memo.setdefault(old_out, new_out)
                continue
        if changed:
            new_node = node.clone_with_new_inputs(
                new_inputs, strict=strict, clone_inner_graph=clone_inner_graphs
            )
        else:
            op = node.op
            if clone_inner_graphs and isinstance(op, _has_inner_graph()):
                op = op.clone()
            new_node = Apply._unchecked(op, new_inputs, [o.clone() for o in node.outputs], node.trace)
            tag = node._tag
            if tag is not None and (type(tag) is not Scratchpad or tag.__dict__):
                new_node._tag = copy(tag)
        memo[node] = new_node
        made.append(new_node)
        if key is not None and (changed or node.op is not new_node.op):
            key = merged.ops.key(new_node.op, new_node.inputs)  # (a rebuilt node)
        if key is not None:
            merged.nodes.setdefault(key, new_node)
        for old_out, new_out in zip(node.outputs, new_node.outputs):
            memo.setdefault(old_out, new_out)
    for out in outputs:
        if out not in memo:
            memo[out] = out.clone() if copy_orphans else out
    return memo


def merge_key(var: Variable) -> Any:
    """The key under which an atomic Variable (a constant) merges with its equals, or None
    if it cannot be merged (an unhashable or undefined signature)."""
    try:
        key = (type(var), var.merge_signature())
        hash(key)
    except (TypeError, NotImplementedError):
        return None
    return key


class OpInterner:
    """One representative per value of Op, found once per Op object: a node's merge key
    is then ``(id(representative), *inputs)``, hashed and compared without recomputing an
    Op's ``__props__`` hash for every node (most nodes share a few Op objects).
    ``keep_writers_apart``: an Op that overwrites an input (``destroy_map``) gets no key."""

    def __init__(self, keep_writers_apart: bool = False) -> None:
        self.keep_writers_apart = keep_writers_apart
        self.by_id: dict[int, tuple[Any, Any]] = {}  # id(op) -> (op, its representative or None)
        self.by_value: dict = {}

    def key(self, op: Any, inputs: Sequence[Variable]) -> Any:
        found = self.by_id.get(id(op))
        if found is None:  # (the entry holds ``op``, so its id stays its own)
            rep = None
            if not (self.keep_writers_apart and getattr(op, "destroy_map", None)):
                try:
                    rep = self.by_value.setdefault(op, op)
                except TypeError:  # an unhashable Op never merges
                    rep = None
            found = self.by_id[id(op)] = (op, rep)
        return None if found[1] is None else (id(found[1]), *inputs)


class _MergingTable:
    """What a merging copy (``clone_get_equiv(..., merge=True)``) has made: constants by
    value, nodes by ``(Op, inputs)``; two writers of one value never merge."""

    def __init__(self) -> None:
        self.constants: dict = {}
        self.nodes: dict = {}
        self.ops = OpInterner(keep_writers_apart=True)

    def constant(self, var: Variable) -> Variable:
        key = merge_key(var)
        return var if key is None else self.constants.setdefault(key, var)


def equal_computations(
    xs: Sequence[Variable],
    ys: Sequence[Variable],
    in_xs: Sequence[Variable] | None = None,
    in_ys: Sequence[Variable] | None = None,
    strict_dtype: bool = True,
) -> bool:
    """Whether ``xs`` and ``ys`` compute the same thing, node by node.

    Ops must compare equal, Types too (with ``strict_dtype``; otherwise only
    ``in_same_class``), constants by :meth:`Constant.equals`, and the graph inputs pair
    up positionally through ``in_xs``/``in_ys`` (when given) or by identity.
    """
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations: {len(xs)} outputs against {len(ys)}")
    in_xs = list(in_xs or [])
    in_ys = list(in_ys or [])
    if len(in_xs) != len(in_ys):
        return False
    paired: dict = {}
    for a, b in zip(in_xs, in_ys):
        if not _same_type(a, b, strict_dtype):
            return False
        paired[a] = b
    seen: set = set()
    stack = list(zip(xs, ys))
    while stack:
        a, b = stack.pop()
        if (id(a), id(b)) in seen:
            continue
        seen.add((id(a), id(b)))
        if a in paired:
            if paired[a] is not b:
                return False
            continue
        if b in in_ys:
            return False
        if isinstance(a, Apply) or isinstance(b, Apply):
            if not (isinstance(a, Apply) and isinstance(b, Apply)):
                return False
            if a.op != b.op or len(a.inputs) != len(b.inputs) or len(a.outputs) != len(b.outputs):
                return False
            stack.extend(zip(a.inputs, b.inputs))
            continue
        if not _same_type(a, b, strict_dtype):
            return False
        if isinstance(a, Constant) or isinstance(b, Constant):
            if not (isinstance(a, Constant) and isinstance(b, Constant)) or not _constants_equal(a, b):
                return False
            continue
        if (a.owner is None) != (b.owner is None):
            return False
        if a.owner is None:
            if a is not b:
                return False
            continue
        if a.index != b.index:
            return False
        stack.append((a.owner, b.owner))
    return True


def _same_type(a: Variable, b: Variable, strict_dtype: bool) -> bool:
    if strict_dtype:
        return a.type == b.type
    return bool(a.type.in_same_class(b.type)) or a.type == b.type


def _constants_equal(a: Constant, b: Constant) -> bool:
    try:
        return bool(a.equals(b))
    except (ValueError, TypeError):
        return a.type == b.type and bool(a.type.values_eq(a.data, b.data))


def dprint_graph(obj: Any, **kwargs: Any) -> Any:
    """:func:`arignote.printing.debugprint` of ``obj``, for the graph's ``dprint`` methods
    (``Variable``, ``Apply``, ``FunctionGraph``): printing is a layer above the graph, so it
    is imported here, when first called, in this one place."""
    from arignote.printing.debug import debugprint as print_graph

    return print_graph(obj, **kwargs)


#: traversal functions PyTensor 3 moved from ``graph.basic`` to ``graph.traversal`` and still
#: serves from here (with a FutureWarning), as code written for earlier versions imports them
_MOVED_TO_TRAVERSAL = frozenset(
    {
        "ancestors",
        "apply_depends_on",
        "applys_between",
        "explicit_graph_inputs",
        "general_toposort",
        "get_var_by_name",
        "graph_inputs",
        "io_toposort",
        "orphans_between",
        "truncated_graph_inputs",
        "vars_between",
        "walk",
    }
)


def __getattr__(name: str) -> Any:
    """``graph.basic.graph_inputs`` and the other functions of :data:`_MOVED_TO_TRAVERSAL`,
    from :mod:`arignote.graph.traversal`, with PyTensor 3's FutureWarning."""
    if name not in _MOVED_TO_TRAVERSAL:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"`arignote.graph.basic.{name}` lives in `arignote.graph.traversal`; import it from there "
        "(the old location is kept for code written for earlier PyTensor versions)",
        FutureWarning,
        stacklevel=2,
    )
    # (inside the function: traversal imports this module)
    from arignote.graph import traversal

    return getattr(traversal, name)
