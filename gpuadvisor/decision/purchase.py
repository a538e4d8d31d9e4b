"""The purchase in words: each pick and why it ranks where it does, the headline, the
capacity and the cards already in the host (the cheapest option that would do is
:mod:`gpuadvisor.decision.enough`).

Every sentence here is made from the numbers it states: a pick's "why" lists the very
terms it was ranked by (:class:`gpuadvisor.engine.ranking.RankTerms`), so it cannot
claim what the ranking did not weigh.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpuadvisor.decision.decode_words import cards_reason
from gpuadvisor.decision.made import made
from gpuadvisor.decision.market import market_fields
from gpuadvisor.decision.model import ExistingCards, MeasuredGpu, Pick
from gpuadvisor.decision.seats import (
    accessory_items,
    counted,
    hosts_words,
    in_each,
    kind_words,
    line_items_of,
    units,
)
from gpuadvisor.decision.words import frame_buffer_words, profile_words
from gpuadvisor.engine.capacity import gpu_profiles, number, profile_gib
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.costs import CostTerms, vgpu_licence, vgpu_licence_priced
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Link, Policy
from gpuadvisor.engine.ranking import (
    COST_RANKED,
    LATENCY_BAND,
    RankTerms,
    performance,
    performance_unit,
    rank_terms,
)
from gpuadvisor.engine.suitability import bandwidth_bound
from gpuadvisor.vocabulary import format_value

if TYPE_CHECKING:
    from gpuadvisor.sizing.estimate import MemoryEstimate

LINK_WORDS: dict[Link, str] = {
    "nvlink": "an NVLink bridge",
    "pcie-p2p": "PCIe peer-to-peer",
    "pcie-host": "host memory (no peer-to-peer between these cards)",
    "cross-socket": "the link between CPU sockets",
}


PICKS_SHOWN = 3


def shown_options(ranked: tuple[Option, ...]) -> list[tuple[int, Option]]:
    """The picks shown, with their rank: the first :data:`PICKS_SHOWN`, and the best
    option on quote when none of those is (an unpriced card stays a candidate)."""
    shown = list(enumerate(ranked[:PICKS_SHOWN], start=1))
    if all(option.sku.priced for _, option in shown):
        for rank, option in enumerate(ranked[PICKS_SHOWN:], start=PICKS_SHOWN + 1):
            if not option.sku.priced:
                shown.append((rank, option))
                break
    return shown


def _gib(value: float) -> str:
    return format_value(round(value, 2))


#: What a :class:`PickContext` reads once per decision (everything but the group's terms).
_DECISION_WIDE = (
    *("facts", "sizing", "as_of", "policy", "costs", "need", "wanted", "objective"),
    *("profiles", "sharded", "of_wanted", "per_need", "one", "years", "licences"),
)


class PickContext:
    """What phrasing the picks of one group needs, read once. The decision-wide part is
    read once per decision: :meth:`regroup` gives another group of the same decision its
    context, with its own rank terms."""

    def __init__(
        self,
        facts: Mapping[str, Value],
        policy: Policy,
        group: list[Option],
        sizing: MemoryEstimate | None = None,
        as_of: dt.date | None = None,
        *,
        like: PickContext | None = None,
    ) -> None:
        self.terms: Callable[[Option], RankTerms] = rank_terms(group, facts, policy)
        if like is not None:  # the decision-wide part, already read for another group
            for name in _DECISION_WIDE:
                setattr(self, name, getattr(like, name))
            return
        self.facts = facts
        self.sizing = sizing
        self.as_of = as_of
        self.policy = policy
        self.costs = CostTerms(facts)
        self.need = number(facts, "workload.vram_need_gib")
        self.wanted = int(number(facts, "workload.concurrent_jobs"))
        self.objective = str(facts["workload.objective"])
        #: Memory counted as vGPU profiles (VDI), not as usable memory per job.
        vgpu = facts.get("requirements.vgpu") is True
        self.profiles = policy.counts_label(str(facts["workload.kind"]), vgpu)
        self.sharded = bool(facts.get("workload.sharded_data_parallel"))
        self.of_wanted = f" of {counted(self.wanted, facts)}"
        self.per_need = f" for a need of {_gib(self.need)} GiB"
        self.one = units(facts)[0]
        self.years = format_value(facts["requirements.lifecycle_years"])
        licence = vgpu_licence(facts)
        self.licences = ""
        if licence is not None:
            self.licences = (
                f" and {licence[0]} licences"
                if vgpu_licence_priced(facts)
                else f"; {licence[0]} licences (priced per GPU) not included: no public price"
            )

    def regroup(self, group: list[Option]) -> PickContext:
        """This decision's context for another group of options."""
        return PickContext(self.facts, self.policy, group, like=self)


