"""How the picks of one shape and class were ordered, in the words the report prints
beside them (``recommendation.ranking``): every term :func:`engine.ranking.rank_key`
sorts by, in its order, with the policy's numbers."""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.engine.capacity import number
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.ranking import COST_RANKED, LATENCY_BAND
from gpuadvisor.engine.suitability import bandwidth_bound
from gpuadvisor.vocabulary import format_value


def ranking_text(objective: str, facts: Mapping[str, Value], policy: Policy) -> str:
    """How picks of one shape and class are ordered (engine.ranking.rank_key)."""
    first = "most wanted jobs served, then cards already in the host before new ones"
    if answer_target(facts):
        first = (
            f"cards whose speed bound meets the {format_value(facts['workload.latency_slo_ms'])}"
            f" ms target first, then {first}"
        )
    first += (
        ", then current cards before ones of unknown availability launched "
        f"{policy.ranking.stale_after_years} or more years ago"
        if policy.ranking.long_life(
            float(number(facts, "requirements.lifecycle_years")),
            facts.get("requirements.fleet_homogeneity") is True,
        )
        else ""
    )
    if objective == "throughput":
        return f"{first}, then most throughput per lifecycle dollar"
    if objective == "latency":
        return (
            f"{first}, then the cheapest lifecycle cost among cards whose memory bandwidth "
            f"is within {1 - LATENCY_BAND:.0%} of the fastest of the kind"
        )
    if objective in COST_RANKED:
        merit = "memory bandwidth" if bandwidth_bound(facts, policy) else "compute"
        return (
            f"{first}, then lowest lifecycle cost, costs within "
            f"{policy.ranking.cost_band:.0%} of the cheapest counting as equal (the more "
            f"{merit} first)"
        )
    return f"{first}, then lowest lifecycle cost"


def answer_target(facts: Mapping[str, Value]) -> bool:
    """Whether picks are held to a latency target (a target and a model to bound)."""
    slo = facts.get("workload.latency_slo_ms")
    return isinstance(slo, (int, float)) and facts.get("workload.decode_gb_per_step") is not None
