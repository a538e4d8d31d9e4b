"""Column evaluation (:mod:`gpuadvisor.engine.columns`) against ``Expression.holds``.

The engine judges constraints over whole option sets with column masks; a card passes
there exactly when ``holds((option_facts, sku_facts, facts))`` is true for it. Checked
for every bundled constraint on the option sets of generated profiles (with and without
cards already in the host), and for generated conditions over facts that can be null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gpuadvisor.engine.columns import compile_columns
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.expr import ExpressionError, Value, compile_expression
from gpuadvisor.engine.facts import build_facts, sku_facts
from gpuadvisor.engine.factspec import schema_for
from gpuadvisor.engine.optionset import OptionSet, Rows
from gpuadvisor.engine.rules import option_layer
from gpuadvisor.inputs.profile import Profile
from tests.test_properties import CATALOGS, RULES, SETTINGS, profiles

ENGINES = {name: Engine(catalog, RULES) for name, catalog in CATALOGS.items()}
#: Each catalog's SKU facts, worked out here (not the engine's copy).
SKU_FACTS = {name: {s.id: sku_facts(s) for s in c.skus} for name, c in CATALOGS.items()}

#: Cards already in the host, as the evidence would give them (None: no evidence).
#: (which catalog entry, how many), the entry taken modulo the catalog's size.
HOSTS = st.one_of(st.none(), st.tuples(st.integers(0, 99), st.integers(1, 3)))


def _facts(data: dict[str, Any], which: str, host: tuple[int, int] | None) -> dict[str, Value]:
    catalog = CATALOGS[which]
    values: dict[str, Value] = {}
    if host is not None:
        sku = catalog.skus[host[0] % len(catalog.skus)]
        values = {"host.gpu_model": sku.name, "host.gpu_count": host[1]}
    profile = Profile.model_validate(data)
    facts = build_facts(profile, catalog, values or None)
    return ENGINES[which].prepare(facts.values)


def _rows_holding(
    source: str, options: OptionSet, facts: Mapping[str, Value], which: str = "bundled"
) -> int:
    """The failing rows by ``holds``, card by card: the cards of each option in the
    set's order (the rows of :class:`Rows`)."""
    expression = compile_expression(source, schema_for("option"), option_layer)
    judged = [(layer, sku) for option in options.options for layer, sku in option.judged()]
    failing = 0
    for index, (layer, sku) in enumerate(judged):
        if not expression.holds((layer, SKU_FACTS[which][sku.id], facts)):
            failing |= 1 << index
    return failing


@pytest.mark.parametrize("which", sorted(CATALOGS))
@given(data=profiles, host=HOSTS)
@SETTINGS
def test_every_constraint_judges_alike_by_columns_and_by_rows(
    which: str, data: dict[str, Any], host: tuple[int, int] | None
) -> None:
    facts = _facts(data, which, host)
    memo = ENGINES[which].memo
    options = memo.option_set(facts)
    rows = Rows(options, memo.sku_facts)
    for rule in RULES.constraints:
        assert rule.require is not None
        expected = _rows_holding(rule.require.source, options, facts, which)
        failing = compile_columns(rule.require.source)
        # Judged again and again, the set's numeric columns are compared by bisection.
        for _ in range(Rows.SORT_AFTER + 1):
            assert failing(rows, facts) == expected, rule.id


def test_a_kept_card_of_another_model_is_its_own_row() -> None:
    """Options that add cards beside the host's other model judge both cards: a failing
    kept card fails the option, and rows map back onto options."""
    data = {
        "workload": {
            "kind": "inference",
            "objective": "throughput",
            "vram_need_gib": 10,
            "concurrent_jobs": 4,
        },
        "platform": {"gpu_count_max": 4, "psu_headroom_w": 3000},
        "budget": {"max_usd": 50000},
    }
    index = next(i for i, s in enumerate(CATALOGS["bundled"].skus) if s.id == "geforce-rtx-4090")
    facts = _facts(data, "bundled", (index, 1))
    memo = ENGINES["bundled"].memo
    options = memo.option_set(facts)
    rows = Rows(options, memo.sku_facts)
    assert sum(len(o.judged()) for o in options.options) > len(options.options)
    source = "sku.cooling != 'open-air'"
    failing_rows = _rows_holding(source, options, facts)
    assert compile_columns(source)(rows, facts) == failing_rows
    failing = rows.options_failing(failing_rows)
    for index, option in enumerate(options.options):
        open_air = any(sku.cooling == "open-air" for _, sku in option.judged())
        assert bool(failing >> index & 1) == open_air, option


