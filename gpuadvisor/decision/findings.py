"""Findings: each fired rule's texts filled with the decision's facts and the evidence
behind them (with its source file), each constraint with what it excluded, and the
engine's own "nothing fits" finding."""

from __future__ import annotations

from gpuadvisor.decision.model import FactValue, Finding, FixFirst, Rejected
from gpuadvisor.decision.phrasebook import Excluded, Phrasebook, fill
from gpuadvisor.decision.seats import options_shortfall, shortfall_sentence
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.factspec import HOST_FACTS
from gpuadvisor.engine.memo import eliminations, most_first
from gpuadvisor.engine.rules import Rule
from gpuadvisor.vocabulary import SEVERITY_ORDER

__all__ = ["Phrasebook", "fill", "findings_of", "measured_facts", "not_followed"]


def _excluded(core: Core, book: Phrasebook) -> list[tuple[Rule, str]]:
    """Each active constraint that excluded options, with the sentence saying which."""
    masks = {verdict.rule_id: verdict.mask for verdict in core.verdicts}
    found: list[tuple[Rule, str]] = []
    excluded: Excluded | None = None
    for rule in core.active_constraints:
        mask = masks.get(rule.id, 0)
        if mask:
            if excluded is None:
                excluded = book.excluded(core.options)
            found.append((rule, excluded.sentence(mask)))
    return found


_KINDS = {"engine": 0, "preference": 1, "constraint": 2}


def findings_of(
    core: Core, facts: FactSet, book: Phrasebook
) -> tuple[list[FixFirst], list[Finding]]:
    """Fix-first items and findings, in the order reports list them."""
    fixes: list[FixFirst] = []
    findings: list[Finding] = []
    for rule in core.fired:
        phrased = book.phrase(rule, core, facts)
        if isinstance(phrased, FixFirst):
            fixes.append(phrased)
        else:
            findings.append(phrased)
    for rule, effect in _excluded(core, book):
        finding = book.phrase(rule, core, facts, effect)
        assert isinstance(finding, Finding)
        findings.append(finding)
    if not core.feasible:
        findings.append(_no_fit(core))
    findings.sort(key=lambda f: (_KINDS[f.kind], SEVERITY_ORDER[f.severity], f.category, f.rule))
    fixes.sort(key=lambda f: f.rule)
    return fixes, findings


def _no_fit_rationale(core: Core) -> str:
    """Why nothing fits: the displays one host cannot drive when that is why, else the
    requirements together."""
    short = options_shortfall(core)
    if short is not None:
        return (
            f"The displays decide it: {shortfall_sentence(short)} gpuadvisor never relaxes a "
            "requirement on its own."
        )
    return (
        "Each requirement alone may be met, but no single option meets all of "
        "them at once. gpuadvisor never relaxes a requirement on its own."
    )


def _no_fit(core: Core) -> Finding:
    most = most_first(eliminations(core.verdicts, core.options.full), 5)
    top = ", ".join(f"{rid} ({n} options)" for rid, n in most)
    return Finding(
        rule="ENGINE-NOFIT-001",
        category="cost",
        severity="blocker",
        title="No card in the catalog meets every requirement together",
        evidence=f"every one of {len(core.options.options)} options was excluded; most often "
        f"by {top}",
        rationale=_no_fit_rationale(core),
        action=(
            "Relax the requirement named most often above (budget, chassis, power "
            "or memory need), or add an approved SKU through --catalog."
        ),
        effect="no pick can be made",
        kind="engine",
    )


#: The host facts a decision lists as measured, their units, and the source of one the
#: fact set names no source for.
_MEASURED = tuple(s for s in HOST_FACTS if s.name != "host.evidence_present")
_MEASURED_NAMES = tuple(s.name for s in _MEASURED)
_MEASURED_UNITS = tuple(s.unit for s in _MEASURED)
_MEASURED_SOURCES = ("evidence",) * len(_MEASURED)


def measured_facts(facts: FactSet, book: Phrasebook | None = None) -> tuple[FactValue, ...]:
    """Every host fact the evidence gave, with its source file."""
    book = Phrasebook() if book is None else book
    return book.facts_held(_MEASURED_NAMES, _MEASURED_UNITS, _MEASURED_SOURCES, facts)


#: Why every preference goes unfollowed when the recommendation buys nothing.
KEPT_REASON = "nothing is bought: the cards already in the host meet the need"


def _lost(rule: Rule, core: Core, why: dict[str, str]) -> str | None:
    """Why a fired preference rule's advice was not followed, or None when the pick
    follows it: on the axis it speaks to (shape or class), the chosen value is one it
    counts against, or not one it favours. The reason is the rejection's own words for
    the first value it favours (else the first it does not count against)."""
    if core.top is not None and core.top.count == 0:
        return KEPT_REASON if rule.data.effect.shape or rule.data.effect.class_ else None
    effect = rule.data.effect
    axes: tuple[tuple[dict[str, int], str], ...] = (
        ({str(k): w for k, w in effect.shape.items()}, core.chosen.shape),
        ({str(k): w for k, w in effect.class_.items()}, core.chosen.class_),
    )
    for weights, chosen in axes:
        if not weights:
            continue
        favoured = [n for n, w in weights.items() if w > 0]
        if weights.get(chosen, 0) > 0 or (not favoured and weights.get(chosen, 0) == 0):
            continue  # it favours the chosen value, or only counts against others
        wanted = favoured or [n for n in why if weights.get(n, 0) >= 0]
        for name in wanted:
            if name in why:
                return f"{name}: {why[name]}"
        if wanted:
            return f"{wanted[0]}: no option of this kind was made for this workload"
    return None


def not_followed(
    findings: list[Finding], core: Core, rejected: tuple[Rejected, ...]
) -> list[Finding]:
    """The findings, each fired preference rule whose advice the pick does not follow
    saying so, with the reason that decided (the rejection's own words), in its effect
    and before its action: a rule's advice ("buy consumer cards") must not read as the
    recommendation when the pick is another kind, or when nothing is bought."""
    why = {r.option: r.reason for r in rejected}
    rules = {rule.id: rule for rule in core.fired}
    out = []
    for finding in findings:
        rule = rules.get(finding.rule) if finding.kind == "preference" else None
        reason = _lost(rule, core, why) if rule is not None else None
        if reason is not None:
            # Str for str fields: nothing to validate again (the rest was).
            advice = finding.action[:1].lower() + finding.action[1:]
            finding = finding.model_copy(
                update={
                    "effect": f"{finding.effect}; not followed ({reason})",
                    "action": f"Not followed here ({reason}). The advice, where it "
                    f"applies: {advice}",
                }
            )
        out.append(finding)
    return out
