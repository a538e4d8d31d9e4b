"""What lost, in words: each shape and class not chosen with why it lost, the other
(shape, class) pairs with their best options, and the constraint rules that eliminated
most of their options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuadvisor.decision.made import made
from gpuadvisor.decision.model import Alternative, Rejected
from gpuadvisor.decision.purchase import PickContext, make_pick
from gpuadvisor.decision.reason import (
    JOBS,
    KEEP,
    OUTCLASSED,
    PRICED,
    SHAPE_SCORE,
    STALE,
    TARGET,
    WHOLE_NEED,
    deciding_term,
    outclassed_words,
    pair_key,
)
from gpuadvisor.decision.seats import counted
from gpuadvisor.engine.core import Core, PairResult
from gpuadvisor.engine.memo import eliminations, most_first
from gpuadvisor.engine.option import PAIRS, Option
from gpuadvisor.engine.options import OPTION_SHAPES as SHAPES
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.wholeneed import hosts_needed, jobs_wanted, whole_need_usd, within_budget
from gpuadvisor.vocabulary import CLASSES, format_value


def eliminated_counts(pair: PairResult) -> dict[str, int]:
    """How many of this pair's options each constraint rule eliminated, the rules in the
    order a scan of the options meets them (lowest option first, then rule order)."""
    return eliminations(pair.verdicts, pair.within)


class Eliminations:
    """The elimination counts of one decision's pairs, each pair's worked out once
    however many groups phrase it (a rejected shape, a rejected class, an alternative).
    Lives for one decision: pairs are told apart by (shape, class)."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], dict[str, int]] = {}

    def of(self, pair: PairResult) -> dict[str, int]:
        key = (pair.shape, pair.class_)
        found = self._counts.get(key)
        if found is None:
            found = self._counts[key] = eliminated_counts(pair)
        return found

    def most(self, pairs: list[PairResult], n: int | None = None) -> tuple[str, ...]:
        """The rules that eliminated most of these pairs' options, ties in the order
        first met (what ``Counter.most_common`` of the summed counts gives)."""
        counts: Mapping[str, int]
        if len(pairs) == 1:
            counts = self.of(pairs[0])
        else:
            summed: dict[str, int] = {}
            for pair in pairs:
                for rid, count in self.of(pair).items():
                    summed[rid] = summed.get(rid, 0) + count
            counts = summed
        return tuple(rule for rule, _ in most_first(counts, n))


def rejections(core: Core, eliminated: Eliminations, policy: Policy) -> list[Rejected]:
    """Each shape and class not chosen, with the rules behind its loss and why."""
    rejected: list[Rejected] = []
    chosen = core.chosen
    # A shape no option was made for (one job: no independent jobs; no data-parallel
    # software: no data-parallel job) is not a purchase this workload could make.
    offered = {
        shape for (shape, _), bits in zip(PAIRS, core.options.pair_bits, strict=True) if bits
    }
    by_shape: dict[str, list[PairResult]] = {}
    by_class: dict[str, list[PairResult]] = {}
    for pair in core.pairs:
        by_shape.setdefault(pair.shape, []).append(pair)
        by_class.setdefault(pair.class_, []).append(pair)
    fired: list[tuple[str, Mapping[Any, int], Mapping[Any, int]]] = [
        (r.id, r.data.effect.shape, r.data.effect.class_) for r in core.fired
    ]
    groups: list[tuple[str, str, str, Mapping[Any, int], list[PairResult]]] = [
        ("shape", s, chosen.shape, core.shape_scores, by_shape.get(s, []))
        for s in SHAPES
        if s != chosen.shape and s in offered
    ]
    groups += [
        ("class", c, chosen.class_, core.class_scores, by_class.get(c, []))
        for c in CLASSES
        if c != chosen.class_
    ]
    for axis, name, won, scores, pairs in groups:
        score = scores[name]
        winner = scores[won]
        alive = [p for p in pairs if p.ranked]
        if not alive:
            because = eliminated.most(pairs, 4)
            reason = "no option of this kind meets every requirement"
        else:
            shape_axis = axis == "shape"
            against = [r for r, sh, cl in fired if (sh if shape_axis else cl).get(name, 0) < 0]
            favour = [r for r, sh, cl in fired if (sh if shape_axis else cl).get(won, 0) > 0]
            because = tuple(dict.fromkeys(against + favour))
            # The group's best pair, and the term of the pair order it lost on.
            best = min(alive, key=lambda p: pair_key(p, core, policy))
            decided = deciding_term(core, best, policy)
            before = _lost_before_score(core, best, decided, policy)
            if before is not None:
                reason = before
                because = tuple(dict.fromkeys([*eliminated.most(pairs, 4), *because]))
            elif decided == SHAPE_SCORE and not shape_axis:
                mine, theirs = core.shape_scores[best.shape], core.shape_scores[chosen.shape]
                reason = (
                    f"its best option is a {best.shape} purchase, which the rules weigh "
                    f"{mine:+d} against {theirs:+d} for the chosen {chosen.shape}"
                )
            elif score == winner:
                reason = (
                    f"tied on score ({score:+d}); lost on the tie-break "
                    "(simpler shape, then lower cost)"
                )
            else:
                reason = f"scored {score:+d} against {winner:+d} for the chosen {axis}"
        rejected.append(made(Rejected, {"option": name, "because": because, "reason": reason}))
    return rejected


