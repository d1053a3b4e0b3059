"""Helpers of the random module, and :class:`RandomStream`.

``RandomStream`` hands out random variables, each drawing from its own shared generator
(spawned from one seed) with a ``default_update``, so that every call of a compiled
function draws new values:

>>> import arignote
>>> from arignote.tensor.random.utils import RandomStream
>>> srng = RandomStream(seed=7)
>>> x = srng.normal(size=2)
>>> f = arignote.function([], x)
>>> first, second = f(), f()
>>> bool((first != second).all())
True
>>> srng.seed(7)          # back to the start: the same draws again
>>> bool((f() == first).all())
True
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from functools import wraps
from types import ModuleType
from typing import Any

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.graph.shared import shared
from arignote.tensor.axes import expand_dims
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.shape import MakeVector, make_vector
from arignote.tensor.shape_utils import broadcast_arrays
from arignote.tensor.type_other import NoneConst, NoneTypeT

__all__ = [
    "RandomStream",
    "broadcast_params",
    "compute_batch_shape",
    "copy_generator",
    "custom_rng_deepcopy",
    "explicit_expand_dims",
    "normalize_size_param",
    "params_broadcast_shapes",
    "static_size_entries",
    "supp_shape_from_ref_param_shape",
]


# --- size --------------------------------------------------------------------------------


def _is_int_like(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _size_error(size: Any, why: str) -> TypeError:
    return TypeError(
        f"size must be None, an int, a tuple of ints / integer scalars, or an integer vector of "
        f"known length; got {size!r} ({why})"
    )


def normalize_size_param(size: Any) -> Variable:
    """``size`` as a graph input: ``NoneConst`` for ``None``, else an int64 vector whose
    length is known statically (the number of batch dimensions it asks for).

    >>> import arignote.tensor as pt
    >>> normalize_size_param((2, 3)).data
    array([2, 3])
    >>> n = pt.lscalar("n")
    >>> normalize_size_param((n, 3)).type
    TensorType(int64, shape=(2,))
    """
    if size is None:
        return NoneConst
    if isinstance(size, Variable) and isinstance(size.type, NoneTypeT):
        return size
    if isinstance(size, (bool, np.bool_)):
        raise _size_error(size, "a bool")
    if _is_int_like(size):
        return _constant_size(np.asarray([size], dtype="int64"), size)
    if isinstance(size, (float, np.floating)):
        raise _size_error(size, "a float; lengths are integers")
    if isinstance(size, np.ndarray):
        if size.dtype.kind not in "iu" or size.ndim > 1:
            raise _size_error(size, f"an array of dtype {size.dtype} with {size.ndim} dimensions")
        return _constant_size(size.reshape(-1).astype("int64"), size)
    if isinstance(size, (list, tuple)):
        return _sequence_size(size)
    if isinstance(size, Constant) and isinstance(getattr(size.type, "dtype", None), str):
        return normalize_size_param(np.asarray(size.data))  # a constant's lengths are static
    if isinstance(size, Variable):
        return _variable_size(size)
    raise _size_error(size, f"a {type(size).__name__}")


def _constant_size(values: np.ndarray, size: Any) -> Variable:
    if (values < 0).any():
        raise ValueError(f"size must not have negative lengths, got {size!r}")
    return constant(values)


def _sequence_size(size: Sequence) -> Variable:
    if all(_is_int_like(s) for s in size):
        return _constant_size(np.asarray(size, dtype="int64").reshape(len(size)), size)
    entries = []
    for k, s in enumerate(size):
        if _is_int_like(s):
            if s < 0:
                raise ValueError(f"size must not have negative lengths, got {s} at position {k}")
            entries.append(constant(np.int64(s)))
            continue
        if not isinstance(s, Variable):
            raise _size_error(size, f"entry {k} is {type(s).__name__} {s!r}")
        v = as_tensor_variable(s)
        if v.type.ndim != 0 or np.dtype(v.type.dtype).kind not in "iu":
            raise _size_error(size, f"entry {k} ({v}) has Type {v.type}; an integer scalar is needed")
        entries.append(v)
    return make_vector(*entries, dtype="int64")


def _variable_size(size: Variable) -> Variable:
    v = as_tensor_variable(size)
    if np.dtype(v.type.dtype).kind not in "iu":
        raise _size_error(size, f"its Type is {v.type}; lengths are integers")
    if v.type.ndim == 0:
        v = expand_dims(v, 0)
    if v.type.ndim != 1:
        raise _size_error(size, f"its Type is {v.type}; a vector is needed")
    if v.type.shape[0] is None:
        raise ValueError(
            f"size {size} (Type {size.type}) has no static length, so the number of dimensions of the "
            "draws is unknown; give size as a tuple, or fix its length with specify_shape(size, (n,))"
        )
    if v.type.dtype != "int64":
        v = v.astype("int64")
    return v


def static_size_entries(size: Variable) -> list[int | None]:
    """The lengths of a normalized ``size`` that are known statically (None elsewhere)."""
    n = size.type.shape[0]
    if isinstance(size, Constant):
        return [int(s) for s in size.data]
    if size.owner is not None and isinstance(size.owner.op, MakeVector):
        out: list[int | None] = []
        for e in size.owner.inputs:
            try:
                out.append(int(get_underlying_scalar_constant_value(e)))
            except NotScalarConstantError:
                out.append(None)
        return out
    return [None] * n


# --- parameters --------------------------------------------------------------------------


def explicit_expand_dims(
    params: Sequence[Variable], ndims_params: Sequence[int], size_length: int | None = None
) -> list[Variable]:
    """Left-pad each parameter with broadcastable dimensions so that all have the same
    number of batch dimensions: ``size_length`` if given, else the largest."""
    batch_ndims = [p.type.ndim - nd for p, nd in zip(params, ndims_params)]
    target = size_length if size_length is not None else max(batch_ndims, default=0)
    return [_pad_left(p, target - b) for p, b in zip(params, batch_ndims)]


def _pad_left(p: Variable, k: int) -> Variable:
    if k <= 0:
        return p
    if isinstance(p, Constant):  # a constant is padded as data, not by a node
        return constant(np.asarray(p.data).reshape((1,) * k + np.shape(p.data)))
    return expand_dims(p, list(range(k)))


def compute_batch_shape(params: Sequence[Variable], ndims_params: Sequence[int]) -> Variable:
    """The symbolic shape of the parameters' batch dimensions broadcast together (each
    parameter's last ``ndims_params[i]`` dimensions are its core and do not count)."""
    if len(params) != len(ndims_params):
        raise ValueError(f"compute_batch_shape: {len(params)} parameters but {len(ndims_params)} core ndims")
    params = [as_tensor_variable(p) for p in params]
    for p, nd in zip(params, ndims_params):
        if not 0 <= nd <= p.type.ndim:
            raise ValueError(
                f"compute_batch_shape: parameter {p} of {p.type.ndim} dims cannot have {nd} core dims"
            )
    batch_params = [
        p[(..., *(0,) * nd)] for p, nd in zip(explicit_expand_dims(params, ndims_params), ndims_params)
    ]
    return broadcast_arrays(*batch_params)[0].shape