def _why(option: Option, rank: int | None, t: RankTerms, ctx: PickContext) -> str:
    lead = "" if rank is None else f"#{rank}: "
    parts = [f"{lead}serves {t.jobs_served}{ctx.of_wanted}"]
    over = hosts_words(option, ctx.facts)
    if over:
        parts[0] += f" with {over}"
    if t.buys_nothing:
        parts[0] += " with the cards already in the host (nothing to buy)"
    if t.meets_target is False:
        parts.append(
            f"its speed bound misses the {format_value(ctx.facts['workload.latency_slo_ms'])} "
            "ms target: ranked after every card that meets it"
        )
    if t.stale:
        parts.append(
            f"availability unknown and launched in {option.sku.launch_year}: ranked after "
            f"current cards for a {ctx.years}-year service"
        )
    if ctx.objective in COST_RANKED and t.in_cost_band:
        merit = (
            f"{format_value(t.bandwidth_gbs)} GB/s memory bandwidth"
            if bandwidth_bound(ctx.facts, ctx.policy)
            else f"{format_value(round(performance(option.sku, ctx.facts), 2))} "
            f"{performance_unit(option.sku, ctx.facts)} per card"
        )
        parts.append(
            f"lifecycle cost within {ctx.policy.ranking.cost_band:.0%} of the cheapest of "
            f"this kind, where the faster card ranks first ({merit})"
        )
    if ctx.objective == "throughput":
        if t.lifecycle_usd is None:
            parts.append("price on quote: ranked after the priced cards of its tier")
        else:
            per_k = 1000 * t.throughput / t.lifecycle_usd if t.lifecycle_usd > 0 else 0.0
            unit = performance_unit(option.sku, ctx.facts)
            parts.append(f"{format_value(round(per_k, 2))} {unit} per $1,000 of lifecycle cost")
    elif ctx.objective == "latency":
        where = "within" if t.in_band else "outside"
        parts.append(
            f"{format_value(t.bandwidth_gbs)} GB/s memory bandwidth, {where} "
            f"{1 - LATENCY_BAND:.0%} of the fastest of this kind "
            f"({format_value(t.fastest_gbs)} GB/s)"
        )
    usable = option.vram_per_job_gib
    if ctx.profiles:
        parts.append(
            f"{profile_words(profile_size(ctx, option), usable, ctx.one)}{ctx.per_need} "
            f"({frame_buffer_words(option.sku.vram_gib, option.sku.gpus_per_board)} divided "
            "into profiles)"
        )
        usable = -1.0
    spread = ""
    if option.shape == "multi-gpu-model-parallel" or (
        option.shape == "multi-gpu-data-parallel" and ctx.sharded
    ):
        spread = f" pooled over {option.cards_per_job} cards"
    if usable >= 0:
        parts.append(
            f"{_gib(usable)} GiB usable per job{spread}{ctx.per_need} "
            f"({_gib(usable - ctx.need)} GiB headroom)"
        )
    if t.link is not None and t.scaling_kept is not None:
        parts.append(
            f"one job over {option.cards_per_job} cards keeps about {t.scaling_kept:.0%} of "
            f"ideal scaling through {LINK_WORDS[t.link]}"
        )
    if t.power_cut > 0:
        limit = math.floor(option.sku.tdp_w * (1 - t.power_cut))
        loss = 100 * ctx.policy.power.speed_loss_per_power_cut * t.power_cut
        parts.append(
            f"power-limited to {limit:,} W per card ({t.power_cut:.0%} below board power, "
            f"about {format_value(round(loss, 1))}% slower)"
        )
    parts.append(_cost_words(option, t, ctx))
    return "; ".join(parts) + "."