def _lost_before_score(
    core: Core, best: PairResult, decided: int | None, policy: Policy
) -> str | None:
    """Why the best pair of a kind lost when a term before the score decided: the
    latency target, capacity, buying nothing, a current card, a known price (capacity,
    buying nothing and a known price worded as before)."""
    top = core.top
    if top is None:
        return None
    other = best.ranked[0]
    if decided == TARGET:
        target = format_value(core.facts.get("workload.latency_slo_ms"))
        return (
            f"its best option's speed bound misses the {target} ms latency target, which "
            "the chosen one meets"
        )
    if decided == STALE:
        years = format_value(core.facts.get("requirements.lifecycle_years"))
        return (
            f"its best option, the {other.sku.name}, launched in {other.sku.launch_year} and "
            f"nobody could say it is still made, for a {years}-year service; the chosen one "
            "is a current card"
        )
    if decided in (WHOLE_NEED, JOBS, KEEP, PRICED):
        return _serves_fewer(core, [best])
    if decided == OUTCLASSED:
        return (
            f"its best option, {other.count * other.hosts} × {other.sku.name}, is slower and "
            f"dearer than the chosen one ({outclassed_words(core, other, top)}): the rules' "
            "lean towards its class does not buy that"
        )
    return None


def _serves_fewer(core: Core, pairs: list[PairResult]) -> str | None:
    """Why these pairs lost when their best option serves fewer jobs than the chosen one
    (or buys what the chosen keeps): capacity comes before the score."""
    top = core.top
    if top is None or not pairs:
        return None
    best = max(p.ranked[0].jobs_served for p in pairs)
    over = _over_whole_budget(core, top, pairs) if best >= top.jobs_served else None
    if over is not None:
        return over
    if best < top.jobs_served:
        jobs = core.facts["workload.concurrent_jobs"]
        plain = isinstance(jobs, (int, float)) and not isinstance(jobs, bool)
        wanted = int(jobs) if plain and jobs else 1  # what a missing or zero number gives
        return (
            f"its best option serves {best} of {counted(wanted, core.facts)} against "
            f"{top.jobs_served} for the chosen"
        )
    if top.count == 0 and all(p.ranked[0].count for p in pairs):
        return "the cards already in the host serve as many, so buying is not needed"
    as_many = [p for p in pairs if p.ranked[0].jobs_served >= top.jobs_served]
    if top.total_price_usd is not None and all(
        p.ranked[0].total_price_usd is None for p in as_many
    ):
        return (
            "its best option is priced on quote, and the chosen one, with a price that "
            "fits the budget, serves as many"
        )
    return None


def _over_whole_budget(core: Core, top: Option, pairs: list[PairResult]) -> str | None:
    """Why these pairs lost when their best options serve as many jobs as the chosen
    one or more, but the chosen serves the whole need within the budget, over every
    host it needs, and none of them does."""
    facts = core.facts
    if not within_budget(top, facts) or any(within_budget(p.ranked[0], facts) for p in pairs):
        return None
    best = max((p.ranked[0] for p in pairs), key=lambda o: o.jobs_served)
    wanted = jobs_wanted(facts)
    cost = whole_need_usd(best, wanted)
    needed = hosts_needed(best, wanted)
    budget = facts.get("budget.max_usd")
    cost_words = (
        "are priced on quote, which no budget can hold"
        if cost is None or not isinstance(budget, (int, float))
        else f"come to about ${cost:,.0f}, more than the ${budget:,.0f} budget"
    )
    return (
        f"its best option serves {best.jobs_served} of {counted(wanted, facts)}, and the "
        f"cards of the {needed} hosts it needs for all of them {cost_words}; the chosen one "
        "serves every wanted job within it"
    )


#: The order of pairs of one score: the simpler shape, then the class (CLASSES' order).
_PAIR_RANK = {(s, c): (SHAPES.index(s), CLASSES.index(c)) for s in SHAPES for c in CLASSES}


def alternatives(core: Core, ctx: PickContext, eliminated: Eliminations) -> list[Alternative]:
    """The other pairs, best first, each with its best option (``ctx``: the decision's
    pick context, regrouped for each pair)."""
    found = []
    for pair in sorted(core.pairs, key=lambda p: (-p.score, _PAIR_RANK[p.shape, p.class_])):
        if pair is core.chosen or not (pair.ranked or eliminated.of(pair)):
            continue  # the chosen pair, or a kind of purchase no option was made for
        best = make_pick(pair.ranked[0], 1, ctx.regroup(list(pair.ranked))) if pair.ranked else None
        found.append(
            made(
                Alternative,
                {
                    "shape": pair.shape,
                    "class_": pair.class_,
                    "score": pair.score,
                    "best": best,
                    "eliminated_by": () if pair.ranked else eliminated.most([pair]),
                },
            )
        )
    return found
