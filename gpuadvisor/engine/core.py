"""Findings -> recommendation, picks, rejected options and their reasons.

The procedure, in the order it runs:

1. Preference rules whose condition holds *fire*: each adds its weights to the shapes
   and classes it names, and fix-first rules become "fix this first" items.
2. Every purchase option (shape × SKU × count, see :mod:`gpuadvisor.engine.options`) is checked
   against every active constraint rule; an option that a constraint does not prove
   acceptable is eliminated, with that rule recorded.
3. Each (shape, class) pair that still has options is scored: shape score + class
   score. The best pair wins; ties go to the simpler shape, then the cheaper pick.
   A small margin is reported as a near tie.
4. Within the winning pair, options are ranked by the objective's ranking
   (:data:`gpuadvisor.engine.options.RANKING`); the top three are the picks.

Nothing here is I/O; the same inputs always give the same decision.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, NamedTuple

from gpuadvisor import __version__
from gpuadvisor.decision.model import (
    Alternative,
    Decision,
    EvidenceRef,
    FactValue,
    Finding,
    FixFirst,
    Inputs,
    MeasuredGpu,
    Meta,
    Pick,
    Provenance,
    Recommendation,
    Rejected,
)
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import FactSet, sku_facts
from gpuadvisor.engine.factspec import FACTS_BY_NAME, HOST_FACTS
from gpuadvisor.engine.options import (
    ASSUMPTIONS,
    RANK_READS,
    RANKING,
    Option,
    energy_cost_usd,
    lifecycle_cost_usd,
    option_plan,
    options_of_plan,
    plan_inputs,
    rank_key,
    rank_options,
    vgpu_licence,
)
from gpuadvisor.engine.options import (
    OPTION_SHAPES as SHAPES,
)
from gpuadvisor.engine.rules import Rule, RuleBase
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.vocabulary import CLASSES, SEVERITY_ORDER, GpuClass, Shape, format_value

PICKS_SHOWN = 3


class Evaluated(NamedTuple):
    """One option and the constraint rules that eliminate it (none: it is alive)."""

    option: Option
    eliminated_by: tuple[str, ...]


@dataclass(frozen=True)
class PairResult:
    shape: Shape
    class_: GpuClass
    score: int
    ranked: tuple[Option, ...]
    eliminated: tuple[Evaluated, ...]

    @cached_property
    def elimination_counts(self) -> Counter[str]:
        """How many of this pair's options each constraint rule eliminated."""
        return Counter(rid for e in self.eliminated for rid in e.eliminated_by)


@dataclass(frozen=True)
class Core:
    """Everything the engine concluded, before it is phrased as a Decision."""

    facts: Mapping[str, Value]
    fired: tuple[Rule, ...]
    active_constraints: tuple[Rule, ...]
    evaluated: tuple[Evaluated, ...]
    shape_scores: dict[Shape, int]
    class_scores: dict[GpuClass, int]
    pairs: tuple[PairResult, ...]
    chosen: PairResult
    runner_up: PairResult | None
    feasible: bool

    @property
    def top(self) -> Option | None:
        return self.chosen.ranked[0] if self.chosen.ranked else None

    def outcome(self) -> tuple[str, str, str | None, int]:
        return Outcome(self.chosen.shape, self.chosen.class_, self.top).key()


class OptionSet:
    """The options of one plan (see :func:`gpuadvisor.engine.options.option_plan`), indexed:
    option ``i`` is bit ``i`` of the masks :class:`ConstraintMemo` keeps, and
    ``pairs[j]`` lists the options of the ``j``-th (shape, class) pair in :data:`PAIRS`
    order."""

    __slots__ = ("best", "full", "masks", "options", "pair_bits", "pairs", "sku_bits")

    def __init__(self, options: list[Option]) -> None:
        self.options = options
        self.full = (1 << len(options)) - 1
        self.sku_bits: dict[str, int] = {}
        members: dict[tuple[str, str], list[int]] = {}
        for index, option in enumerate(options):
            self.sku_bits[option.sku.id] = self.sku_bits.get(option.sku.id, 0) | 1 << index
            members.setdefault((option.shape, option.sku.segment), []).append(index)
        self.pairs: tuple[tuple[int, ...], ...] = tuple(
            tuple(members.get(pair, ())) for pair in PAIRS
        )
        self.pair_bits = tuple(sum(1 << i for i in indices) for indices in self.pairs)
        #: What the memo worked out for these options (kept here, not by the set's id,
        #: so nothing can outlive the set or be mistaken for another set's).
        self.masks: dict[tuple[object, ...], int] = {}
        self.best: dict[tuple[object, ...], int | None] = {}


