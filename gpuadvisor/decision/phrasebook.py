"""The phrasebook: a rule's finding phrased once for each distinct set of what it shows,
and each fact value made once for each distinct value and source, for the decisions a
process makes one after another (a batch, the web page).

Owned by a :class:`gpuadvisor.decision.build.Advisor` (never by a rule or a catalog),
bounded, and keyed on everything a phrased text shows: see :class:`Phrasebook`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import compress
from typing import ClassVar, Literal, NamedTuple

from gpuadvisor.decision.made import made
from gpuadvisor.decision.model import FactValue, Finding, FixFirst
from gpuadvisor.decision.words import SHARE_UNIT, format_measure
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.factspec import FACTS_BY_NAME
from gpuadvisor.engine.optionset import OptionSet
from gpuadvisor.engine.rules import PLACEHOLDER, Rule
from gpuadvisor.vocabulary import format_value


def fill(template: str, facts: Mapping[str, Value]) -> str:
    """A rule's text with each ``{fact.name}`` placeholder replaced by the fact's value
    (a share of readings as a percentage, never a bare number that reads as a count)."""
    return _filled(_split(template), facts)


def _split(template: str) -> tuple[str, ...]:
    """The template cut at its placeholders: text, fact name, text, ... text."""
    return tuple(PLACEHOLDER.split(template))


def _filled(parts: tuple[str, ...], facts: Mapping[str, Value]) -> str:
    if len(parts) == 1:
        return parts[0]
    out = [parts[0]]
    for index in range(1, len(parts), 2):
        name = parts[index]
        out += (_shown(name, facts.get(name)), parts[index + 1])
    return "".join(out)


def _shown(name: str, value: Value) -> str:
    spec = FACTS_BY_NAME.get(name)
    if spec is not None and spec.unit == SHARE_UNIT:
        return format_measure(value, SHARE_UNIT)
    return format_value(value)


def effect_text(rule: Rule) -> str:
    """What a fired preference rule does to the scores, in words."""
    parts = []
    effect = rule.data.effect
    for name, weight in [*effect.shape.items(), *effect.class_.items()]:
        parts.append(f"{'favours' if weight > 0 else 'counts against'} {name} ({weight:+d})")
    if effect.fix_first:
        parts.append("fix before buying")
    return "; ".join(parts) or "informational"


class _RuleWords(NamedTuple):
    """What one rule's findings are made of, read from the rule once."""

    #: Facts shown as the evidence, and facts its placeholders name.
    names: tuple[str, ...]
    placeholders: tuple[str, ...]
    #: The rationale and the action, cut at their placeholders (:func:`_split`).
    rationale: tuple[str, ...]
    action: tuple[str, ...]
    #: A fired preference rule's effect on the scores.
    effect: str


Kind = Literal["preference", "constraint"]


class Excluded:
    """The card models of one set of options, by name, each with the bits of its options
    (bit ``i``: option ``i``), and what a constraint that eliminated some of them says:
    ``excluded 12 of 40 options (A, B, C and 4 more)``. Made by
    :meth:`Phrasebook.excluded`, which keys it on every card, bit and name."""

    MAX_SENTENCES: ClassVar[int] = 1024

    __slots__ = ("_bits", "_names", "_sentences", "_total", "_unique")

    def __init__(self, options: OptionSet) -> None:
        sku_names = options.sku_names
        by_name = sorted([(sku_names[s], b) for s, b in options.sku_bits.items()])
        self._names = tuple(name for name, _ in by_name)
        self._bits = tuple(bits for _, bits in by_name)
        self._unique = len(set(self._names)) == len(self._names)
        self._total = len(options.options)
        self._sentences: dict[int, str] = {}

    def sentence(self, mask: int) -> str:
        """What eliminating the options of ``mask`` excluded, the models named in order."""
        found = self._sentences.get(mask)
        if found is None:
            hit = list(compress(self._names, map(mask.__and__, self._bits)))
            if not self._unique:  # two card models of one name: named once
                hit = list(dict.fromkeys(hit))
            more = f" and {len(hit) - 3} more" if len(hit) > 3 else ""
            if len(self._sentences) >= self.MAX_SENTENCES:
                self._sentences.clear()
            found = self._sentences[mask] = (
                f"excluded {mask.bit_count()} of {self._total} options ({', '.join(hit[:3])}{more})"
            )
        return found


