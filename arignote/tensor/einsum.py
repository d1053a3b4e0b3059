"""``einsum``: sums of products of tensors in Einstein's notation, as NumPy's ``einsum``.

It builds a graph of existing Ops (diagonals by indexing, ``sum``, ``DimShuffle``,
``mul``, ``tensordot`` and batched ``matmul``), so its gradient, shapes and batching come
from theirs. With three or more operands the pairwise contraction order is chosen greedily:
each step contracts the pair whose result removes the most elements (NumPy's greedy rule),
lengths not known statically counted as ``_UNKNOWN_LENGTH``.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a, b = pt.dmatrix("a"), pt.dmatrix("b")
>>> c = einsum("ij,jk->ik", a, b)
>>> c.eval({a: np.eye(2), b: np.arange(4.0).reshape(2, 2)})
array([[0., 1.],
       [2., 3.]])
>>> einsum("ii", a).eval({a: np.arange(4.0).reshape(2, 2)})  # the trace
array(3.)
"""

from __future__ import annotations

import math
import string
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import DimShuffle, _static_length
from arignote.tensor.products import matmul, tensordot
from arignote.tensor.ranges import arange
from arignote.tensor.reductions import sum as tsum
from arignote.tensor.shape import reshape, shape_i, specify_shape
from arignote.tensor.shape_utils import _product
from arignote.tensor.ufuncs import cast, mul, neq

__all__ = ["einsum"]

_LETTERS = frozenset(string.ascii_letters)
_UNKNOWN_LENGTH = 16  # the length the contraction order assumes for one not known statically

# A label names a dimension: a letter, or an int for the k-th (right-aligned) dimension
# covered by an ellipsis.
Label = Hashable


class _Operand:
    """A tensor and the label of each of its dimensions (distinct once diagonals are taken)."""

    __slots__ = ("labels", "x")

    def __init__(self, x: Variable, labels: list):
        self.x, self.labels = x, labels


# --- parsing -----------------------------------------------------------------------------------


def _split_term(term: str, what: str, subscripts: str) -> tuple[list[str], int | None]:
    """The letters of one term and the position of its ellipsis (None: none)."""
    ell = term.find("...")
    if ell >= 0 and "..." in term[ell + 3 :]:
        raise ValueError(f"einsum: {what} of {subscripts!r} has more than one ellipsis '...'")
    rest = term.replace("...", "", 1) if ell >= 0 else term
    for ch in rest:
        if ch == ".":
            raise ValueError(
                f"einsum: {what} of {subscripts!r} has a '.' that is not part of an ellipsis '...'"
            )
        if ch not in _LETTERS:
            raise ValueError(
                f"einsum: invalid subscript {ch!r} in {what} of {subscripts!r}: subscripts are letters "
                "(a-z, A-Z), and '...' for broadcast dimensions"
            )
    return list(rest), (ell if ell >= 0 else None)


