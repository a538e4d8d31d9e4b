"""The engine's caches of options are keyed on everything the options depend on.

A SKU's block of options is made once per :func:`gpuadvisor.engine.options.block_key`
and shared by every plan with the same key; an option is shared by its constructor
arguments and judged by its facts. Over generated profiles (with cards in the host or
not), equal block keys must mean equal options, and equal option keys equal facts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.options import (
    block_key,
    kept_model,
    option_plan,
    options_of_plan,
    sku_options,
)
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile

from .test_properties import RULES, SETTINGS, profiles

CATALOG = load_catalog()
ENGINE = Engine(CATALOG, RULES)
SEEN_BLOCKS: dict[tuple[object, ...], list[tuple[object, ...]]] = {}
SEEN_OPTIONS: dict[str, dict[str, object]] = {}


def _described(option: Option) -> tuple[object, ...]:
    return (option.key, tuple(sorted(option.facts().items())))


@SETTINGS
@given(
    profiles,
    st.sampled_from([1, 2, 4]),
    st.one_of(st.none(), st.integers(min_value=1, max_value=4)),
)
def test_equal_block_keys_make_equal_options(
    data: dict[str, Any], per_job: int, kept: int | None
) -> None:
    # Each profile twice, sharded and not: the two must never share a key by mistake.
    for sharded in (False, True):
        workload = {**data["workload"], "gpus_per_job": per_job, "sharded_data_parallel": sharded}
        _check_block_keys({**data, "workload": workload}, kept)


def _host(kept: int | None) -> dict[str, Value] | None:
    """Host facts showing ``kept`` RTX A5000 cards (None: no evidence)."""
    if kept is None:
        return None
    return {
        "host.evidence_present": True,
        "host.gpu_count": kept,
        "host.gpu_model": "NVIDIA RTX A5000",
        "host.gpu_memory_total_min_mib": 24564.0,
    }


def _check_block_keys(data: dict[str, Any], kept: int | None) -> None:
    facts = ENGINE.prepare(build_facts(Profile.model_validate(data), CATALOG, _host(kept)).values)
    plan = option_plan(CATALOG.skus, facts, RULES.policy)
    kept_sku = kept_model(CATALOG.skus, plan)
    for sku, row in zip(CATALOG.skus, plan[1], strict=True):
        made = [_described(o) for o in sku_options(sku, row, plan, kept_sku)]
        key = block_key(sku, row, plan)
        assert SEEN_BLOCKS.setdefault(key, made) == made, key
        for option in sku_options(sku, row, plan, kept_sku):
            facts_of = dict(option.facts())
            assert SEEN_OPTIONS.setdefault(option.key, facts_of) == facts_of, option.key


SHARED_ENGINE = Engine(CATALOG, RULES)


@SETTINGS
@given(profiles, st.one_of(st.none(), st.integers(min_value=1, max_value=4)))
def test_a_set_shared_by_content_holds_exactly_the_plans_options(
    data: dict[str, Any], kept: int | None
) -> None:
    """The memo shares one block among plans that make the same options, and one set
    among plans that make the same blocks: whatever plan asks, the set it gets holds
    that plan's options, in order (one engine over every example, so sets are shared)."""
    profile = Profile.model_validate(data)
    facts = SHARED_ENGINE.prepare(build_facts(profile, CATALOG, _host(kept)).values)
    memo = SHARED_ENGINE.memo
    got = [o.key for o in memo.option_set(facts).options]
    plan = option_plan(CATALOG.skus, facts, RULES.policy)
    assert got == [o.key for o in options_of_plan(CATALOG.skus, plan, CATALOG.accessories)]
    blocks = memo.option_set(facts).blocks
    assert [o.key for block, _ in blocks for o in block.options] == got
