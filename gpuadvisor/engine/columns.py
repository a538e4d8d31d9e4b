"""A constraint's ``require`` judged over a whole option set at once, as bit masks.

:func:`gpuadvisor.engine.expr.compile_expression` makes a condition that judges one card
of one option (``holds((option_facts, sku_facts, facts))``). Judging hundreds of options
that way costs one chain of closure calls per option and per constraint, which is most
of a fresh decision's time. Here the same condition, already parsed and type-checked by
``expr``, is evaluated once per option set: every ``option.*`` or ``sku.*`` name becomes
a column (its value on every judged card, :class:`Rows`), every decision fact stays one
value, and each operator works on whole columns. Logic stays three-valued: a boolean
column is a pair of masks (rows where it is true, rows where it is false; a row in
neither is unknown), and a card passes only where the condition is true.

The two evaluators must agree on every condition the rule language accepts;
``tests/test_columns.py`` checks every bundled rule, and generated conditions, against
``holds`` row by row.
"""

from __future__ import annotations

import ast
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from itertools import compress, repeat
from typing import Any

from gpuadvisor.engine.expr import CONSTANT_NAMES, Value, dotted_name
from gpuadvisor.engine.namelist import covers
from gpuadvisor.engine.optionset import Rows
from gpuadvisor.engine.rules import OPTION_LAYER, SKU_LAYER, option_layer


class Column:
    """Values row by row, with the mask of rows where the value is known (not null)."""

    __slots__ = ("known", "name", "values")

    def __init__(self, values: list[Value], rows: Rows, name: str | None = None) -> None:
        self.values = values
        self.known = rows.known(values)
        #: The fact the column holds (None for one worked out from others).
        self.name = name


class Truth:
    """A boolean column: the rows where it is true and those where it is false."""

    __slots__ = ("false", "true")

    def __init__(self, true: int, false: int) -> None:
        self.true = true
        self.false = false


#: What a node evaluates to: one value for every row (a decision fact, a literal), a
#: column, or a boolean column.
Result = Value | Column | Truth
Node = Callable[[Rows, Mapping[str, Value]], Result]


def _named(rows: Rows, name: str, make: Callable[[], list[Value]] | None = None) -> Column:
    """The column of one ``option.*`` or ``sku.*`` fact (or, with ``make``, of one worked
    out from others and named by how: :meth:`Rows.derived`), made once per set of rows."""
    found = rows.named.get(name)
    if found is None:
        values = rows.column(name) if make is None else rows.derived(name, make)
        found = rows.named[name] = Column(values, rows, name)
    assert isinstance(found, Column)
    return found


def _truth(value: Result, rows: Rows) -> Truth:
    if isinstance(value, Truth):
        return value
    if isinstance(value, Column):  # a boolean fact read as a condition
        bits, values = rows.bits, value.values
        false = sum(b for b, v in zip(bits, values, strict=True) if v is False)
        return Truth(value.known & ~false, false)
    if value is None:
        return Truth(0, 0)
    return Truth(0, rows.full) if value is False else Truth(rows.full, 0)


def _map(rows: Rows, fn: Callable[..., Value], *args: Result) -> Result:
    """``fn`` row by row over the arguments (null in, null out); one value when no
    argument is a column."""
    if not any(isinstance(a, Column) for a in args):
        return None if any(a is None for a in args) else fn(*args)
    if all(a.known == rows.full if isinstance(a, Column) else a is not None for a in args):
        # No null anywhere: ``fn`` over the rows without checking each one.
        columns = [a.values if isinstance(a, Column) else repeat(a) for a in args]
        return Column(list(map(fn, *columns)), rows)
    count = len(rows.bits)
    lists = [a.values if isinstance(a, Column) else [a] * count for a in args]
    values = [None if None in vs else fn(*vs) for vs in zip(*lists, strict=True)]
    return Column(values, rows)


def _values(result: Result, rows: Rows) -> list[Value]:
    """A result as the values of every row."""
    if isinstance(result, Column):
        return result.values
    assert not isinstance(result, Truth)
    return [result] * len(rows.bits)


