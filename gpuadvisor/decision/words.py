"""Sentences that reports make from a decision alone (they read only the decision)."""

from __future__ import annotations

from gpuadvisor.decision.model import Lever, Pick, Sensitivity
from gpuadvisor.vocabulary import format_value


def describe_flip(flip: Sensitivity) -> str:
    """One what-would-change sentence."""
    at = format_value(flip.flips_at)
    if flip.direction == "up":
        return f"If {flip.input} rises to {at} (now {format_value(flip.current)}): {flip.to}."
    if flip.direction == "down":
        return f"If {flip.input} falls to {at} (now {format_value(flip.current)}): {flip.to}."
    return f"If {flip.input} were {at} (now {format_value(flip.current)}): {flip.to}."


def describe_lever(lever: Lever) -> str:
    """One lever as the report lists it: the change, the card it brings, its price."""
    if lever.usd_per_hour is not None:
        return f"{lever.change}."
    if lever.count == 0:
        return f"{lever.change}: buy {lever.pick}."
    price = "price on quote" if lever.total_usd is None else f"${lever.total_usd:,.0f}"
    short = f"; {lever.short}" if lever.short else ""
    return f"{lever.change}: buy {lever.pick}, {price}{short}."


def a_or_an(number: str) -> str:
    """The article before a number as it is read: "an 8", "an 11", "an 18.5", "a 6"."""
    whole = number.split(".", 1)[0].replace(",", "")
    spoken_vowel = whole.startswith("8") or (
        whole in ("11", "18") or (len(whole) in (5, 8) and whole[:2] in ("11", "18"))
    )
    return "an" if spoken_vowel else "a"


def memory_words(vram_gib: float, gpus: int) -> str:
    """A card's memory as a job sees it: "48 GiB", or "4 GPUs × 16 GiB" for a board of
    several GPUs (a job sees one of them)."""
    if gpus <= 1:
        return f"{format_value(vram_gib)} GiB"
    return f"{gpus} GPUs × {format_value(vram_gib / gpus)} GiB"


def profile_words(profile_gib: float, usable_gib: float, one: str) -> str:
    """A vGPU profile per desktop or job: "an 8 GiB vGPU profile per user", and what of
    it a process can allocate when that is less ("a 24 GiB vGPU profile per job, 23.47
    GiB of it usable")."""
    size = format_value(round(profile_gib, 2))
    text = f"{a_or_an(size)} {size} GiB vGPU profile per {one}"
    if usable_gib < profile_gib - 0.005:
        text += f", {format_value(round(usable_gib, 2))} GiB of it usable"
    return text


def bandwidth_words(pick: Pick) -> str:
    """A card's memory bandwidth as a job sees it: "1,792 GB/s", or "4 GPUs × 200 GB/s"
    for a board of several GPUs (each GPU has its own memory)."""
    gpus = pick.gpus_per_board
    if gpus <= 1:
        return f"{format_value(pick.memory_bandwidth_gbs)} GB/s"
    return f"{gpus} GPUs × {format_value(round(pick.memory_bandwidth_gbs / gpus, 1))} GB/s"


def frame_buffer_words(vram_gib: float, gpus: int) -> str:
    """What vGPU profiles divide: the board's frame buffer, or each GPU's on a board of
    several (a profile never spans two GPUs)."""
    if gpus <= 1:
        return f"the board's {format_value(vram_gib)} GiB"
    return f"the {format_value(vram_gib / gpus)} GiB of each of the board's {gpus} GPUs"


#: The unit of a fact that is a share of readings (0..1): shown as a percentage.
SHARE_UNIT = "share"


def format_share(value: float) -> str:
    """A share of readings (0..1) as a percentage: 0.625 -> '62.5 %', 1.0 -> '100 %'.
    Never the bare number, which reads as a count ("active in 1 of samples")."""
    return f"{format_value(round(value * 100, 1))} %"


def format_measure(value: float | int | bool | str | None, unit: str = "") -> str:
    """A measured value with its unit, as tables and sentences show it."""
    if unit == SHARE_UNIT and isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_share(float(value))
    shown = format_value(value)
    return f"{shown} {unit}" if unit and value is not None else shown


#: Where cards no longer made are found, and what that means for a buyer.
USED_MARKET = (
    "used market (second-hand, without the maker's warranty, at a price the catalog does not know)"
)

