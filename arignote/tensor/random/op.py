"""``RandomVariable``: the Op of a random draw.

A node ``rv(rng, size, *params)`` has two outputs: the generator's next state and the
draws (the default output, which is what calling the Op returns). Its inputs are

* ``rng``: a random generator variable (a shared ``numpy.random.Generator``, usually);
* ``size``: ``NoneConst``, or an int64 vector of known length: the batch shape;
* the distribution's parameters, broadcast against each other like NumPy's (each has
  ``ndims_params[i]`` core dimensions on the right, the rest are batch dimensions).

The Op's ``signature`` (a NumPy gufunc signature such as ``"(n),(n,n)->(n)"``) says
which dimensions are core ones. Drawing never changes the generator it is given: it
draws from a copy (unless ``inplace``), and the copy is the first output, so a function
that wants new draws on every call updates its generator with that output.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> rng = arignote.shared(np.random.default_rng(0), name="rng")
>>> x = pt.random.normal(np.zeros(3), 1.0, size=(2, 3), rng=rng)
>>> x.type
TensorType(float64, shape=(2, 3))
>>> next_rng, draws = x.owner.outputs
>>> next_rng.type, draws is x
(RandomGeneratorType, True)
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.axes import expand_dims
from arignote.tensor.blockwise import _broadcast_static, parse_gufunc_signature
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.random.type import RandomType, random_generator_type
from arignote.tensor.random.utils import (
    copy_generator,
    explicit_expand_dims,
    normalize_size_param,
    static_size_entries,
)
from arignote.tensor.shape import ShapeError, batch_length, shape_tuple
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import NoneConst, NoneTypeT
from arignote.tensor.ufuncs import eq, switch

__all__ = ["DefaultGeneratorMakerOp", "RNGConsumerOp", "RandomVariable", "default_rng"]


# --- signatures ---------------------------------------------------------------------------

_GROUPS = re.compile(r"(\([\w,]*\))(,\([\w,]*\))*")


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """``"(n),(n,n)->(n)"`` -> ``([("n",), ("n", "n")], ("n",))``: the core dimensions of
    each parameter and of the (single) output.

    >>> parse_signature("(),(p)->(p)")
    ([(), ('p',)], ('p',))
    """
    if not isinstance(signature, str):
        raise ValueError(f"invalid signature {signature!r}: expected something like '(),(n,n)->(n)'")
    inputs, output = _parse(signature)
    return list(inputs), output


@functools.lru_cache(maxsize=256)
def _parse(signature: str) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    # stricter than parse_gufunc_signature on the syntax: groups separated by single commas
    sides = signature.replace(" ", "").split("->")
    if len(sides) != 2 or not all(_GROUPS.fullmatch(side) for side in sides if side):
        raise ValueError(f"invalid signature {signature!r}: expected something like '(),(n,n)->(n)'")
    inputs, outputs = parse_gufunc_signature(signature)
    if len(outputs) != 1:
        raise ValueError(f"invalid signature {signature!r}: a random variable has exactly one output")
    return inputs, outputs[0]


def _signature_from_ndims(ndims_params: Sequence[int], ndim_supp: int) -> str:
    """A signature with a fresh name for every core dimension (none linked)."""
    ins = ",".join("(" + ",".join(f"i{k}{d}" for d in range(n)) + ")" for k, n in enumerate(ndims_params))
    return f"{ins}->(" + ",".join(f"o0{d}" for d in range(ndim_supp)) + ")"


# --- the Ops ------------------------------------------------------------------------------


class RNGConsumerOp(Op):
    """An Op that takes a random generator and returns its next state."""

    def update(self, node: Apply) -> dict[Variable, Variable]:
        """``{generator input: its next state}`` for the node: the update a compiled
        function applies so that each call draws anew."""
        raise NotImplementedError(f"{type(self).__name__} must say which output updates which generator")


class RandomVariable(RNGConsumerOp):
    """Base class of random variables: a subclass sets ``name`` (also the name of the
    ``numpy.random.Generator`` method that draws, unless it overrides :meth:`rng_fn`),
    ``signature`` and ``dtype`` (``"floatX"`` for ``config.floatX``), and usually a
    ``__call__`` naming the parameters.

    ``ndim_supp`` (core dimensions of a draw) and ``ndims_params`` (core dimensions of
    each parameter) follow from the signature; they may be given instead of it.
    ``inplace=True`` draws from (and advances) the generator it is given instead of a copy.

    >>> import numpy as np
    >>> class Zipf(RandomVariable):
    ...     name = "zipf"
    ...     signature = "()->()"
    ...     dtype = "int64"
    >>> zipf = Zipf()
    >>> print(zipf)
    zipf_rv{"()->()"}
    >>> zipf.ndims_params, zipf.ndim_supp
    ((0,), 0)
    >>> import arignote
    >>> rng = arignote.shared(np.random.default_rng(5))
    >>> zipf(2.0, size=3, rng=rng).eval()
    array([2, 1, 1])
    """

    __props__ = ("name", "signature", "dtype", "inplace")
    default_output = 1

    def __init__(
        self,
        name: str | None = None,
        ndim_supp: int | None = None,
        ndims_params: Sequence[int] | None = None,
        dtype: str | np.dtype | None = None,
        inplace: bool | None = None,
        signature: str | None = None,
    ):
        self.name = name or getattr(type(self), "name", None)
        if not isinstance(self.name, str):
            raise TypeError(
                f"{type(self).__name__}: a random variable needs a name (a str), got {self.name!r}"
            )
        signature = signature or getattr(type(self), "signature", None)
        if signature is None:
            ndim_supp = ndim_supp if ndim_supp is not None else getattr(type(self), "ndim_supp", None)
            ndims_params = (
                ndims_params if ndims_params is not None else getattr(type(self), "ndims_params", None)
            )
            if ndim_supp is None or ndims_params is None:
                raise ValueError(f"{type(self).__name__}: give a signature (or ndim_supp and ndims_params)")
            signature = _signature_from_ndims(list(ndims_params), int(ndim_supp))
        self.signature = signature
        self.inputs_sig, self.output_sig = parse_signature(signature)
        self.ndims_params = tuple(len(s) for s in self.inputs_sig)
        self.ndim_supp = len(self.output_sig)
        if isinstance(dtype, np.dtype):
            dtype = dtype.name
        dtype = dtype or getattr(type(self), "dtype", None)
        self.dtype = dtype if dtype in (None, "floatX") else np.dtype(dtype).name
        self.inplace = bool(inplace if inplace is not None else getattr(type(self), "inplace", False))
        if self.inplace:
            self.destroy_map = {0: [0]}
        # whether some core lengths are tied together (a name used twice, or a number),
        # so that perform must check them
        names = [d for sig in self.inputs_sig for d in sig]
        self._tied_core = any(d.isdigit() or names.count(d) > 1 for d in names)

    # -- description ----------------------------------------------------------------------

    def __str__(self) -> str:
        extra = [str(getattr(self, p)) for p in self.__props__ if p not in RandomVariable.__props__]
        if self.inplace:
            extra.append("inplace")
        props = ", ".join([f'"{self.signature}"', *extra])
        return f"{self.name}_rv{{{props}}}"

    def _param_label(self, i: int) -> str:
        """``parameter 1 (cov)``: the parameter's name where ``__call__`` names it."""
        names: list[str] = []
        call = type(self).__call__
        if call is not RandomVariable.__call__:
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            names = [
                p.name
                for p in list(inspect.signature(call).parameters.values())[1:]
                if p.kind in kinds and p.name != "size"
            ]
        return f"parameter {i} ({names[i]})" if i < len(names) else f"parameter {i}"

    def update(self, node: Apply) -> dict[Variable, Variable]:
        return {node.inputs[0]: node.outputs[0]}

    def rng_param(self, node: Apply) -> Variable:
        """The node's generator input."""
        return node.inputs[0]

    def size_param(self, node: Apply) -> Variable:
        """The node's size input (``NoneConst`` when none was given)."""
        return node.inputs[1]

    def dist_params(self, node: Apply) -> list[Variable]:
        """The node's distribution parameters."""
        return list(node.inputs[2:])

    def batch_ndim(self, node: Apply) -> int:
        """The number of batch (non-core) dimensions of the node's draws."""
        return node.outputs[1].type.ndim - self.ndim_supp

    # -- building -------------------------------------------------------------------------

    def __call__(
        self,
        *args: Any,
        size: Any = None,
        name: str | None = None,
        rng: Any = None,
        dtype: Any = None,
        return_next_rng: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Build a node; returns the draws, or ``(next_rng, draws)`` with ``return_next_rng``."""
        if kwargs:
            raise TypeError(f"{self}: unexpected arguments {sorted(kwargs)}")
        op = self._with_dtype(dtype) if dtype is not None else self
        node = op.make_node(rng, size, *args)
        next_rng, out = node.outputs
        if name is not None:
            out.name = name
        return (next_rng, out) if return_next_rng else out

    def _with_dtype(self, dtype: Any) -> RandomVariable:
        """This Op with another output dtype of the same kind (float or integer)."""
        new = config.floatX if dtype == "floatX" else np.dtype(dtype).name
        current = config.floatX if self.dtype == "floatX" else self.dtype
        if new == current:
            return self
        if current is not None and np.dtype(new).kind != np.dtype(current).kind:
            raise ValueError(
                f"Cannot change the dtype of a {self.name} random variable from {current} to {new}"
            )
        return type(self)(**{**self._props_dict(), "dtype": new})

    def make_node(self, rng: Any, size: Any, *dist_params: Any) -> Apply:
        size = normalize_size_param(size)
        params = [as_tensor_variable(p) for p in dist_params]
        if len(params) != len(self.ndims_params):
            raise TypeError(
                f"{self} takes {len(self.ndims_params)} distribution parameters, got {len(params)}"
            )
        rng = self._as_rng(rng)
        self._check_param_ndims(params)
        size_len = None if isinstance(size.type, NoneTypeT) else size.type.shape[0]
        batch = self._static_batch_shape(size, params)
        core = self._static_core_shape(params)
        params = explicit_expand_dims(params, self.ndims_params, size_len)
        op = self._resolved()
        if op.dtype is None:
            raise TypeError(f"{self}: no output dtype; give dtype= when creating or calling the Op")
        rng.tag.used = True
        out = TensorType(op.dtype, (*batch, *core))()
        return Apply(op, [rng, size, *params], [rng.type(), out])

    def _resolved(self) -> RandomVariable:
        """This Op with ``"floatX"`` replaced by the configured float dtype (made once per
        floatX: building a node should not cost building an Op)."""
        if self.dtype != "floatX":
            return self
        floatx = config.floatX
        cached = self.__dict__.get("_resolved_op")
        if cached is None or cached.dtype != floatx:
            cached = self.__dict__["_resolved_op"] = type(self)(**{**self._props_dict(), "dtype": floatx})
        return cached

    def _as_rng(self, rng: Any) -> Variable:
        if rng is None:  # a fresh, unseeded generator of its own
            from arignote.tensor.random.var import shared_rng

            return shared_rng(np.random.default_rng())
        if isinstance(rng, np.random.Generator):
            raise TypeError(
                f"{self}: rng must be a symbolic generator, not a numpy Generator; wrap it: "
                "rng=arignote.shared(np.random.default_rng(seed))"
            )
        if not isinstance(rng, Variable) or not isinstance(rng.type, RandomType):
            what = (
                f"{rng} of Type {rng.type}" if isinstance(rng, Variable) else f"{type(rng).__name__} {rng!r}"
            )
            raise TypeError(
                f"{self}: rng must be a random generator variable (Type RandomGeneratorType, e.g. "
                f"arignote.shared(np.random.default_rng(seed))), got {what}"
            )
        return rng

    def _check_param_ndims(self, params: Sequence[Variable]) -> None:
        for i, (p, nd) in enumerate(zip(params, self.ndims_params)):
            if p.type.ndim < nd:
                raise ValueError(
                    f"{self}: {self._param_label(i)} must have at least {nd} dimension(s) (signature "
                    f"{self.signature}), got {p} of Type {p.type}"
                )

    def _static_batch_shape(self, size: Variable, params: Sequence[Variable]) -> tuple[int | None, ...]:
        """The batch shape of the draws as far as it is known: ``size`` if given (checked
        against the parameters' batch shapes), else the parameters' broadcast batch shape."""
        batch_shapes = [p.type.shape[: p.type.ndim - nd] for p, nd in zip(params, self.ndims_params)]
        if isinstance(size.type, NoneTypeT):
            return self._broadcast_static(batch_shapes, params)
        entries = static_size_entries(size)
        out = list(entries)
        n = len(entries)
        for i, bs in enumerate(batch_shapes):
            if len(bs) > n:
                raise ValueError(
                    f"{self}: size has {n} entries, fewer than the {len(bs)} batch dimension(s) of "
                    f"{self._param_label(i)} (Type {params[i].type}); give size at least {len(bs)} entries"
                )
            for k, s_p in enumerate(bs):
                j = n - len(bs) + k
                if s_p is None or s_p == 1:
                    continue
                if entries[j] is not None and entries[j] != s_p:
                    raise ValueError(
                        f"{self}: size {tuple(entries)} does not fit {self._param_label(i)} of batch shape "
                        f"{tuple(bs)}: the draws have length {entries[j]} on dimension {j}, the parameter "
                        f"{s_p} (a parameter's batch lengths must be 1 or equal size's)"
                    )
                if out[j] is not None and out[j] != s_p:
                    raise ValueError(f"{self}: the parameters' batch lengths {out[j]} and {s_p} disagree")
                out[j] = s_p  # a valid call has size[j] == s_p
        return tuple(out)

    def _broadcast_static(
        self, batch_shapes: Sequence[tuple], params: Sequence[Variable]
    ) -> tuple[int | None, ...]:
        try:
            return _broadcast_static(batch_shapes, params, self)
        except ValueError:  # said again with the parameters' names
            shapes = ", ".join(f"{self._param_label(i)}: {tuple(bs)}" for i, bs in enumerate(batch_shapes))
            raise ValueError(f"{self}: the parameters' batch shapes do not broadcast ({shapes})") from None

    def _static_core_shape(self, params: Sequence[Variable]) -> tuple[int | None, ...]:
        """The core shape of a draw as far as the parameters' static shapes tell (and
        the check that tied core lengths agree)."""
        dims: dict[str, tuple[int, int]] = {}
        for i, (p, sig) in enumerate(zip(params, self.inputs_sig)):
            for name, s in zip(sig, p.type.shape[p.type.ndim - len(sig) :] if sig else ()):
                if s is None:
                    continue
                if name.isdigit():
                    if s != int(name):
                        raise ValueError(
                            f"{self}: {self._param_label(i)} must have core length {name}, got Type {p.type}"
                        )
                    continue
                if name in dims and dims[name][0] != s:
                    length, j = dims[name]
                    raise ValueError(
                        f"{self}: core dimension {name!r} (signature {self.signature}) has length {length} "
                        f"in {self._param_label(j)} but {s} in {self._param_label(i)} (Type {p.type})"
                    )
                dims[name] = (s, i)
        return tuple(int(d) if d.isdigit() else dims.get(d, (None,))[0] for d in self.output_sig)

    # -- shapes ---------------------------------------------------------------------------

    def _supp_shape_from_params(
        self, dist_params: Sequence[Variable], param_shapes: Sequence[Sequence[Any]] | None = None
    ) -> tuple:
        """The core shape of a draw from the parameters' shapes (ints or 0-d Variables)."""
        if param_shapes is None:
            param_shapes = [shape_tuple(p) for p in dist_params]
        lengths: dict[str, Any] = {}
        for sig, shp in zip(self.inputs_sig, param_shapes):
            core = tuple(shp)[len(shp) - len(sig) :] if sig else ()
            for name, s in zip(sig, core):
                if name not in lengths or (
                    isinstance(s, (int, np.integer)) and not isinstance(lengths[name], int)
                ):
                    lengths[name] = int(s) if isinstance(s, (int, np.integer)) else s
        out = []
        for name in self.output_sig:
            if name.isdigit():
                out.append(int(name))
            elif name in lengths:
                out.append(lengths[name])
            else:
                raise ShapeError(
                    f"{self}: the core dimension {name!r} of the draws is not a dimension of any parameter; "
                    "the Op must define _supp_shape_from_params"
                )
        return tuple(out)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        _, size, *params = node.inputs
        param_shapes = input_shapes[2:]
        static = node.outputs[1].type.shape
        core = self._supp_shape_from_params(params, param_shapes)
        batch_ndim = len(static) - self.ndim_supp
        if isinstance(size.type, NoneTypeT):
            batch = self._broadcast_symbolic(params, param_shapes, batch_ndim)
        else:
            batch = _vector_entries(size)
        entries = (*batch, *core)
        if len(entries) != len(static):
            raise ShapeError(
                f"{self}: inferred {len(entries)} dimensions for draws of Type {node.outputs[1].type}"
            )
        return [None, tuple(s if s is not None else e for s, e in zip(static, entries))]

    def _broadcast_symbolic(self, params: Sequence[Variable], shapes: Sequence[Any], ndim: int) -> list:
        """The broadcast batch shape of parameters that all have ``ndim`` batch dimensions."""
        out: list = []
        for d in range(ndim):
            cands = [shp[d] for p, shp in zip(params, shapes) if p.type.shape[d] != 1]
            static = [c for c in cands if isinstance(c, (int, np.integer)) and c != 1]
            if static:
                out.append(int(static[0]))
                continue
            cands = [c for c in cands if not isinstance(c, (int, np.integer))]
            if not cands:
                out.append(1)
                continue
            length = cands[0]
            for c in cands[1:]:  # a length 1 broadcasts; otherwise they are equal
                length = switch(eq(length, 1), c, length)
            out.append(length)
        return out

    # -- running --------------------------------------------------------------------------

    def rng_fn(self, rng: np.random.Generator, *args: Any) -> Any:
        """Draw with ``rng``: ``args`` are the parameters' values then ``size`` (a tuple
        of ints, or None). Default: the Generator method named like the Op."""
        return getattr(rng, self.name)(*args)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        rng, size, *params = inputs
        if not self.inplace:
            rng = copy_generator(rng)
        if self._tied_core:
            self._check_core_lengths(params)
        draws = self.rng_fn(rng, *params, None if size is None else tuple(size.tolist()))
        output_storage[0][0] = rng
        output_storage[1][0] = np.asarray(draws, dtype=node.outputs[1].type.dtype)

    def _check_core_lengths(self, params: Sequence[np.ndarray]) -> None:
        seen: dict[str, tuple[int, int]] = {}
        for i, (p, sig) in enumerate(zip(params, self.inputs_sig)):
            shape = np.shape(p)
            for name, s in zip(sig, shape[len(shape) - len(sig) :] if sig else ()):
                want = int(name) if name.isdigit() else seen.get(name, (s, i))[0]
                if s != want:
                    where = "" if name.isdigit() else f" as in {self._param_label(seen[name][1])}"
                    what = "a fixed-length core dimension" if name.isdigit() else f"core dimension {name!r}"
                    raise ValueError(
                        f"{self}: {self._param_label(i)} has shape {shape}; its {what} must have "
                        f"length {want}{where} (signature {self.signature})"
                    )
                seen.setdefault(name, (s, i))

    # -- gradients ------------------------------------------------------------------------

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Draws are not differentiable in anything: every input is disconnected."""
        return [[False] * len(node.outputs) for _ in node.inputs]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [disconnected_type() for _ in inputs]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type() for _ in outputs]


def _vector_entries(v: Variable) -> list:
    """The entries of an int vector of static length: ints where constant, else Variables."""
    if isinstance(v, Constant):
        return [int(s) for s in v.data]
    from arignote.tensor.join import _unpack_vector

    return _unpack_vector(v, v.type.shape[0])


class DefaultGeneratorMakerOp(Op):
    """``default_rng(seed)``: a new ``numpy.random.default_rng(seed)`` as a graph value
    (``seed`` an integer, an integer vector, or None for fresh entropy on every call).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> g = pt.random.default_rng(3)
    >>> pt.random.normal(rng=g).eval() == np.random.default_rng(3).normal()
    np.True_
    """

    __props__ = ()

    def make_node(self, seed: Any = None) -> Apply:
        if seed is None:
            seed = NoneConst
        elif not (isinstance(seed, Variable) and isinstance(seed.type, NoneTypeT)):
            seed = as_tensor_variable(seed)
            if seed.type.ndim > 1 or np.dtype(seed.type.dtype).kind not in "iu":
                raise TypeError(
                    f"default_rng: the seed must be an integer or integer vector, got Type {seed.type}"
                )
        return Apply(self, [seed], [random_generator_type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (seed,) = inputs
        if seed is not None:
            seed = int(seed) if np.ndim(seed) == 0 else [int(s) for s in seed]
        output_storage[0][0] = np.random.default_rng(seed)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # a generator is state, not a constant (and seed=None is fresh entropy)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [None]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]


default_rng = DefaultGeneratorMakerOp()


# --- batching (vectorize_graph) -------------------------------------------------------------


@register_batch_rule(RandomVariable)
def _batch_random_variable(op: RandomVariable, node: Apply, args: list, flags: list) -> list | None:
    """Batched parameters give a leading batch dimension to the draws: the unbatched
    parameters get a broadcastable one, and a given ``size`` gets the batch length in
    front. A batched generator or size cannot be drawn from as one node."""
    rng, size, *params = args
    if flags[0] or flags[1]:
        return None
    batched = [a for a, f in zip(params, flags[2:]) if f]
    new_params = [a if f else expand_dims(a, 0) for a, f in zip(params, flags[2:])]
    if isinstance(size.type, NoneTypeT):
        new_size: Any = None
    else:
        n = batch_length(batched[0])
        new_size = [n, *_vector_entries(size)]
    new = op.make_node(rng, new_size, *new_params)
    return [(new.outputs[0], False), (new.outputs[1], True)]
