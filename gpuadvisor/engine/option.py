"""One purchase option: a shape, a SKU, the cards bought and the host's cards kept
beside them, and the ``option.*`` facts constraints judge it by."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from gpuadvisor.engine.expr import Value
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.vocabulary import Shape

Action = Literal["new", "add", "replace", "keep"]


def unpriced_or(price: float | None, then: Callable[[float], float]) -> float | None:
    """``then(price)``, or None when there is no price (quote-needed): a missing price
    stays missing through every sum, never a zero."""
    return None if price is None else then(price)


class Option:
    """One purchase: a shape, a SKU, how many cards are bought and how many of the host's
    cards stay beside them. Immutable by convention; a plain class with slots because
    the engine makes hundreds per decision. ``key`` holds every value its facts are
    made of, so a verdict remembered under it is the verdict on these facts."""

    __slots__ = (
        "_facts",
        "_judged",
        "action",
        "cards_per_job",
        "count",
        "jobs_served",
        "kept",
        "kept_sku",
        "key",
        "shape",
        "sku",
        "skus",
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
    ) -> None:
        self.shape = shape
        self.sku = sku
        self.count = count
        self.vram_per_job_gib = vram_per_job_gib
        self.jobs_served = jobs_served
        self.kept = kept
        self.kept_sku = kept_sku if kept else None
        self.cards_per_job = cards_per_job
        self.action: Action = action
        #: Every SKU the option's cards are (the kept model first when it differs).
        self.skus: tuple[Sku, ...] = (
            (sku,) if self.kept_sku is None or self.kept_sku.id == sku.id else (self.kept_sku, sku)
        )
        kept_id = self.kept_sku.id if self.kept_sku else ""
        self.key = (
            f"{shape}:{sku.id}:{count}:{kept_id}:{kept}:{jobs_served}:"
            f"{vram_per_job_gib!r}:{cards_per_job}:{action}"
        )
        self._facts: dict[str, Value] | None = None
        self._judged: tuple[tuple[Mapping[str, Value], Sku], ...] | None = None

    def __repr__(self) -> str:
        return f"Option({self.key})"

    @property
    def cards(self) -> int:
        """Cards the option runs on: those bought and those kept."""
        return self.count + self.kept

    @property
    def total_price_usd(self) -> float | None:
        """Cards bought × price; None when the SKU's price is on quote (nothing bought
        costs nothing, whatever the price)."""
        if self.count == 0:
            return 0.0
        return unpriced_or(self.sku.price_usd, lambda price: price * self.count)

    @property
    def total_power_w(self) -> float:
        kept = self.kept_sku.tdp_w * self.kept if self.kept_sku else 0.0
        return self.sku.tdp_w * self.count + kept

    @property
    def total_slots(self) -> float:
        kept = self.kept_sku.slot_width * self.kept if self.kept_sku else 0.0
        return self.sku.slot_width * self.count + kept

    @property
    def open_air_cards(self) -> int:
        new = self.count if self.sku.cooling == "open-air" else 0
        kept = self.kept if self.kept_sku and self.kept_sku.cooling == "open-air" else 0
        return new + kept

    def facts(self) -> Mapping[str, Value]:
        """The ``option.*`` facts, built once (options are shared by the engine's memo)."""
        if self._facts is None:
            self._facts = {
                "option.shape": self.shape,
                "option.gpu_count": self.cards,
                "option.new_gpu_count": self.count,
                "option.kept_gpu_count": self.kept,
                "option.total_price_usd": self.total_price_usd,
                "option.total_power_w": self.total_power_w,
                "option.vram_per_job_gib": self.vram_per_job_gib,
                "option.total_slots": self.total_slots,
                "option.open_air_cards": self.open_air_cards,
                "option.jobs_served": self.jobs_served,
                "option.cards_per_job": self.cards_per_job,
                "option.mixed_models": len(self.skus) > 1,
                "option.card_is_kept": self.count == 0,
            }
        return self._facts

    def judged(self) -> tuple[tuple[Mapping[str, Value], Sku], ...]:
        """The cards a constraint judges, each with the option facts it sees: the card
        bought, and the kept card when it is another model or nothing is bought (then
        ``option.card_is_kept`` is true: a rule about purchases may let it pass)."""
        if self._judged is None:
            facts = self.facts()
            judged: list[tuple[Mapping[str, Value], Sku]] = []
            if self.count:
                judged.append((facts, self.sku))
            if self.kept_sku is not None and (self.kept_sku.id != self.sku.id or not self.count):
                judged.append(({**facts, "option.card_is_kept": True}, self.kept_sku))
            self._judged = tuple(judged)
        return self._judged
