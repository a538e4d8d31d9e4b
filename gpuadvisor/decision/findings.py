"""Findings: each fired rule's texts filled with the decision's facts and the evidence
behind them (with its source file), each constraint with what it excluded, and the
engine's own "nothing fits" finding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from gpuadvisor.decision.model import FactValue, Finding, FixFirst
from gpuadvisor.decision.words import SHARE_UNIT, format_measure
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.factspec import FACTS_BY_NAME, HOST_FACTS
from gpuadvisor.engine.memo import eliminations
from gpuadvisor.engine.rules import PLACEHOLDER, Rule
from gpuadvisor.vocabulary import SEVERITY_ORDER, format_value


def fill(template: str, facts: Mapping[str, Value]) -> str:
    """A rule's text with each ``{fact.name}`` placeholder replaced by the fact's value
    (a share of readings as a percentage, never a bare number that reads as a count)."""
    return PLACEHOLDER.sub(lambda m: _shown(m.group(1), facts.get(m.group(1))), template)


def _shown(name: str, value: Value) -> str:
    spec = FACTS_BY_NAME.get(name)
    if spec is not None and spec.unit == SHARE_UNIT:
        return format_measure(value, SHARE_UNIT)
    return format_value(value)


def _fact_values(rule: Rule, facts: FactSet) -> tuple[FactValue, ...]:
    values = []
    for name in rule.fact_names:
        spec = FACTS_BY_NAME[name]
        values.append(
            FactValue(
                name=name,
                value=facts.values.get(name),
                unit=spec.unit,
                source=facts.sources.get(name, spec.source),
            )
        )
    return tuple(values)


def _evidence_text(values: tuple[FactValue, ...]) -> str:
    return "; ".join(
        f"{fact.name} = {format_measure(fact.value, fact.unit)} ({fact.source})" for fact in values
    )


def _effect_text(rule: Rule) -> str:
    parts = []
    effect = rule.data.effect
    for name, weight in [*effect.shape.items(), *effect.class_.items()]:
        parts.append(f"{'favours' if weight > 0 else 'counts against'} {name} ({weight:+d})")
    if effect.fix_first:
        parts.append("fix before buying")
    return "; ".join(parts) or "informational"


def _rule_finding(
    rule: Rule,
    core: Core,
    values: tuple[FactValue, ...],
    effect: str,
    kind: Literal["preference", "constraint"],
) -> Finding:
    """A rule's finding: its texts filled with the decision's facts, its evidence."""
    return Finding(
        rule=rule.id,
        category=rule.data.category,
        severity=rule.data.severity,
        title=rule.data.title,
        evidence=_evidence_text(values),
        rationale=fill(rule.data.rationale, core.facts),
        action=fill(rule.data.action, core.facts),
        effect=effect,
        kind=kind,
        facts=values,
    )


class Phrasebook:
    """Findings already phrased for one rule base, for decisions made one after another.

    A fired rule's finding depends on the rule (fixed for the rule base this book was
    made for) and on the value *and the source* of each fact it shows or names in a
    placeholder; that is the key, in full. Two decisions whose evidence holds the same
    numbers from different files get different findings, each citing its own file.
    Bounded; owned by a :class:`gpuadvisor.decision.build.Advisor`, never by a rule.
    """

    MAX_ENTRIES = 4096

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], FixFirst | Finding] = {}

    def phrase(self, rule: Rule, core: Core, facts: FactSet) -> FixFirst | Finding:
        values, sources = facts.values, facts.sources
        key = (
            rule.id,
            *((n, values.get(n), sources.get(n)) for n in (*rule.fact_names, *rule.placeholders)),
        )
        found = self._entries.get(key)
        if found is None:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            found = self._entries[key] = _phrase(rule, core, facts)
        return found


def _phrase(rule: Rule, core: Core, facts: FactSet) -> FixFirst | Finding:
    """A fired preference rule as a finding, or as a fix-first item."""
    values = _fact_values(rule, facts)
    if rule.data.effect.fix_first:
        return FixFirst(
            rule=rule.id,
            category=rule.data.category,
            title=rule.data.title,
            evidence=_evidence_text(values),
            action=fill(rule.data.action, core.facts),
            rationale=fill(rule.data.rationale, core.facts),
            facts=values,
        )
    return _rule_finding(rule, core, values, _effect_text(rule), "preference")


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
    options = core.options.options
    total = len(options)
    masks = {verdict.rule_id: verdict.mask for verdict in core.verdicts}
    for rule in core.active_constraints:
        mask = masks.get(rule.id, 0)
        if not mask:
            continue
        names = sorted(
            {
                core.options.sku_names[sku_id]
                for sku_id, bits in core.options.sku_bits.items()
                if bits & mask
            }
        )
        sample = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        values = _fact_values(rule, facts)
        effect = f"excluded {mask.bit_count()} of {total} options ({sample})"
        findings.append(_rule_finding(rule, core, values, effect, "constraint"))
    if not core.feasible:
        counts = eliminations(core.verdicts, core.options.full)
        top = ", ".join(f"{rid} ({n} options)" for rid, n in counts.most_common(5))
        findings.append(
            Finding(
                rule="ENGINE-NOFIT-001",
                category="cost",
                severity="blocker",
                title="No card in the catalog meets every requirement together",
                evidence=f"every one of {total} options was excluded; most often by {top}",
                rationale=(
                    "Each requirement alone may be met, but no single option meets all of "
                    "them at once. gpuadvisor never relaxes a requirement on its own."
                ),
                action=(
                    "Relax the requirement named most often above (budget, chassis, power "
                    "or memory need), or add an approved SKU through --catalog."
                ),
                effect="no pick can be made",
                kind="engine",
            )
        )
    kinds = {"engine": 0, "preference": 1, "constraint": 2}
    findings.sort(key=lambda f: (kinds[f.kind], SEVERITY_ORDER[f.severity], f.category, f.rule))
    fixes.sort(key=lambda f: f.rule)
    return fixes, findings


def measured_facts(facts: FactSet) -> tuple[FactValue, ...]:
    """Every host fact the evidence gave, with its source file."""
    values = []
    for spec in HOST_FACTS:
        value = facts.values.get(spec.name)
        if value is None or spec.name == "host.evidence_present":
            continue
        values.append(
            FactValue(
                name=spec.name,
                value=value,
                unit=spec.unit,
                source=facts.sources.get(spec.name, "evidence"),
            )
        )
    return tuple(values)
