"""The plan of a decision's purchase options: every fact the options are made from,
reduced to numbers (:func:`option_plan`), so that equal plans make equal options
(:mod:`gpuadvisor.engine.options` makes them; :mod:`gpuadvisor.engine.memo` keys its
option sets on the plan). Pure; no rule logic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gpuadvisor.engine.capacity import (
    FitRow,
    card_fit,
    ecc_wanted,
    existing_cards,
    fit_rows,
    per_job_gib,
    usable_gib,
)
from gpuadvisor.engine.decode import decode_need, floor
from gpuadvisor.engine.displays import DISPLAY_READS, OUTFIT_READS, display_need, outfit_of
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.policy import Policy
from gpuadvisor.inputs.catalog import Sku


def _number(facts: Mapping[str, Value], name: str) -> float:
    value = facts[name]
    assert isinstance(value, (int, float)) and not isinstance(value, bool), name
    return float(value)


#: The facts :func:`option_plan` reads (through :func:`capacity.card_fit` and the host's
#: cards): equal values, equal plans.
PLAN_READS = (
    "workload.kind",
    "workload.vram_need_gib",
    "workload.concurrent_jobs",
    "workload.parallelism",
    "workload.gpus_per_job",
    "workload.sharded_data_parallel",
    "workload.model_parallel_ready",
    "requirements.ecc",
    "requirements.silent_corruption_unacceptable",
    "platform.gpu_count_max",
    "host.gpu_count",
    "host.gpu_catalog_sku",
    "host.gpu_usable_gib",
    "requirements.vgpu",
    "platform.hosts",
    "workload.decode_streams_per_host",
    "workload.decode_streams_per_engine",
    "workload.decode_codec",
    *DISPLAY_READS,
    *OUTFIT_READS,
)


def plan_inputs(facts: Mapping[str, Value]) -> tuple[Value, ...]:
    """Everything :func:`option_plan` reads: equal inputs, equal plans. The memory need
    counts only for work that shares a card (``workload.shares_cards``, derived)."""
    inputs = tuple(map(facts.get, PLAN_READS))
    if facts.get("workload.shares_cards") is False:
        return (*inputs[:1], None, *inputs[2:])
    return inputs


Plan = tuple[tuple[object, ...], tuple[FitRow, ...]]

#: Where a plan's numbers (``plan[0]``, :func:`option_plan`) hold the displays need, the
#: outfit and the decode need.
DISPLAYS_AT, OUTFIT_AT, DECODE_AT = 9, 10, 11


def option_plan(
    skus: tuple[Sku, ...],
    facts: Mapping[str, Value],
    policy: Policy,
    usable: tuple[float, ...] | None = None,
) -> Plan:
    """What :func:`options_of_plan` makes options from, as numbers: the counts that bound
    them and, per SKU, the jobs one card holds, its usable memory and the memory jobs are
    counted against. Equal plans, equal options: only work that shares a card reads the
    memory need here (how many jobs a card holds), so most needs come to the same plan."""
    wanted = int(_number(facts, "workload.concurrent_jobs"))
    hosts = hosts_of(facts)
    # The wanted jobs are spread over the hosts: each host's cards serve its share.
    jobs = max(1, math.ceil(wanted / hosts))
    count_max = int(_number(facts, "platform.gpu_count_max"))
    per_job_cards = int(_number(facts, "workload.gpus_per_job"))
    data_parallel = facts["workload.parallelism"] == "data-parallel"
    sharded = facts["workload.sharded_data_parallel"] is True
    if usable is None:
        ecc = ecc_wanted(facts)
        usable = tuple(usable_gib(sku, ecc, policy) for sku in skus)
    fits = fit_rows(skus, usable, facts, policy)
    existing: tuple[object, ...] = ()
    found = existing_cards(facts, skus)
    if found is not None:
        existing = (found.cards,)
        if found.sku is not None:
            fit = card_fit(found.sku, facts, policy, usable=found.usable_gib)
            existing = (
                found.cards,
                found.sku.id,
                (fit.per_card, fit.usable_gib, fit.basis_gib, per_job_gib(fit)),
            )
    split_ready = facts.get("workload.model_parallel_ready") is True
    # No option uses more cards than the jobs and the kept cards need, unless one job
    # spans cards (data-parallel, or a split model the team can run): a larger chassis
    # then makes the same options (the same plan).
    kept = found.cards if found is not None else 0
    decode = decode_need(facts)
    if not (data_parallel or split_ready):  # video streams may need more cards than jobs
        count_max = min(count_max, max(jobs + kept, 2, *(floor(s, decode) for s in skus)))
    params = (
        jobs,
        count_max,
        per_job_cards,
        data_parallel,
        sharded,
        existing,
        split_ready,
        hosts,
        wanted,
        display_need(facts),
        outfit_of(facts, policy),
        decode,
    )
    return params, fits


def hosts_of(facts: Mapping[str, Value]) -> int:
    """The identical hosts the purchase equips (``platform.hosts``; 1 when not given)."""
    hosts = facts.get("platform.hosts", 1)
    return int(hosts) if isinstance(hosts, (int, float)) and hosts >= 1 else 1
