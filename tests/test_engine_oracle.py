"""The memoised engine against an oracle that remembers nothing.

:class:`gpuadvisor.engine.core.Engine` keeps option sets, constraint verdicts and best
picks across decisions. A memo keyed on less than a verdict depends on would hand one
decision another's answer. The oracle below recomputes everything from the rules and the
catalog for every call (no memo, no masks, no shared options), so any key that drops a
fact makes the two disagree. One engine per catalog is kept for the whole test run, so
the memo is as warm as in a long-running process.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.costs import lifecycle_cost_usd
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import build_facts, derive_facts, sku_facts
from gpuadvisor.engine.options import OPTION_SHAPES, generate_options
from gpuadvisor.engine.ranking import performance, rank_options
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.engine.suitability import meets_target, stale
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.inputs.profile import Profile, parse_profile
from gpuadvisor.vocabulary import CLASSES
from tests.test_properties import _TRIAL_CHANGES, CATALOGS, RULES, SETTINGS, profiles

ENGINES = {name: Engine(catalog, RULES) for name, catalog in CATALOGS.items()}

#: One-fact changes: those of the property tests, and facts only the ranking reads (a
#: best-pick memo keyed without them would keep the first ranking it saw).
CHANGES = st.one_of(
    _TRIAL_CHANGES,
    st.tuples(st.just("budget.electricity_usd_per_kwh"), st.sampled_from([0.0, 0.6, 3.0])),
    st.tuples(st.just("requirements.lifecycle_years"), st.sampled_from([1, 10])),
    st.tuples(
        st.just("workload.objective"), st.sampled_from(["latency", "throughput", "correctness"])
    ),
    # The hosts the purchase equips, and budgets around what the whole need costs.
    st.tuples(st.just("platform.hosts"), st.sampled_from([1, 2, 3, 5])),
    st.tuples(st.just("budget.max_usd"), st.sampled_from([3000.0, 12000.0, 45000.0])),
)


def _within_whole_budget(option: Any, facts: dict[str, Value]) -> bool:
    """Whether the cards of every host the option needs to serve every wanted job cost
    at most the budget (worked out here, not by gpuadvisor.engine.wholeneed)."""
    wanted = int(facts["workload.concurrent_jobs"])  # type: ignore[arg-type]
    if option.jobs_served >= wanted:
        return True
    price = option.sku.price_usd
    if price is None:
        return False
    # Each further job takes this purchase's cards per job, rounded up at the end.
    cards_per_job = option.cards / option.jobs_per_host
    further = math.ceil((wanted - option.jobs_served) * cards_per_job - 1e-9)
    cards = option.count * option.hosts + further
    return price * cards <= float(facts["budget.max_usd"]) + 1e-9  # type: ignore[arg-type]


def _with_outclassing(
    candidates: list[tuple[tuple[float, ...], str, str, Any]],
    facts: dict[str, Value],
    policy: Any,
) -> list[tuple[tuple[float, ...], str, str, Any]]:
    """The order with the outclassed flag after the shape's score: a professional or
    data-center pick ranks after one of the other of these classes, in the same shape,
    that stands as well before the scores, has every card's throughput figure and the
    slowest card's bandwidth at least as high, ECC where it has ECC, and costs over its
    life less than this one's cost divided by 1 + the cost band."""
    listed = ("professional", "datacenter")
    band = policy.ranking.cost_band

    def speed(o: Any) -> float:
        kept = performance(o.kept_sku, facts) * o.kept if o.kept_sku else 0.0
        return (performance(o.sku, facts) * o.count + kept) * o.hosts

    def beaten(order: tuple[float, ...], shape: str, gpu_class: str, top: Any) -> bool:
        cost = lifecycle_cost_usd(top, facts) if top is not None else None
        if cost is None or gpu_class not in listed:
            return False
        for other_order, other_shape, other_class, other in candidates:
            other_cost = lifecycle_cost_usd(other, facts) if other is not None else None
            if (
                other_cost is not None
                and other_shape == shape
                and other_class in listed
                and other_class != gpu_class
                and other_order[1:9] <= order[1:9]
                and speed(other) >= speed(top) - 1e-9
                and other.bandwidth_gbs >= top.bandwidth_gbs
                and (all(s.ecc for s in other.skus) or not all(s.ecc for s in top.skus))
                and cost > other_cost * (1 + band) + 1e-6
            ):
                return True
        return False

    return [
        (
            (*order[:10], 1.0 if beaten(order, shape, cls, top) else 0.0, *order[10:]),
            shape,
            cls,
            top,
        )
        for order, shape, cls, top in candidates
    ]


