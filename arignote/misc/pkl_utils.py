"""``StripPickler``: pickle graphs without the records of where their nodes were made."""

from __future__ import annotations

import pickle
from copy import copy
from typing import IO, Any

from arignote.graph.basic import Apply, Variable

__all__ = ["StripPickler"]


class StripPickler(pickle.Pickler):
    """A pickler that leaves out what only explains a graph, not what it computes: each
    node's ``trace`` (the user's ``file:line`` that made it) and, on the ``tag`` of nodes
    and Variables, the entries ``trace``, ``test_value`` and ``extra_tag_to_remove``. The
    file is then the same wherever the graph was built, e.g. for a regression test's data.

    >>> import io, pickle
    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> y = pt.exp(x) + 1
    >>> buffer = io.BytesIO()
    >>> StripPickler(buffer, protocol=-1).dump(y)
    >>> z = pickle.loads(buffer.getvalue())
    >>> z.owner.trace is None, y.owner.trace is not None
    (True, True)
    """

    def __init__(self, file: IO[bytes], protocol: int = 0, extra_tag_to_remove: str | None = None):
        super().__init__(file, protocol)
        self.protocol = pickle.HIGHEST_PROTOCOL if protocol is None or protocol < 0 else protocol
        self.tag_to_remove = {"trace", "test_value"} | (
            {extra_tag_to_remove} if extra_tag_to_remove else set()
        )

    def _stripped_tag(self, tag: Any) -> Any:
        if tag is None or not any(k in vars(tag) for k in self.tag_to_remove):
            return tag
        tag = copy(tag)
        for key in self.tag_to_remove:
            vars(tag).pop(key, None)
        return tag

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, (Apply, Variable)):
            return NotImplemented
        reduced = obj.__reduce_ex__(max(self.protocol, 2))
        if len(reduced) < 3:
            return NotImplemented
        state = reduced[2]
        # the state is a dict, or (dict or None, slots dict) for classes with __slots__
        dicts = [d for d in (state if isinstance(state, tuple) else (state,)) if isinstance(d, dict)]
        new_dicts = []
        for d in dicts:
            d = dict(d)
            if "trace" in d and isinstance(obj, Apply):
                d["trace"] = None
            if "_tag" in d:
                d["_tag"] = self._stripped_tag(d["_tag"])
            new_dicts.append(d)
        if isinstance(state, tuple):
            it = iter(new_dicts)
            state = tuple(next(it) if isinstance(d, dict) else d for d in state)
        else:
            state = new_dicts[0] if new_dicts else state
        return (*reduced[:2], state, *reduced[3:])
