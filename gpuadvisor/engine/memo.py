"""What the engine remembers between runs on one catalog: the purchase options of each
plan, and every constraint's verdict on them.

A verdict depends only on the option and on the decision facts the constraint's
``require`` reads, so re-runs that change one fact (the what-would-change scan) and
batches of similar profiles re-use almost all of them. Nothing here knows about words
or reports; :class:`gpuadvisor.engine.core.Engine` owns one memo per catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import ClassVar, NamedTuple

from gpuadvisor.engine.capacity import ecc_wanted, usable_gib
from gpuadvisor.engine.columns import compile_columns
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import sku_facts
from gpuadvisor.engine.makers import OptionMaker
from gpuadvisor.engine.option import PAIRS, Option
from gpuadvisor.engine.options import (
    kept_model,
    kept_options,
    plan_block_key,
    sku_block_key,
    sku_options,
)
from gpuadvisor.engine.optionset import BOUGHT, KEPT, Block, OptionSet, Rows, bit_indices
from gpuadvisor.engine.plan import Plan, option_plan, plan_inputs
from gpuadvisor.engine.policy import Policy
from gpuadvisor.engine.ranking import group_bounds, rank_key
from gpuadvisor.engine.rules import Rule
from gpuadvisor.inputs.catalog import Catalog

__all__ = ["PAIRS", "ConstraintMemo", "OptionSet", "Verdict", "eliminations", "most_first"]


class Verdict(NamedTuple):
    """One constraint rule and the options it eliminates (bit ``i``: option ``i``)."""

    rule_id: str
    mask: int


def eliminations(verdicts: tuple[Verdict, ...], within: int) -> dict[str, int]:
    """How many options of ``within`` (a bit mask) each rule eliminated, the rules in
    the order a scan of the options meets them (lowest option first, then rule order)."""
    if not within:
        return {}
    found = [
        ((here & -here).bit_length(), order, rule_id, here.bit_count())
        for order, (rule_id, mask) in enumerate(verdicts)
        if (here := mask & within)
    ]
    found.sort()
    return {rule_id: count for _, _, rule_id, count in found}


def most_first(counts: Mapping[str, int], n: int | None = None) -> list[tuple[str, int]]:
    """The (rule, count) pairs of :func:`eliminations` most first, ties in the order
    met (what ``Counter.most_common`` gives); the first ``n`` when given."""
    ranked = sorted(counts.items(), key=itemgetter(1), reverse=True)
    return ranked if n is None else ranked[:n]


class ConstraintMemo:
    """Constraint results remembered across engine runs on one catalog (owned by an
    :class:`gpuadvisor.engine.core.Engine`, never by the catalog or a rule).

    A constraint's verdict on an option depends only on the option (shape, SKU, count)
    and the decision-wide facts its ``require`` reads, so sensitivity's many re-runs,
    which change one fact at a time, and batches of similar profiles re-use most
    verdicts. A ``require`` that reads no ``option.*`` fact is judged once per card
    model (and kept or bought) for each value of the facts it reads; one that does is
    judged over the whole option set at once, by columns
    (:mod:`gpuadvisor.engine.columns`), and kept on the set as a bit mask of the options
    it eliminates. Every key holds all a verdict depends on: the rule's id and its
    ``require`` source, the value of each decision fact the ``require`` reads, and the
    option set or card (whose facts follow from the catalog the memo was made for).
    Bounded.
    """

    MAX_VERDICTS: ClassVar[int] = 200_000

    def __init__(self, catalog: Catalog, policy: Policy) -> None:
        self.catalog = catalog
        self.policy = policy
        self.sku_facts = {sku.id: sku_facts(sku) for sku in catalog.skus}
        self._tables: dict[tuple[object, ...], dict[tuple[str, bool], bool]] = {}
        #: Each per-option constraint's column form, by rule id and source.
        self._columns: dict[tuple[object, ...], Callable[[Rows, Mapping[str, Value]], int]] = {}
        self._option_sets: dict[Plan, OptionSet] = {}
        self._plans: dict[tuple[Value, ...], Plan] = {}
        self._blocks: dict[tuple[object, ...], Block] = {}
        #: A number for each plan part of a block key (:func:`plan_block_key`), so that
        #: a block key holds that number, not the nested tuple: every SKU of a new plan
        #: hashes and compares its key, and the plan part is the same for all of them.
        #: Forgotten with the blocks (:meth:`bound`), so no key outlives its number.
        self._shared: dict[tuple[object, ...], int] = {}
        #: The same blocks by their options, and sets by their blocks: plans that
        #: differ but make the same options share one block (and one set), with every
        #: verdict and ranking already worked out on it. Options are made once per
        #: distinct option (:class:`OptionMaker`), so equal options are the same object.
        self._blocks_by_options: dict[tuple[Option, ...], Block] = {}
        self._sets_by_blocks: dict[tuple[Block, ...], OptionSet] = {}
        #: Rank keys by ranking facts and group bounds, then by option key.
        self._rank_keys: dict[tuple[object, ...], dict[str, tuple[tuple[float, ...], str]]] = {}
        self._made = OptionMaker(catalog.accessories)
        #: Usable memory of every SKU, with ECC wanted and without.
        self._usable = {
            wanted: tuple(usable_gib(sku, wanted, policy) for sku in catalog.skus)
            for wanted in (False, True)
        }
        self._size = 0

    def bound(self) -> None:
        """Forget everything once the memo holds more than its bound."""
        if self._size > self.MAX_VERDICTS:
            self._tables.clear()
            self._option_sets.clear()
            self._plans.clear()
            self._blocks.clear()
            self._shared.clear()
            self._blocks_by_options.clear()
            self._sets_by_blocks.clear()
            self._rank_keys.clear()
            self._made.clear()
            self._size = 0

    def option_set(self, facts: Mapping[str, Value]) -> OptionSet:
        inputs = plan_inputs(facts)
        plan = self._plans.get(inputs)
        if plan is None:
            usable = self._usable[ecc_wanted(facts)]
            plan = self._plans[inputs] = option_plan(self.catalog.skus, facts, self.policy, usable)
            self._size += 1
        found = self._option_sets.get(plan)
        if found is None:
            blocks = tuple(self._blocks_of(plan))
            found = self._sets_by_blocks.get(blocks)
            if found is None:
                found = self._sets_by_blocks[blocks] = OptionSet(blocks)
                self._size += 1
            self._option_sets[plan] = found
            self._size += 1
        return found

    def _blocks_of(self, plan: Plan) -> list[Block]:
        """The blocks of a plan: one per SKU (shared by plans with the same row and
        counts), then the one keeping the host's cards."""
        skus = self.catalog.skus
        params = plan[0]
        kept_sku = kept_model(skus, plan)
        blocks = []
        part = plan_block_key(plan)
        shared = self._shared.get(part)
        if shared is None:
            shared = self._shared[part] = len(self._shared)
            self._size += 1
        for sku, row in zip(skus, plan[1], strict=True):
            key = sku_block_key(sku, row, plan, shared)
            block = self._blocks.get(key)
            if block is None:
                block = self._blocks[key] = self._block(
                    sku_options(sku, row, plan, kept_sku, self._made)
                )
            blocks.append(block)
        if kept_sku is not None:
            key = ("", params)
            block = self._blocks.get(key)
            if block is None:
                block = self._blocks[key] = self._block(kept_options(plan, kept_sku, self._made))
            blocks.append(block)
        return blocks

    def _block(self, options: list[Option]) -> Block:
        """The block of these options, made once for each distinct list of them."""
        key = tuple(options)
        found = self._blocks_by_options.get(key)
        if found is None:
            found = self._blocks_by_options[key] = Block(key)
            self._size += len(key)
        self._size += 1
        return found

    def mask(self, rule: Rule, facts: Mapping[str, Value], options: OptionSet) -> int:
        """The options of ``options`` that ``rule``'s ``require`` does not accept."""
        require = rule.require
        assert require is not None
        # The source text is part of the key: an overlay may redefine a rule id.
        key = (rule.id, require.source, *map(facts.get, rule.require_reads))
        found = options.masks.get(key)
        if found is not None:
            return found
        mask = 0
        if rule.require_per_option:
            judge = self._columns.get(key[:2])
            if judge is None:
                judge = self._columns[key[:2]] = compile_columns(require.source)
            rows = options.rows
            if rows is None:
                rows = options.rows = Rows(options, self.sku_facts)
            mask = rows.options_failing(judge(rows, facts))
        else:
            # Judged once per card model and kept-or-bought, for every set these facts
            # meet: ``table`` holds the verdicts by card.
            table = self._tables.get(key)
            if table is None:
                table = self._tables[key] = {}
            for card, bits in options.card_bits.items():
                ok = table.get(card)
                if ok is None:
                    sku_id, kept = card
                    layer = KEPT if kept else BOUGHT
                    ok = table[card] = require.holds((layer, self.sku_facts[sku_id], facts))
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

    def ranked(
        self,
        pair: int,
        alive: int,
        options: OptionSet,
        facts: Mapping[str, Value],
        ranking: tuple[Value, ...],
    ) -> tuple[Option, ...]:
        """The ``alive`` options of one pair, best first (what
        :func:`gpuadvisor.engine.ranking.rank_options` orders them as)."""
        indices = bit_indices(options.pair_bits[pair] & alive)
        if len(indices) > 1:
            indices.sort(key=self._rank(indices, options, facts, ranking))
        return tuple(options.options[i] for i in indices)

    def _rank(
        self,
        indices: list[int],
        options: OptionSet,
        facts: Mapping[str, Value],
        ranking: tuple[Value, ...],
    ) -> Callable[[int], tuple[tuple[float, ...], str]]:
        """The rank key of option ``i`` among those of ``indices``. A key depends on the
        option (whose ``key`` names every value it is made of), the ranking facts and
        the group's bounds (fastest card, cheapest cost) alone, so keys are kept by
        those: re-runs, and other plans that make the same options, rank from
        remembered keys."""
        group = [options.options[i] for i in indices]
        fastest, cheapest = group_bounds(group, facts)
        keys = self._rank_keys.get((ranking, fastest, cheapest))
        if keys is None:
            keys = self._rank_keys[(ranking, fastest, cheapest)] = {}
            self._size += 1
        made: list[Callable[[Option], tuple[tuple[float, ...], str]]] = []
        every = options.options

        def key_of(i: int) -> tuple[tuple[float, ...], str]:
            option = every[i]
            found = keys.get(option.key)
            if found is None:
                if not made:
                    made.append(
                        rank_key(group, facts, self.policy, fastest=fastest, cheapest=cheapest)
                    )
                found = keys[option.key] = made[0](option)
                self._size += 1
            return found

        return key_of

    def best(
        self,
        pair: int,
        alive: int,
        options: OptionSet,
        facts: Mapping[str, Value],
        ranking: tuple[Value, ...],
    ) -> Option | None:
        """The first-ranked option of one pair among the ``alive`` ones; ``ranking`` is
        :func:`gpuadvisor.engine.ranking.rank_inputs` of ``facts``."""
        here = options.pair_bits[pair] & alive
        if not here:
            return None
        if not here & (here - 1):  # one option left: it is the first
            return options.options[here.bit_length() - 1]
        key = (pair, here, ranking)
        index = options.best.get(key)
        if index is None:
            indices = bit_indices(here)
            index = options.best[key] = min(
                indices, key=self._rank(indices, options, facts, ranking)
            )
            self._size += 1
        return options.options[index]