def _parse(subscripts: str, tensors: Sequence[Variable]) -> tuple[list[list], list]:
    """The labels of each operand's dimensions and of the output's."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str, got {type(subscripts).__name__}")
    text = "".join(subscripts.split())
    if text.count("->") > 1 or text.replace("->", "").count("-") or text.replace("->", "").count(">"):
        raise ValueError(f"einsum: {subscripts!r} must have at most one '->' (between inputs and output)")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(tensors):
        raise ValueError(
            f"einsum: the subscripts {subscripts!r} name {len(terms)} operand(s), {len(tensors)} given"
        )
    parsed = [_split_term(t, f"operand {k}", subscripts) for k, t in enumerate(terms)]
    n_ell = 0
    for k, ((letters, ell), x) in enumerate(zip(parsed, tensors)):
        ndim = x.type.ndim
        if (ell is None and len(letters) != ndim) or len(letters) > ndim:
            raise ValueError(
                f"einsum: operand {k} ({x.type}) has {ndim} dimension(s), its subscripts {terms[k]!r} "
                f"name {len(letters)}" + ("" if ell is None else " (besides '...')")
            )
        if ell is not None:
            n_ell = max(n_ell, ndim - len(letters))
    in_labels = []
    for (letters, ell), x in zip(parsed, tensors):
        if ell is None:
            in_labels.append(list(letters))
            continue
        covered = x.type.ndim - len(letters)  # right-aligned among the n_ell broadcast dims
        in_labels.append([*letters[:ell], *range(n_ell - covered, n_ell), *letters[ell:]])
    return in_labels, _output_labels(subscripts, rhs if arrow else None, in_labels, n_ell)


def _output_labels(subscripts: str, rhs: str | None, in_labels: list[list], n_ell: int) -> list:
    letters = [lab for labels in in_labels for lab in labels if isinstance(lab, str)]
    if rhs is None:  # implicit: the broadcast dims, then the letters used once, sorted
        return [*range(n_ell), *sorted(lab for lab in set(letters) if letters.count(lab) == 1)]
    out, ell = _split_term(rhs, "the output", subscripts)
    for lab in out:
        if out.count(lab) > 1:
            raise ValueError(f"einsum: output subscript {lab!r} of {subscripts!r} appears more than once")
        if lab not in letters:
            raise ValueError(f"einsum: output subscript {lab!r} of {subscripts!r} is in no input")
    if ell is None:
        if n_ell:
            raise ValueError(
                f"einsum: the operands of {subscripts!r} have {n_ell} broadcast dimension(s) ('...'), "
                "the output must keep them: add '...' to it"
            )
        return out
    return [*out[:ell], *range(n_ell), *out[ell:]]


def _label_lengths(operands: list[_Operand], subscripts: str) -> dict:
    """Each label's static length (None: not known), checking they agree (a length of 1
    broadcasts against any other, as in NumPy)."""
    seen: dict = {}
    for k, op in enumerate(operands):
        for d, lab in enumerate(op.labels):
            seen.setdefault(lab, []).append((k, d, op.x.type.shape[d]))
    lengths = {}
    for lab, uses in seen.items():
        try:
            lengths[lab] = _static_length([s for _k, _d, s in uses], 0, ())
        except ValueError:
            detail = ", ".join(f"operand {k} dimension {d} has length {s}" for k, d, s in uses)
            name = "'...'" if isinstance(lab, int) else repr(lab)
            raise ValueError(
                f"einsum: subscript {name} of {subscripts!r} has different lengths: {detail}"
            ) from None
    return lengths


# --- per-operand steps ----------------------------------------------------------------------------


def _diagonals(x: Variable, labels: list, k: int) -> tuple[Variable, list]:
    """Take the diagonal over each label repeated in one operand (NumPy's ``"ii->i"``): the
    two dimensions are moved to the front and indexed by the same ``arange``."""
    while len(set(labels)) < len(labels):
        p = next(d for d, lab in enumerate(labels) if labels.count(lab) > 1)
        q = labels.index(labels[p], p + 1)
        sp, sq = x.type.shape[p], x.type.shape[q]
        if sp is not None and sq is not None and sp != sq:
            raise ValueError(
                f"einsum: subscript {labels[p]!r} is repeated in operand {k} on dimensions of lengths "
                f"{sp} and {sq}; a diagonal needs equal lengths"
            )
        n = sp if sp is not None else sq if sq is not None else shape_i(x, p)
        if sp is None or sq is None:  # assert at run time that the unknown length is the other
            want: list = [None] * x.type.ndim
            want[q if sq is None else p] = n
            x = specify_shape(x, tuple(want))
        rest = [d for d in range(x.type.ndim) if d not in (p, q)]
        if [p, q, *rest] != list(range(x.type.ndim)):
            x = DimShuffle(input_ndim=x.type.ndim, new_order=[p, q, *rest])(x)
        idx = arange(n)
        x = x[idx, idx]
        labels = [labels[p], *(labels[d] for d in rest)]
    return x, labels


def _drop(op: _Operand, lengths: dict, needed: set, out_dtype: str) -> _Operand:
    """Sum away the labels no one else needs, and squeeze length-1 dimensions that broadcast
    against longer ones (a label absent from an operand broadcasts)."""
    x, labels = op.x, op.labels
    squeeze = [d for d, lab in enumerate(labels) if x.type.shape[d] == 1 and lengths[lab] != 1]
    summed = [d for d, lab in enumerate(labels) if lab not in needed and d not in squeeze]
    if summed:
        x = tsum(x, axis=summed, dtype=out_dtype)
        labels = [lab for d, lab in enumerate(labels) if d not in summed]
        squeeze = [d - sum(s < d for s in summed) for d in squeeze]
    if squeeze:
        keep = [d for d in range(len(labels)) if d not in squeeze]
        x = DimShuffle(input_ndim=len(labels), new_order=keep)(x)
        labels = [labels[d] for d in keep]
    return _Operand(x, labels)


# --- contracting a pair ---------------------------------------------------------------------------


def _length(lab: Label, op: _Operand, lengths: dict) -> Any:
    """A label's length: a Python int when static, else the operand's ``Shape_i``."""
    n = lengths[lab]
    return n if n is not None else shape_i(op.x, op.labels.index(lab))


def _arrange(op: _Operand, order: list) -> Variable:
    """The operand's tensor with its dimensions in ``order`` (a label missing from it: a
    broadcastable dimension)."""
    new = ["x" if lab not in op.labels else op.labels.index(lab) for lab in order]
    if new == list(range(len(op.labels))):
        return op.x
    return DimShuffle(input_ndim=len(op.labels), new_order=new)(op.x)


def _contract(a: _Operand, b: _Operand, keep: set, lengths: dict, out_dtype: str) -> _Operand:
    """The product of two operands, summed over the labels they share that nothing later
    needs (``keep``: the output's labels and those of the other operands)."""
    a = _drop(a, lengths, keep | set(b.labels), out_dtype)
    b = _drop(b, lengths, keep | set(a.labels), out_dtype)
    shared = [lab for lab in a.labels if lab in b.labels]
    summed = [lab for lab in shared if lab not in keep]
    batch = [lab for lab in shared if lab in keep]
    a_only = [lab for lab in a.labels if lab not in shared]
    b_only = [lab for lab in b.labels if lab not in shared]
    if not summed:  # a broadcast product
        order = [*a.labels, *b_only]
        return _Operand(mul(_arrange(a, order), _arrange(b, order)), order)
    if not batch:
        axes = ([a.labels.index(lab) for lab in summed], [b.labels.index(lab) for lab in summed])
        return _Operand(tensordot(a.x, b.x, axes), [*a_only, *b_only])
    if not a_only and not b_only:  # a batch of dot products
        order = [*batch, *summed]
        prod = mul(_arrange(a, order), _arrange(b, order))
        return _Operand(tsum(prod, axis=list(range(len(batch), len(order))), dtype=out_dtype), batch)
    # a batched matmul: (batch, M, K) @ (batch, K, N), the free and summed labels merged
    batch_dims = [_length(lab, a, lengths) for lab in batch]
    a_dims = [_length(lab, a, lengths) for lab in a_only]
    b_dims = [_length(lab, b, lengths) for lab in b_only]
    k_dims = [_length(lab, a, lengths) for lab in summed]
    a3 = _arrange(a, [*batch, *a_only, *summed])
    if len(a_only) != 1 or len(summed) != 1:
        a3 = reshape(a3, [*batch_dims, _product(a_dims), _product(k_dims)])
    b3 = _arrange(b, [*batch, *summed, *b_only])
    if len(b_only) != 1 or len(summed) != 1:
        b3 = reshape(b3, [*batch_dims, _product(k_dims), _product(b_dims)])
    out = matmul(a3, b3)
    if len(a_only) != 1 or len(b_only) != 1:
        out = reshape(out, [*batch_dims, *a_dims, *b_dims])
    return _Operand(out, [*batch, *a_only, *b_only])


# --- the contraction order ----------------------------------------------------------------------


def _size(labels: Any, lengths: dict) -> int:
    return math.prod(_UNKNOWN_LENGTH if lengths[lab] is None else lengths[lab] for lab in labels)


def _greedy_pair(operands: list[_Operand], out: list, lengths: dict) -> tuple[int, int]:
    """NumPy's greedy choice: among the pairs sharing a label, the one whose result removes
    the most elements (then the cheapest); with none sharing, the smallest outer product."""
    best: tuple | None = None
    for i in range(len(operands)):
        for j in range(i + 1, len(operands)):
            la, lb = set(operands[i].labels), set(operands[j].labels)
            others = {lab for k, o in enumerate(operands) if k not in (i, j) for lab in o.labels}
            result = (la | lb) & (others | set(out))
            size = _size(result, lengths)
            if la & lb:
                cost = (0, size - _size(la, lengths) - _size(lb, lengths), _size(la | lb, lengths))
            else:
                cost = (1, size, 0)
            if best is None or cost < best[0]:
                best = (cost, (i, j))
    assert best is not None
    return best[1]


def _path(optimize: Any, n: int) -> list[tuple[int, ...]] | str:
    """``"greedy"``, ``"left"`` (left to right) or an explicit contraction path: tuples of
    positions in the current operand list (NumPy's ``einsum_path`` format; the result of a
    step goes to the end of the list)."""
    if optimize is None or optimize is True or optimize == "greedy":
        return "greedy"
    if optimize is False:
        return "left"
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize[1:] if optimize and optimize[0] == "einsum_path" else optimize)
        count = n
        for step in steps:
            if (
                not isinstance(step, (list, tuple))
                or not step
                or len(set(step)) != len(step)
                or not all(isinstance(i, (int, np.integer)) and 0 <= i < count for i in step)
            ):
                raise ValueError(
                    f"einsum: path step {step!r} must be a tuple of distinct positions among the "
                    f"{count} operand(s) left"
                )
            count -= len(step) - 1
        if count != 1:
            raise ValueError(f"einsum: the path {optimize!r} leaves {count} operands, not 1")
        return [tuple(int(i) for i in s) for s in steps]
    raise ValueError(
        "einsum: optimize must be None, True or 'greedy' (a greedy contraction order), False (left "
        f"to right) or a contraction path such as [(0, 1), (0, 1)]; got {optimize!r}"
    )