def oracle(
    facts: dict[str, Value], catalog: Catalog, rules: RuleBase
) -> tuple[str, str, str | None, int, int]:
    """(shape, class, first pick's SKU, cards bought, cards kept), from first principles:
    the policy's derived facts worked out afresh, every option judged on every card it
    runs on, pairs ordered by the latency target met, then the whole need within the
    budget over every host it takes, jobs served, then buying nothing, then a current card
    before a stale one, then a priced pick, then a data-parallel job given its cards,
    then keeping the host's cards, then score."""
    policy = rules.policy
    facts = {**facts, **derive_facts(facts, policy, catalog)}
    shape_score = dict.fromkeys(OPTION_SHAPES, 0)
    class_score = dict.fromkeys(CLASSES, 0)
    for rule in rules.rules:
        if rule.require is None and rule.when.holds(facts):
            for shape, weight in rule.data.effect.shape.items():
                if shape in shape_score:
                    shape_score[shape] += weight
            for gpu_class, weight in rule.data.effect.class_.items():
                class_score[gpu_class] += weight
    active = [r for r in rules.rules if r.require is not None and r.when.holds(facts)]
    alive = [
        option
        for option in generate_options(catalog.skus, facts, policy, catalog.accessories)
        if all(
            rule.require is not None and rule.require.holds((layer, sku_facts(sku), facts))
            for rule in active
            for layer, sku in option.judged()
        )
    ]
    candidates: list[tuple[tuple[float, ...], str, str, Any]] = []
    for shape in OPTION_SHAPES:
        for gpu_class in CLASSES:
            mine = [o for o in alive if o.shape == shape and o.sku.segment == gpu_class]
            top = rank_options(mine, facts, policy)[0] if mine else None
            cost = lifecycle_cost_usd(top, facts) if top is not None else None
            # A pick on quote (no price) loses the cost tie, as no pick does.
            cost = float("inf") if cost is None else cost
            # A data-parallel job on fewer cards than it is built for (kept ones
            # included) is not "buying nothing", and ranks after one given its cards.
            short = (
                top is not None
                and facts["workload.parallelism"] == "data-parallel"
                and top.cards_per_job < facts["workload.gpus_per_job"]
            )
            order = (
                top is None,
                # A stated latency target: a pick that misses it after one that meets it.
                top is not None and meets_target(top, facts, policy) is False,
                # The whole need within the budget, over every host it takes, first.
                0 if top is not None and _within_whole_budget(top, facts) else 1,
                -(top.jobs_served if top else 0),
                0 if top is not None and top.count == 0 and not short else 1,
                # A card of unknown availability, old for a long service, after a current one.
                top is not None and stale(top, facts, policy),
                # A pick on quote ranks after a priced one that serves as many.
                1 if top is None or top.total_price_usd is None else 0,
                1 if top is None or short else 0,
                # Keeping the host's cards before throwing them away for as many jobs.
                1 if top is None or top.action == "replace" else 0,
                # The shape's score first: a class preference never outweighs the shape.
                -shape_score[shape],
                -(shape_score[shape] + class_score[gpu_class]),
                OPTION_SHAPES.index(shape),
                cost,
                CLASSES.index(gpu_class),
            )
            candidates.append((order, shape, gpu_class, top))
    candidates = _with_outclassing(candidates, facts, policy)
    _, shape, gpu_class, top = min(candidates, key=lambda c: c[0])
    if top is None:
        return ("", "", None, 0, 0)  # no card: one answer, whichever pair is first
    return (shape, gpu_class, top.sku.id, top.count, top.kept)


@SETTINGS
@given(profiles, st.lists(CHANGES, min_size=1, max_size=6), st.sampled_from(sorted(CATALOGS)))
def test_memoised_engine_agrees_with_the_memo_free_oracle(
    data: dict[str, Any], changes: list[tuple[str, Any]], which: str
) -> None:
    """Full runs and outcome-only re-runs (what the what-would-change scan uses) both
    equal the oracle, on a profile and on each of several one-fact changes of it."""
    catalog, engine = CATALOGS[which], ENGINES[which]
    profile = Profile.model_validate(data)
    facts = dict(build_facts(profile, catalog).values)
    for name, value in [(None, None), *changes]:
        if name is not None:
            facts[name] = value
        expected = oracle(facts, catalog, RULES)
        assert engine.outcome(facts).key() == expected, (name, value)
        assert engine.run(facts).outcome() == expected, (name, value)
        # The conditions the engine remembers, rule by rule, are those worked out afresh.
        prepared = engine.prepare(facts)
        afresh = (
            tuple(rule for rule in RULES.preferences if rule.when.holds(prepared)),
            tuple(rule for rule in RULES.constraints if rule.when.holds(prepared)),
        )
        assert engine.conditions(prepared) == afresh, (name, value)


