"""What would change the answer: re-run the engine over candidate values of each input.

Nothing here is written by hand per rule: for each input that can matter, candidate
values are generated (catalog memory sizes, option prices, neighbouring counts, the other
choices of an enum, the opposite of a yes/no), the core engine is re-run with that one
fact changed, and the nearest value that changes the shape, class or top pick is
reported, in each direction. What comes back is plain data (:class:`Flip`); the
decision phrases it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

from gpuadvisor.engine.core import Core, Engine, Outcome
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.factspec import FACTS_BY_NAME
from gpuadvisor.engine.options import generate_options
from gpuadvisor.inputs.catalog import Catalog

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
    "platform.max_gpu_slot_width",
)
CHOICE_INPUTS = (
    "workload.objective",
    "requirements.ecc",
    "requirements.silent_corruption_unacceptable",
    "requirements.certified_drivers",
    "requirements.display_sync",
    "requirements.vgpu",
    "requirements.fleet_homogeneity",
    "workload.model_parallel_ready",
    "workload.sync_heavy",
    "workload.interactive",
    "workload.frame_pacing_critical",
    "platform.airflow",
)

_FIXED_GRIDS: dict[str, tuple[float, ...]] = {
    "workload.latency_slo_ms": (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000),
    "requirements.downtime_cost_per_hour_usd": (0, 50, 100, 250, 500, 1000, 2500, 5000, 10000),
    "requirements.lifecycle_years": (1, 2, 3, 4, 5, 6, 7, 8, 10),
    "platform.gpu_count_max": (1, 2, 3, 4, 6, 8),
    "platform.psu_headroom_w": (150, 250, 300, 350, 450, 600, 800, 1000, 1200, 1600, 2000, 3000),
    "platform.max_gpu_slot_width": (1, 2, 3, 4),
    "workload.concurrent_jobs": (1, 2, 3, 4, 6, 8, 12, 16),
}

MAX_TRIALS_PER_DIRECTION = 24

#: Numeric inputs that only take whole values.
INTEGER_INPUTS = (
    "workload.concurrent_jobs",
    "platform.gpu_count_max",
    "platform.max_gpu_slot_width",
)

#: Inputs the options or their ranking read directly (see gpuadvisor.engine.options).
OPTION_INPUTS = (
    "workload.vram_need_gib",
    "workload.concurrent_jobs",
    "workload.kind",
    "workload.objective",
    "platform.gpu_count_max",
    "requirements.lifecycle_years",
    "requirements.vgpu",
    "requirements.certified_drivers",
    "budget.electricity_usd_per_kwh",
)


def _grid(
    name: str, current: float, catalog: Catalog, facts: Mapping[str, Value]
) -> tuple[list[float], list[float]]:
    """Candidate values above (ascending) and below (descending) the current one."""
    if name == "workload.vram_need_gib":
        sizes = sorted({sku.vram_gib for sku in catalog.skus})
        up = sorted({s + 0.5 for s in sizes if s + 0.5 > current})
        down = sorted({s for s in sizes if s < current}, reverse=True)
    elif name == "budget.max_usd":
        options = generate_options(catalog.skus, facts)
        totals = sorted({t for o in options if (t := o.total_price_usd) is not None})
        up = [t for t in totals if t > current]
        down = sorted({t - 1 for t in totals if t - 1 < current and t > 1}, reverse=True)
    else:
        grid = _FIXED_GRIDS[name]
        up = [v for v in grid if v > current]
        down = [v for v in reversed(grid) if v < current]
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


def scan(engine: Engine, core: Core) -> list[Flip]:
    """Each input that can matter, re-run up and down (or to its other choices)."""
    base_facts = dict(core.facts)
    base = core.outcome()
    catalog = engine.catalog
    results: list[Flip] = []

    def record_first_flip(
        name: str, direction: Literal["up", "down", "change"], values: Iterable[Value]
    ) -> None:
        """Re-run with each value in turn; record the first that changes the outcome."""
        for value in values:
            if value is None:
                continue
            trial = engine.outcome({**base_facts, name: value})
            if trial.key() != base:
                results.append(Flip(name, base_facts.get(name), value, direction, trial))
                return

    # An input no rule reads and the options do not depend on cannot change the answer.
    read = {
        n
        for r in engine.rules.rules
        for n in (*r.when.names, *(r.require.names if r.require else ()))
    }
    read |= set(OPTION_INPUTS)
    for name in NUMERIC_INPUTS:
        if name not in read:
            continue
        current = base_facts.get(name)
        if current is None or isinstance(current, (bool, str)):
            continue
        up, down = _grid(name, float(current), catalog, base_facts)
        directions: tuple[tuple[Literal["up", "down"], list[float]], ...] = (
            ("up", up),
            ("down", down),
        )
        for direction, values in directions:
            record_first_flip(
                name, direction, [int(v) if name in INTEGER_INPUTS else float(v) for v in values]
            )
    for name in CHOICE_INPUTS:
        if name in read:
            for value in _choices(name, base_facts.get(name)):
                record_first_flip(name, "change", [value])
    return results
