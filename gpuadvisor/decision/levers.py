"""What would change the answer, in the buyer's terms: each lever the engine found
(:mod:`gpuadvisor.engine.levers`) as a sentence a buyer can act on, with the card it
brings and what that costs. Field names stay out of the sentences; they are in the
lever's ``inputs`` and in the report's appendix (``sensitivity``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuadvisor.decision.made import made
from gpuadvisor.decision.model import Lever
from gpuadvisor.decision.seats import units
from gpuadvisor.engine.core import Core, Engine, Outcome
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.leverdata import LeverData, lever_data
from gpuadvisor.engine.levers import Found, find_levers
from gpuadvisor.engine.sensitivity import Flip
from gpuadvisor.engine.wholeneed import hosts_needed, jobs_wanted, whole_need_usd
from gpuadvisor.sizing.estimate import MemoryEstimate
from gpuadvisor.vocabulary import format_value

#: Weight and cache formats as a buyer's engineers name them.
FORMAT_WORDS: dict[str, str] = {
    "fp32": "32-bit",
    "bf16": "16-bit (bf16)",
    "fp16": "16-bit (fp16)",
    "fp8": "FP8",
    "int8": "8-bit integer (GPTQ or bitsandbytes)",
    "int4": "4-bit integer (AWQ or GPTQ)",
    "nf4": "4-bit NF4",
}
#: What a training job trains now, as "instead of ..." reads it.
TASK_WORDS: dict[str, str] = {
    "full-finetune": "training every weight (a full fine-tune)",
    "pretrain": "training every weight",
    "lora": "LoRA adapters on a 16-bit copy",
    "qlora": "QLoRA adapters",
    "unknown": "the LoRA assumed for a method not decided",
}
CHASSIS_WORDS: dict[str, str] = {"tower": "tower", "workstation": "workstation"}


def pick_words(outcome: Outcome) -> str:
    """The purchase an answer comes to: ``2 × NVIDIA L4``, with the hosts it equips and
    the host's kept cards."""
    top = outcome.top
    if top is None:
        return "no card meets every requirement"
    if top.count == 0:
        return f"nothing: keep the {top.kept} × {top.sku.name} in the host"
    text = f"{top.count} × {top.sku.name}"
    if top.hosts > 1:
        text += f" in each of {top.hosts} hosts"
    if top.kept_sku is not None:
        text += f" beside the {top.kept} × {top.kept_sku.name} kept"
    return text


def short_words(outcome: Outcome, facts: Mapping[str, Value]) -> str:
    """When the purchase a lever brings still serves fewer jobs than wanted, how many it
    serves and what the cards for all of them cost ("" when it serves every one): a
    lever that changes the answer must not read as one that meets the whole need."""
    top = outcome.top
    wanted = jobs_wanted(facts)
    if top is None or top.jobs_served >= wanted:
        return ""
    one, many = units(facts)
    text = f"it serves {top.jobs_served:,} of {wanted:,} {one if wanted == 1 else many}"
    cost = whole_need_usd(top, wanted)
    if cost is not None:
        hosts = hosts_needed(top, wanted)
        text += f"; the cards for all of them, over {hosts:,} hosts like this, cost {_money(cost)}"
    return text


def _now(found: Found) -> Value:
    return next(iter(found.current.values()), None)


def _then(found: Found) -> Value:
    return next(iter(found.inputs.values()), None)


def _money(value: float) -> str:
    return f"${value:,.0f}"


def _needs(found: Found) -> str:
    if found.need_gib is None:
        return ""
    return f", so one job needs {format_value(round(found.need_gib, 2))} GiB"


