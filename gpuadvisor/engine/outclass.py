"""When one kind of purchase's pick outclasses another's, so that class points do not
decide between them (``rules/_policy.toml`` ``[ranking]``, issue #30 §3).

Class points say which class of card suits the work and the host (a server's airflow
suits passive data-center cards). They choose between picks that serve the need alike;
they must not buy a pick that a pick of another listed class, in the same shape, matches
or beats in compute and memory bandwidth, with ECC where it has ECC, for a lifecycle cost
lower by more than the cost band. Such a pick ranks after every pick of its shape's score
that is not outclassed (:func:`gpuadvisor.engine.core.pair_order`).

Also here: :func:`standing`, the pair-order terms that come before the scores (a stated
target met, the whole need in the budget, jobs served, buying nothing, a current card,
a known price, a data-parallel job's cards, keeping the host's cards). A pick outclasses
another only when it stands at least as well on all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpuadvisor.engine.costs import lifecycle_cost_usd
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.ranking import raw_throughput, short_of_cards
from gpuadvisor.engine.suitability import meets_target, stale
from gpuadvisor.engine.wholeneed import whole_need_term
from gpuadvisor.vocabulary import GpuClass, Shape


def standing(top: Option, facts: Mapping[str, Value], policy: Policy) -> tuple[float, ...]:
    """The terms of the pair order before the scores, for a pair whose first pick is
    ``top`` (lower is better)."""
    short = short_of_cards(top, facts)
    return (
        1.0 if meets_target(top, facts, policy) is False else 0.0,
        whole_need_term(top, facts),
        -top.jobs_served,
        0.0 if top.count == 0 and not short else 1.0,
        1.0 if stale(top, facts, policy) else 0.0,
        top.quote_term,
        1.0 if short else 0.0,
        1.0 if top.action == "replace" else 0.0,
    )


def _ratio(better: float, worse: float) -> float:
    if worse > 0:
        return better / worse
    return float("inf") if better > 0 else 1.0


def _ecc(option: Option) -> bool:
    return all(sku.ecc is True for sku in option.skus)


def outclasses(better: Option, worse: Option, facts: Mapping[str, Value], policy: Policy) -> bool:
    """Whether ``better`` outclasses ``worse``: the same shape, standing as well before
    the scores, and the policy's test on class, speed, ECC and lifecycle cost."""
    if better.shape != worse.shape or better.bandwidth_gbs < worse.bandwidth_gbs:
        return False
    better_cost = lifecycle_cost_usd(better, facts)
    worse_cost = lifecycle_cost_usd(worse, facts)
    if better_cost is None or worse_cost is None or better_cost >= worse_cost:
        return False
    # The policy's test first (cheap), the standing before the scores last.
    return policy.ranking.outclasses(
        worse.sku.segment,
        better.sku.segment,
        worse_cost,
        better_cost,
        _ratio(raw_throughput(better, facts), raw_throughput(worse, facts)),
        _ratio(better.bandwidth_gbs, worse.bandwidth_gbs),
        _ecc(worse),
        _ecc(better),
    ) and standing(better, facts, policy) <= standing(worse, facts, policy)


def outclassed(
    tops: Iterable[tuple[Shape, GpuClass, Option | None]],
    facts: Mapping[str, Value],
    policy: Policy,
) -> dict[tuple[Shape, GpuClass], Option]:
    """Each outclassed pair, with the pick of another class that outclasses it."""
    listed = [(s, c, t) for s, c, t in tops if t is not None]
    classes = policy.ranking.outclass_classes
    found: dict[tuple[Shape, GpuClass], Option] = {}
    for shape, gpu_class, top in listed:
        if gpu_class not in classes:
            continue
        for other_shape, other_class, other in listed:
            same_shape = other_shape == shape and other_class != gpu_class
            if same_shape and outclasses(other, top, facts, policy):
                found[(shape, gpu_class)] = other
                break
    return found