def supp_shape_from_ref_param_shape(
    *,
    ndim_supp: int,
    dist_params: Sequence[Variable],
    param_shapes: Sequence[Sequence[Any]] | None = None,
    ref_param_idx: int,
) -> Any:
    """The support shape of a multivariate draw: the last ``ndim_supp`` lengths of the
    parameter ``dist_params[ref_param_idx]`` (or of ``param_shapes[ref_param_idx]`` when the
    parameters' shapes are given), e.g. ``(3,)`` for a multivariate normal of a mean of shape
    ``(5, 3)``."""
    if ndim_supp <= 0:
        raise ValueError(f"ndim_supp must be greater than 0, got {ndim_supp}")
    if param_shapes is not None:
        ref_shape = param_shapes[ref_param_idx]
        return tuple(ref_shape[i] for i in range(-ndim_supp, 0))
    ref_param = as_tensor_variable(dist_params[ref_param_idx])
    if ref_param.type.ndim < ndim_supp:
        raise ValueError(
            f"reference parameter {ref_param} has {ref_param.type.ndim} dims, fewer than the support's {ndim_supp}"
        )
    return ref_param.shape[-ndim_supp:]


def params_broadcast_shapes(
    param_shapes: Sequence[Sequence[int]], ndims_params: Sequence[int]
) -> list[tuple[int, ...]]:
    """The shapes the parameters have once their batch dimensions are broadcast together
    (their core dimensions, the last ``ndims_params[i]``, are kept).

    >>> params_broadcast_shapes([(3,), (2, 1, 3, 3)], [1, 2])
    [(2, 1, 3), (2, 1, 3, 3)]
    """
    batches = [tuple(s)[: len(s) - nd] for s, nd in zip(param_shapes, ndims_params)]
    batch = np.broadcast_shapes(*batches) if batches else ()
    return [tuple(batch) + tuple(s)[len(s) - nd :] for s, nd in zip(param_shapes, ndims_params)]


