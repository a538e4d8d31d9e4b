"""The recommendation's headline and its confidence: what to buy in one sentence a buyer
can quote, with the caveats that change what they do (a shortfall, a target no card
meets, a card nobody can say is still made, something to fix first), and how sure the
engine is (the margin over the runner-up, less where a price, a market status or a
target was not held)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.decision.model import Capacity, FixFirst
from gpuadvisor.decision.purchase import shape_phrase
from gpuadvisor.decision.reason import deciding_reason
from gpuadvisor.decision.reason import lower_first as _lower_first
from gpuadvisor.decision.seats import (
    counted,
    kept_where,
    options_shortfall,
    price_words,
    shortfall_sentence,
    shortfall_words,
)
from gpuadvisor.decision.words import memory_words
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.ranking import cards_wanted, short_of_cards
from gpuadvisor.engine.suitability import meets_target, stale
from gpuadvisor.engine.wholeneed import within_budget
from gpuadvisor.vocabulary import format_value


def number_or_none(value: Value) -> float | None:
    """A fact's number, or None when it is not one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def headline(
    core: Core,
    fix_first: tuple[FixFirst, ...],
    capacity: Capacity | None,
    policy: Policy,
) -> str:
    top = core.top
    facts = core.facts
    if top is None:
        short = options_shortfall(core)
        if short is not None:
            return f"No card in the catalog can drive the displays: {shortfall_sentence(short)}"
        return (
            "No card in the catalog meets every requirement; see the findings for which "
            "requirement to relax."
        )
    if top.count == 0:
        wanted = number_or_none(facts["workload.concurrent_jobs"]) or 1.0
        need = number_or_none(facts["workload.vram_need_gib"]) or 0.0
        headroom = format_value(round(top.vram_per_job_gib - need, 2))
        text = (
            f"Buy nothing: the {top.kept} × {top.sku.name} already in {kept_where(top, facts)} "
            f"{'serves' if top.kept == 1 else 'serve'} {top.jobs_served} of "
            f"{counted(int(wanted), facts)} with {headroom} GiB of memory headroom per job "
            f"and {'meets' if top.kept == 1 else 'meet'} every requirement."
        )
        if short_of_cards(top, facts):  # kept, but fewer cards than the job wants
            built_for = cards_wanted(facts)
            text = (
                f"Buy nothing yet: the {top.kept} × {top.sku.name} already in "
                f"{kept_where(top, facts)} run "
                f"the job on {top.cards_per_job} of the {built_for} cards it is built for, "
                f"with {headroom} GiB of memory headroom per job; the purchases that give it "
                "more cards were excluded or ranked below keeping them."
            )
    else:
        each = " each" if top.count * top.hosts > 1 else ""
        verb = "Add" if top.action == "add" else "Buy"
        if top.action == "replace":
            verb = "Replace the cards in the host with"
        text = (
            f"{verb} {shape_phrase(top, facts)} "
            f"({memory_words(top.sku.vram_gib, top.sku.gpus_per_board)}{each}, "
            f"{top.sku.segment} class, {price_words(top)}): "
            f"{deciding_reason(core, policy)}."
        )
    text += _target_words(top, core.chosen.ranked, facts, policy)
    text += _availability_words(top, facts, policy)
    if capacity is not None and capacity.shortfall:
        text += shortfall_words(capacity, top, facts)
    if fix_first:
        first = _lower_first(fix_first[0].title.rstrip("."))
        more = f" and {len(fix_first) - 1} more" if len(fix_first) > 1 else ""
        text = f"Fix first: {first}{more}. After that: {text[0].lower()}{text[1:]}"
    return text


