"""The engine's conclusion phrased as ``gpuadvisor/decision/v1``: findings with their
evidence, picks and why they rank where they do, the headline, rejected options,
alternatives and what would change the answer.

Every sentence of a decision is written here (and in :mod:`gpuadvisor.decision.words`);
the engine only computes. Output models are validated as they are built.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from gpuadvisor import __version__
from gpuadvisor.decision.dates import report_date
from gpuadvisor.decision.enough import enough_of
from gpuadvisor.decision.findings import Phrasebook, findings_of, measured_facts, not_followed
from gpuadvisor.decision.headline import confidence as confidence_of
from gpuadvisor.decision.headline import headline, number_or_none
from gpuadvisor.decision.made import made
from gpuadvisor.decision.market import market_assumptions
from gpuadvisor.decision.mentions import licence_finding
from gpuadvisor.decision.model import (
    Decision,
    EvidenceConflict,
    EvidenceRef,
    Inputs,
    Lever,
    MeasuredGpu,
    Meta,
    Pick,
    Provenance,
    Recommendation,
    Sensitivity,
    Sizing,
)
from gpuadvisor.decision.order import ranking_text
from gpuadvisor.decision.purchase import (
    PickContext,
    existing_of,
    make_pick,
    shown_options,
)
from gpuadvisor.decision.rejections import Eliminations, alternatives, rejections
from gpuadvisor.decision.seats import (
    capacity_of,
    display_assumptions,
    host_power_assumptions,
)
from gpuadvisor.decision.situation import engine_findings
from gpuadvisor.engine.core import Core, Engine, Outcome
from gpuadvisor.engine.costs import ASSUMPTIONS
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.sensitivity import Flip, scan
from gpuadvisor.engine.suitability import meets_target
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.vocabulary import format_value


def _picks(shown: list[tuple[int, Option]], ctx: PickContext) -> tuple[Pick, ...]:
    """The shown options of a pair as picks, each why from its rank terms (``ctx``: the
    pair's)."""
    return tuple(make_pick(option, rank, ctx) for rank, option in shown)


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
    ranking = ranking_text(objective, core.facts, engine.rules.policy)
    top = core.top
    capacity = capacity_of(top, core.facts)
    book = advisor.book
    fixes, findings = findings_of(core, facts, book)
    first = sum(1 for f in findings if f.kind == "engine")  # findings_of lists them first
    more = engine_findings(core, facts, book, capacity, engine.rules.policy)
    if (licence := licence_finding(core)) is not None:
        more.append(licence)
    eliminated = Eliminations()
    rejected = tuple(rejections(core, eliminated, engine.rules.policy))
    findings = not_followed([*findings[:first], *more, *findings[first:]], core, rejected)
    confidence, near_tie = confidence_of(core, engine.rules.policy)
    shown = shown_options(core.chosen.ranked)
    ctx = PickContext(
        core.facts,
        engine.rules.policy,
        list(core.chosen.ranked),
        facts.sizing,
        as_of,
    )
    picks = _picks(shown, ctx)
    enough = enough_of(core, ctx, picks[0]) if picks else None
    flips = scan(engine, core) if sensitivity else ()
    levers = _levers(engine, core, flips, profile, facts) if sensitivity else ()
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
                    "headline": headline(
                        core,
                        tuple(fixes),
                        capacity,
                        engine.rules.policy,
                    ),
                    "confidence": confidence,
                    "near_tie": near_tie,
                    "ranking": ranking,
                    "action": top.action if top is not None else _action_without_pick(core),
                    "capacity": capacity,
                    "meets_target": (
                        None if top is None else meets_target(top, core.facts, engine.rules.policy)
                    ),
                    "existing": existing_of(measured_gpus, core),
                },
            ),
            "fix_first": tuple(fixes),
            "findings": tuple(findings),
            "picks": picks,
            "rejected": rejected,
            "alternatives": tuple(alternatives(core, ctx, eliminated)),
            "sensitivity": tuple(sensitivity_entry(flip) for flip in flips),
            "levers": levers,
            "scores": {
                "shape": {str(k): v for k, v in core.shape_scores.items()},
                "class": {str(k): v for k, v in core.class_scores.items()},
            },
            "assumptions": ASSUMPTIONS
            + unstated_platform(profile)
            + host_power_assumptions(core.facts, engine.rules.policy)
            + display_assumptions([option for _, option in shown], core.facts)
            + market_assumptions(
                (option for _, option in shown),
                core.active_constraints,
                core.facts,
                profile.requirements.isv_apps,
                engine.catalog,
            ),
            "measured": measured_facts(facts, book),
            "gpus": measured_gpus,
            "vram_need_gib": number_or_none(facts.values.get("workload.vram_need_gib")),
            "lifecycle_years": number_or_none(facts.values.get("requirements.lifecycle_years")),
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


def _levers(
    engine: Engine, core: Core, flips: Sequence[Flip], profile: Profile, facts: FactSet
) -> tuple[Lever, ...]:
    """The levers in the buyer's terms; the model is re-sized only when the profile's
    memory need is derived from it (a stated need wins)."""
    from gpuadvisor.decision.levers import levers_of

    workload = profile.workload
    derived = facts.sizing if workload.vram_need_gib is None else None
    hours = workload.job_hours if "job_hours" in workload.model_fields_set else None
    return levers_of(engine, core, flips, derived, hours)


def _action_without_pick(core: Core) -> str:
    count = core.facts.get("host.gpu_count")
    return "replace" if isinstance(count, (int, float)) and count >= 1 else "new"


def _sizing(profile: Profile, facts: FactSet) -> Sizing:
    """The decision's ``sizing``; the estimator is loaded only for a described model."""
    if facts.sizing is None:
        return made(
            Sizing,
            {
                "vram_need_gib": number_or_none(facts.values.get("workload.vram_need_gib")),
                "source": "stated",
                "breakdown": {},
            },
        )
    from gpuadvisor.decision.sizing import sizing_of

    return sizing_of(profile, facts)
