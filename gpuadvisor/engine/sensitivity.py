"""What would change the answer: re-run the engine over candidate values of each input,
and pin the boundary exactly.

Nothing here is written by hand per rule. For each numeric input that can matter,
candidate values are generated in each direction (catalog memory sizes, option prices and
power draws, neighbouring counts, fixed grids), the engine is re-run with that one fact
changed, and once a candidate changes the shape, class or top pick, the boundary between
it and the last value that did not is found by bisection on the input's own step
(:data:`STEP`: 0.1 GiB, $1, 1 W, one card...). So the reported value changes the answer
and the value one step nearer the current one does not (``tests/test_sensitivity.py``
checks both sides for every bundled example). Choices and yes/no inputs are tried at
each other value. What comes back is plain data (:class:`Flip`); the decision phrases it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

from gpuadvisor.engine.core import Core, Engine, Outcome
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.factspec import FACTS_BY_NAME
from gpuadvisor.engine.wholeneed import jobs_wanted, needs_whole_inputs, whole_need_usd

#: Inputs scanned, in the order reported.
NUMERIC_INPUTS = (
    "workload.vram_need_gib",
    "workload.concurrent_jobs",
    "budget.max_usd",
    "workload.latency_slo_ms",
    "requirements.downtime_cost_per_hour_usd",
    "requirements.lifecycle_years",
    "platform.gpu_count_max",
    "platform.psu_headroom_w",
    "platform.psu_w",
    "platform.max_gpu_slot_width",
    "platform.gpu_slots_total",
    "platform.circuit_w",
    "workload.gpus_per_job",
)
CHOICE_INPUTS = (
    "workload.objective",
    "requirements.ecc",
    "requirements.silent_corruption_unacceptable",
    "requirements.certified_drivers",
    "requirements.display_sync",
    "requirements.vgpu",
    "requirements.vgpu_edition",
    "workload.needs_fp64",
    "requirements.fleet_homogeneity",
    "workload.model_parallel_ready",
    "workload.sync_heavy",
    "workload.interactive",
    "workload.frame_pacing_critical",
    "platform.airflow",
    "platform.power_limit_ok",
    "platform.nvlink_possible",
    "workload.sharded_data_parallel",
)

#: The step each numeric input is searched on: a reported boundary is exact to it.
STEP: dict[str, float] = {
    "workload.vram_need_gib": 0.1,
    "workload.concurrent_jobs": 1,
    "budget.max_usd": 1,
    "workload.latency_slo_ms": 1,
    "requirements.downtime_cost_per_hour_usd": 1,
    "requirements.lifecycle_years": 0.1,
    "platform.gpu_count_max": 1,
    "platform.psu_headroom_w": 1,
    "platform.psu_w": 1,
    "platform.max_gpu_slot_width": 1,
    "platform.gpu_slots_total": 1,
    "platform.circuit_w": 1,
    "workload.gpus_per_job": 1,
}

#: The values each input may take (the profile's own bounds).
BOUNDS: dict[str, tuple[float, float]] = {
    "workload.vram_need_gib": (0.1, 4096),
    "workload.concurrent_jobs": (1, 1024),
    "budget.max_usd": (1, 1e9),
    "workload.latency_slo_ms": (1, 3_600_000),
    "requirements.downtime_cost_per_hour_usd": (0, 1e9),
    "requirements.lifecycle_years": (0.1, 20),
    "platform.gpu_count_max": (1, 16),
    "platform.psu_headroom_w": (0, 100_000),
    "platform.psu_w": (1, 100_000),
    "platform.max_gpu_slot_width": (1, 5),
    "platform.gpu_slots_total": (1, 80),
    "platform.circuit_w": (1, 100_000),
    "workload.gpus_per_job": (1, 16),
}

_FIXED_GRIDS: dict[str, tuple[float, ...]] = {
    "workload.latency_slo_ms": (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000),
    "requirements.downtime_cost_per_hour_usd": (0, 50, 100, 250, 500, 1000, 2500, 5000, 10000),
    "requirements.lifecycle_years": (1, 2, 3, 4, 5, 6, 7, 8, 10),
    "platform.gpu_count_max": (1, 2, 3, 4, 6, 8, 12, 16),
    "platform.max_gpu_slot_width": (1, 2, 3, 4, 5),
    "platform.gpu_slots_total": tuple(range(1, 33)),
    "platform.circuit_w": (900, 1200, 1440, 1800, 2400, 3000, 3600, 4800, 7200),
    "workload.gpus_per_job": (1, 2, 3, 4, 6, 8, 12, 16),
    "workload.concurrent_jobs": (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256),
}

MAX_TRIALS_PER_DIRECTION = 24

#: Numeric inputs that only take whole values.
INTEGER_INPUTS = (
    "workload.concurrent_jobs",
    "platform.gpu_count_max",
    "platform.max_gpu_slot_width",
    "platform.gpu_slots_total",
    "workload.gpus_per_job",
)

#: Inputs that mean something only for software that spreads one job over cards.
PARALLEL_ONLY = ("workload.gpus_per_job",)

#: Inputs 0 means "not stated" for: scanned only when stated.
UNSTATED_AT_ZERO = ("platform.gpu_slots_total", "platform.circuit_w", "platform.psu_w")

#: Inputs the options or their ranking read directly (see gpuadvisor.engine.options).
OPTION_INPUTS = (
    "workload.vram_need_gib",
    "workload.concurrent_jobs",
    "workload.kind",
    "workload.objective",
    "workload.gpus_per_job",
    "workload.sharded_data_parallel",
    "workload.sync_heavy",
    "platform.gpu_count_max",
    "platform.power_limit_ok",
    "requirements.lifecycle_years",
    "requirements.vgpu",
    "requirements.certified_drivers",
    "requirements.ecc",
    "requirements.silent_corruption_unacceptable",
    "budget.electricity_usd_per_kwh",
)


def _grid(
    name: str, current: float, engine: Engine, facts: Mapping[str, Value]
) -> tuple[list[float], list[float]]:
    """Candidate values above (ascending) and below (descending) the current one
    (``facts``: prepared, as the engine ran on them)."""
    catalog, policy = engine.catalog, engine.rules.policy
    if name == "workload.vram_need_gib":
        sizes = {sku.gpu_vram_gib for sku in catalog.skus}
        values = sizes | {s + 0.5 for s in sizes} | {s * 0.9 for s in sizes}
    elif name == "budget.max_usd":
        options = engine.memo.option_set(facts).options
        # Options on quote have no total: no price step to find. An option serving
        # fewer jobs than wanted also steps where the cards of every host it needs fit.
        totals = {t for o in options if (t := o.total_price_usd) is not None}
        if needs_whole_inputs(facts):
            wanted = jobs_wanted(facts)
            totals |= {t for o in options if (t := whole_need_usd(o, wanted)) is not None}
        values = totals | {t - 1 for t in totals if t > 1}
    elif name in ("platform.psu_headroom_w", "platform.psu_w"):
        powers = {o.total_power_w for o in engine.memo.option_set(facts).options}
        keep = 1 - policy.power.transient_margin
        # A stated rating feeds the host's own draw first.
        host = float(facts.get("platform.host_draw_w") or 0.0) if name == "platform.psu_w" else 0.0
        values = {p / keep + host for p in powers} | {0.8 * p / keep + host for p in powers}
        values |= {p + host for p in powers}  # cards powered from the slot: no margin
    else:
        values = set(_FIXED_GRIDS[name])
    low, high = BOUNDS[name]
    up = sorted(v for v in values if current < v <= high)
    down = sorted((v for v in values if low <= v < current), reverse=True)
    return _thin(up), _thin(down)


def _thin(values: list[float]) -> list[float]:
    """Keep the nearest values and a spread of far ones, at most the trial limit."""
    if len(values) <= MAX_TRIALS_PER_DIRECTION:
        return values
    near = values[: MAX_TRIALS_PER_DIRECTION // 2]
    rest = values[MAX_TRIALS_PER_DIRECTION // 2 :]
    step = max(1, len(rest) // (MAX_TRIALS_PER_DIRECTION // 2))
    return near + rest[::step]


def _choices(name: str, current: Value) -> list[Value]:
    spec = FACTS_BY_NAME[name]
    if spec.type == "bool":
        return [not current]
    return [c for c in spec.choices or () if c != current]


class Flip(NamedTuple):
    """The nearest value of one input that changes the answer, and the answer then."""

    input: str
    current: Value
    flips_at: float | int | bool | str
    direction: Literal["up", "down", "change"]
    outcome: Outcome


def step_value(name: str, current: float, direction: int, steps: int) -> float | int:
    """The value ``steps`` steps of :data:`STEP` from ``current`` (up: +1, down: -1)."""
    value = round(current + direction * steps * STEP[name], 6)
    return round(value) if name in INTEGER_INPUTS else value


def neighbour(flip: Flip) -> float | int:
    """The value one step nearer the current one than a numeric flip: the answer there
    is today's (the other side of the boundary)."""
    assert isinstance(flip.flips_at, (int, float)) and isinstance(flip.current, (int, float))
    direction = 1 if flip.direction == "up" else -1
    value = round(float(flip.flips_at) - direction * STEP[flip.input], 6)
    return round(value) if flip.input in INTEGER_INPUTS else value