#: Every (shape, class) pair, in the order the engine lists them.
PAIRS: tuple[tuple[Shape, GpuClass], ...] = tuple((s, c) for s in SHAPES for c in CLASSES)


class ConstraintMemo:
    """Constraint results remembered across engine runs on one catalog.

    A constraint's verdict on an option depends only on the option (shape, SKU, count)
    and the decision-wide facts its ``require`` reads, so sensitivity's many re-runs,
    which change one fact at a time, and batches of similar profiles re-use almost every
    verdict. A ``require`` that reads no ``option.*`` fact is judged once per SKU.
    Verdicts are kept per option, and per option set as a bit mask of the options a
    rule eliminates. The memo lives with its catalog (``Catalog.scratch``) and is
    bounded.
    """

    MAX_VERDICTS = 200_000

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.sku_facts = {sku.id: sku_facts(sku) for sku in catalog.skus}
        self._tables: dict[tuple[object, ...], dict[str, bool]] = {}
        self._option_sets: dict[tuple[int, ...], OptionSet] = {}
        self._plans: dict[tuple[Value, ...], tuple[int, ...]] = {}
        self._size = 0

    @classmethod
    def for_catalog(cls, catalog: Catalog) -> ConstraintMemo:
        memo = catalog.scratch.get("constraint_memo")
        if not isinstance(memo, cls):
            memo = catalog.scratch["constraint_memo"] = cls(catalog)
        return memo

    def _bound(self) -> None:
        if self._size > self.MAX_VERDICTS:
            self._tables.clear()
            self._option_sets.clear()
            self._plans.clear()
            self._size = 0

    def option_set(self, facts: Mapping[str, Value]) -> OptionSet:
        inputs = plan_inputs(facts)
        plan = self._plans.get(inputs)
        if plan is None:
            plan = self._plans[inputs] = option_plan(self.catalog.skus, facts)
            self._size += 1
        found = self._option_sets.get(plan)
        if found is None:
            found = self._option_sets[plan] = OptionSet(options_of_plan(self.catalog.skus, plan))
            self._size += len(found.options)
        return found

    def mask(self, rule: Rule, facts: Mapping[str, Value], options: OptionSet) -> int:
        """The options of ``options`` that ``rule``'s ``require`` does not accept."""
        require = rule.require
        assert require is not None
        # The source text is part of the key: an overlay may redefine a rule id.
        key = (rule.id, require.source, *(facts.get(n) for n in rule.require_reads))
        found = options.masks.get(key)
        if found is not None:
            return found
        table = self._tables.setdefault(key, {})
        mask = 0
        if rule.require_per_option:
            for index, option in enumerate(options.options):
                ok = table.get(option.key)
                if ok is None:
                    layers = (option.facts(), self.sku_facts[option.sku.id], facts)
                    ok = table[option.key] = require.holds(layers)
                    self._size += 1
                if not ok:
                    mask |= 1 << index
        else:
            for sku_id, bits in options.sku_bits.items():
                ok = table.get(sku_id)
                if ok is None:
                    ok = table[sku_id] = require.holds(({}, self.sku_facts[sku_id], facts))
                    self._size += 1
                if not ok:
                    mask |= bits
        options.masks[key] = mask
        self._size += 1
        return mask

    def evaluate(self, active: tuple[Rule, ...], facts: Mapping[str, Value]) -> list[Evaluated]:
        """Every option for these facts, with the constraints that eliminate it.

        Constraints that read no option.* fact come first, then the others, each group
        in rule order.
        """
        self._bound()
        options = self.option_set(facts)
        ordered = [r for r in active if not r.require_per_option]
        ordered += [r for r in active if r.require_per_option]
        masks = [(rule.id, self.mask(rule, facts, options)) for rule in ordered]
        failed: list[list[str]] = [[] for _ in options.options]
        for rule_id, bits in masks:
            while bits:
                low = bits & -bits
                failed[low.bit_length() - 1].append(rule_id)
                bits ^= low
        return [
            Evaluated(option, tuple(why))
            for option, why in zip(options.options, failed, strict=True)
        ]

    def best(
        self, pair: int, alive: int, options: OptionSet, facts: Mapping[str, Value]
    ) -> Option | None:
        """The first-ranked option of one pair among the ``alive`` ones."""
        here = options.pair_bits[pair] & alive
        key = (pair, here, *(facts.get(n) for n in RANK_READS))
        if key in options.best:
            found = options.best[key]
            return None if found is None else options.options[found]
        candidates = [i for i in options.pairs[pair] if here >> i & 1]
        index: int | None = None
        if candidates:
            rank = rank_key([options.options[i] for i in candidates], facts)
            index = min(candidates, key=lambda i: rank(options.options[i]))
        options.best[key] = index
        self._size += 1
        return None if index is None else options.options[index]


