"""Purchase options: which (shape, SKU, count) combinations exist, what they cost over
their life, and how options of one kind are ranked against each other.

Pure functions over facts and catalog entries; no rule logic lives here. Every number
that is an assumption (duty cycle, sharding overhead) is a named constant with its
reason, and is quoted in the report's assumptions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from gpuadvisor.engine.expr import Value
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.vocabulary import Shape

#: The shapes options are generated for, simplest first (one data-parallel job over
#: several cards has no options of its own yet: it is planned as model parallelism is).
OPTION_SHAPES: tuple[Shape, ...] = (
    "single-larger-gpu",
    "two-independent-jobs",
    "multi-gpu-model-parallel",
)

#: Model parallelism replicates some state (embeddings, activations at the cut, comms
#: buffers); planning on 15% of each card's memory for that is a common rule of thumb.
SHARDING_OVERHEAD = 0.15

#: Average draw as a share of board power over the year, by objective. Batch and
#: training tiers run most of the time; latency endpoints idle between requests.
DUTY_CYCLE: dict[str, float] = {
    "throughput": 0.7,
    "latency": 0.4,
    "correctness": 0.5,
    "fleet-simplicity": 0.5,
}

HOURS_PER_YEAR = 8766.0

#: Workloads whose concurrent jobs are light enough to share one card (desktops, small
#: model replicas, streams); the others are compute-bound and get one card per job.
PACKABLE_KINDS = ("vdi", "inference", "media", "visualization")

#: NVIDIA vGPU software, annual subscription per concurrent user (CCU), as listed in
#: NVIDIA's "Virtual GPU Software Packaging, Pricing, and Licensing Guide" (v10, 2022):
#: Virtual PC for office desktops, RTX Virtual Workstation for professional graphics.
VGPU_LICENCE_USD_PER_CCU_YEAR: dict[str, float] = {"vPC": 50.0, "vWS": 250.0}
VGPU_LICENCE_SOURCE = (
    "https://docs.nvidia.com/vgpu/packaging-pricing-licensing-guide/latest/index.html"
)
_WORKSTATION_KINDS = ("cad-cae", "visualization", "rendering", "simulation")

ASSUMPTIONS: tuple[str, ...] = (
    "vGPU licences (only when vGPU is required): one concurrent-user subscription per "
    "concurrent job for every year of service, at NVIDIA's published annual prices "
    "(Virtual PC $50, RTX Virtual Workstation $250 per user-year; "
    f"{VGPU_LICENCE_SOURCE}).",
    "Lifecycle cost = cards' price + electricity for the planned service life; average "
    "draw = board power × duty cycle (throughput 70%, latency 40%, otherwise 50%).",
    "Concurrent jobs share a card only for VDI, inference, media and visualization, "
    "as many as fit its memory; training, rendering and simulation jobs get a card each.",
    f"Model parallelism loses {SHARDING_OVERHEAD:.0%} of each card's memory to replicated "
    "state and communication buffers.",
    "Prices are the catalog's reference prices (launch MSRP, list or reseller, dated); "
    "quotes will differ.",
)


class Option:
    """One purchase: a shape, a SKU and how many cards. Immutable by convention; a plain
    class with slots because the engine makes over a hundred per decision."""

    __slots__ = ("_facts", "count", "jobs_served", "key", "shape", "sku", "vram_per_job_gib")

    def __init__(
        self, shape: Shape, sku: Sku, count: int, vram_per_job_gib: float, jobs_served: int
    ) -> None:
        self.shape = shape
        self.sku = sku
        self.count = count
        self.vram_per_job_gib = vram_per_job_gib
        self.jobs_served = jobs_served
        self.key = f"{shape}:{sku.id}:{count}"
        self._facts: dict[str, Value] | None = None

    def __repr__(self) -> str:
        return f"Option({self.key}, serves {self.jobs_served})"

    @property
    def total_price_usd(self) -> float | None:
        """Cards × price; None when the SKU's price is on quote."""
        return unpriced_or(self.sku.price_usd, lambda price: price * self.count)

    @property
    def total_power_w(self) -> float:
        return self.sku.tdp_w * self.count

    def facts(self) -> Mapping[str, Value]:
        """The ``option.*`` facts, built once (options are shared by the engine's memo)."""
        if self._facts is None:
            self._facts = self._build_facts()
        return self._facts

    def _build_facts(self) -> dict[str, Value]:
        return {
            "option.shape": self.shape,
            "option.gpu_count": self.count,
            "option.total_price_usd": self.total_price_usd,
            "option.total_power_w": self.total_power_w,
            "option.vram_per_job_gib": self.vram_per_job_gib,
            "option.total_slots": self.sku.slot_width * self.count,
        }


def unpriced_or(price: float | None, then: Callable[[float], float]) -> float | None:
    """``then(price)``, or None when there is no price (quote-needed): a missing price
    stays missing through every sum, never a zero."""
    return None if price is None else then(price)