def scan(engine: Engine, core: Core) -> list[Flip]:
    """Each input that can matter, re-run up and down (or to its other choices)."""
    base_facts = dict(core.facts)
    base = core.outcome()
    results: list[Flip] = []

    def outcome_at(name: str, value: Value) -> Outcome:
        return engine.outcome({**base_facts, name: value})

    def numeric(
        name: str, current: float, direction: Literal["up", "down"], grid: list[float]
    ) -> None:
        sign = 1 if direction == "up" else -1
        last = 0  # steps from current of the last value known to give today's answer
        for candidate in grid:
            steps = max(last + 1, math.ceil(abs(candidate - current) / STEP[name] - 1e-9))
            trial = outcome_at(name, step_value(name, current, sign, steps))
            if trial.key() == base:
                last = steps
                continue
            # Today's answer at `last`, another at `steps`: bisect to adjacent steps.
            low, high = last, steps
            while high - low > 1:
                middle = (low + high) // 2
                found = outcome_at(name, step_value(name, current, sign, middle))
                if found.key() == base:
                    low = middle
                else:
                    high, trial = middle, found
            value = step_value(name, current, sign, high)
            results.append(Flip(name, base_facts.get(name), value, direction, trial))
            return

    def record_first_flip(name: str, values: Iterable[Value]) -> None:
        for value in values:
            trial = outcome_at(name, value)
            if trial.key() != base:
                assert isinstance(value, (bool, int, float, str))
                results.append(Flip(name, base_facts.get(name), value, "change", trial))
                return

    # An input no rule reads and the options do not depend on cannot change the answer.
    read = {
        n
        for r in engine.rules.rules
        for n in (*r.when.names, *(r.require.names if r.require else ()))
    }
    read |= set(OPTION_INPUTS)
    read = _with_sources(read)
    for name in NUMERIC_INPUTS:
        if name not in read:
            continue
        current = base_facts.get(name)
        if current is None or isinstance(current, (bool, str)):
            continue
        if name in UNSTATED_AT_ZERO and not current:
            continue
        if name == "platform.psu_headroom_w" and base_facts.get("platform.psu_w"):
            continue  # the stated rating decides the power for GPUs, not the headroom
        if name in PARALLEL_ONLY and base_facts.get("workload.parallelism") == "none":
            continue
        up, down = _grid(name, float(current), engine, base_facts)
        numeric(name, float(current), "up", up)
        numeric(name, float(current), "down", down)
    for name in CHOICE_INPUTS:
        if name in read:
            record_first_flip(name, _choices(name, base_facts.get(name)))
    return results


#: Derived facts and the inputs they come from (engine.facts.derive_facts): a rule that
#: reads a derived fact reads these.
_DERIVED_FROM: dict[str, tuple[str, ...]] = {
    "workload.jobs_per_host": ("workload.concurrent_jobs",),
    "workload.vram_need_with_headroom_gib": ("workload.vram_need_gib",),
    "platform.gpu_slots_available": (
        "platform.gpu_slots_total",
        "platform.gpu_count_max",
        "platform.max_gpu_slot_width",
    ),
    "platform.gpu_power_budget_w": ("platform.psu_headroom_w", "platform.psu_w"),
    "platform.gpu_power_available_w": ("platform.psu_headroom_w", "platform.psu_w"),
    "platform.circuit_gpu_budget_w": ("platform.circuit_w",),
    "workload.decode_streams_per_host": ("workload.decode_stream_count",),
    "workload.decode_streams_per_engine": ("workload.decode_codec",),
    "workload.cards_needed_for_io": (
        "workload.decode_stream_count",
        "platform.max_gpu_slot_width",
    ),
}


def _with_sources(read: set[str]) -> set[str]:
    for derived, sources in _DERIVED_FROM.items():
        if derived in read:
            read |= set(sources)
    return read
