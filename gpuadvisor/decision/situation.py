"""Findings the decision procedure itself makes about the purchase (kind ``engine``):
a purchase that serves fewer jobs than wanted, cards already in the host that meet the
need, and cards in the host that could not be weighed for keeping."""

from __future__ import annotations

from gpuadvisor.decision.findings import Phrasebook
from gpuadvisor.decision.model import Capacity, FactValue, Finding
from gpuadvisor.decision.purchase import capacity_of, counted, units
from gpuadvisor.engine.capacity import number
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.factspec import FACTS_BY_NAME
from gpuadvisor.vocabulary import format_value


def _facts(facts: FactSet, book: Phrasebook, *names: str) -> tuple[FactValue, ...]:
    values, sources = facts.values, facts.sources
    return book.facts_of(
        (
            name,
            values.get(name),
            FACTS_BY_NAME[name].unit,
            sources.get(name, FACTS_BY_NAME[name].source),
        )
        for name in names
    )


def _shortfall(
    core: Core, facts: FactSet, book: Phrasebook, capacity: Capacity | None
) -> Finding | None:
    top = core.top
    if top is None or capacity is None or not capacity.shortfall:
        return None
    _, many = units(core.facts)
    return Finding(
        rule="ENGINE-CAPACITY-001",
        category="config",
        severity="warning",
        title=f"The purchase serves fewer {many} than wanted",
        evidence=capacity.summary.rstrip("."),
        rationale=(
            f"Each of the {counted(capacity.jobs_wanted, core.facts)} needs "
            f"{format_value(core.facts['workload.vram_need_gib'])} GiB of usable memory with "
            "its headroom, and no option that meets every requirement serves more than "
            f"{capacity.jobs_served} in this host: the chassis, the power, the budget or the "
            "memory per card stop it. A purchase that serves part of the demand is a "
            "shortfall, not a recommendation for all of it."
        ),
        action=(
            f"Plan {capacity.hosts_needed} hosts like this one, or raise what limits this "
            "one (see what would change the recommendation), or lower "
            "workload.concurrent_jobs to what one host serves."
        ),
        effect="stated beside the recommendation",
        kind="engine",
        facts=_facts(facts, book, "workload.concurrent_jobs", "platform.gpu_count_max"),
    )


def _keep(core: Core, facts: FactSet, book: Phrasebook) -> Finding | None:
    top = core.top
    if top is None or top.count != 0:
        return None
    need = number(core.facts, "workload.vram_need_gib")
    return Finding(
        rule="ENGINE-KEEP-001",
        category="config",
        severity="info",
        title="The cards already in the host meet the need: buy nothing",
        evidence=(
            f"{top.kept} × {top.sku.name}: {format_value(round(top.vram_per_job_gib, 2))} GiB "
            f"usable per job for a need of {format_value(need)} GiB, serving "
            f"{top.jobs_served} of "
            f"{counted(int(number(core.facts, 'workload.concurrent_jobs')), core.facts)}"
        ),
        rationale=(
            "They serve every wanted job with its memory headroom and pass every requirement "
            "the options were held to, so any card bought would add capacity the profile "
            "does not ask for. Preferences for another kind of card do not outweigh a "
            "purchase that is not needed."
        ),
        action=(
            "Keep the cards; fix what the evidence flags first, and advise again when the "
            "demand grows."
        ),
        effect="the recommendation buys nothing",
        kind="engine",
        facts=_facts(facts, book, "host.gpu_count", "host.gpu_model", "host.gpu_usable_gib"),
    )


def _not_weighed(core: Core, facts: FactSet, book: Phrasebook) -> Finding | None:
    count = core.facts.get("host.gpu_count")
    if not isinstance(count, (int, float)) or count < 1:
        return None
    if core.facts.get("host.gpu_catalog_sku") is not None:
        return None
    model = core.facts.get("host.gpu_model")
    if model:
        why = f"{model} is not in the catalog"
    elif (core.facts.get("host.gpu_models_distinct") or 0) >= 2:  # type: ignore[operator]
        why = "the host holds several models"
    else:
        why = "the evidence does not name the model (dmon, pmon and kernel logs do not)"
    return Finding(
        rule="ENGINE-EXISTING-001",
        category="config",
        severity="advice",
        title="The cards in the host could not be weighed for keeping",
        evidence=f"{format_value(count)} GPUs in the evidence; {why}",
        rationale=(
            "Keeping the cards, or adding cards beside them, is judged from the catalog "
            "entry of their model; without one the options are priced as if the cards go, "
            "which may recommend buying what the host already has."
        ),
        action=(
            "Attach nvidia-smi -q (or --query-gpu=name,memory.total,memory.reserved "
            "--format=csv) so the model is known, or add the model to the catalog with "
            "--catalog."
        ),
        effect="every option replaces the cards in the host",
        kind="engine",
        facts=_facts(facts, book, "host.gpu_count", "host.gpu_model", "host.gpu_models_distinct"),
    )


def engine_findings(
    core: Core,
    facts: FactSet,
    book: Phrasebook | None = None,
    capacity: Capacity | None = None,
) -> list[Finding]:
    """The engine's own findings; ``capacity`` is the top pick's
    (:func:`~gpuadvisor.decision.purchase.capacity_of`), worked out when not given."""
    book = Phrasebook() if book is None else book
    if capacity is None:
        capacity = capacity_of(core.top, core.facts)
    found = [
        _shortfall(core, facts, book, capacity),
        _keep(core, facts, book),
        _not_weighed(core, facts, book),
    ]
    return [f for f in found if f is not None]
