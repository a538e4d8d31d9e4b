"""Rank keys are remembered by :func:`gpuadvisor.engine.ranking.rank_inputs`: facts with
equal inputs must rank every option alike. The inputs leave out what a key reads only
in a case the facts are not in (power budgets without ``platform.power_limit_ok``, the
licence's facts without vGPU), so the what-would-change scan's trials re-use keys."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.ranking import rank_inputs, rank_key
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile

from .test_properties import RULES, SETTINGS, profiles

CATALOG = load_catalog()
ENGINE = Engine(CATALOG, RULES)

#: Facts a rank key may skip, each with values to try instead.
VARIED: dict[str, list[Value]] = {
    "platform.gpu_power_budget_w": [100.0, 900.0, 5000.0],
    "platform.circuit_gpu_budget_w": [None, 700.0, 1500.0],
    "requirements.certified_drivers": [True, False],
    "requirements.vgpu_edition": ["none", "vpc", "vws", "vcs"],
    "workload.concurrent_jobs": [1, 7, 40],
    "budget.max_usd": [2000.0, 9000.0, 60000.0],
    "platform.hosts": [1, 2, 5],
}


@SETTINGS
@given(profiles, st.booleans(), st.booleans(), st.sampled_from(sorted(VARIED)), st.data())
def test_equal_rank_inputs_rank_every_option_alike(
    data: dict[str, Any], limit_ok: bool, vgpu: bool, name: str, draw: st.DataObject
) -> None:
    profile = Profile.model_validate(data)
    facts = dict(ENGINE.prepare(build_facts(profile, CATALOG).values))
    facts["platform.power_limit_ok"] = limit_ok
    facts["requirements.vgpu"] = vgpu
    other = {**facts, name: draw.draw(st.sampled_from(VARIED[name]))}
    options = list(ENGINE.memo.option_set(facts).options)
    base = rank_key(options, facts, RULES.policy)
    varied = rank_key(options, other, RULES.policy)
    if rank_inputs(other) == rank_inputs(facts):
        assert [base(o) for o in options] == [varied(o) for o in options], name


def test_the_inputs_hold_what_the_case_reads() -> None:
    """The control: where a skipped fact is read, a change to it changes the inputs."""
    facts = dict(ENGINE.prepare(build_facts(Profile.model_validate(_PROFILE), CATALOG).values))
    limited = {**facts, "platform.power_limit_ok": True}
    assert rank_inputs({**limited, "platform.gpu_power_budget_w": 100.0}) != rank_inputs(
        {**limited, "platform.gpu_power_budget_w": 900.0}
    )
    licensed = {**facts, "requirements.vgpu": True}
    assert rank_inputs({**licensed, "requirements.vgpu_edition": "vpc"}) != rank_inputs(
        {**licensed, "requirements.vgpu_edition": "vws"}
    )
    # The budget for the whole need is read where an option may serve fewer jobs than
    # wanted (more jobs than hosts), and only there.
    short = {**facts, "workload.concurrent_jobs": 8, "platform.hosts": 1}
    assert rank_inputs({**short, "budget.max_usd": 4000.0}) != rank_inputs(
        {**short, "budget.max_usd": 9000.0}
    )
    served = {**facts, "workload.concurrent_jobs": 2, "platform.hosts": 2}
    assert rank_inputs({**served, "budget.max_usd": 4000.0}) == rank_inputs(
        {**served, "budget.max_usd": 9000.0}
    )
    unlimited = {**facts, "platform.power_limit_ok": False}
    assert rank_inputs({**unlimited, "platform.gpu_power_budget_w": 100.0}) == rank_inputs(
        {**unlimited, "platform.gpu_power_budget_w": 900.0}
    )


_PROFILE = {
    "workload": {"kind": "inference", "objective": "throughput", "vram_need_gib": 10},
    "platform": {"gpu_count_max": 4, "psu_headroom_w": 2000},
    "budget": {"max_usd": 30000},
}
