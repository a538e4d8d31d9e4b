"""One purchase option: a shape, a SKU, the cards bought and the host's cards kept
beside them, and the ``option.*`` facts constraints judge it by."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from gpuadvisor.engine.displays import Extra, option_outputs
from gpuadvisor.engine.expr import Value
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.vocabulary import CLASSES, SHAPES, GpuClass, Shape

Action = Literal["new", "add", "replace", "keep"]

#: Every (shape, class) pair, in the order the engine lists them.
PAIRS: tuple[tuple[Shape, GpuClass], ...] = tuple((s, c) for s in SHAPES for c in CLASSES)
_PAIR_INDEX = {pair: index for index, pair in enumerate(PAIRS)}


def unpriced_or(price: float | None, then: Callable[[float], float]) -> float | None:
    """``then(price)``, or None when there is no price (quote-needed): a missing price
    stays missing through every sum, never a zero."""
    return None if price is None else then(price)


class Option:
    """One purchase: a shape, a SKU, how many cards are bought and how many of the host's
    cards stay beside them, in each of ``hosts`` identical hosts (``platform.hosts``).
    Immutable by convention; a plain class with slots because the engine makes hundreds
    per decision. ``key`` holds every value its facts are made of, so a verdict
    remembered under it is the verdict on these facts.

    Counts, power and slots are one host's (what its chassis must take); the jobs served
    and the price are the whole purchase's, over every host."""

    __slots__ = (
        "_facts",
        "_judged",
        "action",
        "bandwidth_gbs",
        "card_keys",
        "card_names",
        "cards",
        "cards_per_job",
        "cards_price_usd",
        "count",
        "extras",
        "extras_on_quote",
        "hosts",
        "jobs_per_host",
        "jobs_served",
        "judged_cards",
        "kept",
        "kept_sku",
        "key",
        "open_air_cards",
        "pair",
        "shape",
        "sku",
        "skus",
        "total_power_w",
        "total_price_usd",
        "total_slots",
        "vram_per_job_gib",
    )

    def __init__(
        self,
        shape: Shape,
        sku: Sku,
        count: int,
        vram_per_job_gib: float,
        jobs_served: int,
        *,
        kept: int = 0,
        kept_sku: Sku | None = None,
        cards_per_job: int = 1,
        action: Action = "new",
        hosts: int = 1,
        jobs_per_host: int | None = None,
        extras: tuple[Extra, ...] = (),
    ) -> None:
        self.shape = shape
        self.sku = sku
        #: Cards bought for each host.
        self.count = count
        self.vram_per_job_gib = vram_per_job_gib
        #: Jobs the whole purchase serves, over every host.
        self.jobs_served = jobs_served
        #: Identical hosts the purchase equips, each with ``count`` cards bought.
        self.hosts = hosts
        #: Jobs the cards of one host serve (the whole purchase's for one host).
        self.jobs_per_host = jobs_served if jobs_per_host is None else jobs_per_host
        self.kept = kept
        self.kept_sku = kept_sku if kept else None
        self.cards_per_job = cards_per_job
        self.action: Action = action
        #: Every SKU the option's cards are (the kept model first when it differs).
        self.skus: tuple[Sku, ...] = (
            (sku,) if self.kept_sku is None or self.kept_sku.id == sku.id else (self.kept_sku, sku)
        )
        kept_id = self.kept_sku.id if self.kept_sku else ""
        self.key = ":".join(
            (
                shape,
                sku.id,
                str(count),
                kept_id,
                str(kept),
                str(jobs_served),
                repr(vram_per_job_gib),
                str(cards_per_job),
                action,
                str(hosts),
                str(self.jobs_per_host),
                repr(extras),
            )
        )
        #: The cards a constraint judges (see :meth:`judged`): the card bought, and the
        #: kept card when it is another model or nothing is bought, with whether it is
        #: kept.
        judged: list[tuple[Sku, bool]] = [(sku, False)] if count else []
        if self.kept_sku is not None and (self.kept_sku.id != sku.id or not count):
            judged.append((self.kept_sku, True))
        self.judged_cards: tuple[tuple[Sku, bool], ...] = tuple(judged)
        #: The same cards as (SKU id, kept), what card-level verdicts are kept by.
        self.card_keys = tuple((card.id, kept) for card, kept in judged)
        #: The name of each card model judged, by SKU id.
        self.card_names = {card.id: card.name for card, _ in judged}
        #: The option's (shape, class) pair, by its index in :data:`PAIRS`.
        self.pair = _PAIR_INDEX[(shape, sku.segment)]
        # What the option comes to, worked out once (options are shared by the memo):
        held = self.kept_sku
        #: Cards the option runs on: those bought and those kept.
        self.cards = count + kept
        #: Cards bought × price, over every host; None when the SKU's price is on quote
        #: (nothing bought costs nothing, whatever the price).
        self.cards_price_usd: float | None = (
            0.0 if count == 0 else unpriced_or(sku.price_usd, lambda price: price * count * hosts)
        )
        #: The sync boards and NVLink bridges bought beside the cards, over every host.
        self.extras = extras
        #: Whether one of them is priced on quote: the total then counts only the
        #: priced ones, and no budget can be held to it in full.
        self.extras_on_quote = any(extra.usd is None for extra in extras)
        priced = sum(extra.usd or 0.0 for extra in extras)
        #: What the purchase costs: the cards and the priced accessories, over every
        #: host; None when the cards are on quote.
        self.total_price_usd: float | None = unpriced_or(
            self.cards_price_usd, lambda cards: round(cards + priced, 2) if priced else cards
        )
        self.total_power_w: float = sku.tdp_w * count + (held.tdp_w * kept if held else 0.0)
        self.total_slots: float = sku.slot_width * count + (held.slot_width * kept if held else 0.0)
        self.open_air_cards = (count if sku.cooling == "open-air" else 0) + (
            kept if held is not None and held.cooling == "open-air" else 0
        )
        #: The slowest card's memory bandwidth (a job on it runs at its pace; on a
        #: board of several GPUs, one GPU's).
        self.bandwidth_gbs = min(s.memory_bandwidth_gbs / s.gpus_per_board for s in self.skus)
        self._facts: dict[str, Value] | None = None
        self._judged: tuple[tuple[dict[str, Value], Sku], ...] | None = None

    def __repr__(self) -> str:
        return f"Option({self.key})"

    @property
    def price_incomplete(self) -> bool:
        """Whether part of the purchase is priced on quote (its cards or an accessory):
        ranked after the priced options of its kind, its budget not checked in full."""
        return self.total_price_usd is None or self.extras_on_quote

    @property
    def quote_term(self) -> float:
        """Where the price ranks the option among others of its tier: 0.0 priced in full,
        0.5 its cards priced but an accessory on quote (part of the price in hand beats
        none of it), 1.0 its cards on quote."""
        if self.total_price_usd is None:
            return 1.0
        return 0.5 if self.extras_on_quote else 0.0

    def facts(self) -> dict[str, Value]:
        """The ``option.*`` facts, built once (options are shared by the engine's memo)."""
        if self._facts is None:
            self._facts = {name: read(self) for name, read in OPTION_FACTS.items()}
            self._facts[CARD_IS_KEPT] = self.count == 0
        return self._facts

    def judged(self) -> tuple[tuple[dict[str, Value], Sku], ...]:
        """The cards a constraint judges, each with the option facts it sees: the card
        bought, and the kept card when it is another model or nothing is bought (then
        ``option.card_is_kept`` is true: a rule about purchases may let it pass)."""
        if self._judged is None:
            facts = self.facts()
            self._judged = tuple(
                ({**facts, CARD_IS_KEPT: True} if kept else facts, sku)
                for sku, kept in self.judged_cards
            )
        return self._judged