def _against(op: type[ast.cmpop], column: Column, value: Any, rows: Rows) -> Truth:
    """``column <op> value`` for one known value: the common case, one pass per mask,
    or a bisection of the sorted column when the set has been judged before."""
    order = None
    if column.name is not None and op in _ORDERED and isinstance(value, (int, float)):
        order = rows.ordered(column.name)
    if order is not None:
        values_up, prefix = order
        if op is ast.LtE or op is ast.Gt:
            below = prefix[bisect_right(values_up, value)]
        else:
            below = prefix[bisect_left(values_up, value)]
        true = below if op in (ast.Lt, ast.LtE) else column.known & ~below
        return Truth(true, column.known & ~true)
    bits, values = rows.bits, column.values
    compare = _OPERATOR[op]
    if column.known != rows.full:
        if column.name is not None and isinstance(value, (int, float)):
            # A number column with nulls: NaN in their place compares false (and
            # unequal) without raising, and the known mask drops those rows.
            values = rows.derived(f"{column.name} with nulls as NaN", lambda: _nan_for_null(values))
        else:
            true = sum(
                b for b, v in zip(bits, values, strict=True) if v is not None and compare(v, value)
            )
            return Truth(true, column.known & ~true)
    # Compare and pick in C, row by row.
    true = sum(compress(bits, map(compare, values, repeat(value)))) & column.known
    return Truth(true, column.known & ~true)


_NAN = float("nan")


def _nan_for_null(values: list[Value]) -> list[Value]:
    return [_NAN if v is None else v for v in values]


_ORDERED = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)

#: The comparisons as C functions, for columns without nulls.
_OPERATOR: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

_MIRROR: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}


def _comparison(op: type[ast.cmpop], a: Result, b: Result, rows: Rows) -> Result:
    if isinstance(b, Column) and not isinstance(a, Column):
        # The column first (``0 < option.x`` is ``option.x > 0``).
        return _comparison(_MIRROR[op], b, a, rows)
    if isinstance(a, Column) and not isinstance(b, Column):
        return None if b is None else _against(op, a, b, rows)
    result = _map(rows, _OPERATOR[op], a, b)
    return _truth(result, rows) if isinstance(result, Column) else result


def _logic(parts: tuple[Node, ...], *, conj: bool) -> Node:
    """``and`` (``conj``) or ``or`` of the parts, three-valued: one value decides when
    it is false (``and``) or true (``or``) everywhere."""
    stop, other = (False, True) if conj else (True, False)

    def combine(rows: Rows, facts: Mapping[str, Value]) -> Result:
        values = []
        for part in parts:
            value = part(rows, facts)
            if value is stop:  # decides every row: the parts after it need no columns
                return stop
            values.append(value)
        if all(v is other for v in values):
            return other
        truths = [_truth(v, rows) for v in values]
        if conj:
            true, false = rows.full, 0
            for t in truths:
                true &= t.true
                false |= t.false
        else:
            true, false = 0, rows.full
            for t in truths:
                true |= t.true
                false &= t.false
        return Truth(true, false)

    return combine


def _literal(node: ast.expr) -> Value:
    """One item of a literal list (a number, a string, true/false/null)."""
    if isinstance(node, ast.Name):
        return CONSTANT_NAMES[node.id]
    value: Value = ast.literal_eval(node)
    return value


