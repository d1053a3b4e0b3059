"""Record the public attributes of PyTensor's core classes into ``tests/data/pytensor_public_attributes.json``.

Run with an interpreter that has PyTensor 3 installed (the tests never import PyTensor)::

    /path/to/pytensor-venv/bin/python tools/pytensor_attributes.py

For each class of :data:`CLASSES` (named by the module that defines it, as
``"pytensor.graph.basic.Variable"``), the file lists what a user can reach on it: its methods,
properties and class attributes (``dir(cls)``), and, where :data:`INSTANCES` builds a small real
instance (a compiled ``pytensor.function`` for ``Function``, its ``maker`` for
``FunctionMaker``), that instance's attributes (``dir(instance)``, which adds what ``__init__``
sets). Abstract bases (``Op``, ``Type``) are recorded from the class alone: an instance would be
a subclass's, with that subclass's attributes. As in ``tools/pytensor_names.py``, a name that
starts with an underscore is not public, and neither is what every class inherits from
``object``. ``tests/test_api_attributes.py`` checks that arignote's class at the same path
(``pytensor`` -> ``arignote``) has each name, building its instances the same way.
"""

from __future__ import annotations

import importlib
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

CLASSES = [
    "pytensor.graph.basic.Variable",
    "pytensor.graph.basic.Constant",
    "pytensor.graph.basic.Apply",
    "pytensor.graph.op.Op",
    "pytensor.graph.fg.FunctionGraph",
    "pytensor.graph.type.Type",
    "pytensor.tensor.variable.TensorVariable",
    "pytensor.tensor.variable.TensorConstant",
    "pytensor.tensor.type.TensorType",
    "pytensor.tensor.sharedvar.TensorSharedVariable",
    "pytensor.compile.sharedvalue.SharedVariable",
    "pytensor.scalar.basic.ScalarType",
    "pytensor.scalar.basic.ScalarVariable",
    # PyTensor 2's pytensor.compile.function.types; PyTensor 3 split it in executor and maker
    "pytensor.compile.executor.Function",
    "pytensor.compile.maker.FunctionMaker",
    "pytensor.compile.mode.Mode",
    "pytensor.tensor.elemwise.Elemwise",
    "pytensor.tensor.elemwise.DimShuffle",
    "pytensor.compile.builders.OpFromGraph",
    "pytensor.scan.op.Scan",
    "pytensor.tensor.random.op.RandomVariable",
]


def find_op(outputs: list, op_class: type) -> object:
    """The first Op of class ``op_class`` in the graph of ``outputs`` (walked by hand, so that
    the same walk works on either library)."""
    stack, seen = list(outputs), set()
    while stack:
        var = stack.pop()
        if id(var) in seen or var.owner is None:
            continue
        seen.add(id(var))
        if isinstance(var.owner.op, op_class):
            return var.owner.op
        stack.extend(var.owner.inputs)
    raise LookupError(f"no {op_class.__name__} in the graph")


def instances(lib: str) -> dict[str, Callable[[], object]]:
    """Builders of a small real instance per class, for library ``lib`` (``"pytensor"`` or
    ``"arignote"``): ``tests/test_api_attributes.py`` calls this same code with ``"arignote"``.
    Each builder returns an instance of exactly the named class (or of a subclass where the
    class is only ever used through one: ``RandomVariable`` through ``NormalRV``)."""

    def mod(path: str):
        return importlib.import_module(f"{lib}.{path}")

    def variable():
        tt = mod("tensor.type").TensorType("float64", shape=(None,))
        return mod("graph.basic").Variable(tt, None, name="v")

    def constant():
        tt = mod("tensor.type").TensorType("float64", shape=(2,))
        return mod("graph.basic").Constant(tt, np.array([1.0, 2.0]), name="c")

    def apply():
        pt = mod("tensor")
        x = pt.dvector("x")
        return (x + 1).owner

    def fgraph():
        pt = mod("tensor")
        x = pt.dvector("x")
        return mod("graph.fg").FunctionGraph([x], [pt.exp(x) + 1])

    def shared_variable():
        tt = mod("tensor.type").TensorType("float64", shape=(None,))
        return mod("compile.sharedvalue").SharedVariable(type=tt, value=np.zeros(3), strict=False, name="s")

    def function():
        lib_ = importlib.import_module(lib)
        x = mod("tensor").dvector("x")
        return lib_.function([x], 2 * x)

    def elemwise():
        x = mod("tensor").dvector("x")
        return (x + 1).owner.op

    def dimshuffle():
        x = mod("tensor").dvector("x")
        return x.dimshuffle("x", 0).owner.op

    def op_from_graph():
        a = mod("tensor").dscalar("a")
        return mod("compile.builders").OpFromGraph([a], [2 * a])

    def scan():
        pt = mod("tensor")
        x0 = pt.dvector("x0")
        outs = mod("scan").scan(lambda s: 2 * s, outputs_info=[x0], n_steps=3, return_updates=False)
        return find_op([outs], mod("scan.op").Scan)

    return {
        "graph.basic.Variable": variable,
        "graph.basic.Constant": constant,
        "graph.basic.Apply": apply,
        "graph.fg.FunctionGraph": fgraph,
        "tensor.variable.TensorVariable": lambda: mod("tensor").dvector("x"),
        "tensor.variable.TensorConstant": lambda: mod("tensor").constant(np.arange(3.0)),
        "tensor.type.TensorType": lambda: mod("tensor.type").TensorType("float64", shape=(None,)),
        "tensor.sharedvar.TensorSharedVariable": lambda: importlib.import_module(lib).shared(np.zeros(3)),
        "compile.sharedvalue.SharedVariable": shared_variable,
        "scalar.basic.ScalarType": lambda: mod("scalar.basic").ScalarType("float64"),
        "scalar.basic.ScalarVariable": lambda: mod("scalar").float64("s"),
        "compile.executor.Function": function,
        "compile.maker.FunctionMaker": lambda: function().maker,
        "compile.mode.Mode": lambda: mod("compile.mode").Mode(linker="py", optimizer="fast_run"),
        "tensor.elemwise.Elemwise": elemwise,
        "tensor.elemwise.DimShuffle": dimshuffle,
        "compile.builders.OpFromGraph": op_from_graph,
        "scan.op.Scan": scan,
        "tensor.random.op.RandomVariable": lambda: mod("tensor.random.basic").normal,
    }


_OBJECT_NAMES = set(dir(object))


def public_attributes(cls: type, instance: object | None) -> list[str]:
    """The public names of ``cls`` and, when given, of ``instance``."""
    names = set(dir(cls))
    if instance is not None:
        names |= set(dir(instance))
    return sorted(n for n in names if not n.startswith("_") and n not in _OBJECT_NAMES)


def main() -> None:
    builders = instances("pytensor")
    out: dict[str, list[str]] = {}
    for path in CLASSES:
        module_name, class_name = path.rsplit(".", 1)
        cls = getattr(importlib.import_module(module_name), class_name)
        build = builders.get(path[len("pytensor.") :])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            instance = build() if build is not None else None
        if instance is not None and not isinstance(instance, cls):
            raise TypeError(f"the instance built for {path} is a {type(instance).__name__}")
        out[path] = public_attributes(cls, instance)
    path = Path(__file__).resolve().parent.parent / "tests" / "data" / "pytensor_public_attributes.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    total = sum(len(v) for v in out.values())
    print(f"wrote {path}: {total} names in {len(CLASSES)} classes", file=sys.stderr)


if __name__ == "__main__":
    main()
