"""``min_informative_str``: a short printout of a Variable that expands its graph only as far
as needed to name everything in it by constants and named variables (PyTensor's helper for
error messages and command-line tools)."""

from __future__ import annotations

import string
from typing import Any

__all__ = ["min_informative_str"]


class _Tags:
    """``A``, ``B``, ..., ``Z``, ``AA``, ``AB``, ...: one per object shown."""

    def __init__(self) -> None:
        self.count = 0

    def next(self) -> str:
        n, tag = self.count, ""
        self.count += 1
        while True:
            n, r = divmod(n, 26)
            tag = string.ascii_uppercase[r] + tag
            if n == 0:
                return tag
            n -= 1


def min_informative_str(
    obj: Any, indent_level: int = 0, _prev_obs: dict | None = None, _tag_generator: Any = None
) -> str:
    """``obj`` as a tree of tagged lines (``A. op``, its inputs one tab deeper): a named
    variable or a constant is a leaf (shown by name), an unnamed computed one shows its Op
    and its inputs, and an object met before is shown by its tag alone.

    >>> import arignote.tensor as pt
    >>> x, y = pt.dvector("x"), pt.dvector("y")
    >>> print(min_informative_str(pt.exp(x) + x * y))
    A. Add
     B. Exp
      C. x
     D. Mul
      C
      E. y
    """
    prev = {} if _prev_obs is None else _prev_obs
    tags = _Tags() if _tag_generator is None else _tag_generator
    pad = " " * indent_level
    key = id(obj)
    if key in prev:
        return pad + prev[key][0]
    tag = tags.next()
    prev[key] = (tag, obj)  # (the object is kept so that its id is not reused meanwhile)
    owner = getattr(obj, "owner", None)
    if getattr(obj, "name", None) is not None:
        text = str(obj.name)
    elif hasattr(obj, "__array__") and owner is None and not hasattr(obj, "type"):
        text = "<ndarray>"
    elif owner is not None:
        lines = [str(owner.op)]
        lines += [min_informative_str(i, indent_level + 1, prev, tags) for i in owner.inputs]
        text = "\n".join(lines)
    else:
        text = str(obj)
    return f"{pad}{tag}. {text}"
