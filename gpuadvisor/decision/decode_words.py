"""The pick's video decoding in the buyer's words (``workload.decode_streams``)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.engine.decode import card_streams, cards_needed, decode_need, need_words
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option


def decode_sentence(top: Option, facts: Mapping[str, Value]) -> str:
    """ "96 H.264 1080p30 streams need 2 NVIDIA L4 cards per host (4 decoders each, 80
    streams per card)", or "" without video streams or when the card's are unknown."""
    need = decode_need(facts)
    resolution = facts.get("workload.decode_resolution")
    if need is None or not isinstance(resolution, str) or top.sku.nvdec is None:
        return ""
    streams, per_engine, codec = need
    per_card = card_streams(top.sku, per_engine, codec)
    if not per_card:
        return ""
    cards = -(-streams // per_card)
    where = " per host" if top.hosts > 1 else ""
    noun = "card" if cards == 1 else "cards"
    return (
        f"{need_words(streams, codec, resolution)} need {cards} {top.sku.name} {noun}{where} "
        f"({top.sku.nvdec} decoders each, {per_card} streams per card)"
    )


def cards_reason(top: Option, facts: Mapping[str, Value]) -> str:
    """ ", needed to decode 96 streams," where the video streams set the pick's cards per
    host (two or more, each of them needed for its decoders), else "": said after the
    card count, so "2 cards serve 1 of 1 job" does not read as a card to spare."""
    need = decode_need(facts)
    if need is None or top.cards < 2 or (cards_needed(top.sku, need) or 0) < top.cards:
        return ""
    each = " in each" if top.hosts > 1 else ""
    return f", needed to decode {need[0]:,} streams{each},"
