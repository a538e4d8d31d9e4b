"""The phrasing's shortcuts give what the long way gives: elimination counts worked out
from the verdicts equal the engine's own, and every decision reads back from its dump
(``Decision.model_validate(decision.model_dump())``) equal and serialised the same, for
every bundled example and for the benchmark's generated profiles."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.run import EVIDENCE, random_profile
from gpuadvisor.decision.build import Advisor, decide
from gpuadvisor.decision.model import Decision
from gpuadvisor.decision.rejections import eliminated_counts
from gpuadvisor.engine.core import Core, Engine, PairResult
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.evidence import load_evidence
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.pipeline import advise

from .conftest import DECISION_DATE, REPO
from .test_examples import EXAMPLES, evidence_for

GENERATED = 300


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def _generated() -> Iterator[tuple[Core, Decision, Decision | None]]:
    """The benchmark's profiles with its host evidence (every fifth without), the host
    values varied as it varies them (and zeros of each type and sign), decided one after
    another by one Advisor; every seventh decided again by a fresh one."""
    catalog, rules = load_catalog(), load_rules()
    host = derive_host_facts(load_evidence([REPO / p for p in EVIDENCE]))
    advisor = Advisor(Engine(catalog, rules))
    rng = random.Random(20261130)
    for n in range(GENERATED):
        values = dict(host.values)
        values["host.gpu_util_mean_pct"] = round(rng.uniform(5, 99), 1)
        values["host.iowait_pct"] = rng.choice([0, 0.0, -0.0, round(rng.uniform(0, 30), 1)])
        values["host.disk_util_max_pct"] = round(rng.uniform(0, 100), 1)
        profile = Profile.model_validate(random_profile(rng))
        with_host = n % 5 != 0
        facts = build_facts(
            profile, catalog, values if with_host else None, host.sources if with_host else None
        )
        core = advisor.engine.run(facts.values)
        warm = decide(profile, advisor, facts, sensitivity=False, as_of=DECISION_DATE)
        fresh = None
        if n % 7 == 0:
            fresh = decide(
                profile, Engine(catalog, rules), facts, sensitivity=False, as_of=DECISION_DATE
            )
        yield core, warm, fresh


def _reads_back(decision: Decision) -> None:
    again = Decision.model_validate(decision.model_dump())
    assert again == decision
    assert again.to_json() == decision.to_json()
    assert again.model_dump_json() == decision.model_dump_json()


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_decision_reads_back_from_its_dump(name: str) -> None:
    decision = advise(
        Path("examples") / f"{name}.toml", evidence=evidence_for(name), sensitivity=False
    )
    _reads_back(decision)


def test_generated_decisions_read_back_and_count_eliminations_as_the_engine() -> None:
    pairs = 0
    for core, decision, fresh in _generated():
        _reads_back(decision)
        if fresh is not None:  # a warm phrasebook phrases as a cold one
            assert fresh.to_json() == decision.to_json()
        for pair in core.pairs:
            counts = eliminated_counts(pair)
            assert list(counts.items()) == _counted_option_by_option(pair)
            pairs += bool(counts)
    assert pairs > GENERATED  # most decisions have pairs with eliminated options


def _counted_option_by_option(pair: PairResult) -> list[tuple[str, int]]:
    """The elimination counts worked out the slow way: the pair's options one by one,
    lowest first, each rule that eliminated it in rule order, a rule listed where first
    met."""
    counts: dict[str, int] = {}
    index = 0
    while pair.within >> index:
        if pair.within >> index & 1:
            for rule_id, mask in pair.verdicts:
                if mask >> index & 1:
                    counts[rule_id] = counts.get(rule_id, 0) + 1
        index += 1
    return list(counts.items())
