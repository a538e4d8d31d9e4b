"""The cheapest option that would do ("enough card"): beside the ranked picks, the
cheapest option that meets every requirement and serves as many jobs as the
recommendation, and what the recommendation buys over it, each gain from the numbers."""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.decision.made import made
from gpuadvisor.decision.model import EnoughCard, Pick
from gpuadvisor.decision.purchase import PickContext, make_pick, shape_phrase
from gpuadvisor.decision.seats import counted
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.costs import CostTerms
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.optionset import bit_indices
from gpuadvisor.engine.ranking import cards_wanted, performance
from gpuadvisor.engine.suitability import meets_target, stale
from gpuadvisor.vocabulary import format_value


def enough_of(core: Core, ctx: PickContext, top_pick: Pick | None) -> EnoughCard | None:
    """The cheapest option that meets every requirement, serves as many jobs as the
    recommendation, gives a data-parallel job as many of the cards it is built for, meets
    the latency target when the recommendation does and is a current card when the
    recommendation is, and what the recommendation buys over it."""
    top = core.top
    if top is None or top_pick is None:
        return None
    eliminated = 0
    for verdict in core.verdicts:
        eliminated |= verdict.mask
    options = core.options.options
    served = top.jobs_served
    alive = map(options.__getitem__, bit_indices(core.options.full & ~eliminated))
    # A data-parallel job keeps the cards the recommendation gives it, up to the cards
    # it is built for: running it on fewer is slower, not enough.
    cards = min(top.cards_per_job, cards_wanted(ctx.facts))
    candidates = [o for o in alive if o.jobs_served >= served and o.cards_per_job >= cards]
    # A stated latency target the recommendation meets is a requirement the cheaper
    # option must meet too; a current card is not matched by one nobody can say is
    # still made, for a service that must outlast it (policy [ranking]).
    policy, facts = ctx.policy, ctx.facts
    if meets_target(top, facts, policy):
        candidates = [o for o in candidates if meets_target(o, facts, policy)]
    if not stale(top, facts, policy):
        candidates = [o for o in candidates if not stale(o, facts, policy)]
    candidates = candidates or [top]
    cheapest = _cheapest(candidates, ctx.costs)
    pick = make_pick(cheapest, None, ctx.regroup([cheapest]))
    phrase = "buying nothing" if cheapest.count == 0 else shape_phrase(cheapest, facts)
    if cheapest.key == top.key:
        text = (
            f"The recommendation is itself the cheapest option that meets every requirement "
            f"and serves {counted(top.jobs_served, facts)}."
        )
        return made(EnoughCard, {"pick": pick, "same_as_top": True, "extra_usd": 0.0, "text": text})
    top_total, cheap_total = top.total_price_usd, cheapest.total_price_usd
    extra = None if top_total is None or cheap_total is None else top_total - cheap_total
    gains = _gains(top, cheapest, core, ctx)
    latency = _latency_gain(top_pick, pick, ctx.facts)
    if latency:
        gains.insert(0, latency)  # what a latency target is about comes first
    if extra is None:  # a price on quote: no difference to state
        dearer = "may cost more or less (a price is on quote)"
    else:
        dearer = f"costs ${extra:,.0f} more" if extra >= 0.5 else "costs the same"
    price = "price on quote" if cheap_total is None else f"${cheap_total:,.0f}"
    text = (
        f"Enough for the need: {phrase} ({price}) meets every "
        f"requirement and serves {counted(cheapest.jobs_served, facts)} too; the "
        f"recommendation {dearer} and buys "
        + (", ".join(gains) if gains else "nothing the ranking measures")
        + "."
    )
    return made(
        EnoughCard,
        {
            "pick": pick,
            "same_as_top": False,
            "extra_usd": None if extra is None else round(extra, 2),
            "text": text,
        },
    )


def _cheapest(candidates: list[Option], costs: CostTerms) -> Option:
    """The option cheapest to buy, then to run over its life, then on the fewest cards,
    then by card and option key. The running cost is worked out only for the options
    tied on the price."""
    prices = [(_unpriced_last(o.total_price_usd), o) for o in candidates]
    low = min(price for price, _ in prices)
    return min(
        (o for price, o in prices if price == low),
        key=lambda o: (_unpriced_last(costs.lifecycle_usd(o)), o.cards, o.sku.id, o.key),
    )


def _unpriced_last(price: float | None) -> tuple[float, float]:
    """Sort key part: priced options by price, then those on quote."""
    return (1.0, 0.0) if price is None else (0.0, price)


def _pair_score(core: Core, option: Option) -> int:
    return core.shape_scores[option.shape] + core.class_scores[option.sku.segment]


def _latency_gain(top: Pick, cheap: Pick, facts: Mapping[str, Value]) -> str:
    """What the top pick buys against the latency target over the cheaper one, from the
    speed bounds of both (empty when there is no target, no model, or no gain)."""
    if top.speed is None or cheap.speed is None:
        return ""
    mine, theirs = top.speed.answer_tokens_within_slo, cheap.speed.answer_tokens_within_slo
    if mine is None or theirs is None or mine <= theirs:
        return ""
    target = format_value(facts.get("workload.latency_slo_ms"))
    tokens = f"{format_value(mine)} answer token{'' if mine == 1 else 's'}"
    if theirs == 0:
        return (
            f"room for {tokens} within the {target} ms target, where on the cheaper one "
            "a full-length prompt alone takes longer"
        )
    return f"room for {tokens} within the {target} ms target against {format_value(theirs)}"


def _gains(top: Option, cheap: Option, core: Core, ctx: PickContext) -> list[str]:
    """What the top pick has over the cheaper option, each from the numbers."""
    gains = []
    facts = ctx.facts
    top_bw, cheap_bw = top.bandwidth_gbs, cheap.bandwidth_gbs  # what one job runs at
    if top_bw > cheap_bw:
        gains.append(f"{top_bw / cheap_bw:.1f}× the memory bandwidth per GPU")
    more = top.vram_per_job_gib - cheap.vram_per_job_gib
    if more >= 0.05:
        gains.append(f"{format_value(round(more, 2))} GiB more usable memory per job")
    perf_top = sum(performance(s, facts) for s in top.skus) * top.cards / len(top.skus)
    perf_cheap = sum(performance(s, facts) for s in cheap.skus) * cheap.cards / len(cheap.skus)
    if perf_top > perf_cheap * 1.05:
        gains.append(f"{perf_top / perf_cheap:.1f}× the compute")
    life_top, life_cheap = ctx.costs.lifecycle_usd(top), ctx.costs.lifecycle_usd(cheap)
    if life_top is not None and life_cheap is not None and life_top < life_cheap:
        gains.append(f"${life_cheap - life_top:,.0f} less lifecycle cost")
    score_top, score_cheap = _pair_score(core, top), _pair_score(core, cheap)
    if (top.shape, top.sku.segment) != (cheap.shape, cheap.sku.segment) and score_top > score_cheap:
        gains.append(
            f"the kind of purchase the rules favour ({top.shape} / {top.sku.segment} "
            f"{score_top:+d} against {cheap.shape} / {cheap.sku.segment} {score_cheap:+d})"
        )
    return gains
