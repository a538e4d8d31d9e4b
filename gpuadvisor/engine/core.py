"""The engine's core: facts -> fired rules, eliminated options, the chosen (shape,
class) pair and its ranked options. No words: :mod:`gpuadvisor.decision` phrases what
this concludes.

The procedure, in the order it runs:

1. Preference rules whose condition holds *fire*: each adds its weights to the shapes
   and classes it names (fix-first rules fire the same way; the decision lists them as
   "fix this first").
2. Every purchase option (shape × SKU × count, see :mod:`gpuadvisor.engine.options`) is
   checked against every active constraint rule; an option that a constraint does not
   prove acceptable is eliminated, with that rule recorded.
3. Each (shape, class) pair that still has options is ranked by what its first option
   serves: every wanted job within the budget over all the hosts it needs first (the
   budget is for the whole need), then the most wanted jobs served (capacity comes
   before preference), then
   cards already in the host that serve as many (buy nothing), then a priced pick before
   one on quote (a price nobody knows cannot be held to the budget), then the shape's
   score, then the whole score (shape score + class score); ties go to the simpler
   shape, then the cheaper pick (:func:`pair_order` has the whole order).
4. Within each pair, options are ranked the same way: jobs served, buying nothing, then
   the objective's measure (:mod:`gpuadvisor.engine.ranking`).

Facts the policy derives (:func:`gpuadvisor.engine.facts.derive_facts`) are worked out
again on every run, so a run with one fact changed sees them consistent.

:class:`Engine` is the object callers hold: one catalog, one rule base, and every cache
their decisions share. Nothing here is I/O; the same inputs always give the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import ClassVar, NamedTuple

from gpuadvisor.engine.costs import lifecycle_cost_usd
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import DERIVED_READS, derive_facts
from gpuadvisor.engine.memo import PAIRS, ConstraintMemo, OptionSet, Verdict, eliminations
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.options import OPTION_SHAPES as SHAPES
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.ranking import rank_inputs, short_of_cards
from gpuadvisor.engine.rules import Rule, RuleBase
from gpuadvisor.engine.suitability import meets_target, stale
from gpuadvisor.engine.wholeneed import whole_need_term
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.vocabulary import CLASSES, GpuClass, Shape


class PairResult:
    """One (shape, class) pair: its score, its options still alive ranked best first,
    and what eliminated the others. Immutable by convention; a plain class with slots
    (twelve are made per decision), equal to another when its shape, class, score and
    ranked options are."""

    __slots__ = ("_counts", "class_", "ranked", "score", "shape", "verdicts", "within")

    def __init__(
        self,
        shape: Shape,
        class_: GpuClass,
        score: int,
        ranked: tuple[Option, ...],
        verdicts: tuple[Verdict, ...],
        within: int,
    ) -> None:
        self.shape: Shape = shape
        self.class_: GpuClass = class_
        self.score = score
        self.ranked = ranked
        #: The constraints' verdicts and this pair's options (a mask over the same set).
        self.verdicts = verdicts
        self.within = within
        self._counts: dict[str, int] | None = None

    @property
    def elimination_counts(self) -> dict[str, int]:
        """How many of this pair's options each constraint rule eliminated (worked out
        when asked: most decisions phrase only a few pairs)."""
        if self._counts is None:
            self._counts = eliminations(self.verdicts, self.within)
        return self._counts

    def _compared(self) -> tuple[str, str, int, tuple[Option, ...]]:
        return (self.shape, self.class_, self.score, self.ranked)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PairResult):
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        return (
            f"PairResult(shape={self.shape!r}, class_={self.class_!r}, score={self.score!r}, "
            f"ranked={self.ranked!r})"
        )


@dataclass(frozen=True)
class Core:
    """Everything the engine concluded, before it is phrased as a Decision."""

    facts: Mapping[str, Value]
    fired: tuple[Rule, ...]
    active_constraints: tuple[Rule, ...]
    #: Every purchase option considered, and what each active constraint eliminated.
    options: OptionSet
    verdicts: tuple[Verdict, ...]
    shape_scores: dict[Shape, int]
    class_scores: dict[GpuClass, int]
    pairs: tuple[PairResult, ...]
    chosen: PairResult
    runner_up: PairResult | None
    feasible: bool

    @property
    def top(self) -> Option | None:
        return self.chosen.ranked[0] if self.chosen.ranked else None

    def outcome(self) -> tuple[str, str, str | None, int, int]:
        return Outcome(self.chosen.shape, self.chosen.class_, self.top).key()


def _scores(fired: tuple[Rule, ...]) -> tuple[dict[Shape, int], dict[GpuClass, int]]:
    shape_scores: dict[Shape, int] = dict.fromkeys(SHAPES, 0)
    class_scores: dict[GpuClass, int] = dict.fromkeys(CLASSES, 0)
    for rule in fired:
        for shape, weight in rule.data.effect.shape.items():
            shape_scores[shape] += weight
        for gpu_class, weight in rule.data.effect.class_.items():
            class_scores[gpu_class] += weight
    return shape_scores, class_scores


def pair_order(
    shape_score: int,
    score: int,
    shape: Shape,
    gpu_class: GpuClass,
    top: Option | None,
    facts: Mapping[str, Value],
    policy: Policy,
) -> tuple[float, ...]:
    """Best pair first: one whose first option meets the stated latency target, then one
    that serves every wanted job within the budget over all the hosts it needs
    (:mod:`gpuadvisor.engine.wholeneed`), then the jobs it serves, then buying nothing,
    then a card nobody could say is still made and that is old for a long service after
    a current one, then a priced pick before one on quote, then one that gives a
    data-parallel job the cards it is built for, then one that keeps the cards already in
    the host before one that replaces them, then the shape's score (one card or several,
    split or not: what the purchase is), then the pair's whole score (shape and class),
    the simpler shape, the cheaper pick, the class. So a class preference chooses among
    purchases of the preferred shape, and never outweighs the shape: a data-center bonus
    does not turn two cards for two jobs into one. Keeping cards that give such a job
    fewer cards than it is built for is not buying nothing."""
    if top is None:
        return (
            1.0,
            1.0,
            0.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            -shape_score,
            -score,
            SHAPES.index(shape),
            float("inf"),
            CLASSES.index(gpu_class),
        )
    cost = lifecycle_cost_usd(top, facts)
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
        -shape_score,
        -score,
        SHAPES.index(shape),
        float("inf") if cost is None else cost,
        CLASSES.index(gpu_class),
    )


#: The preference rules that fire and the constraint rules that apply, for one set of facts.
Conditions = tuple[tuple[Rule, ...], tuple[Rule, ...]]


def run_core(
    facts: Mapping[str, Value], rules: RuleBase, memo: ConstraintMemo, conditions: Conditions
) -> Core:
    """The whole conclusion for these facts: fired rules, every option with the
    constraints that eliminate it, each (shape, class) pair's ranked options, the chosen
    pair and the runner-up. ``conditions`` is :meth:`Engine.conditions` of these facts."""
    fired, active = conditions
    shape_scores, class_scores = _scores(fired)
    options, verdicts = memo.judge(active, facts)
    eliminated = 0
    for verdict in verdicts:
        eliminated |= verdict.mask
    alive_bits = options.full & ~eliminated
    pairs: list[PairResult] = []
    ranking = rank_inputs(facts)
    for index, (shape, gpu_class) in enumerate(PAIRS):
        pairs.append(
            PairResult(
                shape,
                gpu_class,
                shape_scores[shape] + class_scores[gpu_class],
                memo.ranked(index, alive_bits, options, facts, ranking),
                verdicts,
                options.pair_bits[index],
            )
        )

    def order(pair: PairResult) -> tuple[float, ...]:
        top = pair.ranked[0] if pair.ranked else None
        return pair_order(
            shape_scores[pair.shape], pair.score, pair.shape, pair.class_, top, facts, rules.policy
        )

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
        options=options,
        verdicts=verdicts,
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

    def key(self) -> tuple[str, str, str | None, int, int]:
        """Equal keys, same answer (what :meth:`Core.outcome` returns): the shape, the
        class, the card, how many are bought and how many of the host's are kept. Every
        "no card meets every requirement" is the same answer, whichever pair the order
        happened to put first."""
        top = self.top
        if top is None:
            return ("", "", None, 0, 0)
        return (self.shape, self.class_, top.sku.id, top.count, top.kept)


def outcome_of(facts: Mapping[str, Value], memo: ConstraintMemo, conditions: Conditions) -> Outcome:
    """``run_core(facts, ...).outcome()`` and its top option, computed without phrasing
    material: no per-option elimination lists, only each pair's first-ranked option.

    What sensitivity's many re-runs need; ``tests/test_engine_oracle.py`` holds it, and
    :func:`run_core`, equal to a memo-free oracle over generated profiles.
    """
    memo.bound()
    fired, active = conditions
    shape_scores, class_scores = _scores(fired)
    options = memo.option_set(facts)
    eliminated = 0
    for rule in active:
        eliminated |= memo.mask(rule, facts, options)
    alive = options.full & ~eliminated
    best: tuple[tuple[float, ...], Shape, GpuClass, Option | None] | None = None
    ranking = rank_inputs(facts)
    pair_bits = options.pair_bits
    for pair, (shape, gpu_class) in enumerate(PAIRS):
        if not pair_bits[pair] & alive:
            continue  # nothing of this pair is left
        top = memo.best(pair, alive, options, facts, ranking)
        score = shape_scores[shape] + class_scores[gpu_class]
        key = pair_order(shape_scores[shape], score, shape, gpu_class, top, facts, memo.policy)
        if best is None or key < best[0]:
            best = (key, shape, gpu_class, top)
    if best is None:
        # Nothing alive anywhere: the order alone decides, as in run_core.
        for shape, gpu_class in PAIRS:
            score = shape_scores[shape] + class_scores[gpu_class]
            key = pair_order(shape_scores[shape], score, shape, gpu_class, None, facts, memo.policy)
            if best is None or key < best[0]:
                best = (key, shape, gpu_class, None)
    assert best is not None
    _, shape, gpu_class, top = best
    return Outcome(shape, gpu_class, top)


#: Rules with a reader of the facts their ``when`` reads and its verdicts by their values.
_Whens = tuple[tuple[Rule, Callable[[Mapping[str, Value]], object], dict[object, bool]], ...]


def reader(names: tuple[str, ...]) -> Callable[[Mapping[str, Value]], object]:
    """The values of ``names`` in facts as one key, read in C: equal keys, equal values.
    Facts that lack a name raise KeyError; :class:`Complete` facts read it as None."""
    return itemgetter(*names) if names else _no_names


def _no_names(facts: Mapping[str, Value]) -> object:
    return ()


#: One kind of rules (preferences or constraints): a reader of every fact their
#: ``when``s read, the rules holding by its values, and the rules themselves (:data:`_Whens`).
_Group = tuple[Callable[[Mapping[str, Value]], object], dict[object, tuple[Rule, ...]], _Whens]


def _group(rules: tuple[Rule, ...]) -> _Group:
    names = tuple(sorted({n for rule in rules for n in rule.when.names}))
    return reader(names), {}, tuple((rule, reader(rule.when.names), {}) for rule in rules)


class Complete(dict[str, Value]):
    """Facts in which a name they lack reads as None (``facts.get``), for readers."""

    def __missing__(self, name: str) -> Value:
        return None


class Engine:
    """One catalog and one rule base, and every cache their decisions share.

    Hold one for as long as the catalog and rules stay the same (a batch, a web server):
    the memo it owns (:class:`~gpuadvisor.engine.memo.ConstraintMemo`) makes later
    decisions and the what-would-change scan cheap. Nothing is cached on the catalog or
    on a rule, so two engines never see each other's state, and a cache lives exactly as
    long as its engine.
    """

    __slots__ = ("_derived", "_groups", "catalog", "memo", "rules")

    #: Bound on each of the engine's own caches (derived facts, conditions).
    MAX_ENTRIES: ClassVar[int] = 4096

    def __init__(self, catalog: Catalog, rules: RuleBase) -> None:
        self.catalog = catalog
        self.rules = rules
        self.memo = ConstraintMemo(catalog, rules.policy)
        self._derived: dict[tuple[Value, ...], dict[str, Value]] = {}
        #: Preferences, then constraints: a reader of every fact their ``when``s read
        #: (equal values, equal rules holding), the rules holding by those values, and
        #: each rule with its own reader and verdicts by the values it reads.
        self._groups: tuple[_Group, _Group] = (
            _group(rules.preferences),
            _group(rules.constraints),
        )

    def prepare(self, facts: Mapping[str, Value]) -> dict[str, Value]:
        """The facts with the policy's derived facts worked out from them."""
        key = tuple(map(facts.get, DERIVED_READS))
        derived = self._derived.get(key)
        if derived is None:
            if len(self._derived) > self.MAX_ENTRIES:
                self._derived.clear()
            derived = self._derived[key] = derive_facts(facts, self.rules.policy, self.catalog)
        return {**facts, **derived}

    def conditions(self, facts: Mapping[str, Value]) -> Conditions:
        """Which preferences fire and which constraints apply, for prepared facts (a
        re-run that changes a fact no ``when`` of a kind reads finds that kind here)."""
        preferences, constraints = self._groups
        try:
            return self._held(preferences, facts), self._held(constraints, facts)
        except KeyError:  # facts without every name a condition reads
            facts = Complete(facts)
            return self._held(preferences, facts), self._held(constraints, facts)

    def _held(self, group: _Group, facts: Mapping[str, Value]) -> tuple[Rule, ...]:
        read, holding, whens = group
        key = read(facts)
        found = holding.get(key)
        if found is None:
            if len(holding) > self.MAX_ENTRIES:
                holding.clear()
            found = holding[key] = self._holding(whens, facts)
        return found

    def _holding(self, group: _Whens, facts: Mapping[str, Value]) -> tuple[Rule, ...]:
        """The rules of ``group`` whose ``when`` holds, each judged once per value of
        the facts it reads."""
        held = []
        for rule, read, seen in group:
            key = read(facts)
            verdict = seen.get(key)
            if verdict is None:
                if len(seen) > self.MAX_ENTRIES:
                    seen.clear()
                verdict = seen[key] = rule.when.holds(facts)
            if verdict:
                held.append(rule)
        return tuple(held)

    def run(self, facts: Mapping[str, Value]) -> Core:
        """Everything concluded from these facts (what a decision is phrased from)."""
        prepared = self.prepare(facts)
        return run_core(prepared, self.rules, self.memo, self.conditions(prepared))

    def outcome(self, facts: Mapping[str, Value]) -> Outcome:
        """Only what the answer comes to (shape, class, first pick), computed faster."""
        prepared = self.prepare(facts)
        return outcome_of(prepared, self.memo, self.conditions(prepared))