def _scores(fired: tuple[Rule, ...]) -> tuple[dict[Shape, int], dict[GpuClass, int]]:
    shape_scores: dict[Shape, int] = dict.fromkeys(SHAPES, 0)
    class_scores: dict[GpuClass, int] = dict.fromkeys(CLASSES, 0)
    for rule in fired:
        for shape, weight in rule.data.effect.shape.items():
            shape_scores[shape] += weight
        for gpu_class, weight in rule.data.effect.class_.items():
            class_scores[gpu_class] += weight
    return shape_scores, class_scores


def _pair_order(
    score: int, shape: Shape, gpu_class: GpuClass, top: Option | None, facts: Mapping[str, Value]
) -> tuple[float, ...]:
    """Best pair first: score, then the simpler shape, the cheaper pick, the class."""
    cost = lifecycle_cost_usd(top, facts) if top is not None else float("inf")
    return (-score, SHAPES.index(shape), cost, CLASSES.index(gpu_class))


def _memo(catalog: Catalog, memo: ConstraintMemo | None) -> ConstraintMemo:
    if memo is not None and memo.catalog is catalog:
        return memo
    return ConstraintMemo.for_catalog(catalog)


def run_core(
    facts: Mapping[str, Value],
    catalog: Catalog,
    rules: RuleBase,
    memo: ConstraintMemo | None = None,
) -> Core:
    fired = tuple(rule for rule in rules.preferences if rule.when.holds(facts))
    active = tuple(rule for rule in rules.constraints if rule.when.holds(facts))
    shape_scores, class_scores = _scores(fired)
    evaluated = _memo(catalog, memo).evaluate(active, facts)

    groups: dict[tuple[str, str], list[Evaluated]] = {}
    for e in evaluated:
        groups.setdefault((e.option.shape, e.option.sku.segment), []).append(e)
    pairs: list[PairResult] = []
    for shape, gpu_class in PAIRS:
        mine = groups.get((shape, gpu_class), [])
        alive = rank_options([e.option for e in mine if not e.eliminated_by], facts)
        pairs.append(
            PairResult(
                shape,
                gpu_class,
                shape_scores[shape] + class_scores[gpu_class],
                tuple(alive),
                tuple(e for e in mine if e.eliminated_by),
            )
        )

    def order(pair: PairResult) -> tuple[float, ...]:
        top = pair.ranked[0] if pair.ranked else None
        return _pair_order(pair.score, pair.shape, pair.class_, top, facts)

    feasible_pairs = sorted((p for p in pairs if p.ranked), key=order)
    if feasible_pairs:
        chosen = feasible_pairs[0]
        runner = feasible_pairs[1] if len(feasible_pairs) > 1 else None
    else:
        chosen = sorted(pairs, key=order)[0]
        runner = None
    return Core(
        facts=facts,
        fired=fired,
        active_constraints=active,
        evaluated=tuple(evaluated),
        shape_scores=shape_scores,
        class_scores=class_scores,
        pairs=tuple(pairs),
        chosen=chosen,
        runner_up=runner,
        feasible=bool(feasible_pairs),
    )


