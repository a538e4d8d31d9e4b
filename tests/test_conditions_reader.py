"""The engine reads the facts a rule's ``when`` names in one call per rule; facts that
lack a name read it as None, exactly as ``facts.get`` did."""

from __future__ import annotations

from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile

RULES = load_rules()
ENGINE = Engine(load_catalog(), RULES)

PROFILE = {
    "workload": {"kind": "training", "objective": "throughput", "vram_need_gib": 20},
    "platform": {"gpu_count_max": 2},
}


def _facts() -> dict[str, Value]:
    profile = Profile.model_validate(PROFILE)
    return dict(ENGINE.prepare(build_facts(profile, ENGINE.catalog).values))


def test_a_missing_fact_reads_as_null() -> None:
    facts = _facts()
    read = sorted({n for rule in RULES.rules for n in rule.when.names if n.startswith("host.")})
    assert read, "some condition reads host facts"
    lacking = {k: v for k, v in facts.items() if k not in read}
    nulls = {**facts, **dict.fromkeys(read)}
    assert Engine(ENGINE.catalog, RULES).conditions(lacking) == ENGINE.conditions(nulls)


def test_equal_facts_give_the_same_conditions_by_either_path() -> None:
    facts = _facts()
    fresh = Engine(ENGINE.catalog, RULES)
    by_holds = (
        tuple(r for r in RULES.preferences if r.when.holds(facts)),
        tuple(r for r in RULES.constraints if r.when.holds(facts)),
    )
    assert fresh.conditions(facts) == by_holds
