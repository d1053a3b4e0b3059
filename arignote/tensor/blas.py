"""``pytensor.tensor.blas``'s user-facing names.

arignote reaches BLAS through NumPy (``Dot``, ``MatMul``, ``tensordot``); it has no Gemm/Gemv
Ops of its own, so this module only re-exports the batched products PyTensor users import
from here.
"""

from arignote.tensor.math_extra import batched_dot, batched_tensordot

__all__ = ["batched_dot", "batched_tensordot"]