class Outcome(NamedTuple):
    """What a decision comes to: the chosen shape and class and the first pick."""

    shape: Shape
    class_: GpuClass
    top: Option | None

    def key(self) -> tuple[str, str, str | None, int]:
        """Equal keys, same answer (what :meth:`Core.outcome` returns)."""
        top = self.top
        return (self.shape, self.class_, top.sku.id if top else None, top.count if top else 0)


def outcome_of(
    facts: Mapping[str, Value],
    catalog: Catalog,
    rules: RuleBase,
    memo: ConstraintMemo | None = None,
) -> Outcome:
    """``run_core(facts, ...).outcome()`` and its top option, computed without phrasing
    material: no per-option elimination lists, only each pair's first-ranked option.

    What sensitivity's many re-runs need; ``tests/test_decide.py`` holds it equal to
    :func:`run_core` over generated profiles and changed facts.
    """
    memo = _memo(catalog, memo)
    memo._bound()
    fired = tuple(rule for rule in rules.preferences if rule.when.holds(facts))
    shape_scores, class_scores = _scores(fired)
    options = memo.option_set(facts)
    eliminated = 0
    for rule in rules.constraints:
        if rule.when.holds(facts):
            eliminated |= memo.mask(rule, facts, options)
    alive = options.full & ~eliminated
    best: tuple[tuple[float, ...], Shape, GpuClass, Option | None] | None = None
    for pair, (shape, gpu_class) in enumerate(PAIRS):
        top = memo.best(pair, alive, options, facts)
        key = _pair_order(
            shape_scores[shape] + class_scores[gpu_class], shape, gpu_class, top, facts
        )
        # Feasible pairs first; among infeasible ones (nothing alive anywhere) the order
        # alone decides, as in run_core.
        ranked = (top is None, key)
        if best is None or ranked < (best[3] is None, best[0]):
            best = (key, shape, gpu_class, top)
    assert best is not None
    _, shape, gpu_class, top = best
    return Outcome(shape, gpu_class, top)


# -- phrasing -----------------------------------------------------------------------


# Output models below are built with ``build`` (no validation): every value comes from
# validated inputs and the engine itself, and validating them again would cost a third
# of a decision. ``tests/test_decide.py`` re-validates whole decisions to keep this honest.


def _fact_values(rule: Rule, facts: FactSet) -> tuple[FactValue, ...]:
    values = []
    for name in rule.fact_names:
        spec = FACTS_BY_NAME[name]
        values.append(
            FactValue.build(
                name=name,
                value=facts.values.get(name),
                unit=spec.unit,
                source=facts.sources.get(name, spec.source),
            )
        )
    return tuple(values)


def _evidence_text(values: tuple[FactValue, ...]) -> str:
    parts = []
    for fact in values:
        unit = f" {fact.unit}" if fact.unit and fact.value is not None else ""
        parts.append(f"{fact.name} = {format_value(fact.value)}{unit} ({fact.source})")
    return "; ".join(parts)


def _effect_text(rule: Rule) -> str:
    parts = []
    effect = rule.data.effect
    for name, weight in [*effect.shape.items(), *effect.class_.items()]:
        parts.append(f"{'favours' if weight > 0 else 'counts against'} {name} ({weight:+d})")
    if effect.fix_first:
        parts.append("fix before buying")
    return "; ".join(parts) or "informational"