#: Past this many days a price is called old in a report (the catalog lint's warning age).
OLD_PRICE_DAYS = 365


def pick_flags(pick: Pick) -> tuple[str, ...]:
    """What a buyer must know about a pick's market before ordering it."""
    flags: list[str] = []
    since = f" {pick.status_date}" if pick.status_date else ""
    kept = pick.count == 0 and pick.kept_count > 0  # kept in the host, not bought
    if pick.status in ("discontinued", "eol"):
        ended = (
            f"Production ended{since}" if pick.status == "discontinued" else f"End of life{since}"
        )
        if kept:
            flags.append(
                f"{ended}: a spare or a second identical card now comes from remaining stock "
                f"or the {USED_MARKET}."
            )
        elif pick.status == "discontinued":
            flags.append(
                f"{ended}: remaining stock only; spares or identical cards later mean the "
                f"{USED_MARKET}."
            )
        else:
            flags.append(f"{ended}: no new stock or spares; support is ending.")
    elif pick.status == "unknown":
        flags.append("Availability unknown: ask the supplier for new stock and spares.")
    if kept:
        return tuple(flags)  # nothing is bought: no price to judge
    if pick.price_usd is None:
        if pick.price_floor_usd is not None:
            flags.append(
                f"Price on quote: it costs at least the ${pick.price_floor_usd:,.0f} of the "
                f"{pick.price_floor_name}, which it outclasses, and only that floor was held "
                "to the budget. Ask for a quote before ordering."
            )
        else:
            flags.append("Budget not checked: price on quote. Ask for a quote before ordering.")
    else:
        flags.extend(_accessory_quote_flags(pick))
        days = pick.price_age_days
        if pick.price_kind == "launch-msrp" and pick.status in ("discontinued", "eol"):
            flags.append(
                f"The price is the launch MSRP of {pick.price_date}; it says nothing about "
                "today's price for a card no longer made."
            )
        elif pick.price_kind == "launch-msrp" and pick.status == "unknown":
            flags.append(f"The price is the launch MSRP of {pick.price_date}: get a current quote.")
        elif days is not None and days > OLD_PRICE_DAYS:
            flags.append(
                f"The {pick.price_kind} price is {format_value(days)} days old "
                f"({pick.price_date}): get a current quote."
            )
    return tuple(flags)


def _accessory_quote_flags(pick: Pick) -> list[str]:
    """The budget check is not complete when an accessory is on quote: the priced part
    was held to the budget, the rest comes on top."""
    quoted = [item.name for item in pick.line_items[1:] if item.usd is None]
    if not quoted or pick.total_price_usd is None:
        return []
    return [
        f"Budget checked without the {' and the '.join(quoted)}: priced on quote, it comes "
        f"on top of the ${pick.total_price_usd:,.0f} held to the budget. Ask for a quote "
        "before ordering."
    ]


def _quote_words(pick: Pick) -> str:
    if pick.price_floor_usd is None:
        return "quote-needed: ranked on its specs, budget not checked"
    least = pick.price_floor_usd * pick.count * pick.hosts
    return f"quote-needed: ranked on its specs, at least ${least:,.0f} held to the budget"


def pick_cost_sentence(pick: Pick) -> str:
    """The summary's sentence on what the first pick costs (for several hosts, the cards
    of each and their number over all of them)."""
    head = f"The pick is {pick.count} × {pick.name}"
    if pick.hosts_words:
        head = f"The pick is {pick.name}, {pick.hosts_words},"
    if pick.price_usd is None or pick.total_price_usd is None:
        running = pick.energy_cost_usd + pick.licence_cost_usd
        return (
            f"{head}, price on quote ({_quote_words(pick)}); "
            f"electricity and licences over its life come to ${running:,.0f}."
        )
    life = "" if pick.lifecycle_cost_usd is None else f" and ${pick.lifecycle_cost_usd:,.0f}"
    # The life figure is what it adds up: cards, electricity and, when priced, licences.
    paid_for = "electricity and licences" if pick.licence_cost_usd else "electricity"
    return (
        f"{head} at ${pick.price_usd:,.0f} per card ({pick.price_kind} price, "
        f"{pick.price_date}), ${pick.total_price_usd:,.0f} in total{life} over its life "
        f"with {paid_for}."
    )
