"""Parts of :mod:`arignote.gradient` kept in their own modules; import the names from
``arignote.gradient`` (PyTensor 3's path).

* ``terms``: the gradient terms that are not ordinary Variables (disconnected, undefined,
  not implemented) and the zeros and casts ``grad`` and the gradient Ops share;
* ``ops``: identity Ops that change only the backward pass (``zero_grad``, ``grad_clip``...);
* ``check``: ``verify_grad`` and ``numeric_grad``, which check gradients numerically.
"""
