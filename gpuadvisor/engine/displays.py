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
- **Sync boards.** With ``requirements.display_sync``, each host's cards are tied to one
  another (and to house sync) through a board: ``ceil(cards / cards_per_unit)`` boards per
  host, of a board the catalog lists for the card; where none is listed the card is still
  bought, with a board priced on quote (rule DSYNC-001 already keeps cards with no frame
  lock out).
- **NVLink bridges.** One bridge per pair of cards that one job spans over NVLink (the
  link :func:`gpuadvisor.engine.ranking.dp_link` chose), of the narrowest listed spacing
  that clears the card's width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from gpuadvisor.engine.expr import Value
from gpuadvisor.inputs.accessories import Accessory
from gpuadvisor.inputs.catalog import Sku


class _Bought(Protocol):
    """What :func:`accessories_needed` reads of an option (``engine.option.Option``,
    which imports this module for its display facts)."""

    @property
    def sku(self) -> Sku: ...
    @property
    def shape(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def cards(self) -> int: ...
    @property
    def hosts(self) -> int: ...
    @property
    def cards_per_job(self) -> int: ...


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


def accessories_needed(
    option: _Bought, facts: Mapping[str, Value], accessories: Sequence[Accessory], link: str
) -> list[tuple[str, Accessory | None, int]]:
    """(kind, catalog entry or None, count over every host) of the accessories the
    option needs beside its cards: sync boards with ``requirements.display_sync``, NVLink
    bridges when one job's pair of cards talks over NVLink (``link``, from
    :func:`gpuadvisor.engine.ranking.dp_link`). None where the catalog lists no fitting
    one: the item is then bought on quote."""
    if option.count == 0:
        return []
    needed: list[tuple[str, Accessory | None, int]] = []
    if facts.get("requirements.display_sync") is True:
        board = sync_board_for(option.sku, accessories)
        needed.append(
            ("sync-board", board, sync_boards_per_host(option.cards, board) * option.hosts)
        )
    multi = option.shape in ("multi-gpu-model-parallel", "multi-gpu-data-parallel")
    pairs = nvlink_pairs_per_host(option.cards, option.cards_per_job) if multi else 0
    if link == "nvlink" and pairs:
        bridge = nvlink_bridge_for(option.sku, accessories)
        needed.append(("nvlink-bridge", bridge, pairs * option.hosts))
    return needed