class Phrasebook:
    """Findings and fact values already phrased for one rule base, for decisions made
    one after another.

    A fired rule's finding depends on the rule (fixed for the rule base this book was
    made for), on what a constraint's finding says it excluded (its effect text), and
    on the value *and the source* of each fact it shows, and the value of each fact a
    placeholder names; that is the key, in full. Two decisions whose evidence holds the
    same numbers from different files get different findings, each citing its own file.
    A :class:`FactValue` (and its line of evidence text) is kept under its name, value,
    unit and source; the card models a set of options holds (for the constraints'
    sentences), under every card's id, name and option bits (and, to find them again
    cheaply, under the identity of the set asking, which the entry holds).

    Every value in a key goes with its type, and a zero float with its sign: ``1``,
    ``1.0`` and ``True`` are equal in Python but read and serialise differently, as do
    ``0.0`` and ``-0.0``. Bounded; owned by a :class:`gpuadvisor.decision.build.Advisor`,
    never by a rule.
    """

    MAX_ENTRIES: ClassVar[int] = 4096

    MAX_OPTION_SETS: ClassVar[int] = 256

    __slots__ = ("_by_set", "_entries", "_excluded", "_facts", "_rules")

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], FixFirst | Finding] = {}
        self._excluded: dict[tuple[object, ...], Excluded] = {}
        #: The same, by the identity of the set asking (and the set itself).
        self._by_set: dict[int, tuple[OptionSet, Excluded]] = {}
        self._facts: dict[tuple[object, ...], tuple[FactValue, str]] = {}
        #: What each rule (by id) is phrased from.
        self._rules: dict[str, _RuleWords] = {}

    def fact(self, name: str, value: Value, unit: str, source: str) -> FactValue:
        """The fact value as a decision carries it, made once per distinct value."""
        return self._fact(name, value, unit, source)[0]

    def facts_of(self, rows: Iterable[tuple[str, Value, str, str]]) -> tuple[FactValue, ...]:
        """:meth:`fact` of each (name, value, unit, source), in order."""
        return tuple(self._fact(name, value, unit, source)[0] for name, value, unit, source in rows)

    def facts_held(
        self,
        names: tuple[str, ...],
        units: tuple[str, ...],
        defaults: tuple[str, ...],
        facts: FactSet,
    ) -> tuple[FactValue, ...]:
        """:meth:`fact` of each of ``names`` that ``facts`` holds a value of, in order,
        with its unit and its source (its default when ``facts`` names none)."""
        values, sources = facts.values, facts.sources
        found = []
        for name, unit, default in zip(names, units, defaults, strict=True):
            value = values.get(name)
            if value is not None:
                found.append(self._fact(name, value, unit, sources.get(name, default))[0])
        return tuple(found)

    def _fact(self, name: str, value: Value, unit: str, source: str) -> tuple[FactValue, str]:
        """The fact value and the evidence text that cites it."""
        key: tuple[object, ...] = (name, value.__class__, value, unit, source)
        if value == 0 and value.__class__ is float:  # 0.0 and -0.0 apart (see above)
            key += (value.hex(),)
        found = self._facts.get(key)
        if found is None:
            if len(self._facts) >= self.MAX_ENTRIES:
                self._facts.clear()
            fact = made(FactValue, {"name": name, "value": value, "unit": unit, "source": source})
            line = f"{fact.name} = {format_measure(fact.value, fact.unit)} ({fact.source})"
            found = self._facts[key] = (fact, line)
        return found

    def excluded(self, options: OptionSet) -> Excluded:
        """The card models of these options with the sentences made for them, kept under
        every card's id, name and option bits, and found again for the same set by its
        identity: the entry holds the set, so no other set can take its id while the
        entry lives."""
        seen = self._by_set.get(id(options))
        if seen is not None and seen[0] is options:
            return seen[1]
        cards = options.sku_bits
        names = tuple(map(options.sku_names.get, cards))
        key = (len(options.options), tuple(cards), tuple(cards.values()), names)
        found = self._excluded.get(key)
        if found is None:
            if len(self._excluded) >= self.MAX_OPTION_SETS:
                self._excluded.clear()
            found = self._excluded[key] = Excluded(options)
        if len(self._by_set) >= self.MAX_OPTION_SETS:
            self._by_set.clear()
        self._by_set[id(options)] = (options, found)
        return found

    def _words(self, rule: Rule) -> _RuleWords:
        found = self._rules.get(rule.id)
        if found is None:
            if len(self._rules) >= self.MAX_ENTRIES:
                self._rules.clear()
            data = rule.data
            found = self._rules[rule.id] = _RuleWords(
                rule.fact_names,
                rule.placeholders,
                _split(data.rationale),
                _split(data.action),
                effect_text(rule),
            )
        return found

    def phrase(
        self, rule: Rule, core: Core, facts: FactSet, effect: str | None = None
    ) -> FixFirst | Finding:
        """A fired preference rule's finding (or fix-first item); with ``effect``, an
        active constraint's finding that says what it excluded."""
        words = self._rules.get(rule.id) or self._words(rule)
        names = words.names
        held, sources = facts.values, facts.sources
        values = tuple([held.get(name) for name in names])
        if words.placeholders:
            core_facts = core.facts
            values += tuple([core_facts.get(name) for name in words.placeholders])
        key: tuple[object, ...] = (
            rule.id,
            effect,
            values,
            tuple([value.__class__ for value in values]),
            tuple([sources.get(name) for name in names]),
        )
        key += _signed_zeros(values)
        found = self._entries.get(key)
        if found is None:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            found = self._entries[key] = self._phrase(rule, words, core, facts, effect)
        return found

    def _phrase(
        self, rule: Rule, words: _RuleWords, core: Core, facts: FactSet, effect: str | None
    ) -> FixFirst | Finding:
        """A fired rule as a finding, or a fix-first rule as a fix-first item: its texts
        filled with the decision's facts, its evidence."""
        values, sources = facts.values, facts.sources
        shown = []
        lines = []
        for name in words.names:
            spec = FACTS_BY_NAME[name]
            fact, line = self._fact(
                name, values.get(name), spec.unit, sources.get(name, spec.source)
            )
            shown.append(fact)
            lines.append(line)
        evidence = "; ".join(lines)
        data = rule.data
        if effect is None and data.effect.fix_first:
            return made(
                FixFirst,
                {
                    "rule": rule.id,
                    "category": data.category,
                    "title": data.title,
                    "evidence": evidence,
                    "action": _filled(words.action, core.facts),
                    "rationale": _filled(words.rationale, core.facts),
                    "facts": tuple(shown),
                },
            )
        kind: Kind = "preference" if effect is None else "constraint"
        return made(
            Finding,
            {
                "rule": rule.id,
                "category": data.category,
                "severity": data.severity,
                "title": data.title,
                "evidence": evidence,
                "rationale": _filled(words.rationale, core.facts),
                "action": _filled(words.action, core.facts),
                "effect": words.effect if effect is None else effect,
                "kind": kind,
                "facts": tuple(shown),
            },
        )


def _signed_zeros(values: tuple[Value, ...]) -> tuple[tuple[str | None, ...], ...]:
    """What tells ``0.0`` from ``-0.0`` among these values (they are equal in Python and
    read alike, but are written apart): nothing when no value is a float zero (found by
    class first: ``0 in values`` would compare every string and None with 0)."""
    if not any(v.__class__ is float and v == 0 for v in values):
        return ()
    return (tuple(v.hex() if v.__class__ is float else None for v in values),)
