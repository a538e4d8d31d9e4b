"""The engine's conclusion phrased as ``gpuadvisor/decision/v1``: findings with their
evidence, picks and why they rank where they do, the headline, rejected options,
alternatives and what would change the answer.

Every sentence of a decision is written here (and in :mod:`gpuadvisor.decision.words`);
the engine only computes. Output models are validated as they are built.
"""

from __future__ import annotations

import datetime as dt

from gpuadvisor import __version__
from gpuadvisor.decision.dates import report_date
from gpuadvisor.decision.enough import enough_of
from gpuadvisor.decision.findings import Phrasebook, findings_of, measured_facts, not_followed
from gpuadvisor.decision.made import made
from gpuadvisor.decision.market import market_assumptions
from gpuadvisor.decision.model import (
    Capacity,
    Decision,
    EvidenceConflict,
    EvidenceRef,
    FixFirst,
    Inputs,
    MeasuredGpu,
    Meta,
    Pick,
    Provenance,
    Recommendation,
    Sensitivity,
    Sizing,
)
from gpuadvisor.decision.purchase import (
    PickContext,
    existing_of,
    make_pick,
    ranking_text,
    shape_phrase,
    shown_options,
)
from gpuadvisor.decision.rejections import Eliminations, alternatives, rejections
from gpuadvisor.decision.seats import (
    capacity_of,
    counted,
    host_power_assumptions,
    kept_where,
    price_words,
    shortfall_words,
)
from gpuadvisor.decision.situation import engine_findings
from gpuadvisor.decision.words import memory_words
from gpuadvisor.engine.core import Core, Engine, Outcome
from gpuadvisor.engine.costs import ASSUMPTIONS
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.ranking import cards_wanted, short_of_cards
from gpuadvisor.engine.sensitivity import Flip, scan
from gpuadvisor.engine.wholeneed import within_budget
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.vocabulary import format_value


def _picks(shown: list[tuple[int, Option]], ctx: PickContext) -> tuple[Pick, ...]:
    """The shown options of a pair as picks, each why from its rank terms (``ctx``: the
    pair's)."""
    return tuple(make_pick(option, rank, ctx) for rank, option in shown)