def change_words(
    found: Found, facts: Mapping[str, Value], data: LeverData, job_hours: float | None
) -> str:
    """The lever as a sentence in the buyer's terms (no field names)."""
    kind, now, then = found.kind, _now(found), _then(found)
    needs = _needs(found)
    if kind == "precision":
        return (
            f"Serve the model with {FORMAT_WORDS[str(then)]} weights instead of "
            f"{FORMAT_WORDS.get(str(now), str(now))}{needs}"
        )
    if kind == "kv-cache":
        return (
            f"Keep the attention (KV) cache in {FORMAT_WORDS[str(then)]} instead of "
            f"{FORMAT_WORDS.get(str(now), str(now))}{needs}"
        )
    if kind == "method":
        what = (
            "Train LoRA adapters beside the frozen model"
            if then == "lora"
            else "Train QLoRA adapters on a 4-bit copy of the model"
        )
        return f"{what} instead of {TASK_WORDS.get(str(now), str(now))}{needs}"
    if kind == "checkpointing":
        return f"Turn on activation checkpointing (about a third more compute){needs}"
    if kind == "optimizer":
        return f"Use an 8-bit optimizer (bitsandbytes' 8-bit AdamW) for the training{needs}"
    if kind == "sequences":
        return (
            f"Serve at most {format_value(then)} conversations at a time on one copy of the "
            f"model (now {format_value(now)}){needs}"
        )
    if kind == "context":
        return (
            f"Cap each conversation at {format_value(then)} tokens (now {format_value(now)}){needs}"
        )
    if kind == "budget":
        assert isinstance(then, (int, float)) and isinstance(now, (int, float))
        return f"Raise the budget to {_money(float(then))} (now {_money(float(now))})"
    if kind == "rack":
        chassis = CHASSIS_WORDS.get(str(facts.get("platform.chassis")), "desk machine")
        return (
            f"Put the cards in {data.rack.server} instead of the {chassis}; the "
            "server itself is not priced here"
        )
    return _rent_words(found, facts, data, job_hours)


def _rent_words(
    found: Found, facts: Mapping[str, Value], data: LeverData, job_hours: float | None
) -> str:
    top, rate = found.outcome.top, found.rate
    assert top is not None and rate is not None and found.break_even_hours is not None
    hours = found.break_even_hours
    years = format_value(facts.get("requirements.lifecycle_years"))
    cards = "a GPU" if top.count == 1 else f"{top.count} GPUs"
    runs = ""
    if job_hours:
        per_month = hours / job_hours
        count = format_value(round(per_month, 1) if per_month < 10 else round(per_month))
        length = f"{format_value(job_hours)} hour{'' if job_hours == 1 else 's'}"
        runs = f", about {count} run{'' if count == '1' else 's'} of {length}"
    each = " each" if top.count > 1 else ""
    return (
        f"If the jobs run only a few times a month, rent {cards} of the {rate.class_} by "
        f"the second instead of buying, at about ${rate.usd_per_hour:,.2f} an hour{each} "
        f"({data.rental.provider}, checked {data.rental.checked}): over {years} years "
        f"buying costs less only above {format_value(round(hours))} hours a month on each "
        f"card{runs}"
    )


def lever_entry(
    found: Found, facts: Mapping[str, Value], data: LeverData, job_hours: float | None
) -> Lever:
    top = found.outcome.top
    assert top is not None
    rent = found.kind == "rent"
    rate = found.rate
    hours = found.break_even_hours
    return made(
        Lever,
        {
            "change": change_words(found, facts, data, job_hours),
            "pick": f"{top.count} × {rate.class_}, rented"
            if rent and rate is not None
            else pick_words(found.outcome),
            "short": "" if rent else short_words(found.outcome, facts),
            "total_usd": None if rent else top.total_price_usd,
            "kind": found.kind,
            "inputs": found.inputs,
            "current": found.current,
            "sku": None if rent else top.sku.id,
            "count": top.count,
            "vram_need_gib": found.need_gib,
            "usd_per_hour": round(rate.usd_per_hour, 4) if rate is not None else None,
            "break_even_hours_per_month": round(hours, 1) if hours is not None else None,
            "source": data.rental.source
            if rent
            else (data.rack.sources[0] if found.kind == "rack" else None),
        },
    )


def levers_of(
    engine: Engine,
    core: Core,
    flips: Sequence[Flip],
    estimate: MemoryEstimate | None,
    job_hours: float | None,
) -> tuple[Lever, ...]:
    """The decision's levers. ``estimate``: the model's, when the profile's need is
    derived from it; ``job_hours``: the stated length of one job (None: not stated)."""
    data = lever_data()
    found = find_levers(engine, core, flips, estimate, data)
    return tuple(lever_entry(f, core.facts, data, job_hours) for f in found)