def _floor_words(option: Option) -> str:
    floor = option.sku.price_floor_usd
    if floor is None:
        return "budget not checked"
    return f"at least ${floor * option.count * option.hosts:,.0f}, held to the budget"


def _cost_words(option: Option, t: RankTerms, ctx: PickContext) -> str:
    """``$X over N years with electricity and vWS licences``, or what is not priced."""
    licences = ctx.licences
    edition = ctx.costs.edition_of(option)
    if edition != ctx.costs.edition:  # Virtual PC assumed, and the card has no vPC
        licences = f" and {edition} licences (NVIDIA supports vWS, not vPC, on it)"
    if t.lifecycle_usd is None:
        running = ctx.costs.energy_usd(option) + ctx.costs.licence_usd(option)
        return (
            f"price on quote ({_floor_words(option)}); ${running:,.0f} over {ctx.years} years for "
            f"electricity{licences}"
        )
    return f"${t.lifecycle_usd:,.0f} over {ctx.years} years with electricity{licences}"


def make_pick(option: Option, rank: int | None, ctx: PickContext) -> Pick:
    """One option as a pick, its why made from the terms it was ranked by (and led by
    its rank, ``#2: ``, when it has one)."""
    sku = option.sku
    t = ctx.terms(option)
    energy = ctx.costs.energy_usd(option)
    licence = ctx.costs.licence_usd(option)
    extras = accessory_items(option)
    total = option.total_price_usd
    limit = math.floor(sku.tdp_w * (1 - t.power_cut)) if t.power_cut > 0 else None
    loss = ctx.policy.power.speed_loss_per_power_cut * t.power_cut * 100
    why = _why(option, rank, t, ctx)
    speed = None
    if ctx.sizing is not None:
        from gpuadvisor.decision.sizing import option_speed, speed_sentence

        speed = option_speed(ctx.sizing, option, ctx.facts)
        why += speed_sentence(speed, ctx.facts) if speed is not None else ""
    return made(
        Pick,
        {
            "sku": sku.id,
            "name": sku.name,
            "count": option.count,
            "jobs_served": option.jobs_served,
            "price_usd": sku.price_usd,
            "total_price_usd": total,
            "hosts": option.hosts,
            "hosts_words": hosts_words(option, ctx.facts),
            "kind_words": kind_words(option, ctx.facts),
            "line_items": line_items_of(option, extras),
            "energy_cost_usd": round(energy, 2),
            "licence_cost_usd": round(licence, 2),
            "licence_edition": ctx.costs.edition_of(option),
            "lifecycle_cost_usd": None if total is None else round(total + energy + licence, 2),
            "price_kind": sku.price_kind,
            **market_fields(sku, ctx.as_of),
            "why": why,
            "segment": sku.segment,
            "vram_gib": sku.vram_gib,
            "gpus_per_board": sku.gpus_per_board,
            "memory_bandwidth_gbs": sku.memory_bandwidth_gbs,
            "ecc": sku.ecc,
            "frame_lock": sku.frame_lock,
            "vgpu": sku.vgpu,
            "cooling": sku.cooling,
            "slot_width": sku.slot_width,
            "tdp_w": sku.tdp_w,
            "vram_per_job_gib": option.vram_per_job_gib,
            "usable_vram_gib": option.vram_per_job_gib,
            "headroom_gib": round(option.vram_per_job_gib - ctx.need, 3),
            "slots_total": option.total_slots,
            "action": option.action,
            "kept_count": option.kept,
            "kept_name": option.kept_sku.name if option.kept_sku else "",
            "cards_total": option.cards,
            "jobs_wanted": ctx.wanted,
            "board_power_w": option.total_power_w,
            "power_limit_w": float(limit) if limit is not None else None,
            "speed_cost_pct": round(loss, 1) if limit is not None else None,
            "vgpu_profile_gib": profile_size(ctx, option) if ctx.profiles else None,
            "memory_basis": "vgpu-profile" if ctx.profiles else "usable",
            "speed": speed,
            "meets_target": t.meets_target,
            "launch_year": sku.launch_year,
            "availability_risk": t.stale,
        },
    )


