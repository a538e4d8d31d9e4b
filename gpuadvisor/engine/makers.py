"""Making options: one object per distinct option (:class:`OptionMaker`, what a memo
holds so that blocks of different plans share their options), and the options of one
plan's hosts (:class:`OverHosts`): each made with the jobs one host's cards serve, and
serving the wanted jobs spread over every host (``platform.hosts``)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuadvisor.engine.displays import NO_OUTFIT, Outfit, extras_for, outfit_for
from gpuadvisor.engine.option import Action, Option
from gpuadvisor.inputs.accessories import Accessory
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.vocabulary import Shape


class OptionMaker:
    """Makes options, one object per distinct option: what a memo holds so that the same
    option in blocks of different plans shares its facts and judged cards. Each option
    gets the catalog's ``accessories`` its outfit needs (sync boards, NVLink bridges)."""

    __slots__ = ("_accessories", "_made")

    def __init__(self, accessories: Sequence[Accessory] = ()) -> None:
        self._made: dict[tuple[object, ...], Option] = {}
        self._accessories = tuple(accessories)

    def option(
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
        outfit: Outfit = NO_OUTFIT,
    ) -> Option:
        kept_id = kept_sku.id if kept_sku is not None else ""
        outfit = outfit_for(sku, outfit)
        key: tuple[object, ...] = (
            shape,
            sku.id,
            count,
            vram_per_job_gib,
            jobs_served,
            kept,
            kept_id,
            cards_per_job,
            action,
            hosts,
            jobs_per_host,
            outfit,
        )
        found = self._made.get(key)
        if found is None:
            skus = (sku,) if kept_sku is None or not kept else (kept_sku, sku)
            counts = (count, count + kept, hosts, cards_per_job)
            extras = extras_for(sku, skus, shape, counts, outfit, self._accessories)
            found = self._made[key] = Option(
                shape,
                sku,
                count,
                vram_per_job_gib,
                jobs_served,
                kept=kept,
                kept_sku=kept_sku,
                cards_per_job=cards_per_job,
                action=action,
                hosts=hosts,
                jobs_per_host=jobs_per_host,
                extras=extras,
            )
        return found

    def __len__(self) -> int:
        return len(self._made)

    def clear(self) -> None:
        self._made.clear()


class OverHosts:
    """An :class:`OptionMaker` for one plan's hosts: each option is made with the jobs
    one host's cards serve, and serves the wanted jobs spread over every host."""

    __slots__ = ("_hosts", "_make", "_outfit", "_wanted")

    def __init__(
        self, make: OptionMaker, hosts: int, wanted: int, outfit: Outfit = NO_OUTFIT
    ) -> None:
        self._make = make
        self._hosts, self._wanted = hosts, wanted
        self._outfit = outfit

    def option(
        self,
        shape: Shape,
        sku: Sku,
        count: int,
        vram_per_job_gib: float,
        host_jobs: int,
        *,
        kept: int = 0,
        kept_sku: Sku | None = None,
        cards_per_job: int = 1,
        action: Action = "new",
    ) -> Option:
        """The option of ``count`` cards per host whose cards serve ``host_jobs`` jobs
        in each host."""
        hosts = self._hosts
        if hosts == 1:
            served, per_host = host_jobs, None
        else:
            served, per_host = min(self._wanted, host_jobs * hosts), host_jobs
        return self._make.option(
            shape,
            sku,
            count,
            vram_per_job_gib,
            served,
            kept=kept,
            kept_sku=kept_sku,
            cards_per_job=cards_per_job,
            action=action,
            hosts=hosts,
            jobs_per_host=per_host,
            outfit=self._outfit,
        )
