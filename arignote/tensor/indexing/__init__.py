"""Indexing tensors with NumPy's semantics: ``index`` (parsing index expressions and the
arithmetic of indexed shapes), ``basic`` (ints and slices: ``Subtensor``, ``IncSubtensor``,
``x[idx]``), ``advanced`` (integer arrays and boolean masks). PyTensor's path for all of
them is :mod:`arignote.tensor.subtensor`."""
