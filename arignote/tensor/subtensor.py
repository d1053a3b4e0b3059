"""``pytensor.tensor.subtensor``'s path: indexing with NumPy's semantics. Each name is
defined in its home in :mod:`arignote.tensor.indexing` (``basic``: ints and slices,
``advanced``: integer arrays and masks, ``index``: parsing index expressions and indexed
shapes); this module only re-exports them, with ``get_vector_length``,
``specify_broadcastable`` and ``get_scalar_constant_value`` as PyTensor has them here.

>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> x[1:, 0].owner.op
Subtensor{1:, 0}
"""

from arignote.tensor.conversion import (
    get_scalar_constant_value,
)
from arignote.tensor.indexing.advanced import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    advanced_getitem,
    advanced_inc_subtensor,
    advanced_inc_subtensor1,
    advanced_set_subtensor,
    advanced_set_subtensor1,
    advanced_subtensor,
    advanced_subtensor1,
    take,
)
from arignote.tensor.indexing.basic import (
    IncSubtensor,
    Subtensor,
    basic_subtensor,
    flip,
    getitem,
    inc_subtensor,
    set_subtensor,
)
from arignote.tensor.indexing.index import (
    PicklableIndex,
    ReadsPart,
    WritesPart,
    batched_value,
    check_inc_value,
    check_runtime_value,
    check_slice_entry,
    checked_part,
    expand_ellipsis,
    get_constant_idx,
    get_idx_list,
    idx_op_hash,
    idx_str,
    index_builder,
    index_error,
    indices_from_subtensor,
    is_advanced_entry,
    is_index_scalar,
    parse_index,
    placeholder_of,
    slice_at_axis,
    slice_len,
    to_idx_list,
    value_like,
)
from arignote.tensor.shape import (
    get_vector_length,
    specify_broadcastable,
)

__all__ = [
    "AdvancedIncSubtensor",
    "AdvancedIncSubtensor1",
    "AdvancedSubtensor",
    "AdvancedSubtensor1",
    "IncSubtensor",
    "PicklableIndex",
    "ReadsPart",
    "Subtensor",
    "WritesPart",
    "advanced_getitem",
    "advanced_inc_subtensor",
    "advanced_inc_subtensor1",
    "advanced_set_subtensor",
    "advanced_set_subtensor1",
    "advanced_subtensor",
    "advanced_subtensor1",
    "basic_subtensor",
    "batched_value",
    "check_inc_value",
    "check_runtime_value",
    "check_slice_entry",
    "checked_part",
    "expand_ellipsis",
    "flip",
    "get_constant_idx",
    "get_idx_list",
    "get_scalar_constant_value",
    "get_vector_length",
    "getitem",
    "idx_op_hash",
    "idx_str",
    "inc_subtensor",
    "index_builder",
    "index_error",
    "indices_from_subtensor",
    "is_advanced_entry",
    "is_index_scalar",
    "parse_index",
    "placeholder_of",
    "set_subtensor",
    "slice_at_axis",
    "slice_len",
    "specify_broadcastable",
    "take",
    "to_idx_list",
    "value_like",
]