def _pick(option: Option, facts: Mapping[str, Value], rank: int, ranking: str) -> Pick:
    sku = option.sku
    energy = energy_cost_usd(option, facts)
    total = option.total_price_usd
    licence = vgpu_licence(facts)
    licence_cost = licence[1] if licence else 0.0
    need = facts["workload.vram_need_gib"]
    years = format_value(facts["requirements.lifecycle_years"])
    per = "per card" if option.count > 1 else ""
    why = (
        (
            f"#{rank} by {ranking}: {format_value(option.vram_per_job_gib)} GiB for one job "
            f"(needs {format_value(need)} GiB), {format_value(sku.memory_bandwidth_gbs)} GB/s "
            f"{per}, ${total + energy + licence_cost:,.0f} over {years} years with electricity"
            + (f" and {licence[0]} licences." if licence else ".")
        )
        .replace("  ", " ")
        .replace(" ,", ",")
    )
    return Pick.build(
        sku=sku.id,
        name=sku.name,
        count=option.count,
        jobs_served=option.jobs_served,
        price_usd=sku.price_usd,
        total_price_usd=total,
        energy_cost_usd=round(energy, 2),
        licence_cost_usd=round(licence_cost, 2),
        lifecycle_cost_usd=round(total + energy + licence_cost, 2),
        price_date=sku.price_date.isoformat(),
        price_kind=sku.price_kind,
        why=why,
        segment=sku.segment,
        vram_gib=sku.vram_gib,
        memory_bandwidth_gbs=sku.memory_bandwidth_gbs,
        ecc=sku.ecc,
        frame_lock=sku.frame_lock,
        vgpu=sku.vgpu,
        cooling=sku.cooling,
        slot_width=sku.slot_width,
        tdp_w=sku.tdp_w,
        vram_per_job_gib=option.vram_per_job_gib,
    )


def _shape_phrase(option: Option) -> str:
    name = option.sku.name
    if option.shape == "single-larger-gpu":
        return f"one {name}"
    if option.shape == "two-independent-jobs":
        if option.jobs_served > option.count:
            return (
                f"{option.count} × {name}, {option.jobs_served} independent jobs spread over them"
            )
        return f"{option.count} × {name}, one independent job per card"
    return f"{option.count} × {name} with the model split across them"


