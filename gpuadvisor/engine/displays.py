"""Displays a purchase must drive (``requirements.displays`` at
``requirements.display_mode``), and the accessories a pick needs beside its cards: a
frame-lock sync board, NVLink bridges (issue #30). Pure arithmetic over catalog entries;
the words are the decision layer's.

- **Outputs at a mode.** ``any`` counts the card's plain outputs; ``8k60`` what its
  datasheet says it drives at 8K 60 Hz at once (unknown when the catalog has no figure:
  the display rule then cannot prove the option and it is rejected). ``4k60`` reads
  ``displays_4k60``; where the catalog has no figure, every output of a card that has
  outputs is counted (a DisplayPort 1.4a output carries a 4K 60 Hz panel) and the report
  states that assumption (:func:`assumed_4k60`).
- **Cards for the displays.** Each host needs at least ``ceil(displays / outputs)``
  cards: the lower bound :mod:`gpuadvisor.engine.options` puts on an option's count.
- **Sync boards.** When a host's cards take a board is the policy's judgement
  (``rules/_policy.toml`` ``[displays]``: with ``requirements.display_sync``, even for one
  card; several cards without it, none). A host takes ``ceil(cards / cards_per_unit)``
  boards, of a board the catalog lists for the card; where none is listed the card is
  still bought, with a board priced on quote (rule DSYNC-001 already keeps cards with no
  frame lock out).
- **NVLink bridges.** One bridge per pair of cards that one job spans over NVLink (the
  link :func:`gpuadvisor.engine.ranking.dp_link` chose), of the narrowest listed spacing
  that clears the card's width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.policy import Policy
from gpuadvisor.inputs.accessories import Accessory
from gpuadvisor.inputs.catalog import Sku

#: The facts the display floor reads (what :mod:`gpuadvisor.engine.options` adds to a plan).
DISPLAY_READS = ("requirements.displays", "requirements.display_mode")


def outputs_at(sku: Sku, mode: object) -> int | None:
    """Displays one card drives at once at ``mode``; None where the catalog cannot say."""
    if mode == "8k60":
        return sku.displays_8k60
    if mode == "4k60":
        if sku.displays_4k60 is not None:
            return sku.displays_4k60
        return sku.display_outputs
    return sku.display_outputs


def assumed_4k60(sku: Sku, mode: object) -> bool:
    """Whether the card's 4K60 count is its plain outputs, for want of a catalog figure."""
    return mode == "4k60" and sku.displays_4k60 is None and sku.display_outputs > 0


def display_need(facts: Mapping[str, Value]) -> tuple[int, str]:
    """(displays per host, mode) the profile asks for; (0, "any") for none."""
    displays = facts.get("requirements.displays")
    mode = facts.get("requirements.display_mode")
    count = int(displays) if isinstance(displays, (int, float)) and displays > 0 else 0
    return count, mode if isinstance(mode, str) else "any"


def cards_for_displays(sku: Sku, displays: int, mode: str) -> int:
    """Cards of ``sku`` one host needs for ``displays`` at ``mode``: at least 1, at
    least ``ceil(displays / outputs)``; 1 when the card drives none (or the catalog cannot
    say): more of them would not help, and the display rule rejects the option."""
    outputs = outputs_at(sku, mode)
    if displays <= 0 or not outputs:
        return 1
    return max(1, math.ceil(displays / outputs))


def cards_set_by_need(skus: Sequence[Sku], facts: Mapping[str, Value]) -> bool:
    """Whether every purchase's card count is set by a need other than memory or jobs:
    the displays, where even the catalog's card with the most outputs at the mode takes
    more than one card per host (each card then drives its own panels; none is idle)."""
    displays, mode = display_need(facts)
    if displays <= 0:
        return False
    best = max((n for s in skus if (n := outputs_at(s, mode))), default=0)
    return best > 0 and math.ceil(displays / best) > 1


class Shortfall(NamedTuple):
    """Displays one host cannot drive: even the catalog's card with the most outputs at
    the mode needs ``cards`` of them, more than the ``takes`` the host takes."""

    displays: int
    mode: str
    cards: int
    outputs: int
    takes: int


def displays_shortfall(skus: Sequence[Sku], facts: Mapping[str, Value]) -> Shortfall | None:
    """The :class:`Shortfall` of one host's displays (``platform.gpu_count_max``
    against the fewest cards of the catalog's best card at the mode); None when the
    displays fit or none are asked."""
    displays, mode = display_need(facts)
    cap = facts.get("platform.gpu_count_max")
    if displays <= 0 or not isinstance(cap, (int, float)) or isinstance(cap, bool):
        return None
    best = max((n for s in skus if (n := outputs_at(s, mode))), default=0)
    if not best or math.ceil(displays / best) <= cap:
        return None
    return Shortfall(displays, mode, math.ceil(displays / best), best, int(cap))


def option_outputs(skus: Sequence[tuple[Sku, int]], mode: str) -> int | None:
    """Displays all cards of one host drive at ``mode`` (cards bought and kept, as
    (model, count) pairs); None when one model's figure is unknown."""
    total = 0
    for sku, count in skus:
        if count <= 0:
            continue
        outputs = outputs_at(sku, mode)
        if outputs is None:
            return None
        total += outputs * count
    return total


def sync_board_for(sku: Sku, accessories: Sequence[Accessory]) -> Accessory | None:
    """The catalog's sync board that lists ``sku`` (the one with most cards per board)."""
    boards = [a for a in accessories if a.kind == "sync-board" and sku.id in a.fits]
    return max(boards, key=lambda a: (a.cards_per_unit, a.id), default=None)


