"""How options of one shape and class are ranked against each other, and the numbers
each rank rests on (:class:`RankTerms`), so the decision can say why an option ranks
where it does from the very numbers it was ranked by.

Every objective ranks first by the jobs served (capacity), then buys nothing before
buying something (cards already in the host that serve as many jobs), then by its own
measure: throughput per lifecycle dollar, memory bandwidth within a band of the fastest
and then cost, or lifecycle cost. Throughput counts what power limits and one job's
scaling over several cards take away (:mod:`gpuadvisor.engine.policy`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gpuadvisor.engine.costs import CostTerms, vgpu_required
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Link, Policy
from gpuadvisor.engine.suitability import answer_tokens, bandwidth_bound, stale
from gpuadvisor.engine.wholeneed import WHOLE_NEED_READS, needs_whole_inputs, whole_need_term
from gpuadvisor.inputs.catalog import Sku

#: Within the latency ranking, cards whose memory bandwidth is at least this share of the
#: fastest eligible card's count as equally fast; the cheapest of them wins. Token decode
#: and most latency-bound kernels scale with bandwidth, and a 25% band keeps the choice
#: from paying double for the last few percent.
LATENCY_BAND = 0.75

#: The facts :func:`rank_key` reads (costs, power budgets, links).
RANK_READS = (
    "workload.objective",
    "workload.kind",
    "requirements.lifecycle_years",
    "budget.electricity_usd_per_kwh",
    "requirements.vgpu",
    "workload.sync_heavy",
    "platform.power_limit_ok",
    "platform.nvlink_possible",
    "platform.cpu_sockets",
    "host.gpu_pair_worst_link",
    "host.p2p_ok",
    "workload.parallelism",
    "workload.gpus_per_job",
    "workload.needs_fp64",
    # a latency target against the described model's speed bounds
    "workload.latency_slo_ms",
    "workload.decode_gb_per_step",
    "workload.prefill_tflop",
    "workload.prefill_fp8",
    # a card of unknown availability too old for a long service
    "requirements.fleet_homogeneity",
    "catalog.as_of_year",
)

#: Facts a rank key reads only in one case: the power budgets when cards may be power
#: limited (``platform.power_limit_ok``), the facts that choose the vGPU licence when vGPU
#: is required.
_POWER_READS = (
    "platform.gpu_power_budget_w",
    "platform.circuit_gpu_budget_w",
    "platform.gpu_power_available_w",
    "platform.slot_power_w",
)
_LICENCE_READS = (
    "requirements.certified_drivers",
    "requirements.vgpu_edition",
    "workload.vram_need_gib",
)


def rank_inputs(facts: Mapping[str, Value]) -> tuple[Value, ...]:
    """Every value :func:`rank_key` reads for these facts: equal values, equal rankings.
    A fact read only in a case these facts are not in is left out, so runs that differ
    only there (the what-would-change scan's power trials) rank from the same keys."""
    values = tuple(map(facts.get, RANK_READS))
    if may_power_limit(facts):
        values += tuple(map(facts.get, _POWER_READS))
    if needs_whole_inputs(facts):  # an option may serve fewer jobs than wanted
        values += ("whole-need", *map(facts.get, WHOLE_NEED_READS))
    if vgpu_required(facts):
        values += ("licence", *map(facts.get, _LICENCE_READS))
    return values


def cards_wanted(facts: Mapping[str, Value]) -> int:
    """The cards one data-parallel job is built for (``workload.gpus_per_job``); 0 for
    other work, which no option gives too few cards."""
    if facts.get("workload.parallelism") != "data-parallel":
        return 0
    wanted = facts.get("workload.gpus_per_job")
    return wanted if isinstance(wanted, int) else 0


def short_of_cards(option: Option, facts: Mapping[str, Value]) -> bool:
    """Whether ``option`` runs a data-parallel job on fewer cards than it is built for."""
    return option.cards_per_job < cards_wanted(facts)


def may_power_limit(facts: Mapping[str, Value]) -> bool:
    """Whether the owner lets cards be power-limited to fit (``platform.power_limit_ok``):
    only then does a rank read the power budgets."""
    return bool(facts.get("platform.power_limit_ok"))


def _performance(sku: Sku, facts: Mapping[str, Value]) -> tuple[float, str]:
    """The throughput figure that matters for the workload and its unit: FP64 for work
    that computes in double precision, where the catalog gives the card's FP64 rate;
    tensor FP16 for ML; FP32 else."""
    fp64 = sku.fp64_tflops
    if fp64 is not None and facts.get("workload.needs_fp64") is True:
        return fp64, "FP64 TFLOPS"
    if facts["workload.kind"] in ("training", "inference", "mixed"):
        return sku.fp16_tensor_tflops, "FP16 tensor TFLOPS"
    return sku.fp32_tflops, "FP32 TFLOPS"


def performance(sku: Sku, facts: Mapping[str, Value]) -> float:
    """The throughput figure ranking and the enough card count (:func:`_performance`)."""
    return _performance(sku, facts)[0]


def performance_unit(sku: Sku, facts: Mapping[str, Value]) -> str:
    """What :func:`performance` counts for this card and work, as a report names it."""
    return _performance(sku, facts)[1]


def _budget(facts: Mapping[str, Value], name: str) -> float | None:
    value = facts.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def power_cut(option: Option, facts: Mapping[str, Value], policy: Policy) -> float:
    """Share of board power a limit takes off every card so the option fits the supply
    and the circuit (0 when it fits as it is). Cards powered from the slot alone are held
    to the power left for GPUs without the margin for spikes (FIT-003)."""
    supply = "platform.gpu_power_available_w" if slot_powered(option, facts) else None
    return policy.power_cut(
        option.total_power_w,
        _budget(facts, supply or "platform.gpu_power_budget_w"),
        _budget(facts, "platform.circuit_gpu_budget_w"),
    )


def slot_powered(option: Option, facts: Mapping[str, Value]) -> bool:
    """Whether every card of ``option`` draws from the x16 slot alone (board power at
    most ``platform.slot_power_w``): no auxiliary cable, no margin for its spikes."""
    slot = _budget(facts, "platform.slot_power_w")
    return slot is not None and all(s.tdp_w <= slot for s in option.skus)


def dp_link(option: Option, facts: Mapping[str, Value], policy: Policy) -> Link:
    """The link one job's all-reduce crosses: an NVLink bridge between two cards, across
    CPU sockets (measured, or more than two cards on a multi-socket host), through host
    memory (no P2P on these cards, or P2P measured off), or PCIe peer-to-peer."""
    nvlink = all(s.nvlink for s in option.skus) and facts.get("platform.nvlink_possible") is True
    if nvlink and option.cards_per_job == 2:
        return "nvlink"
    sockets = facts.get("platform.cpu_sockets")
    multi_socket = isinstance(sockets, (int, float)) and sockets >= 2
    if facts.get("host.gpu_pair_worst_link") == "SYS" or (
        multi_socket and option.cards_per_job > 2
    ):
        return "cross-socket"
    p2p = all(policy.has_p2p(s.segment, s.architecture) for s in option.skus)
    if not p2p or facts.get("host.p2p_ok") is False:
        return "pcie-host"
    return "pcie-p2p"


class RankTerms:
    """The numbers one option is ranked by within its group. Immutable by convention;
    a plain class with slots (one is made for each option ranked), equal to another
    with the same numbers."""

    __slots__ = (
        "answer_tokens",
        "bandwidth_gbs",
        "buys_nothing",
        "fastest_gbs",
        "in_band",
        "in_cost_band",
        "jobs_served",
        "lifecycle_usd",
        "link",
        "meets_target",
        "power_cut",
        "scaling_kept",
        "stale",
        "throughput",
    )

    def __init__(
        self,
        jobs_served: int,
        buys_nothing: bool,
        bandwidth_gbs: float,
        fastest_gbs: float,
        in_band: bool,
        throughput: float,
        lifecycle_usd: float | None,
        power_cut: float,
        scaling_kept: float | None,
        link: Link | None,
        answer_tokens: int | None = None,
        meets_target: bool | None = None,
        stale: bool = False,
        in_cost_band: bool = False,
    ) -> None:
        self.jobs_served = jobs_served
        self.buys_nothing = buys_nothing
        self.bandwidth_gbs = bandwidth_gbs
        self.fastest_gbs = fastest_gbs
        self.in_band = in_band
        self.throughput = throughput
        #: None when the price is on quote (quote-needed): it ranks after priced options.
        self.lifecycle_usd = lifecycle_usd
        self.power_cut = power_cut
        self.scaling_kept = scaling_kept
        self.link: Link | None = link
        #: Answer tokens within the latency target (None: no target or no bound).
        self.answer_tokens = answer_tokens
        self.meets_target = meets_target
        #: A card of unknown availability, old for a long service (policy [ranking]).
        self.stale = stale
        #: Lifecycle cost within the policy's band of the group's cheapest.
        self.in_cost_band = in_cost_band

    def values(self) -> tuple[object, ...]:
        """Every number, in the order of the constructor's arguments."""
        return (
            self.jobs_served,
            self.buys_nothing,
            self.bandwidth_gbs,
            self.fastest_gbs,
            self.in_band,
            self.throughput,
            self.lifecycle_usd,
            self.power_cut,
            self.scaling_kept,
            self.link,
            self.answer_tokens,
            self.meets_target,
            self.stale,
            self.in_cost_band,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankTerms):
            return NotImplemented
        return self.values() == other.values()

    def __hash__(self) -> int:
        return hash(self.values())

    def __repr__(self) -> str:
        return f"RankTerms{self.values()!r}"


def _throughput(option: Option, facts: Mapping[str, Value], speed: float, scaling: float) -> float:
    kept = performance(option.kept_sku, facts) * option.kept if option.kept_sku else 0.0
    # Every host's cards: the lifecycle cost it is set against is the whole purchase's.
    per_host = (performance(option.sku, facts) * option.count + kept) * speed * scaling
    return per_host * option.hosts


def raw_throughput(option: Option, facts: Mapping[str, Value]) -> float:
    """Every card's throughput figure over every host, at full speed and scaling."""
    return _throughput(option, facts, 1.0, 1.0)


def bandwidth(option: Option) -> float:
    """The slowest card's memory bandwidth (a job on it runs at its pace)."""
    return option.bandwidth_gbs


def rank_terms(
    options: list[Option],
    facts: Mapping[str, Value],
    policy: Policy,
    *,
    fastest: float | None = None,
    cheapest: float | None = None,
) -> Callable[[Option], RankTerms]:
    """The terms of each option of this group (read once for the group). The group
    counts only through its fastest card and its cheapest lifecycle cost (``fastest``
    and ``cheapest``, when already known: :func:`group_bounds`)."""
    if fastest is None:
        fastest, cheapest = group_bounds(options, facts)
    costs = CostTerms(facts)
    sync_heavy = facts.get("workload.sync_heavy") is True

    def terms(option: Option) -> RankTerms:
        cut = power_cut(option, facts, policy) if may_power_limit(facts) else 0.0
        link: Link | None = None
        scaling: float | None = None
        if option.shape == "multi-gpu-data-parallel" and option.cards_per_job >= 2:
            link = dp_link(option, facts, policy)
            scaling = policy.scaling_kept(link, sync_heavy)
        speed = policy.speed_kept(cut) if cut else 1.0  # full speed without a limit
        width = bandwidth(option)
        tokens = answer_tokens(option, facts)
        lifecycle = costs.lifecycle_usd(option)
        return RankTerms(
            jobs_served=option.jobs_served,
            buys_nothing=option.count == 0,
            bandwidth_gbs=width,
            fastest_gbs=fastest,
            in_band=width >= LATENCY_BAND * fastest,
            throughput=_throughput(option, facts, speed, scaling or 1.0),
            lifecycle_usd=lifecycle,
            power_cut=cut,
            scaling_kept=scaling,
            link=link,
            answer_tokens=tokens,
            meets_target=None if tokens is None else policy.ranking.meets_target(tokens),
            stale=stale(option, facts, policy),
            in_cost_band=(
                cheapest is not None
                and lifecycle is not None
                and policy.ranking.in_cost_band(lifecycle, cheapest)
            ),
        )

    return terms


def group_fastest(options: list[Option]) -> float:
    """The fastest memory bandwidth of a group."""
    return max((bandwidth(o) for o in options), default=0.0)


#: Objectives ranked by lifecycle cost, where a cost band lets the faster card win.
COST_RANKED = ("correctness", "fleet-simplicity")


def group_bounds(options: list[Option], facts: Mapping[str, Value]) -> tuple[float, float | None]:
    """All a rank key reads of its group: the fastest memory bandwidth, and for the
    objectives ranked by cost, the cheapest priced lifecycle cost (else None)."""
    cheapest: float | None = None
    if facts.get("workload.objective") in COST_RANKED:
        costs = CostTerms(facts)
        priced = [c for o in options if (c := costs.lifecycle_usd(o)) is not None]
        cheapest = min(priced, default=None)
    return group_fastest(options), cheapest


def rank_key(
    options: list[Option],
    facts: Mapping[str, Value],
    policy: Policy,
    *,
    fastest: float | None = None,
    cheapest: float | None = None,
) -> Callable[[Option], tuple[tuple[float, ...], str]]:
    """The sort key of :func:`rank_options` for this group of options: a function of
    the option, the facts of :data:`RANK_READS` and the group's bounds alone
    (:func:`group_bounds`: pass both or neither)."""
    objective = facts["workload.objective"]
    if fastest is None:
        fastest, cheapest = group_bounds(options, facts)
    terms_of = rank_terms(options, facts, policy, fastest=fastest, cheapest=cheapest)
    wanted_cards = cards_wanted(facts)
    by_bandwidth = bandwidth_bound(facts, policy)
    whole_need = _whole_need(facts)

    def key(option: Option) -> tuple[tuple[float, ...], str]:
        t = terms_of(option)
        # A data-parallel job on fewer cards than it is built for runs slower: that is
        # not buying nothing, and it ranks after the options that give it its cards.
        short = 1.0 if option.cards_per_job < wanted_cards else 0.0
        # A split model on the fewest cards that hold it: fewer exchanges per step.
        split = float(option.cards) if option.shape == "multi-gpu-model-parallel" else 0.0
        nothing = t.buys_nothing and not short
        # A stated latency target decides before capacity: an option that misses it is
        # never first while one that meets it is left. Then the whole need within the
        # budget over all the hosts it takes (engine.wholeneed).
        misses = 1.0 if t.meets_target is False else 0.0
        first = (
            misses,
            whole_need(option),
            -t.jobs_served,
            0.0 if nothing else 1.0,
            float(t.stale),
            split,
        )
        tail = f"{option.sku.id}:{option.count}:{option.kept}"
        cost = t.lifecycle_usd
        if cost is None:
            return (*first, *unpriced_key(t, objective, option, short)), tail
        # An accessory on quote (a sync board without a public price): after the options
        # of the tier priced in full, before those whose cards are on quote.
        part = option.quote_term
        if objective == "throughput":
            value = t.throughput / cost if cost > 0 else float("inf")
            return (*first, part, short, -value, cost), tail
        if objective == "latency":
            slow = 0.0 if t.in_band else 1.0
            return (*first, slow, part, short, cost, -t.bandwidth_gbs), tail
        if t.in_cost_band:  # costs this close tie: the faster card first
            merit = t.bandwidth_gbs if by_bandwidth else t.throughput
            return (*first, part, short, 0.0, -merit, cost, -option.sku.vram_gib), tail
        return (*first, part, short, 1.0, 0.0, cost, -option.sku.vram_gib), tail

    return key


def _whole_need(facts: Mapping[str, Value]) -> Callable[[Option], float]:
    """The first rank term: options that serve every wanted job within the budget, over
    all the hosts they need, before those that do not (:mod:`gpuadvisor.engine.wholeneed`);
    a constant where every option serves every wanted job."""
    if not needs_whole_inputs(facts):
        return _within
    return lambda option: whole_need_term(option, facts)


def _within(option: Option) -> float:
    return 0.0


def unpriced_key(
    t: RankTerms, objective: Value, option: Option, short: float = 0.0
) -> tuple[float, ...]:
    """Where an option on quote ranks: in the same tier as priced ones (jobs served, and
    for latency the speed band), after the priced options of that tier (a price in hand
    beats an unknown one), then as the priced ones (a data-parallel job given its cards
    first: ``short`` 1.0 when it is not), and among other unpriced ones by the spec the
    objective values (throughput: compute; latency: memory bandwidth; else memory)."""
    if objective == "throughput":
        return (1.0, short, -t.throughput, 0.0)
    if objective == "latency":
        return (0.0 if t.in_band else 1.0, 1.0, short, -t.bandwidth_gbs, 0.0)
    return (1.0, short, -option.sku.vram_gib, 0.0)


def rank_options(options: list[Option], facts: Mapping[str, Value], policy: Policy) -> list[Option]:
    """Options of one shape and class, best first."""
    if not options:
        return []
    return sorted(options, key=rank_key(options, facts, policy))
