"""Seats and hosts in words: what a concurrent job is called, the hosts a purchase equips
("1 card in each of 5 workstations, 5 cards"), its line items, and the capacity of the
whole purchase against the wanted jobs and the budget for the whole need.

The numbers come from the engine (:mod:`gpuadvisor.engine.wholeneed`); this module only
phrases them, so every total it states counts every host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuadvisor.decision.decode_words import cards_reason, decode_sentence
from gpuadvisor.decision.made import made
from gpuadvisor.decision.model import Capacity, LineItem
from gpuadvisor.engine.capacity import number
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.decode import decode_need
from gpuadvisor.engine.displays import (
    Extra,
    Shortfall,
    assumed_4k60,
    cards_for_displays,
    display_need,
    displays_shortfall,
)
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.wholeneed import (
    hosts_needed,
    jobs_wanted,
    whole_need_floor_usd,
    whole_need_usd,
    within_budget,
)
from gpuadvisor.vocabulary import format_value


def units(facts: Mapping[str, Value]) -> tuple[str, str]:
    """What a concurrent job is called for this work (singular, plural)."""
    return ("user", "users") if facts.get("workload.kind") == "vdi" else ("job", "jobs")


def counted(number: int, facts: Mapping[str, Value]) -> str:
    one, many = units(facts)
    return f"{number:,} {one if number == 1 else many}"


def host_noun(facts: Mapping[str, Value], count: int) -> str:
    """What one of the profile's hosts is called: a workstation (tower or workstation
    chassis), a server (rack chassis), else a host; plural for ``count`` other than 1."""
    chassis = str(facts.get("platform.chassis", ""))
    if chassis in ("tower", "workstation"):
        noun = "workstation"
    elif chassis.startswith("rack"):
        noun = "server"
    else:
        noun = "host"
    return noun if count == 1 else f"{noun}s"


def cards_words(count: int) -> str:
    return f"{count:,} card{'' if count == 1 else 's'}"


def in_each(option: Option, facts: Mapping[str, Value]) -> str:
    """`` in each of 5 workstations`` for a purchase of several hosts, else empty."""
    if option.hosts <= 1:
        return ""
    return f" in each of {option.hosts:,} {host_noun(facts, option.hosts)}"


def kept_where(option: Option, facts: Mapping[str, Value]) -> str:
    """Where kept cards are: ``the host``, or ``each of the 5 workstations``."""
    if option.hosts <= 1:
        return "the host"
    return f"each of the {option.hosts:,} {host_noun(facts, option.hosts)}"


def hosts_words(option: Option, facts: Mapping[str, Value]) -> str:
    """The purchase over its hosts, for a pick: ``1 card in each of 5 workstations, 5
    cards`` (kept cards named); empty for one host."""
    if option.hosts <= 1:
        return ""
    bought = option.count * option.hosts
    text = f"{cards_words(option.count)}{in_each(option, facts)}, {cards_words(bought)}"
    if option.kept:
        text += f" beside the {option.kept} kept in each"
    return text


_KIND_WORDS = {"sync-board": "sync board", "nvlink-bridge": "NVLink bridge"}


def price_words(option: Option) -> str:
    """``about $2,500``, or for several hosts ``5 cards, about $3,500 in total``; with
    accessories (the engine's ``Option.extras``) the total counts the priced ones and
    names those on quote (``about $4,500 plus a sync board on quote``)."""
    total = option.total_price_usd
    price = "price on quote" if total is None else f"about ${total:,.0f}"
    if total is not None and option.hosts > 1:
        price += " in total"
    priced = [_one_kind(extra) for extra in option.extras if extra.usd is not None]
    if total is not None and priced:
        price += " with the " + " and the ".join(priced)
    quoted = [_on_quote(extra) for extra in option.extras if extra.usd is None]
    if total is not None and quoted:
        price += " plus " + " and ".join(quoted) + " on quote"
    if option.hosts <= 1:
        return price
    return f"{cards_words(option.count * option.hosts)}, {price}"


def _one_kind(extra: Extra) -> str:
    return extra.name if extra.quantity == 1 else f"{extra.quantity} × {extra.name}"


def _on_quote(extra: Extra) -> str:
    noun = _KIND_WORDS[extra.kind]
    return f"a {noun}" if extra.quantity == 1 else f"{extra.quantity} {noun}s"


def accessory_items(option: Option) -> tuple[LineItem, ...]:
    """The sync boards and NVLink bridges the option needs beside its cards, over every
    host (the engine's ``Option.extras``, :func:`gpuadvisor.engine.displays.extras_for`);
    one the catalog does not list is named for its card and priced on quote."""
    items = []
    for extra in option.extras:
        name = extra.name
        if not extra.id:
            name = f"{_KIND_WORDS[extra.kind]} for the {option.sku.name} (not in the catalog)"
            name = name[0].upper() + name[1:]
        items.append(made(LineItem, {"name": name, "count": extra.quantity, "usd": extra.usd}))
    return tuple(items)


def line_items_of(option: Option, extras: Sequence[LineItem] = ()) -> tuple[LineItem, ...]:
    """What is bought, one line per item: the cards first, over every host (none when
    nothing is bought), then the sync boards and bridges (``extras``)."""
    if option.count == 0:
        return ()
    cards = made(
        LineItem,
        {
            "name": option.sku.name,
            "count": option.count * option.hosts,
            "usd": option.cards_price_usd,
        },
    )
    return (cards, *extras)


def _served_words(top: Option, wanted: int, facts: Mapping[str, Value]) -> str:
    cards = top.cards
    verb = "serves" if cards == 1 and top.hosts == 1 else "serve"
    why = cards_reason(top, facts)
    if not why and cards_set_by_displays(top, facts):
        each = " in each" if top.hosts > 1 else ""
        why = f", needed to drive {display_need(facts)[0]:,} displays{each},"
    if top.hosts <= 1:
        return f"{cards_words(cards)}{why} {verb} {top.jobs_served} of {counted(wanted, facts)}"
    return (
        f"{cards_words(cards)} in each of {top.hosts:,} {host_noun(facts, top.hosts)} "
        f"({cards_words(cards * top.hosts)}){why} {verb} {top.jobs_served} of "
        f"{counted(wanted, facts)}"
    )


def capacity_of(top: Option | None, facts: Mapping[str, Value]) -> Capacity | None:
    """The whole purchase against the wanted jobs: jobs served over every host, the
    hosts like these that serve them all, and on a shortfall what their cards cost
    against the budget."""
    if top is None:
        return None
    wanted = jobs_wanted(facts)
    served = top.jobs_served
    needed = hosts_needed(top, wanted) if served else 0
    summary = _served_words(top, wanted, facts)
    all_hosts: float | None = None
    within: bool | None = None
    if served < wanted:
        like = "like this" if top.hosts == 1 else "like these"
        summary += f"; {needed} {host_noun(facts, needed)} {like} serve all {wanted:,}"
        all_hosts = whole_need_usd(top, wanted)
        budget = number(facts, "budget.max_usd")
        if all_hosts is None:
            summary += f" ({_quoted(top, wanted, needed, facts)})"
        else:
            within = within_budget(top, facts)
            plural = host_noun(facts, needed)
            summary += f" (about ${all_hosts:,.0f} in cards for the {needed} {plural}; " + (
                f"within the budget of ${budget:,.0f})"
                if within
                else f"the budget is ${budget:,.0f})"
            )
    decoding = decode_sentence(top, facts)
    if decoding:
        summary += f"; {decoding}"
    _, many = units(facts)
    return made(
        Capacity,
        {
            "jobs_wanted": wanted,
            "jobs_served": served,
            "cards": top.cards * top.hosts,
            "hosts": top.hosts,
            "cards_per_host": top.cards,
            "hosts_needed": needed,
            "shortfall": served < wanted,
            "hosts_cards_usd": all_hosts,
            "whole_need_within_budget": within,
            "unit": many,
            "summary": summary + ".",
        },
    )


def _quoted(top: Option, wanted: int, needed: int, facts: Mapping[str, Value]) -> str:
    """The cards of every host needed when they are priced on quote: at least the floor
    the budget was held to, where there is one."""
    floor = whole_need_floor_usd(top, wanted)
    if floor is None:
        return "their cards priced on quote"
    budget = number(facts, "budget.max_usd")
    return (
        f"at least ${floor:,.0f} in cards for the {needed} {host_noun(facts, needed)}, "
        f"priced on quote; the budget is ${budget:,.0f}"
    )


def shortfall_words(capacity: Capacity, top: Option, facts: Mapping[str, Value]) -> str:
    """The headline's sentence on a shortfall: what is served, the hosts that serve all,
    and what their cards cost against the budget."""
    needed = capacity.hosts_needed
    like = "like this" if capacity.hosts == 1 else "like these"
    text = (
        f" It serves {capacity.jobs_served} of {counted(capacity.jobs_wanted, facts)}: "
        f"{needed} {host_noun(facts, needed)} {like} serve all {capacity.jobs_wanted:,}"
    )
    cost = capacity.hosts_cards_usd
    if cost is None:
        return text + f" ({_quoted(top, capacity.jobs_wanted, needed, facts)})."
    budget = number(facts, "budget.max_usd")
    if capacity.whole_need_within_budget:
        return text + f", about ${cost:,.0f} in cards, within the ${budget:,.0f} budget."
    return (
        text + f", about ${cost:,.0f} in cards against a budget of ${budget:,.0f}: the "
        f"budget is ${cost - budget:,.0f} short of the whole need."
    )


def host_power_assumptions(facts: Mapping[str, Value], policy: Policy) -> tuple[str, ...]:
    """The assumption the circuit and power-supply checks rest on where the profile
    leaves the host's own draw unstated (``platform.cpu_w``, ``platform.system_w``), for
    the checks that take it off: a stated circuit or a stated supply rating."""
    cpu, rest = facts.get("platform.cpu_w"), facts.get("platform.system_w")
    circuit, supply = facts.get("platform.circuit_w"), facts.get("platform.psu_w")
    uses = [
        name
        for name, stated in (("wall circuit", circuit), ("power supply's rating", supply))
        if isinstance(stated, (int, float)) and stated > 0
    ]
    if not uses or (cpu is not None and rest is not None):
        return ()
    power = policy.power
    sockets = int(number(facts, "platform.cpu_sockets"))
    parts = []
    if cpu is None:
        per = format_value(power.cpu_w_per_socket)
        each = f", {per} W per socket" if sockets > 1 else ""
        parts.append(f"{format_value(power.cpu_w_per_socket * sockets)} W for the CPUs{each}")
    if rest is None:
        parts.append(f"{format_value(power.system_w)} W for the board, memory, drives and fans")
    total = format_value(number(facts, "platform.host_draw_w"))
    missing = [name for name, value in (("cpu_w", cpu), ("system_w", rest)) if value is None]
    unstated = " and ".join(f"platform.{name}" for name in missing)
    checks = " and the ".join(uses)
    return (
        f"The host's own draw beside the GPUs: {unstated} "
        f"{'was' if len(missing) == 1 else 'were'} not stated, so the {checks} "
        f"check{'s assume' if len(uses) > 1 else ' assumes'} {' and '.join(parts)} "
        f"(rules/_policy.toml): {total} W in all before the GPUs.",
    )


_MODE_WORDS = {"4k60": " at 4K60", "8k60": " at 8K60"}


def options_shortfall(core: Core) -> Shortfall | None:
    """The displays one host cannot drive with any card of the options considered
    (:func:`gpuadvisor.engine.displays.displays_shortfall`), for a decision with no pick."""
    skus = {o.sku.id: o.sku for o in core.options.options}
    return displays_shortfall(tuple(skus.values()), core.facts)


def shortfall_sentence(short: Shortfall) -> str:
    """``12 displays at 4K60 need 3 cards of 4 outputs; this host takes 2.``, and what to
    change."""
    noun = "display" if short.displays == 1 else "displays"
    return (
        f"{short.displays} {noun}{_MODE_WORDS.get(short.mode, '')} need {short.cards} cards "
        f"of {short.outputs} outputs; this host takes {short.takes}. Split the displays over "
        f"more hosts, or choose a chassis that takes {short.cards} cards."
    )


def cards_set_by_displays(option: Option, facts: Mapping[str, Value]) -> bool:
    """Whether the displays, not the memory or the jobs, set the option's cards per
    host: more than one card, and no more than the displays take."""
    displays, mode = display_need(facts)
    floor = cards_for_displays(option.sku, displays, mode) if displays else 1
    return option.kept == 0 and 1 < option.count <= floor


def kind_words(option: Option, facts: Mapping[str, Value]) -> str:
    """``3 cards to drive 12 displays`` when the displays set the option's cards (what
    the report calls the kind of purchase, instead of the shape's words); else ""."""
    if cards_set_by_displays(option, facts):
        displays, _ = display_need(facts)
        return f"{option.count} cards to drive {displays} displays"
    need = decode_need(facts)
    if need is not None and cards_reason(option, facts):
        return f"{option.count} cards to decode {need[0]:,} video streams"
    return ""


def display_assumptions(picks: Sequence[Option], facts: Mapping[str, Value]) -> tuple[str, ...]:
    """The 4K60 assumption, once per card shown whose 4K 60 Hz figure the catalog lacks
    (its plain outputs are counted: engine/displays.py)."""
    displays, mode = display_need(facts)
    if displays <= 0:
        return ()
    notes: dict[str, str] = {}
    for option in picks:
        sku = option.sku
        if option.count and assumed_4k60(sku, mode) and sku.id not in notes:
            notes[sku.id] = (
                f"The catalog has no 4K 60 Hz display figure for the {sku.name}: each of "
                f"its {sku.display_outputs} outputs is counted as one 4K60 panel (a "
                "DisplayPort 1.4a or newer output carries one). Check the card's datasheet before "
                "ordering for the wall."
            )
    return tuple(notes.values())
