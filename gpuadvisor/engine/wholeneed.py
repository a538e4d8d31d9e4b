"""The whole need against the budget: what an option's cards cost for every host it takes
to serve every wanted job, and whether the budget covers that.

A purchase that serves part of the demand is a shortfall (CONTRACT §6); the buyer then
needs more hosts like this one. An option that serves more jobs per host but whose cards
for all the hosts needed cost more than the budget is not a better answer than one whose
cards for every host needed fit it: the budget is for the whole need. Ranking
(:mod:`gpuadvisor.engine.ranking`) and the pair order (:func:`gpuadvisor.engine.core.pair_order`)
put options that serve every wanted job within the budget, over all the hosts they need,
before those that do not. Pure arithmetic; no words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option

#: The facts :func:`within_budget` reads beside the option (which holds its hosts).
WHOLE_NEED_READS = ("workload.concurrent_jobs", "budget.max_usd", "platform.hosts")


def _number(facts: Mapping[str, Value], name: str) -> float | None:
    value = facts.get(name)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def jobs_wanted(facts: Mapping[str, Value]) -> int:
    """``workload.concurrent_jobs``, over every host (1 when missing)."""
    wanted = _number(facts, "workload.concurrent_jobs")
    return int(wanted) if wanted is not None and wanted >= 1 else 1


def hosts_needed(option: Option, wanted: int) -> int:
    """Hosts like the option's that serve every wanted job: the hosts it equips when it
    serves them all, else as many as the jobs one host's cards serve go into the
    wanted jobs."""
    if option.jobs_served >= wanted or option.jobs_per_host < 1:
        return option.hosts
    return max(option.hosts, math.ceil(wanted / option.jobs_per_host))


def further_cards(option: Option, wanted: int) -> int:
    """Cards of the option's model that the wanted jobs beyond this purchase take, in
    further hosts like these: as many as this purchase's cards per job, rounded up (the
    last host gets only what its jobs need; a split model or a data-parallel job its
    whole group, a shared card its share)."""
    remaining = wanted - option.jobs_served
    if remaining <= 0 or option.jobs_per_host < 1:
        return 0
    return math.ceil(remaining * option.cards / option.jobs_per_host - 1e-9)


def whole_need_usd(option: Option, wanted: int) -> float | None:
    """The cards of every host needed (:func:`hosts_needed`) and their priced
    accessories: this purchase, and the cards (and each host's accessories) the further
    hosts' jobs take (:func:`further_cards`, bought new: cards kept in
    the hosts the purchase equips are only there); None when priced on quote."""
    here = option.total_price_usd
    if here is None:
        return None
    more = further_cards(option, wanted)
    if more == 0:
        return here
    price = option.sku.price_usd
    if price is None:
        return None
    # The further hosts take the accessories each of these takes (a sync board each).
    further = hosts_needed(option, wanted) - option.hosts
    extras = sum(extra.usd or 0.0 for extra in option.extras) / max(1, option.hosts)
    return round(here + more * price + further * extras, 2)


def whole_need_floor_usd(option: Option, wanted: int) -> float | None:
    """The least the cards of every host needed cost when the card is priced on quote
    but outclasses a priced card of its segment (``sku.price_floor_usd``, which FIT-004
    holds to the budget); None without a floor."""
    floor = option.sku.price_floor_usd
    if floor is None or option.count == 0:
        return None
    bought = option.count * option.hosts + further_cards(option, wanted)
    return round(floor * bought, 2)


def needs_whole_inputs(facts: Mapping[str, Value]) -> bool:
    """Whether an option may serve fewer jobs than wanted: only then does the whole
    need's cost read the budget (every option serves at least one job per host)."""
    hosts = _number(facts, "platform.hosts") or 1.0
    return jobs_wanted(facts) > hosts


def within_budget(option: Option, facts: Mapping[str, Value]) -> bool:
    """Whether ``option`` serves every wanted job within the budget, over all the hosts
    it needs: it serves them all (the budget constraint held its price), or the cards of
    every host needed cost at most ``budget.max_usd``. A price on quote is not within:
    nobody can hold it to the budget."""
    wanted = jobs_wanted(facts)
    if option.jobs_served >= wanted:
        return True
    cost = whole_need_usd(option, wanted)
    budget = _number(facts, "budget.max_usd")
    return cost is not None and budget is not None and cost <= budget + 1e-9


def whole_need_term(option: Option, facts: Mapping[str, Value]) -> float:
    """The rank term: 0.0 for an option within the whole need's budget, 1.0 else."""
    return 0.0 if within_budget(option, facts) else 1.0
