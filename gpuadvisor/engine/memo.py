"""What the engine remembers between runs on one catalog: the purchase options of each
plan, and every constraint's verdict on them.

A verdict depends only on the option and on the decision facts the constraint's
``require`` reads, so re-runs that change one fact (the what-would-change scan) and
batches of similar profiles re-use almost all of them. Nothing here knows about words
or reports; :class:`gpuadvisor.engine.core.Engine` owns one memo per catalog.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import NamedTuple

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import sku_facts
from gpuadvisor.engine.options import (
    OPTION_SHAPES,
    RANK_READS,
    Option,
    option_plan,
    options_of_plan,
    plan_inputs,
    rank_key,
)
from gpuadvisor.engine.rules import Rule
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.vocabulary import CLASSES, GpuClass, Shape


class Verdict(NamedTuple):
    """One constraint rule and the options it eliminates (bit ``i``: option ``i``)."""

    rule_id: str
    mask: int


def eliminations(verdicts: tuple[Verdict, ...], within: int) -> Counter[str]:
    """How many options of ``within`` (a bit mask) each rule eliminated, the rules in
    the order a scan of the options meets them (lowest option first, then rule order)."""
    found = []
    for order, (rule_id, mask) in enumerate(verdicts):
        here = mask & within
        if here:
            found.append(((here & -here).bit_length(), order, rule_id, here.bit_count()))
    found.sort()
    return Counter({rule_id: count for _, _, rule_id, count in found})


#: Every (shape, class) pair, in the order the engine lists them.
PAIRS: tuple[tuple[Shape, GpuClass], ...] = tuple((s, c) for s in OPTION_SHAPES for c in CLASSES)


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


class ConstraintMemo:
    """Constraint results remembered across engine runs on one catalog (owned by an
    :class:`gpuadvisor.engine.core.Engine`, never by the catalog or a rule).

    A constraint's verdict on an option depends only on the option (shape, SKU, count)
    and the decision-wide facts its ``require`` reads, so sensitivity's many re-runs,
    which change one fact at a time, and batches of similar profiles re-use almost every
    verdict. A ``require`` that reads no ``option.*`` fact is judged once per SKU.
    Verdicts are kept per option, and per option set as a bit mask of the options a
    rule eliminates. Every key holds all a verdict depends on: the rule's id and its
    ``require`` source, the value of each decision fact the ``require`` reads, and the
    option (whose facts follow from the catalog the memo was made for). Bounded.
    """

    MAX_VERDICTS = 200_000

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.sku_facts = {sku.id: sku_facts(sku) for sku in catalog.skus}
        self._tables: dict[tuple[object, ...], dict[str, bool]] = {}
        self._option_sets: dict[tuple[int, ...], OptionSet] = {}
        self._plans: dict[tuple[Value, ...], tuple[int, ...]] = {}
        self._size = 0

    def bound(self) -> None:
        """Forget everything once the memo holds more than its bound."""
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

    def judge(
        self, active: tuple[Rule, ...], facts: Mapping[str, Value]
    ) -> tuple[OptionSet, tuple[Verdict, ...]]:
        """Every option for these facts, and the options each active constraint
        eliminates, as a bit mask over them.

        Constraints that read no option.* fact come first, then the others, each group
        in rule order.
        """
        self.bound()
        options = self.option_set(facts)
        ordered = [r for r in active if not r.require_per_option]
        ordered += [r for r in active if r.require_per_option]
        return options, tuple(Verdict(rule.id, self.mask(rule, facts, options)) for rule in ordered)

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
