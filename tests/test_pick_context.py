"""A pick context regrouped for another group of options keeps every decision-wide value
and makes only the group's rank terms again."""

from __future__ import annotations

from gpuadvisor.decision.purchase import _DECISION_WIDE, PickContext
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile

_PROFILE = {
    "workload": {
        "kind": "vdi",
        "objective": "throughput",
        "vram_need_gib": 4,
        "concurrent_jobs": 6,
    },
    "requirements": {"vgpu": True},
    "platform": {"gpu_count_max": 4, "psu_headroom_w": 2000},
    "budget": {"max_usd": 40000},
}


def test_regroup_copies_every_decision_wide_value_and_new_terms() -> None:
    catalog, rules = load_catalog(), load_rules()
    engine = Engine(catalog, rules)
    facts = build_facts(Profile.model_validate(_PROFILE), catalog)
    core = engine.run(facts.values)
    ranked = [o for pair in core.pairs for o in pair.ranked]
    first, other = ranked[:3], ranked[3:6]
    ctx = PickContext(core.facts, rules.policy, first)
    # Every value the context holds, bar the terms, is one read once per decision.
    assert set(vars(ctx)) - {"terms"} == set(_DECISION_WIDE)
    again = ctx.regroup(other)
    for name in _DECISION_WIDE:
        assert getattr(again, name) == getattr(ctx, name), name
    fresh = PickContext(core.facts, rules.policy, other)
    assert [again.terms(o) for o in other] == [fresh.terms(o) for o in other]
    assert again.terms is not ctx.terms