def _lower_first(text: str) -> str:
    """Lower-case the first word to continue a sentence, unless it is an acronym."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first.isupper():
        return text
    return text[:1].lower() + text[1:]


def _reason(core: Core) -> str:
    """The strongest fired rule behind the chosen shape or class."""
    best: tuple[int, str] | None = None
    for rule in core.fired:
        effect = rule.data.effect
        weight = max(
            effect.shape.get(core.chosen.shape, 0), effect.class_.get(core.chosen.class_, 0)
        )
        if weight > 0 and (best is None or weight > best[0]):
            best = (weight, rule.data.title)
    return (
        _lower_first(best[1].rstrip(".")) if best else "it meets every requirement at the best rank"
    )


def _headline(core: Core, fix_first: tuple[FixFirst, ...], capacity: Capacity | None) -> str:
    top = core.top
    facts = core.facts
    if top is None:
        return (
            "No card in the catalog meets every requirement; see the findings for which "
            "requirement to relax."
        )
    if top.count == 0:
        wanted = _number_or_none(facts["workload.concurrent_jobs"]) or 1.0
        need = _number_or_none(facts["workload.vram_need_gib"]) or 0.0
        headroom = format_value(round(top.vram_per_job_gib - need, 2))
        text = (
            f"Buy nothing: the {top.kept} × {top.sku.name} already in {kept_where(top, facts)} "
            f"{'serves' if top.kept == 1 else 'serve'} {top.jobs_served} of "
            f"{counted(int(wanted), facts)} with {headroom} GiB of memory headroom per job "
            f"and {'meets' if top.kept == 1 else 'meet'} every requirement."
        )
        if short_of_cards(top, facts):  # kept, but fewer cards than the job wants
            built_for = cards_wanted(facts)
            text = (
                f"Buy nothing yet: the {top.kept} × {top.sku.name} already in "
                f"{kept_where(top, facts)} run "
                f"the job on {top.cards_per_job} of the {built_for} cards it is built for, "
                f"with {headroom} GiB of memory headroom per job; the purchases that give it "
                "more cards were excluded or ranked below keeping them."
            )
    else:
        each = " each" if top.count * top.hosts > 1 else ""
        verb = "Add" if top.action == "add" else "Buy"
        if top.action == "replace":
            verb = "Replace the cards in the host with"
        text = (
            f"{verb} {shape_phrase(top, facts)} "
            f"({memory_words(top.sku.vram_gib, top.sku.gpus_per_board)}{each}, "
            f"{top.sku.segment} class, {price_words(top)}): {_reason(core)}."
        )
    if capacity is not None and capacity.shortfall:
        text += shortfall_words(capacity, top, facts)
    if fix_first:
        first = _lower_first(fix_first[0].title.rstrip("."))
        more = f" and {len(fix_first) - 1} more" if len(fix_first) > 1 else ""
        text = f"Fix first: {first}{more}. After that: {text[0].lower()}{text[1:]}"
    return text


def _confidence(core: Core) -> tuple[str, str | None]:
    level, near_tie = _margin_confidence(core)
    level = _whole_need_cap(core, level)
    top = core.top
    if level == "high" and top is not None and top.count > 0:
        if top.total_price_usd is None:
            return "medium", near_tie  # priced on quote: the budget was not checked
        if top.sku.status in ("discontinued", "eol"):
            return "medium", near_tie  # sold from remaining stock, at a price not known today
    return level, near_tie


def _margin_confidence(core: Core) -> tuple[str, str | None]:
    if not core.feasible:
        return "low", None
    if core.runner_up is None:
        return "high", None
    top, runner_top = core.top, core.runner_up.ranked[0]
    if (
        top is not None
        and within_budget(top, core.facts)
        and not within_budget(runner_top, core.facts)
    ):
        return "high", None  # the budget for the whole need decided it, not the score
    if top is not None and (
        runner_top.jobs_served < top.jobs_served or (top.count == 0 < runner_top.count)
    ):
        return "high", None  # capacity decided it, not the score
    if top is not None and runner_top.total_price_usd is None is not top.total_price_usd:
        return "medium", None  # the runner-up's price is not known: it may be the better buy
    if top is not None and runner_top.action == "replace" != top.action:
        return "medium", None  # keeping the host's cards decided it, not the score
    if (
        top is not None
        and short_of_cards(runner_top, core.facts)
        and not short_of_cards(top, core.facts)
    ):
        return "medium", None  # giving the job its cards decided it, not the score
    margin = core.chosen.score - core.runner_up.score
    runner = f"{core.runner_up.shape} / {core.runner_up.class_}"
    if margin >= 4:
        return "high", None
    if margin >= 2:
        return "medium", None
    return "low", f"{runner} scored {core.runner_up.score:+d} against {core.chosen.score:+d}"


def _whole_need_cap(core: Core, level: str) -> str:
    """At most medium for a pick whose cards for every host needed cost more than the
    budget while another kind of purchase serves the whole need within it."""
    top, facts = core.top, core.facts
    if top is None or level != "high" or within_budget(top, facts):
        return level
    if any(p.ranked and within_budget(p.ranked[0], facts) for p in core.pairs):
        return "medium"
    return level


def describe_outcome(outcome: Outcome) -> str:
    """``shape / class: N × card``, or that nothing fits."""
    top = outcome.top
    if top is None:
        return "no card meets every requirement"
    if top.count == 0:
        return f"buy nothing, keep the {top.kept} × {top.sku.name} in the host"
    kept = ""
    if top.kept_sku is not None:
        kept = f" beside the {top.kept} × {top.kept_sku.name} kept"
    elif top.action == "replace":
        kept = ", replacing the cards in the host"
    each = f" in each of {top.hosts} hosts" if top.hosts > 1 else ""
    return f"{outcome.shape} / {outcome.class_}: {top.count} × {top.sku.name}{each}{kept}"


def sensitivity_entry(flip: Flip) -> Sensitivity:
    """One what-would-change entry of the decision."""
    return made(
        Sensitivity,
        {
            "input": flip.input,
            "current": flip.current,
            "flips_at": flip.flips_at,
            "to": describe_outcome(flip.outcome),
            "direction": flip.direction,
        },
    )


def _number_or_none(value: Value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


class Advisor:
    """What a process that makes many decisions holds (a batch, the web page): the
    engine, with its memo, and the phrasebook (findings, fact values, what constraints
    excluded). Every cache a decision uses is owned here, and lives exactly as long as
    this object (a pick context lives for one decision)."""

    __slots__ = ("book", "engine")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.book = Phrasebook()


def unstated_platform(profile: Profile) -> tuple[str, ...]:
    """The assumption a profile without a chassis rests on (``ask``'s "unknown", or a
    file without one): the platform defaults that applied instead, named."""
    platform = profile.platform
    if "chassis" in platform.model_fields_set:
        return ()
    assumed = ", ".join(
        f"{name} = {format_value(getattr(platform, name))}"
        for name in type(platform).model_fields
        if name not in platform.model_fields_set
    )
    return (
        "The chassis was not stated (not known yet), so the profile's defaults for the "
        f"platform were assumed: {assumed}. Check the picks against the real box, or "
        "state [platform] and run again.",
    )


def decide(
    profile: Profile,
    engine: Engine | Advisor,
    facts: FactSet,
    *,
    profile_sha256: str = "",
    profile_file: str = "",
    evidence: tuple[EvidenceRef, ...] = (),
    measured_gpus: tuple[MeasuredGpu, ...] = (),
    sensitivity: bool = True,
    evidence_conflicts: tuple[EvidenceConflict, ...] = (),
    as_of: dt.date | None = None,
) -> Decision:
    """The decision/v1 document for these facts: the engine's conclusion, phrased.

    Given an :class:`Engine` alone, nothing phrased is kept for later decisions.
    ``as_of`` is the decision's date, which prices' ages are counted to and the report
    carries (default: ``SOURCE_DATE_EPOCH``'s day when set, else today).
    """
    if as_of is None:
        as_of = dt.date.fromisoformat(report_date())
    advisor = engine if isinstance(engine, Advisor) else Advisor(engine)
    engine = advisor.engine
    core = engine.run(facts.values)
    objective = str(facts.values["workload.objective"])
    ranking = ranking_text(objective)
    top = core.top
    capacity = capacity_of(top, core.facts)
    book = advisor.book
    fixes, findings = findings_of(core, facts, book)
    first = sum(1 for f in findings if f.kind == "engine")  # findings_of lists them first
    more = engine_findings(core, facts, book, capacity, engine.rules.policy)
    eliminated = Eliminations()
    rejected = tuple(rejections(core, eliminated))
    findings = not_followed([*findings[:first], *more, *findings[first:]], core, rejected)
    confidence, near_tie = _confidence(core)
    shown = shown_options(core.chosen.ranked)
    ctx = PickContext(
        core.facts, engine.rules.policy, list(core.chosen.ranked), facts.sizing, as_of
    )
    picks = _picks(shown, ctx)
    enough = enough_of(core, ctx, picks[0]) if picks else None
    flips = scan(engine, core) if sensitivity else ()
    return made(
        Decision,
        {
            "meta": made(
                Meta,
                {
                    "title": profile.meta.title,
                    "requester": profile.meta.requester,
                    "notes": profile.meta.notes,
                    "isv_apps": profile.requirements.isv_apps,
                },
            ),
            "recommendation": made(
                Recommendation,
                {
                    "shape": core.chosen.shape,
                    "class_": core.chosen.class_,
                    "gpu_count": top.count if top else 0,
                    "headline": _headline(core, tuple(fixes), capacity),
                    "confidence": confidence,
                    "near_tie": near_tie,
                    "ranking": ranking,
                    "action": top.action if top is not None else _action_without_pick(core),
                    "capacity": capacity,
                    "existing": existing_of(measured_gpus, core),
                },
            ),
            "fix_first": tuple(fixes),
            "findings": tuple(findings),
            "picks": picks,
            "rejected": rejected,
            "alternatives": tuple(alternatives(core, ctx, eliminated)),
            "sensitivity": tuple(sensitivity_entry(flip) for flip in flips),
            "scores": {
                "shape": {str(k): v for k, v in core.shape_scores.items()},
                "class": {str(k): v for k, v in core.class_scores.items()},
            },
            "assumptions": ASSUMPTIONS
            + unstated_platform(profile)
            + host_power_assumptions(core.facts, engine.rules.policy)
            + market_assumptions(
                (option for _, option in shown),
                core.active_constraints,
                core.facts,
                profile.requirements.isv_apps,
                engine.catalog,
            ),
            "measured": measured_facts(facts, book),
            "gpus": measured_gpus,
            "vram_need_gib": _number_or_none(facts.values.get("workload.vram_need_gib")),
            "lifecycle_years": _number_or_none(facts.values.get("requirements.lifecycle_years")),
            "inputs": made(
                Inputs,
                {
                    "profile_sha256": profile_sha256,
                    "profile_file": profile_file,
                    "evidence": evidence,
                },
            ),
            "provenance": made(
                Provenance,
                {
                    "gpuadvisor": __version__,
                    "catalog": engine.catalog.version,
                    "rules": engine.rules.version,
                    "generated_at": as_of.isoformat(),
                },
            ),
            "enough": enough,
            "evidence_conflicts": evidence_conflicts,
            "sizing": _sizing(profile, facts),
        },
    )


def _action_without_pick(core: Core) -> str:
    count = core.facts.get("host.gpu_count")
    return "replace" if isinstance(count, (int, float)) and count >= 1 else "new"


def _sizing(profile: Profile, facts: FactSet) -> Sizing:
    """The decision's ``sizing``; the estimator is loaded only for a described model."""
    if facts.sizing is None:
        return made(
            Sizing,
            {
                "vram_need_gib": _number_or_none(facts.values.get("workload.vram_need_gib")),
                "source": "stated",
                "breakdown": {},
            },
        )
    from gpuadvisor.decision.sizing import sizing_of

    return sizing_of(profile, facts)