def broadcast_params(params: Sequence[np.ndarray], ndims_params: Sequence[int]) -> list[np.ndarray]:
    """NumPy parameter values broadcast along their batch dimensions (read-only views).

    >>> mean, cov = broadcast_params([np.zeros(2), np.stack([np.eye(2)] * 3)], [1, 2])
    >>> mean.shape, cov.shape
    ((3, 2), (3, 2, 2))
    """
    arrays = [np.asarray(p) for p in params]
    shapes = params_broadcast_shapes([a.shape for a in arrays], ndims_params)
    return [np.broadcast_to(a, s) for a, s in zip(arrays, shapes)]


# --- generators --------------------------------------------------------------------------


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """An independent copy of ``rng`` in the same state (and with a copy of its seed
    sequence, so that ``spawn`` agrees too); faster than ``copy.deepcopy``."""
    old = rng.bit_generator
    try:
        new = type(old)(copy.deepcopy(old.seed_seq))
        new.state = old.state
    except (TypeError, ValueError, AttributeError):  # a bit generator built another way
        return copy.deepcopy(rng)
    return np.random.Generator(new)


#: PyTensor's name for :func:`copy_generator`
custom_rng_deepcopy = copy_generator


# --- RandomStream ------------------------------------------------------------------------


class RandomStream:
    """A source of random variables that behaves like a ``numpy.random.Generator``:
    ``srng.normal(0, 1, size=3)``, ``srng.integers(10)``, ... (every distribution of
    :mod:`arignote.tensor.random.basic`).

    Each variable it makes draws from its own shared generator, seeded from a
    ``numpy.random.SeedSequence(seed)`` (one spawned child per variable, in order), and
    updated after every call of a compiled function through ``default_update``.
    :meth:`seed` re-seeds all of them; :meth:`updates` lists ``(rng, next_rng)`` pairs.

    >>> srng = RandomStream(seed=3)
    >>> u = srng.uniform(size=2)
    >>> rng = srng.updates()[0][0]
    >>> expected = np.random.default_rng(np.random.SeedSequence(3).spawn(1)[0]).uniform(size=2)
    >>> bool((u.eval() == expected).all())
    True
    """

    def __init__(
        self,
        seed: int | None = None,
        namespace: ModuleType | None = None,
        rng_ctor: Callable[[np.random.SeedSequence], np.random.Generator] | None = None,
    ):
        if namespace is None:
            from arignote.tensor.random import basic as namespace
        self.namespaces = [(namespace, set(getattr(namespace, "__all__", ())))]
        self.default_instance_seed = seed
        self.state_updates: list[tuple[Variable, Variable]] = []
        self.gen_seedgen = np.random.SeedSequence(seed)
        # None is numpy.random.default_rng (not the default value itself: reading it at import
        # would import numpy.random, ~6 ms, with arignote)
        self.rng_ctor = np.random.default_rng if rng_ctor is None else rng_ctor

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("namespaces", "state_updates", "gen_seedgen", "rng_ctor"):
            raise AttributeError(name)
        for ns, names in self.namespaces:
            if name in names and hasattr(ns, name):
                fn = getattr(ns, name)
                break
        else:
            raise AttributeError(f"RandomStream has no distribution (or attribute) {name!r}")

        @wraps(fn)
        def draw(*args: Any, **kwargs: Any) -> Variable:
            return self.gen(fn, *args, **kwargs)

        setattr(self, name, draw)  # found once, then an ordinary attribute
        return draw

    def updates(self) -> list[tuple[Variable, Variable]]:
        """The ``(shared generator, its next state)`` pairs of the variables made so far."""
        return list(self.state_updates)

    def seed(self, seed: int | None = None) -> None:
        """Re-seed every generator of this stream from ``seed`` (default: the seed the
        stream was made with), as a fresh stream with that seed would seed them."""
        if seed is None:
            seed = self.default_instance_seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        children = self.gen_seedgen.spawn(len(self.state_updates))
        for (rng, _), child in zip(self.state_updates, children):
            rng.set_value(self.rng_ctor(child), borrow=True)

    def gen(self, op: Callable, *args: Any, **kwargs: Any) -> Variable:
        """``op(*args, **kwargs)`` drawing from a new shared generator of this stream,
        which gets the draw's next state as its ``default_update``."""
        if "rng" in kwargs:
            raise ValueError("RandomStream chooses the generator itself: do not pass rng=")
        if kwargs.pop("return_next_rng", False):
            raise ValueError("RandomStream updates its generators itself: do not pass return_next_rng=")
        (child,) = self.gen_seedgen.spawn(1)
        rng = shared(self.rng_ctor(child), borrow=True)
        next_rng, out = op(*args, rng=rng, return_next_rng=True, **kwargs)
        self.state_updates.append((rng, next_rng))
        rng.default_update = next_rng
        return out
