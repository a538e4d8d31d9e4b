"""The buyer's levers: changes a buyer can make, each re-run through the engine's
outcome and kept when it changes the answer to a purchase that meets every requirement.

In the order a report lists them: a lower precision for a served model's weights or its
KV cache, LoRA or QLoRA instead of a full fine-tune (or QLoRA instead of LoRA),
activation checkpointing, an 8-bit optimizer, fewer conversations in flight or a shorter
context, a larger budget, a rack server instead of a tower (when the desk machine is
what limits the answer), and renting the same class of GPU for batch jobs that run only
a few times a month. Which apply, and the values they try, are judgements in
``engine/data/levers.toml`` (:mod:`gpuadvisor.engine.leverdata`).

Levers that change the model re-size it with :mod:`gpuadvisor.sizing` and set the facts
an estimate sets (:func:`gpuadvisor.engine.facts.estimate_facts`); the others change
facts directly, or read the what-would-change scan's boundaries (fewer conversations
shrink the need to just below the scan's boundary, found on the estimator alone). A
handful of :meth:`Engine.outcome` runs each: the scan's speed is kept. Numbers only:
:mod:`gpuadvisor.decision.levers` words them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from gpuadvisor.engine.core import Core, Engine, Outcome
from gpuadvisor.engine.costs import lifecycle_cost_usd
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import estimate_facts
from gpuadvisor.engine.leverdata import (
    LeverData,
    RentalRate,
    break_even_hours_per_month,
    lever_data,
)
from gpuadvisor.engine.sensitivity import Flip
from gpuadvisor.sizing.estimate import MemoryEstimate, estimate_memory
from gpuadvisor.sizing.tables import constants
from gpuadvisor.vocabulary import LeverKind

#: Chassis a rack server may replace.
DESK_CHASSIS = ("tower", "workstation")


class Found(NamedTuple):
    """One lever: what changes (profile fields, ``workload.model.*`` for the model), from
    what, and the answer then."""

    kind: LeverKind
    inputs: dict[str, Value]
    current: dict[str, Value]
    outcome: Outcome
    need_gib: float | None = None
    """The memory one job needs then, when the lever re-sizes the model."""
    rate: RentalRate | None = None
    break_even_hours: float | None = None
    """Rent: GPU hours a month on each card above which buying pays."""


def find_levers(
    engine: Engine,
    core: Core,
    flips: Sequence[Flip],
    estimate: MemoryEstimate | None,
    data: LeverData | None = None,
) -> tuple[Found, ...]:
    """Every lever that applies and changes the answer to a purchase that fits.
    ``estimate``: the model's, when the profile's memory need is derived from it (a
    stated need is not re-sized)."""
    data = lever_data() if data is None else data
    base_facts = dict(core.facts)
    base = core.outcome()
    found: list[Found] = []

    def keep(kind: LeverKind, outcome: Outcome, **fields: Any) -> None:
        if outcome.top is None or outcome.key() == base:
            return
        if any(f.kind == kind and f.outcome.key() == outcome.key() for f in found):
            return  # a milder change of the same kind already gives this answer
        found.append(Found(kind, outcome=outcome, **fields))

    def outcome_with(changes: Mapping[str, Value]) -> Outcome:
        return engine.outcome({**base_facts, **changes})

    if estimate is not None:
        _model_levers(estimate, data, flips, outcome_with, keep)
    for flip in flips:
        if flip.input == "budget.max_usd" and flip.direction == "up":
            keep("budget", flip.outcome, inputs={flip.input: flip.flips_at}, current=_was(flip))
    rack = _rack(base_facts, data, engine.rules.policy.power.transient_margin)
    if rack:
        outcome = outcome_with(rack)
        served = core.top.jobs_served if core.top is not None else 0
        if outcome.top is not None and outcome.top.jobs_served > served:
            # Only when the desk machine is what limits the answer: it serves more.
            keep("rack", outcome, inputs=rack, current={n: base_facts.get(n) for n in rack})
    rent = _rent(core, data)
    if rent is not None:
        found.append(rent)
    return tuple(found)


def _was(flip: Flip) -> dict[str, Value]:
    return {flip.input: flip.current}


Keep = Callable[..., None]


def _model_levers(
    estimate: MemoryEstimate,
    data: LeverData,
    flips: Sequence[Flip],
    outcome_with: Callable[[Mapping[str, Value]], Outcome],
    keep: Keep,
) -> None:
    model = estimate.model
    arch = estimate.facts.arch if model.hf_config is not None else None

    def resized(update: Mapping[str, Any], optimizer_8bit: bool | None = None) -> MemoryEstimate:
        eight = estimate.optimizer_8bit if optimizer_8bit is None else optimizer_8bit
        return estimate_memory(
            model.model_copy(update=dict(update)),
            arch,
            estimate.facts.arch_reference,
            optimizer_8bit=eight,
        )

    def lever(kind: LeverKind, field: str, now: Value, new: MemoryEstimate, value: Value) -> None:
        facts = estimate_facts(new)
        need = facts.get("workload.vram_need_gib")
        keep(
            kind,
            outcome_with(facts),
            inputs={field: value} if field else {},
            current={field: now} if field else {},
            need_gib=float(need) if isinstance(need, (int, float)) else None,
        )

    weights = constants().weights
    serving = model.task == "inference"
    if serving:
        bits = weights[estimate.precision].bits_per_param
        for precision in data.precision.weights:
            if weights[precision].bits_per_param < bits:
                new = resized({"precision": precision})
                lever("precision", "workload.model.precision", estimate.precision, new, precision)
    if serving and estimate.kv_precision in ("fp32", "bf16", "fp16") and estimate.kv_cache_bytes:
        kv = data.precision.kv_cache
        new = resized({"kv_cache_precision": kv})
        lever("kv-cache", "workload.model.kv_cache_precision", estimate.kv_precision, new, kv)
    task_now = "unknown" if estimate.task_assumed else model.task
    for task in data.method.instead.get(model.task, ()):
        update: dict[str, Any] = {"task": task}
        if task == "qlora":
            update["precision"] = None  # QLoRA's base is 4-bit NF4
        lever("method", "workload.model.task", task_now, resized(update), task)
    if data.method.checkpointing and estimate.checkpointing is False:
        new = resized({"activation_checkpointing": True})
        lever("checkpointing", "workload.model.activation_checkpointing", False, new, True)
    if estimate.states is not None and not estimate.optimizer_8bit:
        lever("optimizer", "", None, resized({}, optimizer_8bit=True), None)
    target = next(
        (
            float(f.flips_at)
            for f in flips
            if f.input == "workload.vram_need_gib"
            and f.direction == "down"
            and isinstance(f.flips_at, (int, float))
        ),
        None,
    )
    if target is None or model.family != "llm":
        return
    if serving and model.concurrent_sequences > 1:
        values = range(1, model.concurrent_sequences)
        best = _largest_fitting(values, lambda v: resized({"concurrent_sequences": v}), target)
        if best is not None:
            value, new = best
            lever(
                "sequences",
                "workload.model.concurrent_sequences",
                model.concurrent_sequences,
                new,
                value,
            )
    if not serving:
        return  # a training sample's length is the task itself, not a lever
    step = data.serving.context_step_tokens
    first = -(-data.serving.min_context_tokens // step) * step  # the floor, rounded up
    contexts = range(first, model.context_tokens, step)
    best = _largest_fitting(contexts, lambda v: resized({"context_tokens": v}), target)
    if best is not None:
        value, new = best
        lever("context", "workload.model.context_tokens", model.context_tokens, new, value)


def _largest_fitting(
    values: Sequence[int], size: Callable[[int], MemoryEstimate], target_gib: float
) -> tuple[int, MemoryEstimate] | None:
    """The largest of ascending ``values`` whose estimate needs at most ``target_gib``
    (the need grows with each of them: bisection on the estimator alone)."""
    if not values:
        return None

    def need(index: int) -> tuple[float, MemoryEstimate]:
        estimate = size(values[index])
        return round(estimate.total_gib, 2), estimate

    low_need, low = need(0)
    if low_need > target_gib:
        return None
    best, best_estimate = 0, low
    high = len(values) - 1
    while best < high:
        middle = (best + high + 1) // 2
        middle_need, middle_estimate = need(middle)
        if middle_need <= target_gib:
            best, best_estimate = middle, middle_estimate
        else:
            high = middle - 1
    return values[best], best_estimate


def _rack(facts: Mapping[str, Value], data: LeverData, margin: float) -> dict[str, Value]:
    """The facts of a rack server instead of a tower or workstation, when the lever
    applies: unattended work and no cards already in the host (a new server would not
    hold them)."""
    rack = data.rack
    cards = facts.get("host.gpu_count")
    if (
        facts.get("platform.chassis") not in DESK_CHASSIS
        or facts.get("workload.kind") not in rack.kinds
        or (isinstance(cards, (int, float)) and cards > 0)
    ):
        return {}
    return {
        "platform.chassis": rack.chassis,
        "platform.airflow": rack.airflow,
        "platform.gpu_count_max": rack.gpu_count_max,
        "platform.max_gpu_slot_width": rack.max_gpu_slot_width,
        "platform.gpu_slots_total": rack.gpu_count_max * rack.max_gpu_slot_width,
        "platform.psu_headroom_w": round(rack.gpu_power_w / (1.0 - margin), 1),
        "platform.circuit_w": 0,
    }


def _rent(core: Core, data: LeverData) -> Found | None:
    """Renting the pick's class of GPU instead of buying it, for batch work: with the
    GPU hours a month on each card above which buying pays."""
    top, facts = core.top, core.facts
    if (
        top is None
        or top.count == 0
        or top.kept
        or facts.get("workload.kind") not in data.rental.kinds
    ):
        return None  # nothing bought, or bought beside cards the host keeps running
    rate = data.rental.rate_for(top.sku.id)
    lifecycle = lifecycle_cost_usd(top, facts)
    years = facts.get("requirements.lifecycle_years")
    if rate is None or lifecycle is None or not isinstance(years, (int, float)) or years <= 0:
        return None
    hours = break_even_hours_per_month(lifecycle, float(years), top.count, rate.usd_per_hour)
    outcome = Outcome(core.chosen.shape, core.chosen.class_, top)
    return Found("rent", {}, {}, outcome, rate=rate, break_even_hours=hours)