def _target_words(
    top: Option, ranked: tuple[Option, ...], facts: Mapping[str, Value], policy: Policy
) -> str:
    """What the headline says of a stated latency target: that no card meets it (a card
    that meets it ranks first, so a pick that misses it means none does), or, when a
    cheaper card of the same kind misses it, that this is why the pick costs more."""
    met = meets_target(top, facts, policy)
    if met is None:
        return ""
    target = format_value(facts["workload.latency_slo_ms"])
    if met:
        price = top.total_price_usd
        cheaper = [
            o
            for o in ranked
            if price is not None
            and o.total_price_usd is not None
            and o.total_price_usd < price
            and meets_target(o, facts, policy) is False
        ]
        if not cheaper:
            return ""
        low = min(cheaper, key=lambda o: (o.total_price_usd or 0.0, o.key))
        return (
            f" Its speed bound meets the {target} ms target; the cheaper {low.sku.name} "
            f"(about ${low.total_price_usd or 0.0:,.0f}) would not."
        )
    least = policy.ranking.min_answer_tokens
    leaves = "no answer token" if least == 1 else f"fewer than {least:,} answer tokens"
    return (
        f" No card that meets the other requirements meets the {target} ms target: even "
        f"this one's speed bound leaves {leaves} after a full-length prompt; shorten "
        "the context, serve fewer conversations at once, use a smaller or more quantised "
        "model, or relax the target."
    )


def _availability_words(top: Option, facts: Mapping[str, Value], policy: Policy) -> str:
    """A stale pick (it ranks after current cards, so none meets the need) in a sentence."""
    if not stale(top, facts, policy):
        return ""
    return (
        f" No current card meets every requirement: this one launched in "
        f"{top.sku.launch_year} and nobody could say it is still made; ask the supplier "
        "for stock and spares over the whole service life before ordering."
    )


def confidence(core: Core, policy: Policy) -> tuple[str, str | None]:
    level, near_tie = _margin_confidence(core)
    level = _whole_need_cap(core, level)
    top = core.top
    if top is not None and meets_target(top, core.facts, policy) is False:
        return "low", near_tie  # no card meets the stated target (it would rank first)
    if level == "high" and top is not None and top.count > 0:
        if top.price_incomplete:
            return "medium", near_tie  # (part) priced on quote: the budget was not checked
        if top.sku.status in ("discontinued", "eol"):
            return "medium", near_tie  # sold from remaining stock, at a price not known today
        if stale(top, core.facts, policy):
            return "medium", near_tie  # nobody could say it is still made, for a long service
    return level, near_tie


def _margin_confidence(core: Core) -> tuple[str, str | None]:
    if not core.feasible:
        return "low", None
    if core.runner_up is None:
        return "high", None
    top, runner_top = core.top, core.runner_up.ranked[0]
    if (
        top is not None
        and within_budget(top, core.facts)
        and not within_budget(runner_top, core.facts)
    ):
        return "high", None  # the budget for the whole need decided it, not the score
    if top is not None and (
        runner_top.jobs_served < top.jobs_served or (top.count == 0 < runner_top.count)
    ):
        return "high", None  # capacity decided it, not the score
    if top is not None and runner_top.total_price_usd is None is not top.total_price_usd:
        return "medium", None  # the runner-up's price is not known: it may be the better buy
    if top is not None and runner_top.action == "replace" != top.action:
        return "medium", None  # keeping the host's cards decided it, not the score
    if (
        top is not None
        and short_of_cards(runner_top, core.facts)
        and not short_of_cards(top, core.facts)
    ):
        return "medium", None  # giving the job its cards decided it, not the score
    if (core.runner_up.shape, core.runner_up.class_) in core.outclassed:
        # Faster and cheaper than the runner-up, against the class points: no near tie,
        # but the rules' lean went the other way (engine.outclass).
        return "medium", None
    chosen, runner_up = core.chosen, core.runner_up
    runner = f"{runner_up.shape} / {runner_up.class_}"
    if chosen.shape != runner_up.shape:  # the shape's score decided (engine.core.pair_order)
        mine, theirs = core.shape_scores[chosen.shape], core.shape_scores[runner_up.shape]
        against = (
            f"{runner} scored {theirs:+d} against {mine:+d} on the shape's score "
            f"({runner_up.shape} against {chosen.shape})"
        )
    else:
        mine, theirs = chosen.score, runner_up.score
        against = f"{runner} scored {theirs:+d} against {mine:+d}"
    margin = mine - theirs
    if margin >= 4:
        return "high", None
    if margin >= 2:
        return "medium", None
    return "low", against


def _whole_need_cap(core: Core, level: str) -> str:
    """At most medium for a pick whose cards for every host needed cost more than the
    budget while another kind of purchase serves the whole need within it."""
    top, facts = core.top, core.facts
    if top is None or level != "high" or within_budget(top, facts):
        return level
    if any(p.ranked and within_budget(p.ranked[0], facts) for p in core.pairs):
        return "medium"
    return level
