"""Invariants of capacity, physical fit and sensitivity over generated profiles (#17).

For every generated profile (with and without cards already in the host): no pick needs
more cards, slot positions or power than the platform has (power with its transient
margin, or within the 20 % a stated power limit may take), no job lacks its headroom,
no purchase serves more jobs than wanted, the capacity figures agree with each other,
the cheapest option that would do is no dearer than the pick, and every threshold of
what would change the answer changes it while the step before does not.

Bounded for CI; ``GPUADVISOR_FUZZ_EXAMPLES=10000`` runs the long version (the scan check
runs on a tenth of them).
"""

from __future__ import annotations

import math
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.decision.build import Advisor, decide
from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.sensitivity import neighbour, scan
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile

from .test_properties import RULES, profiles

EXAMPLES = int(os.environ.get("GPUADVISOR_FUZZ_EXAMPLES", "200"))
CATALOG = load_catalog()
ADVISOR = Advisor(Engine(CATALOG, RULES))
POLICY = RULES.policy

platform_extra = st.fixed_dictionaries(
    {
        "gpu_slots_total": st.sampled_from([0, 0, 2, 4, 6, 8, 12]),
        "circuit_w": st.sampled_from([0.0, 0.0, 1800.0, 2400.0]),
        "power_limit_ok": st.booleans(),
        "hosts": st.sampled_from([1, 1, 1, 2, 3]),
        "cpu_w": st.sampled_from([None, None, 350.0]),
    }
)
workload_extra = st.fixed_dictionaries(
    {
        "gpus_per_job": st.sampled_from([1, 1, 2, 4]),
        "sharded_data_parallel": st.booleans(),
    }
)
#: Cards already in the host: none, or a count of one catalog model (or an unknown one).
existing = st.one_of(
    st.none(),
    st.tuples(
        st.integers(min_value=1, max_value=8),
        st.sampled_from([s.name for s in CATALOG.skus] + ["NVIDIA TITAN V"]),
    ),
)


def _profile(data: dict[str, Any], work: dict[str, Any], plat: dict[str, Any]) -> Profile:
    merged = {
        **data,
        "workload": {**data["workload"], **work},
        "platform": {**data["platform"], **plat},
    }
    return Profile.model_validate(merged)


def _host(cards: tuple[int, str] | None) -> dict[str, Any] | None:
    if cards is None:
        return None
    count, name = cards
    sku = next((s for s in CATALOG.skus if s.name == name), None)
    total = (sku.vram_gib * 1024 - 12) if sku else 12288.0
    return {
        "host.evidence_present": True,
        "host.gpu_count": count,
        "host.gpu_model": name,
        "host.gpu_models_distinct": 1,
        "host.gpu_memory_total_min_mib": total,
        "host.gpu_memory_reserved_max_mib": 400.0,
        "gpu.ecc_enabled_all": False,
    }


def check(profile: Profile, decision: Decision) -> None:
    plat, work = profile.platform, profile.workload
    slots = plat.gpu_slots_total or POLICY.default_slots(
        plat.chassis, plat.gpu_count_max, plat.max_gpu_slot_width
    )
    host_w = POLICY.host_draw_w(plat.cpu_w, plat.system_w, plat.cpu_sockets)
    available = POLICY.gpu_power_available_w(plat.psu_headroom_w, plat.psu_w, host_w)
    circuit = POLICY.circuit_budget_w(plat.circuit_w, host_w)
    r = decision.recommendation
    if not decision.picks:
        assert r.capacity is None
        return
    for pick in decision.picks:
        assert pick.cards_total <= plat.gpu_count_max
        assert pick.slots_total is not None and pick.slots_total <= slots + 1e-9
        assert pick.board_power_w is not None
        # Cards powered from the slot alone keep no margin for spikes (FIT-003).
        slot = pick.tdp_w <= POLICY.power.slot_power_w and not pick.kept_count
        budgets = [available if slot else POLICY.psu_budget_w(available)]
        if circuit is not None:
            budgets.append(circuit)
        allowed = min(budgets)
        if pick.power_limit_w is None:
            assert pick.board_power_w <= allowed + 1e-6
        else:
            assert plat.power_limit_ok
            assert pick.board_power_w * 0.8 <= allowed + 1e-6
            assert pick.power_limit_w <= pick.tdp_w
        assert pick.headroom_gib is not None and pick.headroom_gib >= -1e-9
        if pick.memory_basis == "usable":
            assert pick.headroom_gib >= POLICY.headroom_gib(work.kind, work.vram_need_gib) - 1e-3
        assert 0 <= pick.jobs_served <= pick.jobs_wanted == work.concurrent_jobs
        new_open_air = pick.count if pick.cooling == "open-air" else 0
        if new_open_air:
            assert plat.chassis in ("tower", "workstation") and plat.airflow == "open"
    capacity = r.capacity
    assert capacity is not None
    top = decision.picks[0]
    assert capacity.jobs_served == top.jobs_served <= capacity.jobs_wanted == work.concurrent_jobs
    assert capacity.shortfall == (capacity.jobs_served < capacity.jobs_wanted)
    assert capacity.hosts == top.hosts == plat.hosts
    if capacity.shortfall:  # every host serves as many: the cards of one serve the share
        per_host = capacity.jobs_served // capacity.hosts
        assert per_host * capacity.hosts == capacity.jobs_served
        assert capacity.hosts_needed == math.ceil(capacity.jobs_wanted / per_host)
    else:
        assert capacity.hosts_needed == capacity.hosts
    assert capacity.cards == top.cards_total * top.hosts
    assert (r.action == "keep") == (top.count == 0)
    assert decision.enough is not None
    cheap, top_total = decision.enough.pick.total_price_usd, top.total_price_usd
    if top_total is not None:  # priced options come first; one on quote has no price to compare
        assert cheap is not None and cheap <= top_total + 1e-6
    assert decision.enough.pick.jobs_served >= top.jobs_served


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


@SETTINGS
@given(profiles, workload_extra, platform_extra, existing)
def test_picks_fit_and_capacity_agrees(
    data: dict[str, Any],
    work: dict[str, Any],
    plat: dict[str, Any],
    cards: tuple[int, str] | None,
) -> None:
    profile = _profile(data, work, plat)
    facts = build_facts(profile, CATALOG, _host(cards))
    check(profile, decide(profile, ADVISOR, facts, sensitivity=False))


@settings(
    max_examples=max(20, EXAMPLES // 10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(profiles, workload_extra, platform_extra, existing)
def test_every_threshold_changes_the_answer(
    data: dict[str, Any],
    work: dict[str, Any],
    plat: dict[str, Any],
    cards: tuple[int, str] | None,
) -> None:
    profile = _profile(data, work, plat)
    engine = ADVISOR.engine
    core = engine.run(build_facts(profile, CATALOG, _host(cards)).values)
    base = core.outcome()
    facts = dict(core.facts)
    for flip in scan(engine, core):
        assert engine.outcome({**facts, flip.input: flip.flips_at}).key() != base, flip
        if flip.direction != "change":
            before = neighbour(flip)
            assert engine.outcome({**facts, flip.input: before}).key() == base, (flip, before)
