"""Findings: each fired rule's texts filled with the decision's facts and the evidence
behind them (with its source file), each constraint with what it excluded, and the
engine's own "nothing fits" finding."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import compress
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
    if "{" not in template:
        return template
    return PLACEHOLDER.sub(lambda m: _shown(m.group(1), facts.get(m.group(1))), template)


def _shown(name: str, value: Value) -> str:
    spec = FACTS_BY_NAME.get(name)
    if spec is not None and spec.unit == SHARE_UNIT:
        return format_measure(value, SHARE_UNIT)
    return format_value(value)


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


Kind = Literal["preference", "constraint"]


class Phrasebook:
    """Findings and fact values already phrased for one rule base, for decisions made
    one after another.

    A fired rule's finding depends on the rule (fixed for the rule base this book was
    made for), on what a constraint's finding says it excluded (its effect text), and
    on the value *and the source* of each fact it shows, and the value of each fact a
    placeholder names; that is the key, in full. Two decisions whose evidence holds the
    same numbers from different files get different findings, each citing its own file.
    A :class:`FactValue` is kept under its name, value, unit and source.

    Every value in a key goes with its type, and a float as its exact hex form: ``1``,
    ``1.0`` and ``True`` are equal in Python but read and serialise differently, as do
    ``0.0`` and ``-0.0``. Bounded; owned by a :class:`gpuadvisor.decision.build.Advisor`,
    never by a rule.
    """

    MAX_ENTRIES = 4096

    __slots__ = ("_entries", "_facts", "_names")

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], FixFirst | Finding] = {}
        self._facts: dict[tuple[object, ...], FactValue] = {}
        #: The facts each rule (by id) shows as evidence and names in placeholders.
        self._names: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def fact(self, name: str, value: Value, unit: str, source: str) -> FactValue:
        """The fact value as a decision carries it, made once per distinct value."""
        key = (
            name,
            value.__class__,
            value.hex() if value.__class__ is float else value,
            unit,
            source,
        )
        found = self._facts.get(key)
        if found is None:
            if len(self._facts) >= self.MAX_ENTRIES:
                self._facts.clear()
            found = self._facts[key] = FactValue(name=name, value=value, unit=unit, source=source)
        return found

    def _shown_names(self, rule: Rule) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = self._names.get(rule.id)
        if found is None:
            if len(self._names) >= self.MAX_ENTRIES:
                self._names.clear()
            found = self._names[rule.id] = (rule.fact_names, rule.placeholders)
        return found

    def phrase(
        self, rule: Rule, core: Core, facts: FactSet, effect: str | None = None
    ) -> FixFirst | Finding:
        """A fired preference rule's finding (or fix-first item); with ``effect``, an
        active constraint's finding that says what it excluded."""
        names, placeholders = self._shown_names(rule)
        values, sources, shown = facts.values, facts.sources, core.facts
        key: list[object] = [rule.id, effect]
        for name in names:  # each value with its type (see above), and its source
            value = values.get(name)
            hexed = value.hex() if value.__class__ is float else value
            key += (value.__class__, hexed, sources.get(name))
        for name in placeholders:
            value = shown.get(name)
            hexed = value.hex() if value.__class__ is float else value
            key += (value.__class__, hexed)
        frozen = tuple(key)
        found = self._entries.get(frozen)
        if found is None:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            found = self._entries[frozen] = _phrase(rule, names, core, facts, self, effect)
        return found


def _fact_values(names: tuple[str, ...], facts: FactSet, book: Phrasebook) -> tuple[FactValue, ...]:
    values, sources = facts.values, facts.sources
    found = []
    for name in names:
        spec = FACTS_BY_NAME[name]
        found.append(book.fact(name, values.get(name), spec.unit, sources.get(name, spec.source)))
    return tuple(found)


def _phrase(
    rule: Rule,
    names: tuple[str, ...],
    core: Core,
    facts: FactSet,
    book: Phrasebook,
    effect: str | None,
) -> FixFirst | Finding:
    """A fired rule as a finding, or a fix-first rule as a fix-first item: its texts
    filled with the decision's facts, its evidence."""
    values = _fact_values(names, facts, book)
    data = rule.data
    if effect is None and data.effect.fix_first:
        return FixFirst(
            rule=rule.id,
            category=data.category,
            title=data.title,
            evidence=_evidence_text(values),
            action=fill(data.action, core.facts),
            rationale=fill(data.rationale, core.facts),
            facts=values,
        )
    kind: Kind = "preference" if effect is None else "constraint"
    return Finding(
        rule=rule.id,
        category=data.category,
        severity=data.severity,
        title=data.title,
        evidence=_evidence_text(values),
        rationale=fill(data.rationale, core.facts),
        action=fill(data.action, core.facts),
        effect=_effect_text(rule) if effect is None else effect,
        kind=kind,
        facts=values,
    )


def _excluded(core: Core) -> list[tuple[Rule, str]]:
    """Each active constraint that excluded options, with the sentence saying which."""
    options = core.options
    masks = {verdict.rule_id: verdict.mask for verdict in core.verdicts}
    found: list[tuple[Rule, str]] = []
    names: list[str] = []
    bits: list[int] = []
    total = len(options.options)
    for rule in core.active_constraints:
        mask = masks.get(rule.id, 0)
        if not mask:
            continue
        if not names:  # the card models' names, sorted, each with its options' bits
            merged: dict[str, int] = {}
            for sku_id, sku_bits in options.sku_bits.items():
                name = options.sku_names[sku_id]
                merged[name] = merged.get(name, 0) | sku_bits
            for name in sorted(merged):
                names.append(name)
                bits.append(merged[name])
        hit = list(compress(names, map(mask.__and__, bits)))
        sample = ", ".join(hit[:3]) + (f" and {len(hit) - 3} more" if len(hit) > 3 else "")
        found.append((rule, f"excluded {mask.bit_count()} of {total} options ({sample})"))
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
    for rule, effect in _excluded(core):
        finding = book.phrase(rule, core, facts, effect)
        assert isinstance(finding, Finding)
        findings.append(finding)
    if not core.feasible:
        findings.append(_no_fit(core))
    findings.sort(key=lambda f: (_KINDS[f.kind], SEVERITY_ORDER[f.severity], f.category, f.rule))
    fixes.sort(key=lambda f: f.rule)
    return fixes, findings


def _no_fit(core: Core) -> Finding:
    counts = eliminations(core.verdicts, core.options.full)
    top = ", ".join(f"{rid} ({n} options)" for rid, n in counts.most_common(5))
    return Finding(
        rule="ENGINE-NOFIT-001",
        category="cost",
        severity="blocker",
        title="No card in the catalog meets every requirement together",
        evidence=f"every one of {len(core.options.options)} options was excluded; most often "
        f"by {top}",
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


#: The host facts a decision lists as measured, with their units.
_MEASURED = tuple((s.name, s.unit) for s in HOST_FACTS if s.name != "host.evidence_present")


def measured_facts(facts: FactSet, book: Phrasebook | None = None) -> tuple[FactValue, ...]:
    """Every host fact the evidence gave, with its source file."""
    book = Phrasebook() if book is None else book
    values, sources = facts.values, facts.sources
    found = []
    for name, unit in _MEASURED:
        value = values.get(name)
        if value is not None:
            found.append(book.fact(name, value, unit, sources.get(name, "evidence")))
    return tuple(found)