def _needed(operands: list[_Operand], out: list, skip: Sequence[int]) -> set:
    return set(out) | {lab for k, o in enumerate(operands) if k not in skip for lab in o.labels}


def einsum(subscripts: str, *operands: Any, optimize: Any = None) -> Variable:
    """NumPy's ``einsum``: the product of ``operands`` summed over the subscripts that are not
    in the output.

    ``subscripts`` is like ``"ij,jk->ik"``: one comma-separated term per operand, a letter
    per dimension; a letter repeated within one term takes a diagonal (``"ii->i"``);
    ``"..."`` stands for broadcast dimensions. Without ``"->"`` the output holds the
    broadcast dimensions, then the letters used once, in alphabetical order. A dimension of
    length 1 broadcasts. The result's dtype is NumPy's (the operands' common dtype; bools
    give bools: or of ands).

    ``optimize``: None, True or ``"greedy"`` (default): contract the pair that removes the
    most elements first; False: left to right; or a path as ``numpy.einsum_path`` gives it.
    Built from existing Ops (``tensordot``, ``matmul``, ``sum``, indexing), so it has their
    gradients.
    """
    tensors = [as_tensor_variable(x) for x in operands]
    if not tensors:
        raise ValueError("einsum: no operands given")
    in_labels, out = _parse(subscripts, tensors)
    out_dtype = np.result_type(*(t.type.dtype for t in tensors)).name
    if out_dtype == "bool":  # or of ands: counted in integers, then compared with 0
        tensors = [cast(t, "int64") for t in tensors]
    ops = []
    for k, (x, labels) in enumerate(zip(tensors, in_labels)):
        x, labels = _diagonals(x, labels, k)
        ops.append(_Operand(x, labels))
    lengths = _label_lengths(ops, subscripts)
    sum_dtype = "int64" if out_dtype == "bool" else out_dtype
    ops = [_drop(op, lengths, _needed(ops, out, [k]), sum_dtype) for k, op in enumerate(ops)]
    path = _path(optimize, len(ops))
    planned = iter(path) if isinstance(path, list) else None
    # (a checked path takes the operands down to one; a step on a lone operand changes nothing)
    while len(ops) > 1:
        if planned is not None:
            step = next(planned)
        elif path == "greedy":
            step = _greedy_pair(ops, out, lengths)
        else:
            step = (0, 1)
        chosen = [ops[i] for i in step]
        rest = [o for i, o in enumerate(ops) if i not in step]
        acc = chosen[0]
        for k, nxt in enumerate(chosen[1:], start=1):
            keep = _needed([*chosen[k + 1 :], *rest], out, [])
            acc = _contract(acc, nxt, keep, lengths, sum_dtype)
        acc = _drop(acc, lengths, _needed(rest, out, []), sum_dtype)
        ops = [acc, *rest] if path == "left" else [*rest, acc]
    (final,) = ops
    result = _arrange(final, out)
    if out_dtype == "bool":
        result = neq(result, 0)
    elif result.type.dtype != out_dtype:
        result = cast(result, out_dtype)
    static = tuple(lengths[lab] for lab in out)
    if any(s is not None and r is None for s, r in zip(static, result.type.shape)):
        result = specify_shape(result, static)
    return result