def profile_size(ctx: PickContext, option: Option) -> float:
    """The vGPU profile each job or desktop of ``option`` gets: the smallest of the
    policy's sizes that holds what a process in it can allocate."""
    profiles = gpu_profiles(option.sku, ctx.policy.headroom.profiles.sizes_gib)
    return profile_gib(profiles, option.vram_per_job_gib, option.sku.gpu_vram_gib)


def shape_phrase(option: Option, facts: Mapping[str, Value]) -> str:
    """The purchase in a few words (what is bought, how it is used; for several hosts,
    what each of them gets)."""
    name = option.sku.name
    one, _ = units(facts)
    jobs_here = option.jobs_per_host  # the jobs of one host: the cards named are its own
    if option.shape == "single-larger-gpu" and option.count > 1:
        # More cards than the job needs: the others drive the displays (DISP-002).
        shown = format_value(facts.get("requirements.displays"))
        text = f"{option.count} × {name} for the {shown} displays"
    elif option.shape == "single-larger-gpu":
        text = f"one {name}"
        if jobs_here > 1:
            text += f", {counted(jobs_here, facts)} sharing it"
    elif option.shape == "two-independent-jobs":
        cards = option.cards
        if jobs_here > cards:
            text = f"{option.count} × {name}, {counted(jobs_here, facts)} spread over "
            text += "the cards"
        elif jobs_here < cards and cards_reason(option, facts):  # cards for the decoders
            text = f"{option.count} × {name}, the video streams spread over their decoders"
        else:
            text = f"{option.count} × {name}, one {one} per card"
    elif option.shape == "multi-gpu-model-parallel":
        text = f"{option.count} × {name} with the model split across {option.cards_per_job}"
    else:
        jobs = option.cards // max(option.cards_per_job, 1)
        text = f"{option.count} × {name} for one data-parallel job over {option.cards_per_job}"
        if jobs > 1:
            text = (
                f"{option.count} × {name} for {jobs} data-parallel jobs of "
                f"{option.cards_per_job} cards"
            )
    if option.kept_sku is not None and option.count:
        where = "the host" if option.hosts <= 1 else "each"
        text += f", beside the {option.kept} × {option.kept_sku.name} already in {where}"
    # Several hosts: the cards named are each host's.
    return text.replace(name, name + in_each(option, facts), 1)


def existing_of(gpus: Sequence[MeasuredGpu], core: Core) -> tuple[ExistingCards, ...]:
    """The evidence's cards grouped by model, each marked kept or not."""
    counts: dict[str, int] = {}
    for gpu in gpus:
        counts[gpu.name] = counts.get(gpu.name, 0) + 1
    facts = core.facts
    total = facts.get("host.gpu_count")
    if not counts and isinstance(total, (int, float)) and total >= 1:
        counts[""] = int(total)
    top = core.top
    kept = top is not None and top.kept > 0
    sku = facts.get("host.gpu_catalog_sku")
    return tuple(
        made(
            ExistingCards,
            {
                "name": name or "GPU (model not reported)",
                "count": count,
                "kept": kept,
                "sku": str(sku) if sku is not None and len(counts) == 1 else None,
            },
        )
        for name, count in counts.items()
    )