#: Conditions on numeric columns (some with nulls) against one decision fact, at every
#: comparison.
CONDITIONS_AT_A_LIMIT = [
    f"option.{column} {op} budget.max_usd"
    for column in ("total_price_usd", "total_power_w", "vram_per_job_gib")
    for op in ("<", "<=", ">", ">=", "==", "!=")
] + ["sku.nvenc * 1000 >= budget.max_usd", "budget.max_usd > sku.price_usd"]
#: Thresholds: round prices and powers that options' totals hit exactly (ties).
THRESHOLDS = [0.0, 1.0, 24.0, 350.0, 450.0, 1599.0, 1600.0, 1999.0, 2000.0, 8000.0, 1e6]

#: Facts a generated condition reads: option and SKU columns (some null on some rows),
#: and decision facts (some null).
NUMBERS = [
    "option.total_power_w",
    "option.total_price_usd",
    "option.vram_per_job_gib",
    "option.jobs_served",
    "sku.nvenc",
    "sku.usable_vram_mib",
    "sku.tdp_w",
    "budget.max_usd",
    "platform.psu_headroom_w",
    "host.gpu_count",
    "host.gpu_usable_gib",
]
BOOLS = [
    "option.card_is_kept",
    "option.mixed_models",
    "sku.ecc",
    "sku.approved",
    "requirements.vgpu",
]
LITERALS = ["0", "1", "2.5", "-3", "400", "24"]


def _numbers() -> st.SearchStrategy[str]:
    leaf = st.sampled_from(NUMBERS + LITERALS)
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
                lambda t: f"{t[0]}({t[1]}, {t[2]})"
            ),
            inner.map(lambda e: f"abs({e})"),
        ),
        max_leaves=4,
    )


def _conditions() -> st.SearchStrategy[str]:
    compare = st.tuples(
        _numbers(), st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), _numbers()
    ).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
    chain = st.tuples(_numbers(), _numbers(), _numbers()).map(
        lambda t: f"{t[0]} < {t[1]} <= {t[2]}"
    )
    leaf = st.one_of(
        compare,
        chain,
        st.sampled_from(BOOLS),
        st.sampled_from(NUMBERS).map(lambda n: f"known({n})"),
        st.sampled_from(
            [
                "sku.cooling in ['open-air', 'passive']",
                "sku.cooling not in ['blower']",
                "option.shape == 'multi-gpu-model-parallel'",
                "sku.segment != requirements.ecc",
                "covers(sku.certified_apps, requirements.isv_known_apps)",
                "sku.nvenc in [0, 1, -1]",
                "true",
                "false",
            ]
        ),
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            inner.map(lambda e: f"not ({e})"),
        ),
        max_leaves=5,
    )


@given(data=profiles, host=HOSTS, condition=_conditions())
@SETTINGS
def test_generated_conditions_judge_alike(
    data: dict[str, Any], host: tuple[int, int] | None, condition: str
) -> None:
    try:
        compile_expression(condition, schema_for("option"), option_layer)
    except ExpressionError:
        assume(False)
    facts = _facts(data, "bundled", host)
    memo = ENGINES["bundled"].memo
    options = memo.option_set(facts)
    rows = Rows(options, memo.sku_facts)
    expected = _rows_holding(condition, options, facts)
    failing = compile_columns(condition)
    for _ in range(Rows.SORT_AFTER + 1):  # the last ones by bisection
        assert failing(rows, facts) == expected, condition


@given(
    data=profiles,
    host=HOSTS,
    limits=st.lists(st.sampled_from(THRESHOLDS), min_size=Rows.SORT_AFTER + 2),
)
@SETTINGS
def test_bisection_judges_each_threshold_alike(
    data: dict[str, Any], host: tuple[int, int] | None, limits: list[float]
) -> None:
    """One set judged at many thresholds (what the what-would-change scan does): after
    the first few, by bisection of the sorted column, ties and nulls included."""
    facts = _facts(data, "bundled", host)
    memo = ENGINES["bundled"].memo
    options = memo.option_set(facts)
    rows = Rows(options, memo.sku_facts)
    for source in CONDITIONS_AT_A_LIMIT:
        failing = compile_columns(source)
        for limit in limits:
            at = {**facts, "budget.max_usd": limit}
            assert failing(rows, at) == _rows_holding(source, options, at), (source, limit)
