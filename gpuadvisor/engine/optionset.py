"""Options indexed for bit masks: blocks of options (one SKU's, or those keeping the host's
cards) and the option set of one plan, made of blocks.

Option ``i`` of a set is bit ``i`` of every mask over it. A block is made once per SKU
and plan row (:func:`gpuadvisor.engine.options.sku_options`) and shared by every plan
that has the same row, so a new plan costs a few lookups per SKU. Each constraint's
verdict on a set is remembered on the set, under the constraint's key, as a mask of the
options it eliminates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, compress, repeat
from operator import is_not, itemgetter, or_
from typing import ClassVar, cast

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import CARD_IS_KEPT, OPTION_FACTS, PAIRS, Option


def bit_indices(bits: int) -> list[int]:
    """The positions of the set bits, lowest first."""
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return found


class Block:
    """Options of one SKU (or those keeping the host's cards) for one plan row, with the
    cards they judge and their (shape, class) pairs, as masks over the block."""

    __slots__ = ("_rows", "card_bits", "names", "one_per_option", "options", "pair_bits")

    def __init__(self, options: Sequence[Option]) -> None:
        self.options = tuple(options)
        card_bits: dict[tuple[str, bool], int] = {}
        pair_bits: dict[int, int] = {}
        names: dict[str, str] = {}
        one_each = True
        bit = 1
        for option in self.options:
            cards = option.card_keys
            if len(cards) != 1:
                one_each = False
            for card in cards:
                found = card_bits.get(card)
                if found is None:
                    found = 0
                    sku_id = card[0]
                    if sku_id not in names:
                        names[sku_id] = option.card_names[sku_id]
                card_bits[card] = found | bit
            pair = option.pair
            pair_bits[pair] = pair_bits.get(pair, 0) | bit
            bit <<= 1
        self.card_bits = card_bits
        self.pair_bits = tuple(pair_bits.items())
        #: Whether every option judges one card.
        self.one_per_option = one_each
        #: The name of every card model the block's options judge, by SKU id.
        self.names = names
        self._rows: tuple[list[dict[str, Value]], list[str]] | None = None

    def rows(self) -> tuple[list[dict[str, Value]], list[str]]:
        """The cards the block's options judge, in order: the option facts each card is
        judged with, and the card's SKU id (kept with the block, which every plan with
        the same row shares)."""
        if self._rows is None:
            judged = [card for option in self.options for card in option.judged()]
            self._rows = ([layer for layer, _ in judged], [sku.id for _, sku in judged])
        return self._rows


#: Every option fact a row holds, and how to read them all from a row in one call.
_OPTION_NAMES = (*OPTION_FACTS, CARD_IS_KEPT)
_READ_OPTION = itemgetter(*_OPTION_NAMES)


class Rows:
    """Every card an option set's constraints judge, in the set's order (each option's
    :meth:`Option.judged` cards): row ``r`` is bit ``r`` of a row mask, and
    :meth:`options_failing` turns failing rows into failing options."""

    __slots__ = ("_columns", "_orders", "_owner", "bits", "full", "layers", "named")

    def __init__(self, options: OptionSet, sku_facts: Mapping[str, dict[str, Value]]) -> None:
        option_rows: list[dict[str, Value]] = []
        sku_ids: list[str] = []
        for block, _ in options.blocks:
            layers, ids = block.rows()
            option_rows += layers
            sku_ids += ids
        #: The facts of each row: the option's (as the card judged sees them), the SKU's.
        self.layers: tuple[list[dict[str, Value]], list[dict[str, Value]]] = (
            option_rows,
            list(map(sku_facts.__getitem__, sku_ids)),
        )
        #: The option of each row, unless every option has exactly one row.
        self._owner: list[int] | None = None
        if not all(block.one_per_option for block, _ in options.blocks):
            self._owner = [
                index for index, option in enumerate(options.options) for _ in option.judged()
            ]
        count = len(option_rows)
        self.bits = _bits(count)
        self.full = (1 << count) - 1
        self._columns: dict[str, list[Value]] = {}
        #: Per numeric column: how often a comparison asked for it, then (from the
        #: :data:`SORT_AFTER`-th time) its known values ascending and, for each position,
        #: the rows before it.
        self._orders: dict[str, int | tuple[list[float], list[int]]] = {}
        #: What :mod:`gpuadvisor.engine.columns` made of a fact's column (its values and
        #: the rows where it is known), by fact name: made once per set, not per use.
        self.named: dict[str, object] = {}

    #: Comparisons of one column with one value before it is sorted for bisection: a
    #: pass over the rows costs a few times less than sorting them, so only a set judged
    #: again and again (a what-would-change scan) sorts.
    SORT_AFTER: ClassVar[int] = 4

    def ordered(self, name: str) -> tuple[list[float], list[int]] | None:
        """A numeric column sorted, for comparisons with one value by bisection: its
        known values ascending and ``prefix[k]``, the mask of the rows holding the
        ``k`` smallest (None until the column has been compared often enough)."""
        found = self._orders.get(name, 0)
        if isinstance(found, int):
            if found + 1 < self.SORT_AFTER:
                self._orders[name] = found + 1
                return None
            values = self.column(name)
            # The known rows in the order of their values (sorted in C), then the masks
            # of the first k of them, accumulated in C.
            value_at = cast("Callable[[int], float]", values.__getitem__)  # numbers only
            order = [r for r, v in enumerate(values) if isinstance(v, (int, float))]
            order.sort(key=value_at)
            sorted_values = list(map(value_at, order))
            prefix = list(accumulate(map(self.bits.__getitem__, order), or_, initial=0))
            found = self._orders[name] = (sorted_values, prefix)
        return found

    def derived(self, name: str, make: Callable[[], list[Value]]) -> list[Value]:
        """A column worked out from others (``make``), kept under ``name``, which must
        say how (it is then a column like a fact's, :meth:`ordered` included)."""
        found = self._columns.get(name)
        if found is None:
            found = self._columns[name] = make()
        return found

    def column(self, name: str) -> list[Value]:
        """The values of one ``option.*`` or ``sku.*`` fact, row by row."""
        found = self._columns.get(name)
        if found is None:
            if name in _OPTION_NAMES and self.layers[0]:
                # Every option fact at once, in one pass over the rows (each row holds
                # them all: Option.facts), then turned into columns.
                values = zip(*map(_READ_OPTION, self.layers[0]), strict=True)
                self._columns.update(zip(_OPTION_NAMES, map(list, values), strict=True))
                return self._columns[name]
            source = self.layers[0 if name.startswith("option.") else 1]
            found = self._columns[name] = [row.get(name) for row in source]
        return found

    def known(self, values: list[Value]) -> int:
        """The rows where ``values`` holds a value (not null)."""
        # Identity: ``None in values`` would compare every number with None first.
        if any(value is None for value in values):
            return sum(compress(self.bits, map(is_not, values, repeat(None))))
        return self.full

    def options_failing(self, rows: int) -> int:
        """The options with at least one failing row."""
        owner = self._owner
        if owner is None:
            return rows
        failing = 0
        while rows:
            low = rows & -rows
            failing |= 1 << owner[low.bit_length() - 1]
            rows ^= low
        return failing


#: ``1 << r`` for every row ``r`` made so far, shared by every set (grown when needed).
_BITS: list[int] = []


def _bits(count: int) -> list[int]:
    """``[1 << r for r in range(count)]``, copied from the shared list."""
    if len(_BITS) < count:
        _BITS.extend(map((1).__lshift__, range(len(_BITS), count)))
    return _BITS[:count]


class OptionSet:
    """The options of one plan, indexed: option ``i`` is bit ``i`` of the masks the memo
    keeps, ``pair_bits[j]`` the options of the ``j``-th pair of :data:`PAIRS`."""

    __slots__ = (
        "_sku_bits",
        "_sku_names",
        "best",
        "blocks",
        "card_bits",
        "full",
        "masks",
        "options",
        "pair_bits",
        "rows",
    )

    def __init__(self, blocks: Sequence[Block]) -> None:
        self.options: list[Option] = []
        placed: list[tuple[Block, int]] = []
        pair_bits = [0] * len(PAIRS)
        card_bits: dict[tuple[str, bool], int] = {}
        for block in blocks:
            offset = len(self.options)
            placed.append((block, offset))
            self.options.extend(block.options)
            for pair, bits in block.pair_bits:
                pair_bits[pair] |= bits << offset
            for card, bits in block.card_bits.items():
                card_bits[card] = card_bits.get(card, 0) | bits << offset
        self.card_bits = card_bits
        self._sku_bits: dict[str, int] | None = None
        self._sku_names: dict[str, str] | None = None
        self.blocks = tuple(placed)
        self.full = (1 << len(self.options)) - 1
        self.pair_bits = tuple(pair_bits)
        #: What the memo worked out for these options (kept here, not by the set's id,
        #: so nothing can outlive the set or be mistaken for another set's).
        self.masks: dict[tuple[object, ...], int] = {}
        self.best: dict[tuple[object, ...], int] = {}
        #: The cards the options' constraints judge, as columns (made by the memo when
        #: a per-option constraint first judges the set).
        self.rows: Rows | None = None

    @property
    def sku_bits(self) -> dict[str, int]:
        """The options each card model is judged in, by SKU id (kept or bought)."""
        if self._sku_bits is None:
            found: dict[str, int] = {}
            for (sku_id, _), bits in self.card_bits.items():
                found[sku_id] = found.get(sku_id, 0) | bits
            self._sku_bits = found
        return self._sku_bits

    @property
    def sku_names(self) -> dict[str, str]:
        """The name of every card model judged, by SKU id."""
        if self._sku_names is None:
            names: dict[str, str] = {}
            for block, _ in self.blocks:
                names.update(block.names)
            self._sku_names = names
        return self._sku_names


#: The option layer a card-level constraint sees: whether the card is kept.
KEPT: Mapping[str, Value] = {CARD_IS_KEPT: True}
BOUGHT: Mapping[str, Value] = {CARD_IS_KEPT: False}