def test_engines_share_nothing() -> None:
    """Two engines on one catalog keep separate memos; nothing is cached on the catalog
    or on a rule."""
    catalog = CATALOGS["bundled"]
    first, second = Engine(catalog, RULES), Engine(catalog, RULES)
    assert first.memo is not second.memo
    assert not any(name.startswith("scratch") for name in vars(catalog))
    for rule in RULES.rules:
        assert "phrased" not in vars(rule)


_EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.toml"))
_SEQUENCE: tuple[tuple[str, Value], ...] = (
    ("budget.electricity_usd_per_kwh", 3.0),
    ("workload.objective", "latency"),
    ("workload.objective", "correctness"),
    ("requirements.lifecycle_years", 10),
    ("budget.max_usd", 4000.0),
    ("platform.gpu_count_max", 4),
    ("workload.vram_need_gib", 40.0),
)


@pytest.mark.parametrize("example", _EXAMPLES, ids=[p.stem for p in _EXAMPLES])
def test_bundled_examples_and_their_changes_agree_with_the_oracle(example: Path) -> None:
    """Each worked example, then a fixed sequence of one-fact changes applied in turn,
    through the shared engine (its memo warm from every earlier example)."""
    catalog, engine = CATALOGS["bundled"], ENGINES["bundled"]
    facts = dict(build_facts(parse_profile(example.read_text()), catalog).values)
    for name, value in [("", None), *_SEQUENCE]:
        if name:
            facts[name] = value
        expected = oracle(facts, catalog, RULES)
        assert engine.outcome(facts).key() == expected, (name, value)
        assert engine.run(facts).outcome() == expected, (name, value)


#: Cards already in the host: how many, and which model (one the catalog does not know
#: included), as the evidence's host facts give them.
_HOST_CARDS = st.one_of(
    st.none(),
    st.tuples(
        st.integers(min_value=1, max_value=6),
        st.sampled_from(
            [
                "NVIDIA GeForce RTX 4090",
                "NVIDIA RTX A5000",
                "NVIDIA L40S",
                "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
                "NVIDIA TITAN V",
            ]
        ),
    ),
)
_EXTRA = st.fixed_dictionaries(
    {
        "workload.gpus_per_job": st.sampled_from([1, 2, 4]),
        "workload.sharded_data_parallel": st.booleans(),
        "platform.gpu_slots_total": st.sampled_from([0, 4, 8]),
        "platform.circuit_w": st.sampled_from([0.0, 1800.0]),
        "platform.power_limit_ok": st.booleans(),
        "platform.hosts": st.sampled_from([1, 1, 2, 4]),
    }
)


@SETTINGS
@given(profiles, _HOST_CARDS, _EXTRA, st.lists(CHANGES, min_size=1, max_size=4))
def test_the_engine_agrees_with_the_oracle_beside_the_cards_in_the_host(
    data: dict[str, Any],
    cards: tuple[int, str] | None,
    extra: dict[str, Value],
    changes: list[tuple[str, Any]],
) -> None:
    """Keep and add options (and the physical sums over kept and bought cards) held to
    the memo-free oracle, on the bundled catalog."""
    catalog, engine = CATALOGS["bundled"], ENGINES["bundled"]
    host: dict[str, Value] | None = None
    if cards is not None:
        host = {
            "host.evidence_present": True,
            "host.gpu_count": cards[0],
            "host.gpu_model": cards[1],
            "host.gpu_models_distinct": 1,
            "host.gpu_memory_total_min_mib": 24564.0,
            "host.gpu_memory_reserved_max_mib": 450.0,
        }
    profile = Profile.model_validate(data)
    facts = {**build_facts(profile, catalog, host).values, **extra}
    for name, value in [(None, None), *changes]:
        if name is not None:
            facts[name] = value
        expected = oracle(facts, catalog, RULES)
        assert engine.outcome(facts).key() == expected, (name, value)
        assert engine.run(facts).outcome() == expected, (name, value)
