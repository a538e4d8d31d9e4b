"""The reason a headline gives: what decided between the chosen kind of purchase and
the runner-up, in the order the engine compares them (:func:`engine.core.pair_order`):
a stated latency target met, the whole need within the budget, the jobs served, buying
nothing, a current card, a known price, the cards a data-parallel job is built for,
keeping the host's cards, the score, then cost. Only when the score decided is the
reason a preference rule's title, and then the rule that moved the chosen kind furthest
ahead of the runner-up (on shape when the shapes differ: the shape's score decides
first); when no other kind has an option left, the constraint that removed the kinds
that would have ranked above it."""

from __future__ import annotations

from gpuadvisor.decision.seats import counted
from gpuadvisor.engine.core import Core, PairResult, pair_order
from gpuadvisor.engine.costs import lifecycle_cost_usd
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import Policy
from gpuadvisor.vocabulary import format_value

#: A kind of purchase in words, as "the best ... option" reads it.
SHAPE_WORDS: dict[str, str] = {
    "single-larger-gpu": "single-card",
    "two-independent-jobs": "several-card",
    "multi-gpu-model-parallel": "model-split",
    "multi-gpu-data-parallel": "data-parallel",
}
CLASS_WORDS: dict[str, str] = {
    "consumer": "consumer",
    "professional": "professional",
    "datacenter": "data-center",
}
#: Where pair_order's key decides, by position (see engine.core.pair_order).
(
    TARGET,
    WHOLE_NEED,
    JOBS,
    KEEP,
    STALE,
    PRICED,
    SHORT,
    REPLACE,
    SHAPE_SCORE,
    OUTCLASSED,
    SCORE,
) = range(11)


def lower_first(text: str) -> str:
    """Lower-case the first word to continue a sentence, unless it is an acronym."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first.isupper():
        return text
    return text[:1].lower() + text[1:]


def _kind(pair: PairResult, chosen: PairResult) -> str:
    """The runner-up's kind, in the words that tell it from the chosen one."""
    if pair.shape == chosen.shape:
        return CLASS_WORDS[pair.class_]
    if pair.class_ == chosen.class_:
        return SHAPE_WORDS[pair.shape]
    return f"{SHAPE_WORDS[pair.shape]} {CLASS_WORDS[pair.class_]}"


def pair_key(pair: PairResult, core: Core, policy: Policy) -> tuple[float, ...]:
    """The pair's place in the engine's order (:func:`engine.core.pair_order`)."""
    top = pair.ranked[0] if pair.ranked else None
    shape_score = core.shape_scores[pair.shape]
    beaten = (pair.shape, pair.class_) in core.outclassed
    return pair_order(
        shape_score, pair.score, pair.shape, pair.class_, top, core.facts, policy, beaten
    )


def _rule_reason(core: Core, runner: PairResult | None) -> str | None:
    """The fired rule that moved the chosen kind furthest ahead of the runner-up (ahead
    of nothing: the strongest one for it)."""
    chosen = core.chosen
    best: tuple[int, str] | None = None
    for rule in core.fired:
        effect = rule.data.effect
        if runner is not None and runner.shape != chosen.shape:  # the shape's score decides
            ahead = effect.shape.get(chosen.shape, 0) - effect.shape.get(runner.shape, 0)
        elif runner is not None:
            ahead = effect.class_.get(chosen.class_, 0) - effect.class_.get(runner.class_, 0)
        else:
            ahead = max(effect.shape.get(chosen.shape, 0), effect.class_.get(chosen.class_, 0))
        if ahead > 0 and (best is None or ahead > best[0]):
            best = (ahead, rule.data.title)
    return lower_first(best[1].rstrip(".")) if best else None


#: What a constraint's category says a kind of purchase failed on.
FAILED_ON: dict[str, str] = {
    "vram": "memory",
    "airflow": "cooling",
    "cost": "the budget",
    "power": "power",
    "lifecycle": "availability",
    "certification": "certification",
    "ecc": "ECC",
    "display-sync": "display sync",
    "virtualization": "vGPU support",
    "team": "the team's multi-GPU experience",
}


#: What a constraint that is not told by its category says a kind failed on.
FAILED_ON_RULE: dict[str, str] = {
    "DEC-001": "video decoding",
    "DISP-002": "display outputs",
}


