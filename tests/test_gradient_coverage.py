"""Every Op class arignote defines has a gradient rule, or is listed here with the reason
it needs none. A new Op without a rule fails this test until it gets one (or a reason)."""

from __future__ import annotations

from arignote.graph.op import Op
from tests.op_classes import all_op_classes

# abstract bases and plumbing: never the op of a node a user differentiates through
NO_RULE_NEEDED = {
    "arignote.graph.fg.Output": "marks a FunctionGraph output; never differentiated",
    "arignote.scalar.op.ScalarOp": "abstract base of the scalar ops",
    "arignote.scalar.op.UnaryScalarOp": "abstract base",
    "arignote.scalar.op.BinaryScalarOp": "abstract base",
    "arignote.scalar.basic.FloatUnary": "abstract base",
    "arignote.scalar.special.FloatNary": "abstract base",
    "arignote.tensor.special._SoftmaxBase": "abstract base of Softmax/LogSoftmax",
    "arignote.tensor.sort._SortBase": "abstract base of SortOp/ArgSortOp",
    "arignote.tensor.random.op.RNGConsumerOp": "abstract base of the random Ops",
}


def _has_rule(cls: type) -> bool:
    return any(getattr(cls, name) is not getattr(Op, name) for name in ("grad", "L_op", "pullback"))


def test_every_op_has_a_gradient_rule_or_a_reason() -> None:
    classes = all_op_classes()
    assert len(classes) > 100  # the walk found the Ops
    missing = sorted(
        name for name, cls in classes.items() if not _has_rule(cls) and name not in NO_RULE_NEEDED
    )
    assert not missing, f"Ops without a gradient rule (add one, or a reason to NO_RULE_NEEDED): {missing}"


def test_the_reasons_name_existing_classes_without_rules() -> None:
    classes = all_op_classes()
    stale = [name for name in NO_RULE_NEEDED if name not in classes or _has_rule(classes[name])]
    assert not stale, f"NO_RULE_NEEDED lists classes that are gone or now have a rule: {stale}"
