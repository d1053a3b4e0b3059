"""Which Op classes of arignote each backend runs with an implementation of its own.

Each backend registers its implementations by Op type (a ``functools.singledispatch`` per
backend, DESIGN.md section 4); an Op without one runs, in the Python backend, through its
generic ``perform`` thunk, and the profile and ``dprint`` say so. This test lists, per
backend, the Op classes without a registration: the work list for the next backends
(Numba, JAX). Run ``pytest tests/link/test_backend_coverage.py -s`` to see it; it is
computed at test time into :data:`UNREGISTERED` (never asserted to be a fixed list, so
adding an Op does not break it). Today only the Python backend exists, and it registers
Elemwise, DimShuffle and CAReduce (everything else runs on ``perform``, or on the Op's own
``make_thunk`` where it overrides it, e.g. IfElse's lazy thunk).
"""

from __future__ import annotations

import inspect

from arignote.graph.op import Op
from arignote.link.python import python_thunk, registered_ops
from arignote.scalar.op import ScalarOp
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from tests.op_classes import all_op_classes

#: backend name -> its registered Op classes (a backend added later adds a line here)
BACKENDS = {"python": registered_ops}

#: backend name -> {"ops": ..., "scalar_ops": ...}: the arignote Op classes it has no
#: registration for (dotted names; scalar ops, the bodies of Elemwise and fused kernels,
#: apart), filled in by :func:`test_unregistered_ops_per_backend`
UNREGISTERED: dict[str, dict[str, list[str]]] = {}


def _covered(cls: type, registered: tuple[type, ...]) -> bool:
    """A class is covered by a registration for itself or a base, unless it overrides
    ``make_thunk`` (its own thunk then wins)."""
    return issubclass(cls, registered) and cls.make_thunk is Op.make_thunk


def test_unregistered_ops_per_backend(record_property) -> None:
    classes = all_op_classes()
    assert len(classes) > 100  # the walk found the Ops
    for backend, registered in BACKENDS.items():
        regs = tuple(registered())
        missing = sorted(
            name for name, cls in classes.items() if not inspect.isabstract(cls) and not _covered(cls, regs)
        )
        scalar = [name for name in missing if issubclass(classes[name], ScalarOp)]
        ops = [name for name in missing if not issubclass(classes[name], ScalarOp)]
        UNREGISTERED[backend] = {"ops": ops, "scalar_ops": scalar}
        record_property(f"unregistered_{backend}", UNREGISTERED[backend])
        print(f"\n{backend} backend, {len(missing)} of {len(classes)} Op classes without a registration")
        print(f"Ops ({len(ops)}):")
        for name in ops:
            print(f"  {name}")
        print(f"scalar ops ({len(scalar)}): {', '.join(name.rsplit('.', 1)[1] for name in scalar)}")
        assert len(missing) < len(classes)


def test_registrations_are_op_classes() -> None:
    for backend, registered in BACKENDS.items():
        regs = registered()
        assert regs, f"the {backend} backend registers nothing"
        for cls in regs:
            assert isinstance(cls, type) and issubclass(cls, Op), f"{backend}: {cls!r} is not an Op class"


def test_the_python_backend_registers_the_elemwise_family() -> None:
    regs = registered_ops()
    for cls in (Elemwise, DimShuffle, CAReduce):
        assert cls in regs
        assert python_thunk.dispatch(cls) is not python_thunk.dispatch(Op)
