from __future__ import annotations

import pytest

from gpuadvisor.engine.expr import ExpressionError, FactType, compile_expression

SCHEMA = {
    "workload.vram_need_gib": FactType("number"),
    "workload.kind": FactType("string", ("training", "inference")),
    "workload.ready": FactType("bool"),
    "host.util": FactType("number"),
    "host.iowait": FactType("number"),
}


def holds(text: str, **facts: object) -> object:
    values = {k.replace("__", "."): v for k, v in facts.items()}
    return compile_expression(text, SCHEMA).evaluate(values)  # type: ignore[arg-type]


def test_arithmetic_and_comparison() -> None:
    assert holds("workload.vram_need_gib * 2 > 70", workload__vram_need_gib=40) is True
    assert holds("workload.vram_need_gib / 2 == 20", workload__vram_need_gib=40) is True
    assert holds("10 < workload.vram_need_gib <= 40", workload__vram_need_gib=40) is True
    assert holds("10 < workload.vram_need_gib <= 39", workload__vram_need_gib=40) is False


def test_enum_membership() -> None:
    assert holds("workload.kind in ['training']", workload__kind="training") is True
    assert holds("workload.kind not in ['training']", workload__kind="training") is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("host.util < 60", None),
        ("not (host.util < 60)", None),
        ("host.util < 60 and workload.ready", False),
        ("host.util < 60 or true", True),
        ("known(host.util)", False),
        ("not known(host.util)", True),
        ("host.util + 1 > 0", None),
    ],
)
def test_null_is_unknown_not_zero(text: str, expected: object) -> None:
    assert holds(text, host__util=None, workload__ready=False) is expected


def test_names_are_recorded_once_in_order() -> None:
    expression = compile_expression(
        "host.util < 60 and (host.iowait > 10 or host.util < 5)", SCHEMA
    )
    assert expression.names == ("host.util", "host.iowait")


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        (
            "workload.vram_ned_gib > 2",
            "unknown fact 'workload.vram_ned_gib'",
            "workload.vram_need_gib",
        ),
        ("workload.kind == 'trainng'", "not a possible value", "training"),
        ("workload.kind in ['trainng']", "not a possible value", None),
        ("workload.kind > 2", "compares a string with a number", None),
        ("workload.ready and 3", "needs true/false", None),
        ("__import__('os').system('x')", "not a known function", None),
        ("workload.vram_need_gib.__class__ == 1", "unknown fact", None),
        ("[x for x in y]", "not allowed", None),
        ("lambda: 1", "not allowed", None),
        ("workload.vram_need_gib > 'a'", "compares a number with a string", None),
        ("workload.vram_need_gib", "must be true or false", None),
        ("host.util == null", "known(x)", None),
        ("workload.kind ==", "syntax error", None),
        ("workload.vram_need_gib ** 2 > 1", "not allowed", None),
        ("workload.ready < true", "only == and !=", None),
    ],
)
def test_rejected_at_compile_time(text: str, message: str, hint: str | None) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text, SCHEMA)
    assert message in caught.value.message
    if hint:
        assert caught.value.hint and hint in caught.value.hint


def test_overlong_expression_refused() -> None:
    with pytest.raises(ExpressionError, match="longer than"):
        compile_expression("true and " * 400 + "true", SCHEMA)


def test_division_by_zero_is_unknown() -> None:
    assert holds("workload.vram_need_gib / 0 > 1", workload__vram_need_gib=4) is None