class _Compiler:
    """Turns the syntax tree of a checked condition into column nodes (what
    ``expr._Checker`` accepted; nothing else reaches here)."""

    def visit(self, node: ast.expr) -> Node:
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Constant):
            value = _literal(node)
            return lambda rows, facts: value
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self._name(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ValueError(f"'{ast.unparse(node)}' has no column form")

    def _name(self, node: ast.Name | ast.Attribute) -> Node:
        name = dotted_name(node)
        assert name is not None
        if name in CONSTANT_NAMES:
            constant = CONSTANT_NAMES[name]
            return lambda rows, facts: constant
        if option_layer(name) in (OPTION_LAYER, SKU_LAYER):
            return lambda rows, facts: _named(rows, name)
        return lambda rows, facts: facts.get(name)

    def _boolop(self, node: ast.BoolOp) -> Node:
        parts = tuple(self.visit(value) for value in node.values)
        return _logic(parts, conj=isinstance(node.op, ast.And))

    def _unary(self, node: ast.UnaryOp) -> Node:
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):

            def negate(rows: Rows, facts: Mapping[str, Value]) -> Result:
                value = operand(rows, facts)
                if isinstance(value, (Column, Truth)):
                    truth = _truth(value, rows)
                    return Truth(truth.false, truth.true)
                return None if value is None else not value

            return negate
        return lambda rows, facts: _map(rows, lambda v: -v, operand(rows, facts))

    def _binop(self, node: ast.BinOp) -> Node:
        left, right = self.visit(node.left), self.visit(node.right)
        ops: dict[type[ast.operator], Callable[[Any, Any], Value]] = {
            ast.Add: lambda a, b: a + b,
            ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b,
            ast.Div: lambda a, b: a / b if b else None,
        }
        op = ops[type(node.op)]
        symbol = type(node.op).__name__

        def arithmetic(rows: Rows, facts: Mapping[str, Value]) -> Result:
            a, b = left(rows, facts), right(rows, facts)
            # A named column with one value (``option.total_power_w * 0.8``) is itself a
            # column of the set, kept by name (and sorted when compared again).
            column, value = (a, b) if isinstance(a, Column) else (b, a)
            if isinstance(column, Column) and column.name and not isinstance(value, Column):
                side = "l" if column is a else "r"
                name = f"({column.name} {symbol}{side} {value!r})"
                return _named(rows, name, lambda: _values(_map(rows, op, a, b), rows))
            return _map(rows, op, a, b)

        return arithmetic

    def _compare(self, node: ast.Compare) -> Node:
        operands = tuple(
            None if isinstance(o, (ast.List, ast.Tuple)) else self.visit(o)
            for o in (node.left, *node.comparators)
        )
        steps: list[Node] = []
        for index, op in enumerate(node.ops):
            a, b = operands[index], operands[index + 1]
            assert a is not None
            if isinstance(op, (ast.In, ast.NotIn)):
                steps.append(self._member(op, a, node.comparators[index]))
            else:
                assert b is not None
                steps.append(self._one(type(op), a, b))
        return steps[0] if len(steps) == 1 else _logic(tuple(steps), conj=True)

    @staticmethod
    def _one(op: type[ast.cmpop], a: Node, b: Node) -> Node:
        return lambda rows, facts: _comparison(op, a(rows, facts), b(rows, facts), rows)

    @staticmethod
    def _member(op: ast.cmpop, item: Node, listed: ast.expr) -> Node:
        assert isinstance(listed, (ast.List, ast.Tuple))
        members = frozenset(_literal(e) for e in listed.elts)
        negate = isinstance(op, ast.NotIn)

        def member(rows: Rows, facts: Mapping[str, Value]) -> Result:
            value = item(rows, facts)
            result = _map(rows, lambda v: (v in members) is not negate, value)
            return _truth(result, rows) if isinstance(result, Column) else result

        return member

    def _call(self, node: ast.Call) -> Node:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        args = tuple(self.visit(arg) for arg in node.args)
        if name == "known":
            (arg,) = args

            def known(rows: Rows, facts: Mapping[str, Value]) -> Result:
                value = arg(rows, facts)
                if isinstance(value, Column):
                    return Truth(value.known, rows.full & ~value.known)
                return value is not None

            return known
        if name == "covers":
            offered, needed = args

            def covering(rows: Rows, facts: Mapping[str, Value]) -> Result:
                def both(a: Value, b: Value) -> Value:
                    ok = isinstance(a, str) and isinstance(b, str)
                    return covers(str(a), str(b)) if ok else None

                result = _map(rows, both, offered(rows, facts), needed(rows, facts))
                return _truth(result, rows) if isinstance(result, Column) else result

            return covering
        if name == "abs":
            (arg,) = args
            return lambda rows, facts: _map(rows, abs, arg(rows, facts))
        pick = min if name == "min" else max
        return lambda rows, facts: _map(rows, lambda *v: pick(v), *(a(rows, facts) for a in args))


def compile_columns(source: str) -> Callable[[Rows, Mapping[str, Value]], int]:
    """The rows of a :class:`Rows` where the checked condition ``source`` is not true,
    as a mask (what :meth:`Expression.holds` rejects, row by row)."""
    tree = ast.parse(" ".join(source.split()), mode="eval")
    node = _Compiler().visit(tree.body)

    def failing(rows: Rows, facts: Mapping[str, Value]) -> int:
        return rows.full & ~_truth(node(rows, facts), rows).true

    return failing
