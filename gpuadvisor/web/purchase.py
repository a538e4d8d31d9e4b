"""The purchase as the report page sums it up, from the decision document alone: what to
buy, over how many machines, the order's line items with their prices and the total,
the budget check (for this purchase, and for the whole need where it serves fewer jobs
than wanted), the time limit an answer must meet with the speed bound behind it, the
cost over the service life, the capacity and the confidence; then what a buyer must
know before ordering, and what they could change (the decision's levers).

Every text of the decision passes through the page's wording (:mod:`.wording`); the
profile's field names stay in the downloads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from gpuadvisor.decision.model import Capacity, Decision, Lever, Pick, PickSpeed
from gpuadvisor.decision.words import pick_flags
from gpuadvisor.vocabulary import format_value
from gpuadvisor.web.wording import Wording, wording


@dataclass(frozen=True)
class Line:
    """One line of the purchase summary; ``tone`` "good" or "bad" colours it; ``items``
    are shown as a list under its value (the order's line items)."""

    label: str
    value: str
    tone: str = ""
    items: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    """What would change the answer; ``field`` is the answer to change, if it is one."""

    sentence: str
    field: str | None


def money(value: float | None) -> str:
    return "on quote" if value is None else f"${value:,.0f}"


def cards_bought(pick: Pick) -> int:
    """Cards bought over every machine: the first line item (the cards), else per host
    times the hosts."""
    return pick.line_items[0].count if pick.line_items else pick.count * pick.hosts


def _where(pick: Pick) -> str:
    return "in each machine" if pick.hosts > 1 else "in the machine"


def what_to_buy(decision: Decision, pick: Pick | None) -> str:
    """``2 × NVIDIA RTX PRO 4000 Blackwell, beside the 2 × NVIDIA RTX A5000 already in
    the machine``: the cards over every machine the purchase equips."""
    rec = decision.recommendation
    kept = [e for e in rec.existing if e.kept]
    keeping = " and ".join(f"{e.count} × {e.name}" for e in kept)
    if pick is None:
        return "Nothing fits every requirement: see what would change the answer"
    if rec.action == "keep" or pick.count == 0:
        return f"Nothing: keep the {keeping}" if keeping else "Nothing"
    bought = f"{cards_bought(pick)} × {pick.name}"
    if rec.action == "add" and keeping:
        return f"{bought}, beside the {keeping} already {_where(pick)}"
    if rec.action == "replace" and rec.existing:
        gone = " and ".join(f"{e.count} × {e.name}" for e in rec.existing)
        return f"{bought}, replacing the {gone} {_where(pick)}"
    return bought


def _price(pick: Pick) -> str:
    if pick.price_usd is None:
        return "on quote: ask the supplier"
    kind = pick.price_kind.replace("-", " ").replace("msrp", "list price")
    when = f", {pick.price_date}" if pick.price_date else ""
    return f"{money(pick.price_usd)} each ({kind}{when})"


def _budget(pick: Pick, budget_usd: float | None) -> Line:
    if budget_usd is None:
        return Line("Budget", "no budget given")
    total = pick.total_price_usd
    if total is None:
        return Line("Budget", f"{money(budget_usd)}: not checked, the price is on quote", "bad")
    if total <= budget_usd:
        left = budget_usd - total
        return Line("Budget", f"within {money(budget_usd)} ({money(left)} left)", "good")
    return Line("Budget", f"over {money(budget_usd)} by {money(total - budget_usd)}", "bad")


def _whole_need(capacity: Capacity, budget_usd: float | None) -> Line:
    """The budget held to every wanted job: the machines like this one that serve them
    all, and what their cards cost (this purchase included)."""
    label = "Budget for the whole need"
    serve = (
        f"{capacity.hosts_needed} machines like this one serve all {capacity.jobs_wanted} "
        f"{capacity.unit}"
    )
    cost = capacity.hosts_cards_usd
    if cost is None:
        return Line(label, f"{serve}: not checked, their cards are priced on quote", "bad")
    serve += f", about {money(cost)} in cards"
    if budget_usd is None:
        return Line(label, f"{serve}; no budget given")
    if capacity.whole_need_within_budget:
        left = money(budget_usd - cost)
        return Line(label, f"{serve}: within {money(budget_usd)} ({left} left)", "good")
    return Line(label, f"{serve}: over {money(budget_usd)} by {money(cost - budget_usd)}", "bad")


def time_words(ms: float) -> str:
    """``2 s`` for 2000 ms, ``400 ms`` under a second."""
    return f"{format_value(round(ms / 1000, 3))} s" if ms >= 1000 else f"{format_value(ms)} ms"


def _bound(speed: PickSpeed, met: bool) -> str:
    """The speed bound behind the verdict, in words (a bound the card cannot beat)."""
    tokens, prompt = speed.answer_tokens_within_slo, f"{speed.prompt_tokens:,} tokens"
    if tokens is None:
        return ""
    if met:
        return f": at most {tokens:,} tokens after a full-length question ({prompt})"
    if tokens == 0:
        read = time_words(speed.prefill_s * 1000)
        return f": even this card takes at least {read} to read a full-length question ({prompt})"
    return (
        f": even this card writes at most {tokens:,} tokens after a full-length question ({prompt})"
    )


def latency_line(decision: Decision, pick: Pick | None, slo_ms: float | None) -> Line | None:
    """``answers start within 2 s: at most 36 tokens after a full-length question``, or
    that no card meets the target; None without a target or a pick."""
    if slo_ms is None or pick is None:
        return None
    label, target = "Time limit for one answer", time_words(slo_ms)
    met = (
        pick.meets_target if pick.meets_target is not None else decision.recommendation.meets_target
    )
    if met is None:
        return Line(
            label, f"{target}, not checked: speed is bounded for a described language model"
        )
    speed = pick.speed
    bound = _bound(speed, met) if speed is not None else ""
    if met:
        return Line(label, f"met: answers start within {target}{bound}", "good")
    return Line(label, f"no card meets the {target} target{bound}", "bad")


def purchase_lines(
    decision: Decision, budget_usd: float | None, slo_ms: float | None = None
) -> tuple[Line, ...]:
    """The purchase summary, line by line: what to buy, how many over how many machines,
    the line items, unit and total price, the budget checks, the time limit, the cost
    over the service life, the capacity, the confidence. The one place the purchase is
    summed up."""
    say = wording()
    pick = decision.picks[0] if decision.picks else None
    rec = decision.recommendation
    lines = [Line("What to buy", what_to_buy(decision, pick))]
    if pick is not None and pick.count > 0:
        bought = cards_bought(pick)
        many = say.words(pick.hosts_words) if pick.hosts > 1 and pick.hosts_words else ""
        lines.append(Line("Quantity", many or f"{bought} card{'s' if bought != 1 else ''}"))
        items = tuple(f"{i.count} × {i.name}: {money(i.usd)}" for i in pick.line_items)
        if items:
            lines.append(Line("Line items", "", items=items))
        lines.append(Line("Unit price", _price(pick)))
        over = f" for all {pick.hosts} machines" if pick.hosts > 1 else ""
        lines.append(Line("Total price", money(pick.total_price_usd) + over))
        lines.append(_budget(pick, budget_usd))
    if rec.capacity is not None and rec.capacity.shortfall:
        lines.append(_whole_need(rec.capacity, budget_usd))
    if (target := latency_line(decision, pick, slo_ms)) is not None:
        lines.append(target)
    if pick is not None and pick.lifecycle_cost_usd is not None and decision.lifecycle_years:
        years = format_value(decision.lifecycle_years)
        lines.append(
            Line("Over the service life", f"{money(pick.lifecycle_cost_usd)} in {years} years, "
                 "with electricity")
        )  # fmt: skip
    if rec.capacity is not None:
        tone = "bad" if rec.capacity.shortfall else ""
        lines.append(Line("Capacity", say.words(rec.capacity.summary), tone))
    lines.append(Line("Confidence", rec.confidence, "" if rec.confidence == "high" else "bad"))
    return tuple(lines)


# -- before ordering ----------------------------------------------------------------------

#: pick_flags' line for a card whose production status nobody could source: the
#: availability risk says more where it applies.
_UNKNOWN_STATUS: Final = "Availability unknown:"


def availability_risk(decision: Decision, pick: Pick) -> str:
    """A card nobody can say is still made, old enough to be near its end, bought for a
    long service or a fleet (``picks[].availability_risk``)."""
    years = decision.lifecycle_years
    service = (
        f"{format_value(years)} years of service" if years else "a fleet of identical machines"
    )
    launched = f"since {pick.launch_year}" if pick.launch_year else "for years"
    return (
        f"Nobody could say whether the {pick.name} is still made, and it has been on the "
        f"market {launched}: for {service}, ask the supplier for stock and spares over the "
        "whole service life before ordering, or choose a current card."
    )


def market_caveats(decision: Decision, say: Wording, titles: Mapping[str, str]) -> list[str]:
    """What the pick's market means for ordering it: status, price, and the risk of a
    card that may not be made much longer."""
    if not decision.picks or decision.picks[0].count == 0:
        return []
    pick = decision.picks[0]
    flags = [say.words(flag, titles) for flag in pick_flags(pick)]
    if pick.availability_risk:
        flags = [availability_risk(decision, pick)] + [
            f for f in flags if not f.startswith(_UNKNOWN_STATUS)
        ]
    return flags


def shortfall_caveat(capacity: Capacity | None) -> str:
    """``This purchase serves 4 of the 8 jobs wanted: 2 machines like this one serve
    them all.``"""
    if capacity is None or not capacity.shortfall:
        return ""
    served = f"This purchase serves {capacity.jobs_served} of the {capacity.jobs_wanted} "
    served += f"{capacity.unit} wanted"
    hosts = capacity.hosts_needed
    return (
        f"{served}: {hosts} machines like this one serve them all." if hosts > 1 else served + "."
    )


# -- what the buyer could change ----------------------------------------------------------


def _lever_outcome(lever: Lever) -> str:
    if lever.kind == "rent" or lever.usd_per_hour is not None:
        return lever.pick  # "4 × 24 GB class (...), rented": the rate is in the change
    short = f"; {lever.short}" if lever.short else ""
    if lever.total_usd is None:
        return f"{lever.pick}, price on quote{short}"
    return f"{lever.pick}, {money(lever.total_usd)}{short}"


#: A sentence's end, so the arrow follows the change's words without a full stop before it.
_END: Final = re.compile(r"[.;:]+$")


def lever_changes(
    decision: Decision, say: Wording, titles: Mapping[str, str], asked: Sequence[str]
) -> tuple[Change, ...]:
    """``Raise the budget to $10,000 (now $8,000) → 4 × NVIDIA RTX 4000 Ada Generation,
    $5,000.``: each lever in the buyer's words with the card it brings and its price,
    and Change where it sets an answer given on the page."""
    fields = set(asked)
    changes = []
    for lever in decision.levers:
        change = _END.sub("", say.words(lever.change, titles).strip())
        outcome = say.words(_lever_outcome(lever), titles)
        field = next((name for name in lever.inputs if name in fields), None)
        changes.append(Change(f"{change} → {outcome}.", field))
    return tuple(changes)