def sync_boards_per_host(cards: int, board: Accessory | None) -> int:
    """Boards one host's ``cards`` take (one board ties up to ``cards_per_unit``; with no
    catalog board, one per host, its size unknown)."""
    if cards <= 0:
        return 0
    return 1 if board is None else math.ceil(cards / board.cards_per_unit)


def nvlink_bridge_for(sku: Sku, accessories: Sequence[Accessory]) -> Accessory | None:
    """The catalog's NVLink bridge for two cards of ``sku``: the narrowest spacing that
    clears the card's width (a bridge closer than the card is wide cannot reach)."""
    width = math.ceil(sku.slot_width)
    bridges = [
        a
        for a in accessories
        if a.kind == "nvlink-bridge"
        and sku.id in a.fits
        and a.slot_spacing is not None
        and a.slot_spacing >= width
    ]
    return min(bridges, key=lambda a: (a.slot_spacing or 0, a.id), default=None)


def nvlink_pairs_per_host(cards: int, cards_per_job: int) -> int:
    """Bridged pairs in one host: one per two cards that a job spans over NVLink."""
    return cards // 2 if cards_per_job == 2 else 0


def accessory_needs(
    sku: Sku,
    shape: str,
    count: int,
    cards: int,
    hosts: int,
    cards_per_job: int,
    outfit: Outfit,
    accessories: Sequence[Accessory],
) -> list[tuple[str, Accessory | None, int]]:
    if count == 0:
        return []
    needed: list[tuple[str, Accessory | None, int]] = []
    if outfit.sync or (outfit.several and cards > 1):
        board = sync_board_for(sku, accessories)
        needed.append(("sync-board", board, sync_boards_per_host(cards, board) * hosts))
    multi = shape in ("multi-gpu-model-parallel", "multi-gpu-data-parallel")
    pairs = nvlink_pairs_per_host(cards, cards_per_job) if multi else 0
    if outfit.nvlink and pairs:
        bridge = nvlink_bridge_for(sku, accessories)
        needed.append(("nvlink-bridge", bridge, pairs * hosts))
    return needed


#: The facts :func:`outfit_of` reads (what the option plan adds to its reads).
OUTFIT_READS = ("requirements.display_sync", "platform.nvlink_possible")


class Outfit(NamedTuple):
    """What decides an option's accessories beside its cards: a sync board for any
    number of cards (``sync``: frame lock or genlock wanted, ``requirements.display_sync``),
    one only for two cards or more (``several``), and whether NVLink is possible in the
    host (a pair of NVLink cards that one job spans is then bridged). When each applies
    is the policy's judgement (``rules/_policy.toml`` ``[displays]``)."""

    sync: bool = False
    nvlink: bool = False
    several: bool = False


#: No accessories: no frame lock wanted, no NVLink possible.
NO_OUTFIT = Outfit()


def outfit_of(facts: Mapping[str, Value], policy: Policy) -> Outfit:
    """The outfit these facts ask for, by the policy's ``[displays]`` judgement."""
    sync = facts.get("requirements.display_sync") is True
    return Outfit(
        policy.displays.board_wanted(sync, 1),
        facts.get("platform.nvlink_possible") is True,
        policy.displays.board_wanted(sync, 2),
    )


def outfit_for(sku: Sku, outfit: Outfit) -> Outfit:
    """The part of ``outfit`` that can change an option of ``sku``: a sync board only
    for a card that takes one (frame lock: DSYNC-001 removes the others), a bridge only
    for an NVLink card. Options and their memo blocks are keyed on it, so a profile's
    NVLink or sync answer does not split the blocks of cards it cannot change."""
    if outfit == NO_OUTFIT:
        return outfit
    lock = sku.frame_lock is True
    return Outfit(
        outfit.sync and lock, outfit.nvlink and sku.nvlink is True, outfit.several and lock
    )


class Extra(NamedTuple):
    """One accessory line of an option, over every host: its kind, the catalog entry's
    id and name ("" for one the catalog does not list), how many, and their price (None
    on quote)."""

    kind: str
    id: str
    name: str
    quantity: int
    usd: float | None


def extras_for(
    sku: Sku,
    skus: Sequence[Sku],
    shape: str,
    counts: tuple[int, int, int, int],
    outfit: Outfit,
    accessories: Sequence[Accessory],
) -> tuple[Extra, ...]:
    """The accessories an option of ``sku`` needs (``counts``: cards bought and run per
    host, hosts, cards per job): what :class:`gpuadvisor.engine.option.Option` prices
    beside its cards. A bridge only when every card has NVLink and one job spans a pair
    (the link :func:`gpuadvisor.engine.ranking.dp_link` then picks)."""
    count, cards, hosts, per_job = counts
    nvlink = outfit.nvlink and per_job == 2 and all(s.nvlink for s in skus)
    found = accessory_needs(
        sku, shape, count, cards, hosts, per_job, outfit._replace(nvlink=nvlink), accessories
    )
    extras = []
    for kind, item, many in found:
        if many <= 0:
            continue
        if item is None:
            extras.append(Extra(kind, "", "", many, None))
        else:
            usd = None if item.price_usd is None else round(item.price_usd * many, 2)
            extras.append(Extra(kind, item.id, item.name, many, usd))
    return tuple(extras)