def _cards_of(option: Option) -> tuple[tuple[Sku, int], ...]:
    """One host's cards as (model, count): those bought, then those kept."""
    kept = ((option.kept_sku, option.kept),) if option.kept_sku is not None else ()
    return ((option.sku, option.count), *kept)


#: The one option fact that differs between the cards of an option: whether the card
#: judged is one already in the host (see :meth:`Option.judged`).
CARD_IS_KEPT = "option.card_is_kept"

#: Every other ``option.*`` fact and how it is read off an option: one table, so the
#: facts a rule sees of one option (:meth:`Option.facts`) and the columns the engine
#: judges a whole set by (:mod:`gpuadvisor.engine.columns`) cannot differ.
OPTION_FACTS: dict[str, Callable[[Option], Value]] = {
    "option.shape": lambda o: o.shape,
    "option.gpu_count": lambda o: o.cards,
    "option.new_gpu_count": lambda o: o.count,
    "option.kept_gpu_count": lambda o: o.kept,
    "option.total_price_usd": lambda o: o.total_price_usd,
    "option.accessories_on_quote": lambda o: o.extras_on_quote,
    "option.total_power_w": lambda o: o.total_power_w,
    "option.vram_per_job_gib": lambda o: o.vram_per_job_gib,
    "option.total_slots": lambda o: o.total_slots,
    "option.open_air_cards": lambda o: o.open_air_cards,
    "option.jobs_served": lambda o: o.jobs_served,
    "option.cards_per_job": lambda o: o.cards_per_job,
    "option.mixed_models": lambda o: len(o.skus) > 1,
    # Displays one host's cards (bought and kept) drive at once, at each mode.
    "option.display_outputs": lambda o: option_outputs(_cards_of(o), "any"),
    "option.displays_4k60": lambda o: option_outputs(_cards_of(o), "4k60"),
    "option.displays_8k60": lambda o: option_outputs(_cards_of(o), "8k60"),
}