def _number(facts: Mapping[str, Value], name: str) -> float:
    value = facts[name]
    assert isinstance(value, (int, float)) and not isinstance(value, bool), name
    return float(value)


def plan_inputs(facts: Mapping[str, Value]) -> tuple[Value, ...]:
    """Everything :func:`option_plan` reads: equal inputs, equal plans."""
    return (
        facts["workload.vram_need_gib"],
        facts["workload.concurrent_jobs"],
        facts["platform.gpu_count_max"],
        facts["workload.kind"] in PACKABLE_KINDS,
    )


def option_plan(skus: tuple[Sku, ...], facts: Mapping[str, Value]) -> tuple[int, ...]:
    """What :func:`generate_options` makes of these facts, as numbers: for each SKU, the
    jobs one card holds, the cards and jobs of the independent-jobs option and the
    shards of the model-parallel one. Equal plans, equal options (many memory needs
    and job counts come to the same plan)."""
    need = _number(facts, "workload.vram_need_gib")
    jobs = int(_number(facts, "workload.concurrent_jobs"))
    slots = int(_number(facts, "platform.gpu_count_max"))
    packable = facts["workload.kind"] in PACKABLE_KINDS
    plan: list[int] = []
    for sku in skus:
        # Light jobs share a card side by side (MPS, MIG or vGPU); compute-bound jobs
        # would only slow each other down, so they get a card each.
        per_card = max(1, int(min(sku.vram_gib // need, jobs))) if packable else 1
        # Independent jobs: enough cards for every job, as many as the chassis takes
        # (at least two: the shape is about adding cards).
        wanted = max(2, min(math.ceil(jobs / per_card), slots))
        shards = max(2, math.ceil(need / (sku.vram_gib * (1 - SHARDING_OVERHEAD))))
        plan += (min(jobs, per_card), wanted, min(jobs, wanted * per_card), shards)
    return tuple(plan)


def options_of_plan(skus: tuple[Sku, ...], plan: tuple[int, ...]) -> list[Option]:
    """The options a plan of :func:`option_plan` describes, three per SKU."""
    options: list[Option] = []
    for index, sku in enumerate(skus):
        single_jobs, wanted, served, shards = plan[4 * index : 4 * index + 4]
        options.append(Option("single-larger-gpu", sku, 1, sku.vram_gib, single_jobs))
        options.append(Option("two-independent-jobs", sku, wanted, sku.vram_gib, served))
        usable = sku.vram_gib * (1 - SHARDING_OVERHEAD)
        options.append(Option("multi-gpu-model-parallel", sku, shards, usable * shards, 1))
    return options


def generate_options(skus: tuple[Sku, ...], facts: Mapping[str, Value]) -> list[Option]:
    """Every option worth evaluating; constraints are judged later, by the rules."""
    return options_of_plan(skus, option_plan(skus, facts))


class CostTerms:
    """What lifecycle costs read from the facts, read once for many options."""

    __slots__ = ("duty", "electricity_usd_per_kwh", "licence_usd", "years")

    def __init__(self, facts: Mapping[str, Value]) -> None:
        licence = vgpu_licence(facts)
        self.years = _number(facts, "requirements.lifecycle_years")
        self.electricity_usd_per_kwh = _number(facts, "budget.electricity_usd_per_kwh")
        self.duty = DUTY_CYCLE.get(str(facts["workload.objective"]), 0.5)
        self.licence_usd = licence[1] if licence else 0.0

    def energy_usd(self, option: Option) -> float:
        kwh = option.sku.tdp_w * option.count * self.duty * HOURS_PER_YEAR * self.years / 1000.0
        return kwh * self.electricity_usd_per_kwh

    def lifecycle_usd(self, option: Option) -> float | None:
        extra = self.energy_usd(option) + self.licence_usd
        return unpriced_or(option.total_price_usd, lambda total: total + extra)


def energy_cost_usd(option: Option, facts: Mapping[str, Value]) -> float:
    return CostTerms(facts).energy_usd(option)


def vgpu_licence(facts: Mapping[str, Value]) -> tuple[str, float] | None:
    """(edition, cost over the service life) when vGPU is required, else None.

    A vCS licence, which NVIDIA prices per GPU, has no public price: it comes back with
    cost 0 and :func:`vgpu_licence_priced` says so (the pick names it as on quote)."""
    if facts["requirements.vgpu"] is not True:
        return None
    edition = vgpu_licence_edition(facts)
    per_user = VGPU_LICENCE_USD_PER_CCU_YEAR.get(edition)
    if per_user is None:
        return edition, 0.0
    users = _number(facts, "workload.concurrent_jobs")
    years = _number(facts, "requirements.lifecycle_years")
    return edition, per_user * users * years


#: The licence name of each ``requirements.vgpu_edition``.
VGPU_LICENCE_NAMES: dict[str, str] = {"vpc": "vPC", "vws": "vWS", "vcs": "vCS"}


def vgpu_licence_edition(facts: Mapping[str, Value]) -> str:
    """The edition licensed: the profile's ``requirements.vgpu_edition``, or when it says
    ``none``, vWS for workstation work or certified ISV drivers and vPC otherwise."""
    stated = facts.get("requirements.vgpu_edition", "none")
    if isinstance(stated, str) and stated in VGPU_LICENCE_NAMES:
        return VGPU_LICENCE_NAMES[stated]
    workstation = (
        facts["requirements.certified_drivers"] is True
        or facts["workload.kind"] in _WORKSTATION_KINDS
    )
    return "vWS" if workstation else "vPC"


def vgpu_licence_priced(facts: Mapping[str, Value]) -> bool:
    """Whether :func:`vgpu_licence` holds the licence's price (no licence: True)."""
    licence = vgpu_licence(facts)
    return licence is None or licence[0] in VGPU_LICENCE_USD_PER_CCU_YEAR


def lifecycle_cost_usd(option: Option, facts: Mapping[str, Value]) -> float | None:
    """Price + electricity + licences over the service life; None when on quote."""
    return CostTerms(facts).lifecycle_usd(option)


def performance(sku: Sku, facts: Mapping[str, Value]) -> float:
    """Throughput figure that matters for the workload: tensor FP16 for ML, FP32 else."""
    if facts["workload.kind"] in ("training", "inference", "mixed"):
        return sku.fp16_tensor_tflops
    return sku.fp32_tflops


#: Within the latency ranking, cards whose memory bandwidth is at least this share of the
#: fastest eligible card's count as equally fast; the cheapest of them wins. Token decode
#: and most latency-bound kernels scale with bandwidth, and a 25% band keeps the choice
#: from paying double for the last few percent.
LATENCY_BAND = 0.75

RANKING: dict[str, str] = {
    "throughput": "most concurrent jobs served, then most throughput per lifecycle dollar",
    "latency": (
        "most concurrent jobs served, then the cheapest lifecycle cost among the fastest "
        f"cards (memory bandwidth within {1 - LATENCY_BAND:.0%} of the fastest eligible)"
    ),
    "correctness": "most concurrent jobs served, then lowest lifecycle cost",
    "fleet-simplicity": "most concurrent jobs served, then lowest lifecycle cost",
}


#: The facts :func:`rank_key` reads (the vGPU licence reads the last three).
RANK_READS = (
    "workload.objective",
    "workload.kind",
    "requirements.lifecycle_years",
    "budget.electricity_usd_per_kwh",
    "requirements.vgpu",
    "requirements.certified_drivers",
    "workload.concurrent_jobs",
    "requirements.vgpu_edition",
)


def rank_key(
    options: list[Option], facts: Mapping[str, Value]
) -> Callable[[Option], tuple[tuple[float, ...], str]]:
    """The sort key of :func:`rank_options` for this group of options."""
    objective = facts["workload.objective"]
    fastest = max(o.sku.memory_bandwidth_gbs for o in options)
    terms = CostTerms(facts)  # read once for the group, not once per option

    def key(option: Option) -> tuple[tuple[float, ...], str]:
        sku = option.sku
        cost = terms.lifecycle_usd(option)
        if cost is None:
            return unpriced_key(option, facts, fastest), sku.id
        if objective == "throughput":
            value = performance(sku, facts) * option.count / cost
            return (-option.jobs_served, 0.0, -value, cost), sku.id
        if objective == "latency":
            slow = 0.0 if sku.memory_bandwidth_gbs >= LATENCY_BAND * fastest else 1.0
            return (-option.jobs_served, slow, 0.0, cost, -sku.memory_bandwidth_gbs), sku.id
        return (-option.jobs_served, 0.0, cost, -sku.vram_gib), sku.id

    return key


def unpriced_key(option: Option, facts: Mapping[str, Value], fastest: float) -> tuple[float, ...]:
    """Where an option on quote ranks: in the same tier as priced ones (jobs served, and
    for latency the speed band), after the priced options of that tier (a price in hand
    beats an unknown one), and among other unpriced ones by the spec the objective
    values (throughput: compute; latency: memory bandwidth; else memory)."""
    sku = option.sku
    objective = facts["workload.objective"]
    if objective == "throughput":
        return (-option.jobs_served, 1.0, -performance(sku, facts) * option.count, 0.0)
    if objective == "latency":
        slow = 0.0 if sku.memory_bandwidth_gbs >= LATENCY_BAND * fastest else 1.0
        return (-option.jobs_served, slow, 1.0, -sku.memory_bandwidth_gbs, 0.0)
    return (-option.jobs_served, 1.0, -sku.vram_gib, 0.0)


def rank_options(options: list[Option], facts: Mapping[str, Value]) -> list[Option]:
    """Options of one shape and class, best first (see :data:`RANKING`)."""
    if not options:
        return []
    return sorted(options, key=rank_key(options, facts))