def _excluded_above(core: Core) -> str | None:
    """What the kinds that would have ranked above the chosen one (scored as high) and
    have no option left failed on ("the consumer options ... fail on memory, the
    data-center ones on cooling"), or None when there are none."""
    chosen = core.chosen
    categories = {rule.id: rule.data.category for rule in core.active_constraints}
    failed: dict[str, str] = {}
    for pair in core.pairs:
        if pair is chosen or pair.ranked or pair.score < chosen.score:
            continue
        counts = pair.elimination_counts
        if not counts:
            continue
        # A rule that alone excludes every option of the kind says what it fails on;
        # else the one that excludes the most (the first met of the most).
        total = pair.within.bit_count()
        alone = [rule_id for rule_id, n in counts.items() if n == total]
        worst = alone[0] if alone else max(counts, key=lambda rule_id: counts[rule_id])
        what = FAILED_ON_RULE.get(worst) or FAILED_ON.get(categories.get(worst, ""))
        failed.setdefault(_kind(pair, chosen), what or "a requirement")
    if not failed:
        return None
    parts = [f"the {kind} ones on {what}" for kind, what in failed.items()]
    first_kind, first_what = next(iter(failed.items()))
    parts[0] = f"the {first_kind} options that would rank above it fail on {first_what}"
    return ", ".join(parts)


def outclassed_words(core: Core, loser: Option, winner: Option) -> str:
    """How ``winner`` outclasses ``loser`` (:mod:`gpuadvisor.engine.outclass`), in
    figures: "300 against 672 GB/s per card, $10,795 against $7,546 over its life"."""
    lose_usd = lifecycle_cost_usd(loser, core.facts) or 0.0
    win_usd = lifecycle_cost_usd(winner, core.facts) or 0.0
    return (
        f"{format_value(loser.bandwidth_gbs)} against {format_value(winner.bandwidth_gbs)} "
        f"GB/s per card, ${lose_usd:,.0f} against ${win_usd:,.0f} over its life"
    )


def deciding_term(core: Core, other: PairResult, policy: Policy) -> int | None:
    """The first term of the pair order on which the chosen pair beat ``other`` (None:
    they tie on every term)."""
    mine, theirs = pair_key(core.chosen, core, policy), pair_key(other, core, policy)
    return next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b), None)


def deciding_reason(core: Core, policy: Policy) -> str:
    """Why the chosen kind of purchase won, in a clause that continues "Buy X: ..."."""
    top, runner = core.top, core.runner_up
    if top is None:
        return "no card meets every requirement"
    if runner is None:
        excluded = _excluded_above(core)
        if excluded is not None:
            return f"no other kind of purchase meets every requirement: {excluded}"
        return _rule_reason(core, None) or "it meets every requirement at the best rank"
    decided = deciding_term(core, runner, policy)
    other = runner.ranked[0]
    kind = _kind(runner, core.chosen)
    wanted = core.facts.get("workload.concurrent_jobs")
    jobs = int(wanted) if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) else 1
    if decided == TARGET:
        target = format_value(core.facts.get("workload.latency_slo_ms"))
        return (
            f"its speed bound meets the {target} ms latency target, where the best {kind} "
            "option's does not"
        )
    if decided == WHOLE_NEED:
        return (
            "it serves every wanted job within the budget over all the hosts it needs, "
            f"where the best {kind} option does not"
        )
    if decided == JOBS:
        if top.jobs_served >= jobs:
            served = {1: "the job", 2: "both jobs"}.get(jobs, f"all {jobs:,} jobs")
            if core.facts.get("workload.kind") == "vdi":
                served = served.replace("jobs", "users").replace("the job", "the user")
            return f"it serves {served}, where the best {kind} option serves {other.jobs_served}"
        return (
            f"it serves more {counted(2, core.facts).split(' ', 1)[1]} than any other "
            f"option (the best {kind} option serves {other.jobs_served})"
        )
    if decided == STALE:
        return (
            f"it is a current card, where the best {kind} option is one nobody can say is "
            f"still made (launched in {other.sku.launch_year})"
        )
    if decided == OUTCLASSED and top is not None:
        return (
            f"the best {kind} option, {other.count * other.hosts} × {other.sku.name}, is "
            f"slower and dearer ({outclassed_words(core, other, top)}), and the rules' "
            f"lean towards {kind} cards does not buy that"
        )
    chosen = core.chosen
    if (core.shape_scores[chosen.shape], chosen.score) > (
        core.shape_scores[runner.shape],
        runner.score,
    ):
        # A later criterion agrees with the score: the rule that moved it is the reason.
        return _rule_reason(core, runner) or "it meets every requirement at the best rank"
    if decided == PRICED:
        return f"its price is known, where the best {kind} option is priced on quote"
    if decided == SHORT:
        return (
            f"it gives the job the {top.cards_per_job} cards it is built for, where the best "
            f"{kind} option gives it {other.cards_per_job}"
        )
    if decided == REPLACE:
        return f"it keeps the cards already in the host, where the best {kind} option replaces them"
    if decided is not None and decided > SCORE:
        return f"it scores as well as the best {kind} option and costs less over its life"
    return _rule_reason(core, runner) or "it meets every requirement at the best rank"