def _lower_first(text: str) -> str:
    """Lower-case the first word to continue a sentence, unless it is an acronym."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first.isupper():
        return text
    return text[:1].lower() + text[1:]


def _reason(core: Core) -> str:
    """The strongest fired rule behind the chosen shape or class."""
    best: tuple[int, str] | None = None
    for rule in core.fired:
        effect = rule.data.effect
        weight = max(
            effect.shape.get(core.chosen.shape, 0), effect.class_.get(core.chosen.class_, 0)
        )
        if weight > 0 and (best is None or weight > best[0]):
            best = (weight, rule.data.title)
    return (
        _lower_first(best[1].rstrip(".")) if best else "it meets every requirement at the best rank"
    )


def _headline(core: Core, fix_first: tuple[FixFirst, ...]) -> str:
    top = core.top
    if top is None:
        return (
            "No card in the catalog meets every requirement; see the findings for which "
            "requirement to relax."
        )
    each = " each" if top.count > 1 else ""
    text = (
        f"Buy {_shape_phrase(top)} ({format_value(top.sku.vram_gib)} GiB{each}, "
        f"{top.sku.segment} class, about ${top.total_price_usd:,.0f}): {_reason(core)}."
    )
    if fix_first:
        first = _lower_first(fix_first[0].title.rstrip("."))
        more = f" and {len(fix_first) - 1} more" if len(fix_first) > 1 else ""
        text = f"Fix first: {first}{more}. After that: {text[0].lower()}{text[1:]}"
    return text


def _weights(rule: Rule, axis: str) -> Mapping[Any, int]:
    effect = rule.data.effect
    weights: Mapping[Any, int] = effect.shape if axis == "shape" else effect.class_
    return weights


def _rejections(core: Core) -> list[Rejected]:
    rejected: list[Rejected] = []
    chosen = core.chosen
    scores: dict[str, Mapping[Any, int]] = {
        "shape": core.shape_scores,
        "class": core.class_scores,
    }
    winners = {"shape": chosen.shape, "class": chosen.class_}
    groups: list[tuple[str, str]] = [("shape", s) for s in SHAPES if s != chosen.shape]
    groups += [("class", c) for c in CLASSES if c != chosen.class_]
    for axis, name in groups:
        pairs = [p for p in core.pairs if (p.shape if axis == "shape" else p.class_) == name]
        score = scores[axis][name]
        winner = scores[axis][winners[axis]]
        if not any(p.ranked for p in pairs):
            counts: Counter[str] = Counter()
            for pair in pairs:
                counts.update(pair.elimination_counts)
            because = tuple(rid for rid, _ in counts.most_common(4))
            reason = "no option of this kind meets every requirement"
        else:
            against = [r.id for r in core.fired if _weights(r, axis).get(name, 0) < 0]
            favour = [r.id for r in core.fired if _weights(r, axis).get(winners[axis], 0) > 0]
            because = tuple(dict.fromkeys(against + favour))
            if score == winner:
                reason = (
                    f"tied on score ({score:+d}); lost on the tie-break "
                    "(simpler shape, then lower cost)"
                )
            else:
                reason = f"scored {score:+d} against {winner:+d} for the chosen {axis}"
        rejected.append(Rejected.build(option=name, because=because, reason=reason))
    return rejected


def _alternatives(core: Core, ranking: str) -> list[Alternative]:
    alternatives = []
    for pair in sorted(
        core.pairs, key=lambda p: (-p.score, SHAPES.index(p.shape), CLASSES.index(p.class_))
    ):
        if pair is core.chosen:
            continue
        counts = pair.elimination_counts
        alternatives.append(
            Alternative.build(
                shape=pair.shape,
                class_=pair.class_,
                score=pair.score,
                best=_pick(pair.ranked[0], core.facts, 1, ranking) if pair.ranked else None,
                eliminated_by=() if pair.ranked else tuple(r for r, _ in counts.most_common()),
            )
        )
    return alternatives


def _confidence(core: Core) -> tuple[str, str | None]:
    if not core.feasible:
        return "low", None
    if core.runner_up is None:
        return "high", None
    margin = core.chosen.score - core.runner_up.score
    runner = f"{core.runner_up.shape} / {core.runner_up.class_}"
    if margin >= 4:
        return "high", None
    if margin >= 2:
        return "medium", None
    return "low", f"{runner} scored {core.runner_up.score:+d} against {core.chosen.score:+d}"


def _rule_finding(
    rule: Rule,
    core: Core,
    values: tuple[FactValue, ...],
    effect: str,
    kind: Literal["preference", "constraint"],
) -> Finding:
    """A rule's finding: its texts filled with the decision's facts, its evidence."""
    return Finding.build(
        rule=rule.id,
        category=rule.data.category,
        severity=rule.data.severity,
        title=rule.data.title,
        evidence=_evidence_text(values),
        rationale=rule.rationale_text(core.facts),
        action=rule.action_text(core.facts),
        effect=effect,
        kind=kind,
        facts=values,
    )


def _phrase(rule: Rule, core: Core, facts: FactSet) -> FixFirst | Finding:
    """A fired preference rule as a finding; cached on the rule by every value it shows."""
    key = tuple(
        (name, facts.values.get(name), facts.sources.get(name))
        for name in (*rule.fact_names, *rule.placeholders)
    )
    known = rule.phrased.get(key)
    if isinstance(known, (FixFirst, Finding)):
        return known
    values = _fact_values(rule, facts)
    phrased: FixFirst | Finding
    if rule.data.effect.fix_first:
        phrased = FixFirst.build(
            rule=rule.id,
            category=rule.data.category,
            title=rule.data.title,
            evidence=_evidence_text(values),
            action=rule.action_text(core.facts),
            rationale=rule.rationale_text(core.facts),
            facts=values,
        )
    else:
        phrased = _rule_finding(rule, core, values, _effect_text(rule), "preference")
    if len(rule.phrased) > 512:
        rule.phrased.clear()
    rule.phrased[key] = phrased
    return phrased


def _findings(core: Core, facts: FactSet) -> tuple[list[FixFirst], list[Finding]]:
    fixes: list[FixFirst] = []
    findings: list[Finding] = []
    for rule in core.fired:
        phrased = _phrase(rule, core, facts)
        if isinstance(phrased, FixFirst):
            fixes.append(phrased)
        else:
            findings.append(phrased)
    total = len(core.evaluated)
    removed_by: dict[str, list[Evaluated]] = {}
    for e in core.evaluated:
        for rule_id in e.eliminated_by:
            removed_by.setdefault(rule_id, []).append(e)
    for rule in core.active_constraints:
        removed = removed_by.get(rule.id, [])
        if not removed:
            continue
        names = sorted({e.option.sku.name for e in removed})
        sample = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        values = _fact_values(rule, facts)
        effect = f"excluded {len(removed)} of {total} options ({sample})"
        findings.append(_rule_finding(rule, core, values, effect, "constraint"))
    if not core.feasible:
        counts = Counter({rid: len(removed) for rid, removed in removed_by.items()})
        top = ", ".join(f"{rid} ({n} options)" for rid, n in counts.most_common(5))
        findings.append(
            Finding.build(
                rule="ENGINE-NOFIT-001",
                category="cost",
                severity="blocker",
                title="No card in the catalog meets every requirement together",
                evidence=f"every one of {total} options was excluded; most often by {top}",
                rationale=(
                    "Each requirement alone may be met, but no single option meets all of "
                    "them at once. gpuadvisor never relaxes a requirement on its own."
                ),
                action=(
                    "Relax the requirement named most often above (budget, chassis, power "
                    "or memory need), or add an approved SKU through --catalog."
                ),
                effect="no pick can be made",
                kind="engine",
            )
        )
    kinds = {"engine": 0, "preference": 1, "constraint": 2}
    findings.sort(key=lambda f: (kinds[f.kind], SEVERITY_ORDER[f.severity], f.category, f.rule))
    fixes.sort(key=lambda f: f.rule)
    return fixes, findings


def _measured(facts: FactSet) -> tuple[FactValue, ...]:
    values = []
    for spec in HOST_FACTS:
        value = facts.values.get(spec.name)
        if value is None or spec.name == "host.evidence_present":
            continue
        values.append(
            FactValue.build(
                name=spec.name,
                value=value,
                unit=spec.unit,
                source=facts.sources.get(spec.name, "evidence"),
            )
        )
    return tuple(values)


def _number_or_none(value: Value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def decide(
    profile: Profile,
    catalog: Catalog,
    rules: RuleBase,
    facts: FactSet,
    *,
    profile_sha256: str = "",
    profile_file: str = "",
    evidence: tuple[EvidenceRef, ...] = (),
    measured_gpus: tuple[MeasuredGpu, ...] = (),
    sensitivity: bool = True,
) -> Decision:
    memo = ConstraintMemo.for_catalog(catalog)
    core = run_core(facts.values, catalog, rules, memo)
    objective = str(facts.values["workload.objective"])
    ranking = RANKING.get(objective, RANKING["correctness"])
    fixes, findings = _findings(core, facts)
    confidence, near_tie = _confidence(core)
    top = core.top
    picks = tuple(
        _pick(option, core.facts, rank, ranking)
        for rank, option in enumerate(core.chosen.ranked[:PICKS_SHOWN], start=1)
    )
    from gpuadvisor.engine.sensitivity import sensitivity_of

    flips = sensitivity_of(core, catalog, rules, memo) if sensitivity else ()
    return Decision.build(
        meta=Meta.build(
            title=profile.meta.title,
            requester=profile.meta.requester,
            notes=profile.meta.notes,
            isv_apps=profile.requirements.isv_apps,
        ),
        recommendation=Recommendation.build(
            shape=core.chosen.shape,
            class_=core.chosen.class_,
            gpu_count=top.count if top else 0,
            headline=_headline(core, tuple(fixes)),
            confidence=confidence,
            near_tie=near_tie,
            ranking=ranking,
        ),
        fix_first=tuple(fixes),
        findings=tuple(findings),
        picks=picks,
        rejected=tuple(_rejections(core)),
        alternatives=tuple(_alternatives(core, ranking)),
        sensitivity=tuple(flips),
        scores={
            "shape": {str(k): v for k, v in core.shape_scores.items()},
            "class": {str(k): v for k, v in core.class_scores.items()},
        },
        assumptions=ASSUMPTIONS,
        measured=_measured(facts),
        gpus=measured_gpus,
        vram_need_gib=_number_or_none(facts.values.get("workload.vram_need_gib")),
        lifecycle_years=_number_or_none(facts.values.get("requirements.lifecycle_years")),
        inputs=Inputs.build(
            profile_sha256=profile_sha256, profile_file=profile_file, evidence=evidence
        ),
        provenance=Provenance.build(
            gpuadvisor=__version__, catalog=catalog.version, rules=rules.version
        ),
    )
