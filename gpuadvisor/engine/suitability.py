"""What ranks one option before another beside capacity and cost: whether its speed bound
meets a stated latency target, whether it buys a card nobody can say is still made that
is old for the service asked of it, and whether the work follows memory bandwidth. The
judgements are the policy's (``rules/_policy.toml`` ``[ranking]``,
:mod:`gpuadvisor.engine.policy_ranking`); the speed arithmetic is
:mod:`gpuadvisor.sizing.speed`'s, so the report's bounds and the ranking's agree.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Policy
from gpuadvisor.sizing.speed import answer_tokens_within, compute_tflops


def _positive(facts: Mapping[str, Value], name: str) -> float | None:
    value = facts.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return float(value)


def speed_cards(option: Option) -> int:
    """Cards one model instance runs on: all of them for a split model, else one."""
    return option.cards if option.shape == "multi-gpu-model-parallel" else 1


def answer_tokens(option: Option, facts: Mapping[str, Value]) -> int | None:
    """Answer tokens the option's speed bound leaves within the latency target after a
    full-length prompt (:mod:`gpuadvisor.sizing.speed`), or None without a target or a
    described language model. A split model counts its cards' summed bandwidth and
    compute (the bound a split cannot beat); a board of several GPUs, one GPU."""
    slo = _positive(facts, "workload.latency_slo_ms")
    step_gb = _positive(facts, "workload.decode_gb_per_step")
    prefill_tflop = _positive(facts, "workload.prefill_tflop")
    if slo is None or step_gb is None or prefill_tflop is None:
        return None
    cards = speed_cards(option)
    fp8 = facts.get("workload.prefill_fp8") is True
    rate = min(
        compute_tflops(s.fp16_tensor_tflops / s.gpus_per_board, s.architecture, fp8)
        for s in option.skus
    )
    if rate <= 0 or option.bandwidth_gbs <= 0:
        return None
    decode_s = step_gb / (option.bandwidth_gbs * cards)
    return answer_tokens_within(slo, prefill_tflop / (rate * cards), decode_s)


def meets_target(option: Option, facts: Mapping[str, Value], policy: Policy) -> bool | None:
    """Whether the option's speed bound meets the stated latency target (None: there is
    no target, or no bound to hold it to)."""
    tokens = answer_tokens(option, facts)
    return None if tokens is None else policy.ranking.meets_target(tokens)


def stale(option: Option, facts: Mapping[str, Value], policy: Policy) -> bool:
    """Whether the option buys a card of unknown availability that launched long
    enough ago to be near its end, for a long service or a fleet (cards kept from the
    host are not bought, so they never are)."""
    if option.count == 0:
        return False
    year = facts.get("catalog.as_of_year")
    years = facts.get("requirements.lifecycle_years")
    if not isinstance(year, int) or not isinstance(years, (int, float)):
        return False
    return policy.ranking.stale(
        option.sku.status,
        option.sku.launch_year,
        year,
        float(years),
        facts.get("requirements.fleet_homogeneity") is True,
    )


def bandwidth_bound(facts: Mapping[str, Value], policy: Policy) -> bool:
    """Work whose speed follows memory bandwidth: the policy's kinds, and LLM decoding."""
    if facts.get("workload.decode_gb_per_step") is not None:
        return True
    return facts.get("workload.kind") in policy.ranking.bandwidth_bound_kinds
