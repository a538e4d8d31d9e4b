"""The least a card on quote can cost: the price of a card it outclasses.

A card without a public price (quote-needed) is not free. Where the catalog holds a
priced card of the same segment, architecture and GPU count that it matches or beats on
memory, memory bandwidth and FP32 compute (the 72 GB RTX PRO 5000 Blackwell over the
48 GB one), it costs at least that card's price; FIT-004 holds that floor to the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Card(Protocol):
    """What a floor is worked out from (a catalog SKU)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def segment(self) -> str: ...
    @property
    def architecture(self) -> str: ...
    @property
    def gpus_per_board(self) -> int: ...
    @property
    def vram_gib(self) -> float: ...
    @property
    def memory_bandwidth_gbs(self) -> float: ...
    @property
    def fp32_tflops(self) -> float: ...
    @property
    def price_usd(self) -> float | None: ...


def _outclasses(card: Card, other: Card) -> bool:
    return (
        other.segment == card.segment
        and other.architecture == card.architecture
        and other.gpus_per_board == card.gpus_per_board
        and other.vram_gib <= card.vram_gib
        and other.memory_bandwidth_gbs <= card.memory_bandwidth_gbs
        and other.fp32_tflops <= card.fp32_tflops + 1e-9
    )


def price_floors(cards: Sequence[Card]) -> dict[str, tuple[float, str]]:
    """For each card on quote that outclasses a priced one: (the dearest such price,
    that card's name), by card id."""
    priced = [c for c in cards if c.price_usd is not None]
    floors: dict[str, tuple[float, str]] = {}
    for card in cards:
        if card.price_usd is not None:
            continue
        beaten = [o for o in priced if o.id != card.id and _outclasses(card, o)]
        best = max(beaten, key=lambda o: o.price_usd or 0.0, default=None)
        if best is not None and best.price_usd is not None:
            floors[card.id] = (best.price_usd, best.name)
    return floors
