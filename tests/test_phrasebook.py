"""The phrasebook an Advisor holds (``decision/phrasebook.py``): what it keeps must be
told apart by everything it shows, so a warm book never changes a decision."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.decision.build import Advisor, decide
from gpuadvisor.decision.model import Finding
from gpuadvisor.decision.phrasebook import Excluded, Phrasebook, _shown, fill
from gpuadvisor.engine.core import Core, Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.engine.rules import PLACEHOLDER, RuleBase, load_rules
from gpuadvisor.evidence import load_evidence
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.inputs.profile import Profile, parse_profile

from .conftest import DECISION_DATE, REPO

EVIDENCE = [
    REPO / "examples" / "evidence" / "input-bound-host" / "nvidia-smi-dmon.txt",
    REPO / "examples" / "evidence" / "input-bound-host" / "iostat-x.txt",
]

PROFILE = """
schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 30
concurrent_jobs = 2
[requirements]
ecc = "required"
[platform]
chassis = "rack-2u"
gpu_count_max = 4
[budget]
max_usd = 20000
"""


@pytest.fixture(scope="module")
def bundled() -> tuple[Catalog, RuleBase]:
    return load_catalog(), load_rules()


def _core(bundled: tuple[Catalog, RuleBase], sources: dict[str, str] | None = None) -> Any:
    catalog, rules = bundled
    profile = parse_profile(PROFILE)
    facts = build_facts(profile, catalog)
    if sources:
        facts = dataclasses.replace(facts, sources={**facts.sources, **sources})
    return Engine(catalog, rules).run(facts.values), facts


def _constraint(core: Core) -> Any:
    masks = {v.rule_id: v.mask for v in core.verdicts}
    return next(r for r in core.active_constraints if masks.get(r.id) and r.fact_names)


def test_a_constraint_finding_cites_the_source_of_its_own_decision(
    bundled: tuple[Catalog, RuleBase],
) -> None:
    """Same numbers, another file: the kept constraint finding is not handed over."""
    core, facts = _core(bundled)
    rule = _constraint(core)
    name = rule.fact_names[0]
    other_core, other = _core(bundled, {name: "tuesday.txt"})
    book = Phrasebook()
    effect = "excluded 1 of 2 options (A)"
    first = book.phrase(rule, core, facts, effect)
    second = book.phrase(rule, other_core, other, effect)
    assert first is book.phrase(rule, core, facts, effect)  # kept
    assert isinstance(second, Finding) and second.kind == "constraint"
    assert second is not first
    assert "tuesday.txt" in second.evidence and "tuesday.txt" not in first.evidence
    assert {f.source for f in second.facts if f.name == name} == {"tuesday.txt"}


def test_a_constraint_finding_is_kept_apart_by_what_it_excluded(
    bundled: tuple[Catalog, RuleBase],
) -> None:
    core, facts = _core(bundled)
    rule = _constraint(core)
    book = Phrasebook()
    one = book.phrase(rule, core, facts, "excluded 1 of 2 options (A)")
    two = book.phrase(rule, core, facts, "excluded 2 of 2 options (A, B)")
    assert isinstance(one, Finding) and isinstance(two, Finding)
    assert (one.effect, two.effect) == (
        "excluded 1 of 2 options (A)",
        "excluded 2 of 2 options (A, B)",
    )
    preference = book.phrase(core.fired[0], core, facts)
    assert isinstance(preference, Finding) and preference.kind == "preference"


def test_a_finding_is_kept_apart_by_the_value_a_placeholder_names(
    bundled: tuple[Catalog, RuleBase],
) -> None:
    """A placeholder reads the engine's facts (derived ones included): another value
    there is another text, even when the shown facts are the same."""
    core, facts = _core(bundled)
    rules = [*core.fired, *core.active_constraints]
    rule = next(r for r in rules if r.placeholders)
    name = rule.placeholders[0]
    changed = dataclasses.replace(core, facts={**core.facts, name: 12345.5})
    book = Phrasebook()
    effect = None if rule.require is None else "excluded 1 of 2 options (A)"
    before = book.phrase(rule, core, facts, effect)
    after = book.phrase(rule, changed, facts, effect)
    assert after is not before
    assert after.rationale == fill(rule.data.rationale, changed.facts)
    assert after.action == fill(rule.data.action, changed.facts)
    assert (after.rationale, after.action) != (before.rationale, before.action)


def test_a_finding_is_kept_apart_by_the_type_of_a_value_it_shows(
    bundled: tuple[Catalog, RuleBase],
) -> None:
    """``2`` and ``2.0`` (or ``0.0`` and ``-0.0``) are equal in Python but written apart."""
    core, facts = _core(bundled)
    rule = _constraint(core)
    name = rule.fact_names[0]
    book = Phrasebook()
    effect = "excluded 1 of 2 options (A)"
    found = []
    for value in (2, 2.0, True, 0.0, -0.0):
        shown = dataclasses.replace(facts, values={**facts.values, name: value})
        finding = book.phrase(rule, core, shown, effect)
        found.append(next(f for f in finding.facts if f.name == name).model_dump_json())
    assert len(set(found)) == 5


@pytest.mark.parametrize(
    ("one", "other"),
    [(1, 1.0), (1, True), (0, False), (0.0, -0.0), (1.5, "1.5"), (None, "unknown")],
)
def test_fact_values_are_kept_apart_by_type_and_sign(one: object, other: object) -> None:
    """``1 == 1.0 == True`` and ``0.0 == -0.0`` in Python, but they are written apart."""
    book = Phrasebook()
    a = book.fact("host.gpu_count", one, "", "a.txt")  # type: ignore[arg-type]
    b = book.fact("host.gpu_count", other, "", "a.txt")  # type: ignore[arg-type]
    assert a is not b
    assert a.model_dump_json() != b.model_dump_json()
    assert a is book.fact("host.gpu_count", one, "", "a.txt")  # type: ignore[arg-type]


def test_fact_values_are_kept_apart_by_source_and_unit() -> None:
    book = Phrasebook()
    base = book.fact("host.iowait_pct", 12.5, "%", "monday.txt")
    assert book.fact("host.iowait_pct", 12.5, "%", "tuesday.txt").source == "tuesday.txt"
    assert book.fact("host.iowait_pct", 12.5, "", "monday.txt").unit == ""
    assert book.fact("host.iowait_pct", 12.5, "%", "monday.txt") is base


def test_the_book_is_bounded(bundled: tuple[Catalog, RuleBase], monkeypatch: Any) -> None:
    monkeypatch.setattr(Phrasebook, "MAX_ENTRIES", 8)
    book = Phrasebook()
    for n in range(50):
        book.fact("host.gpu_count", n, "", "a.txt")
    assert len(book._facts) <= 8
    core, facts = _core(bundled)
    rule = _constraint(core)
    for n in range(50):
        book.phrase(rule, core, facts, f"excluded {n} of 50 options (A)")
    assert len(book._entries) <= 8


class _Options:
    """What :class:`Excluded` reads of an option set."""

    def __init__(self, names: dict[str, str], bits: dict[str, int], total: int) -> None:
        self.sku_names = names
        self.sku_bits = bits
        self.options = [None] * total


def test_excluded_sentences_are_kept_apart_by_card_names_and_bits() -> None:
    """Two option sets with the same bits but other card models (another catalog, or
    another order) never share a sentence."""
    book = Phrasebook()
    one = _Options({"a": "Card A", "b": "Card B"}, {"a": 0b0011, "b": 0b1100}, 4)
    renamed = _Options({"a": "Card Z", "b": "Card B"}, {"a": 0b0011, "b": 0b1100}, 4)
    moved = _Options({"a": "Card A", "b": "Card B"}, {"a": 0b1100, "b": 0b0011}, 4)
    bigger = _Options({"a": "Card A", "b": "Card B"}, {"a": 0b0011, "b": 0b1100}, 5)
    sentence = book.excluded(one).sentence  # type: ignore[arg-type]
    assert sentence(0b0001) == "excluded 1 of 4 options (Card A)"
    assert sentence(0b0110) == "excluded 2 of 4 options (Card A, Card B)"
    assert book.excluded(renamed).sentence(0b0001) == "excluded 1 of 4 options (Card Z)"  # type: ignore[arg-type]
    assert book.excluded(moved).sentence(0b0001) == "excluded 1 of 4 options (Card B)"  # type: ignore[arg-type]
    assert book.excluded(bigger).sentence(0b0001) == "excluded 1 of 5 options (Card A)"  # type: ignore[arg-type]
    assert book.excluded(one) is book.excluded(  # type: ignore[arg-type]
        _Options({"a": "Card A", "b": "Card B"}, {"a": 0b0011, "b": 0b1100}, 4)  # type: ignore[arg-type]
    )


def test_excluded_names_each_model_once_and_counts_the_rest() -> None:
    names = {f"s{i}": f"Card {chr(70 - i)}" for i in range(5)}  # Card F .. Card B
    names["twin"] = "Card B"  # another SKU of the same name
    bits = {sku: 1 << i for i, sku in enumerate(names)}
    excluded = Excluded(_Options(names, bits, len(bits)))  # type: ignore[arg-type]
    assert (
        excluded.sentence((1 << len(bits)) - 1)
        == "excluded 6 of 6 options (Card B, Card C, Card D and 2 more)"
    )


def test_fill_matches_the_placeholder_substitution(bundled: tuple[Catalog, RuleBase]) -> None:
    """``fill`` (cut once at the placeholders) writes what a substitution would."""
    core, _ = _core(bundled)
    _, rules = bundled
    for rule in rules.rules:
        for text in (rule.data.rationale, rule.data.action, "{a.b}{c.d} x {e.f}", "", "{x}"):
            expected = PLACEHOLDER.sub(
                lambda m: _shown(m.group(1), core.facts.get(m.group(1))), text
            )
            assert fill(text, core.facts) == expected


def _random_profile(rng: random.Random) -> Profile:
    return Profile.model_validate(
        {
            "schema": "gpuadvisor/profile/v1",
            "workload": {
                "kind": rng.choice(["training", "inference", "vdi", "cad-cae", "rendering"]),
                "objective": rng.choice(["latency", "throughput", "correctness"]),
                "vram_need_gib": rng.choice([8, 16.0, 24, 40.5, 80]),
                "concurrent_jobs": rng.choice([1, 2, 4, 8]),
                "parallelism": rng.choice(["none", "data-parallel", "model-parallel"]),
            },
            "requirements": {
                "ecc": rng.choice(["required", "preferred", "no"]),
                "certified_drivers": rng.random() < 0.2,
                "vgpu": rng.random() < 0.1,
            },
            "platform": {
                "chassis": rng.choice(["tower", "rack-2u", "rack-4u"]),
                "gpu_count_max": rng.choice([1, 2, 4, 8]),
            },
            "budget": {"max_usd": rng.choice([5000.0, 30000.0, 100000.0])},
        }
    )


def test_a_warm_advisor_decides_as_a_fresh_one_on_generated_profiles(
    bundled: tuple[Catalog, RuleBase], tmp_path: Path
) -> None:
    """Generated profiles, with the same evidence under two file names, decided by one
    shared Advisor (its book warm with the earlier ones) and each by a fresh one."""
    catalog, rules = bundled
    host = derive_host_facts(load_evidence(EVIDENCE))
    renamed = {k: tuple(f"renamed-{Path(f).name}" for f in v) for k, v in host.sources.items()}
    shared = Advisor(Engine(catalog, rules))
    rng = random.Random(17)
    for n in range(60):
        profile = _random_profile(rng)
        sources = (host.sources, renamed, None)[n % 3]
        values = dict(host.values) if sources is not None else None
        if values is not None:
            values["host.iowait_pct"] = rng.choice([0.0, 4.5, 25.0])
        facts = build_facts(profile, catalog, values, sources)
        warm = decide(profile, shared, facts, as_of=DECISION_DATE)
        fresh = decide(profile, Engine(catalog, rules), facts, as_of=DECISION_DATE)
        assert warm.to_json() == fresh.to_json()


def test_excluded_is_found_again_by_the_set_and_never_for_another_set() -> None:
    """The identity shortcut finds the same set again without reading it; another set
    is keyed by its own cards (the entry holds its set, so no other set can take its
    address while the entry lives)."""
    book = Phrasebook()
    one = _Options({"a": "Card A"}, {"a": 0b01}, 2)
    first = book.excluded(one)  # type: ignore[arg-type]
    assert book.excluded(one) is first  # type: ignore[arg-type]
    one.sku_names = {"a": "Card Q"}  # the entry was found by identity, not re-read
    assert book.excluded(one).sentence(0b01) == "excluded 1 of 2 options (Card A)"  # type: ignore[arg-type]
    other = _Options({"a": "Card B"}, {"a": 0b01}, 2)
    assert book.excluded(other).sentence(0b01) == "excluded 1 of 2 options (Card B)"  # type: ignore[arg-type]
