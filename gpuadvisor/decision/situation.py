"""Findings the decision procedure itself makes about the purchase (kind ``engine``):
a purchase that serves fewer jobs than wanted, cards already in the host that meet the
need, and cards in the host that could not be weighed for keeping."""

from __future__ import annotations

from gpuadvisor.decision.findings import Phrasebook
from gpuadvisor.decision.model import Capacity, FactValue, Finding
from gpuadvisor.decision.seats import capacity_of, counted, host_noun, units
from gpuadvisor.engine.capacity import number
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.factspec import FACTS_BY_NAME
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.ranking import cards_wanted, dp_link, short_of_cards
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
    hosts = capacity.hosts
    where = "this host" if hosts == 1 else f"these {hosts} {host_noun(core.facts, hosts)}"
    like = "like this one" if hosts == 1 else "like these"
    limits = "this one" if hosts == 1 else "each"
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
            f"{capacity.jobs_served} in {where}: the chassis, the power, the budget or the "
            "memory per card stop it. A purchase that serves part of the demand is a "
            "shortfall, not a recommendation for all of it."
        ),
        action=(
            f"Plan {capacity.hosts_needed} {host_noun(core.facts, capacity.hosts_needed)} "
            f"{like}, or raise what limits {limits} (see what would change the "
            "recommendation), or lower workload.concurrent_jobs to what "
            f"{'one host serves' if capacity.hosts == 1 else 'they serve'}."
        ),
        effect="stated beside the recommendation",
        kind="engine",
        facts=_facts(
            facts,
            book,
            "workload.concurrent_jobs",
            "platform.gpu_count_max",
            *(("platform.hosts",) if hosts > 1 else ()),
        ),
    )


def _fewer_cards(
    core: Core, facts: FactSet, book: Phrasebook, policy: Policy | None
) -> Finding | None:
    """A data-parallel job built for more cards than the purchase gives it: the speed it
    gives up, from the policy's share of ideal scaling over the link those cards had."""
    top = core.top
    values = core.facts
    if top is None or policy is None or not short_of_cards(top, values):
        return None
    built_for = cards_wanted(values)
    sync_heavy = values.get("workload.sync_heavy") is True
    full = Option(
        "multi-gpu-data-parallel",
        top.sku,
        built_for,
        top.vram_per_job_gib,
        1,
        cards_per_job=built_for,
    )
    link = dp_link(full, values, policy)
    kept_full = policy.scaling_kept(link, sync_heavy)
    speed_full = built_for * kept_full
    cards = top.cards_per_job
    speed = 1.0
    if cards >= 2:
        speed = cards * policy.scaling_kept(dp_link(top, values, policy), sync_heavy)
    ratio = speed_full / speed
    on = "1 card" if cards == 1 else f"{cards} cards"
    heavy = "a sync-heavy job" if sync_heavy else "a job"
    return Finding(
        rule="ENGINE-CAPACITY-002",
        category="sync",
        severity="warning",
        title="The job runs on fewer cards than it is built for",
        evidence=(
            f"workload.gpus_per_job = {built_for}; the purchase runs the job on "
            f"{cards} × {top.sku.name}"
        ),
        rationale=(
            f"The job splits each batch over {built_for} cards. {built_for} cards of this "
            f"model would run it at about {format_value(round(speed_full, 1))} times one "
            f"card's speed ({heavy} over {LINK_WORDS[link]} keeps about "
            f"{kept_full:.0%} of ideal scaling, rules/_policy.toml [data_parallel]); on "
            f"{on} it runs at about 1/{format_value(round(ratio, 1))} of that, and keeps its "
            "batch size only by accumulating gradients over "
            f"{format_value(round(built_for / cards, 1))} times as many steps. The options "
            f"that give it {built_for} cards were excluded or ranked below this one (see "
            "the options rejected)."
        ),
        action=(
            f"Plan for each epoch to take about {format_value(round(ratio, 1))} times as "
            f"long as on {built_for} cards, or raise what limits the purchase (see what "
            "would change the recommendation)."
        ),
        effect="stated beside the recommendation",
        kind="engine",
        facts=_facts(
            facts, book, "workload.gpus_per_job", "workload.sync_heavy", "platform.gpu_count_max"
        ),
    )


#: The link a data-parallel job's all-reduce crosses, in words.
LINK_WORDS: dict[str, str] = {
    "nvlink": "NVLink",
    "pcie-p2p": "PCIe peer-to-peer",
    "pcie-host": "PCIe through host memory",
    "cross-socket": "a link across CPU sockets",
}


def _keep(core: Core, facts: FactSet, book: Phrasebook) -> Finding | None:
    top = core.top
    if top is None or top.count != 0:
        return None
    need = number(core.facts, "workload.vram_need_gib")
    built_for = cards_wanted(core.facts)
    if short_of_cards(top, core.facts):
        title = "The cards already in the host are kept, on fewer than the job is built for"
        rationale = (
            f"They run the job on {top.cards_per_job} of the {built_for} cards it is built "
            "for (the finding above says what that costs) and pass every requirement the "
            "options were held to; every option that gives it more cards was excluded or "
            "ranked below keeping them (see the options rejected and what would change)."
        )
        action = (
            "Keep the cards for now; raise what stops the purchase of the cards the job "
            "is built for, and advise again."
        )
    else:
        title = "The cards already in the host meet the need: buy nothing"
        rationale = (
            "They serve every wanted job with its memory headroom and pass every "
            "requirement the options were held to, so any card bought would add capacity "
            "the profile does not ask for. Preferences for another kind of card do not "
            "outweigh a purchase that is not needed."
        )
        action = (
            "Keep the cards; fix what the evidence flags first, and advise again when the "
            "demand grows."
        )
    return Finding(
        rule="ENGINE-KEEP-001",
        category="config",
        severity="info",
        title=title,
        evidence=(
            f"{top.kept} × {top.sku.name}: {format_value(round(top.vram_per_job_gib, 2))} GiB "
            f"usable per job for a need of {format_value(need)} GiB, serving "
            f"{top.jobs_served} of "
            f"{counted(int(number(core.facts, 'workload.concurrent_jobs')), core.facts)}"
        ),
        rationale=rationale,
        action=action,
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
    policy: Policy | None = None,
) -> list[Finding]:
    """The engine's own findings; ``capacity`` is the top pick's
    (:func:`~gpuadvisor.decision.purchase.capacity_of`), worked out when not given;
    without ``policy`` a job given fewer cards than it is built for is not stated."""
    book = Phrasebook() if book is None else book
    if capacity is None:
        capacity = capacity_of(core.top, core.facts)
    found = [
        _shortfall(core, facts, book, capacity),
        _fewer_cards(core, facts, book, policy),
        _keep(core, facts, book),
        _not_weighed(core, facts, book),
    ]
    return [f for f in found if f is not None]
