"""A small, typed, safe expression language for rule conditions.

Syntax is a subset of Python expressions (so editors highlight it and people can read
it): dotted fact names, numbers, strings, ``true``/``false``/``null``, comparisons
(chains allowed), ``and``/``or``/``not``, ``in``/``not in`` a literal list,
``+ - * /``, and the functions ``known(x)``, ``min(a, b)``, ``max(a, b)``, ``abs(x)``,
``covers(offered, needed)`` (name lists: :mod:`gpuadvisor.engine.namelist`).

Text is parsed with :func:`ast.parse` and then *only* the whitelisted node types are
accepted; nothing is ever passed to ``eval``. Each expression is type-checked at load
time against the facts schema: an unknown fact gets a "did you mean", a string compared
with an enum-valued fact must be one of its values, and types must agree. The checked
tree is compiled into plain closures, which evaluate quickly.

Missing values (a measurement the evidence did not report) are ``null``. Logic is
three-valued: a comparison with ``null`` is unknown, ``unknown and false`` is false,
``unknown or true`` is true, and a rule fires only when its condition is *true*.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gpuadvisor.engine.namelist import covers
from gpuadvisor.errors import did_you_mean

Value = float | int | bool | str | None
Facts = Mapping[str, Value]
ValueType = Literal["number", "bool", "string", "list"]

MAX_EXPRESSION_CHARS = 2000
#: Deepest syntax tree accepted (the bundled rules need 8). Checking, compiling and
#: evaluating all recurse over the tree, so a limit far below Python's recursion limit
#: turns ``1+1+...+1`` or ``not not ... x`` into a clear error instead of a crash.
MAX_EXPRESSION_DEPTH = 40


class ExpressionError(ValueError):
    """A condition that cannot be accepted; the message says what and, if it can, why."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class FactType:
    """What the type checker needs to know of one fact."""

    type: Literal["number", "bool", "string"]
    choices: tuple[str, ...] | None = None


#: A compiled (sub)condition: facts in (a mapping, or a tuple of layers), value out.
Evaluator = Callable[[Any], Value]

#: Where a layered expression finds a fact: the index of the mapping, in the tuple of
#: mappings it is evaluated on, that holds it. Lets the engine evaluate one condition
#: over option, SKU and decision facts without merging them into one mapping.
LayerOf = Callable[[str], int]


@dataclass(frozen=True)
class Expression:
    """A checked, compiled condition."""

    source: str
    names: tuple[str, ...]
    evaluate: Evaluator

    def holds(self, facts: Facts | tuple[Facts, ...]) -> bool:
        """True only when the condition is definitely true (unknown counts as no)."""
        return self.evaluate(facts) is True


@dataclass(frozen=True)
class _Typed:
    type: ValueType
    fn: Evaluator
    choices: tuple[str, ...] | None = None
    const: bool = False
    item_type: ValueType | None = None
    items: tuple[Value, ...] = ()


CONSTANT_NAMES: dict[str, Value] = {"true": True, "false": False, "null": None}
_FUNCTIONS = ("known", "min", "max", "abs", "covers")


def compile_expression(
    source: str, schema: Mapping[str, FactType], layer_of: LayerOf | None = None
) -> Expression:
    """Parse, check and compile ``source`` against ``schema`` (fact name -> type).

    With ``layer_of``, the compiled condition is evaluated on a tuple of mappings
    (``holds((option_facts, sku_facts, facts))``), each fact read from its layer.
    """
    if len(source) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"condition is longer than {MAX_EXPRESSION_CHARS} characters")
    text = " ".join(source.split())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error at column {exc.offset}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError("condition is nested too deeply") from None
    if _depth(tree) > MAX_EXPRESSION_DEPTH:
        raise ExpressionError(
            f"condition is nested more than {MAX_EXPRESSION_DEPTH} levels deep; "
            "split it or simplify it"
        )
    names: list[str] = []
    typed = _Checker(schema, names, layer_of).visit(tree.body)
    if typed.type != "bool":
        raise ExpressionError(f"a condition must be true or false, this is a {typed.type}")
    return Expression(source=source, names=tuple(dict.fromkeys(names)), evaluate=typed.fn)


def _depth(tree: ast.AST) -> int:
    """Depth of the syntax tree, level by level without recursion (stops past the limit)."""
    deepest, level = 0, [tree]
    while level and deepest <= MAX_EXPRESSION_DEPTH:
        deepest += 1
        level = [child for node in level for child in ast.iter_child_nodes(node)]
    return deepest


@dataclass(frozen=True)
class _Text:
    """A comparison's text in an error message, unparsed only when a message shows it."""

    node: ast.expr

    def __format__(self, spec: str) -> str:
        return ast.unparse(self.node)


def dotted_name(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _const(value: Value) -> Evaluator:
    return lambda facts: value


class _Checker:
    def __init__(
        self, schema: Mapping[str, FactType], names: list[str], layer_of: LayerOf | None = None
    ) -> None:
        self.schema = schema
        self.names = names
        self.layer_of = layer_of

    def visit(self, node: ast.expr) -> _Typed:
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self._name(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._list(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ExpressionError(f"'{ast.unparse(node)}' is not allowed in a condition")

    # -- leaves -------------------------------------------------------------------
    def _constant(self, node: ast.Constant) -> _Typed:
        value = node.value
        if isinstance(value, bool):
            return _Typed("bool", _const(value), const=True)
        if isinstance(value, (int, float)):
            return _Typed("number", _const(value), const=True)
        if isinstance(value, str):
            return _Typed("string", _const(value), const=True)
        if value is None:
            return _Typed("bool", _const(None), const=True)
        raise ExpressionError(f"literal {value!r} is not allowed")

    def _name(self, node: ast.Name | ast.Attribute) -> _Typed:
        name = dotted_name(node)
        if name is None:
            raise ExpressionError(f"'{ast.unparse(node)}' is not a fact name")
        if name in CONSTANT_NAMES:
            return _Typed("bool", _const(CONSTANT_NAMES[name]), const=True)
        spec = self.schema.get(name)
        if spec is None:
            raise ExpressionError(f"unknown fact '{name}'", did_you_mean(name, self.schema) or None)
        self.names.append(name)
        if self.layer_of is not None:
            layer = self.layer_of(name)

            def fetch_layer(layers: Any, _name: str = name, _layer: int = layer) -> Value:
                value: Value = layers[_layer].get(_name)
                return value

            return _Typed(spec.type, fetch_layer, spec.choices)

        def fetch(facts: Facts, _name: str = name) -> Value:
            return facts.get(_name)

        return _Typed(spec.type, fetch, spec.choices)

    def _list(self, node: ast.List | ast.Tuple) -> _Typed:
        items = [self.visit(item) for item in node.elts]
        if not items or not all(item.const for item in items):
            raise ExpressionError("a list must hold one or more literal values")
        kinds = {item.type for item in items}
        if len(kinds) > 1:
            raise ExpressionError("a list must hold values of one type")
        values = tuple(item.fn({}) for item in items)
        return _Typed(
            "list",
            _const(None),
            tuple(str(v) for v in values),
            const=True,
            item_type=kinds.pop(),
            items=values,
        )

    # -- operators ----------------------------------------------------------------
    def _boolop(self, node: ast.BoolOp) -> _Typed:
        parts = [self.visit(value) for value in node.values]
        for part, value in zip(parts, node.values, strict=True):
            if part.type != "bool":
                raise ExpressionError(
                    f"'{ast.unparse(value)}' is a {part.type}; "
                    f"'{'and' if isinstance(node.op, ast.And) else 'or'}' needs true/false"
                )
        fns = tuple(part.fn for part in parts)
        if isinstance(node.op, ast.And):

            def conj(facts: Facts) -> Value:
                unknown = False
                for fn in fns:
                    value = fn(facts)
                    if value is False:
                        return False
                    if value is None:
                        unknown = True
                return None if unknown else True

            return _Typed("bool", conj)

        def disj(facts: Facts) -> Value:
            unknown = False
            for fn in fns:
                value = fn(facts)
                if value is True:
                    return True
                if value is None:
                    unknown = True
            return None if unknown else False

        return _Typed("bool", disj)

    def _unary(self, node: ast.UnaryOp) -> _Typed:
        operand = self.visit(node.operand)
        fn = operand.fn
        if isinstance(node.op, ast.Not):
            if operand.type != "bool":
                raise ExpressionError(f"'not' needs true/false, got a {operand.type}")
            return _Typed("bool", lambda facts: None if (v := fn(facts)) is None else not v)
        if isinstance(node.op, ast.USub):
            if operand.type != "number":
                raise ExpressionError(f"'-' needs a number, got a {operand.type}")
            return _Typed(
                "number",
                lambda facts: None if (v := fn(facts)) is None else -v,  # type: ignore[operator]
                const=operand.const,
            )
        raise ExpressionError(f"operator in '{ast.unparse(node)}' is not allowed")

    def _binop(self, node: ast.BinOp) -> _Typed:
        left, right = self.visit(node.left), self.visit(node.right)
        if left.type != "number" or right.type != "number":
            raise ExpressionError(f"arithmetic in '{ast.unparse(node)}' needs numbers")
        ops: dict[type[ast.operator], Callable[[float, float], float | None]] = {
            ast.Add: lambda a, b: a + b,
            ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b,
            ast.Div: lambda a, b: a / b if b else None,
        }
        op = ops.get(type(node.op))
        if op is None:
            raise ExpressionError(f"operator in '{ast.unparse(node)}' is not allowed")
        lf, rf = left.fn, right.fn

        def arith(facts: Facts) -> Value:
            a, b = lf(facts), rf(facts)
            if a is None or b is None:
                return None
            return op(a, b)  # type: ignore[arg-type]

        return _Typed("number", arith)

    def _compare(self, node: ast.Compare) -> _Typed:
        operands = [node.left, *node.comparators]
        typed = [self.visit(operand) for operand in operands]
        steps: list[Evaluator] = []
        for index, op in enumerate(node.ops):
            left, right = typed[index], typed[index + 1]
            pair = ast.Compare(left=operands[index], ops=[op], comparators=[operands[index + 1]])
            steps.append(self._one_comparison(op, left, right, _Text(pair)))
        if len(steps) == 1:
            return _Typed("bool", steps[0])
        chain = tuple(steps)

        def all_of(facts: Facts) -> Value:
            unknown = False
            for step in chain:
                value = step(facts)
                if value is False:
                    return False
                if value is None:
                    unknown = True
            return None if unknown else True

        return _Typed("bool", all_of)

    def _one_comparison(self, op: ast.cmpop, left: _Typed, right: _Typed, text: _Text) -> Evaluator:
        lf, rf = left.fn, right.fn
        if isinstance(op, (ast.In, ast.NotIn)):
            if right.type != "list":
                raise ExpressionError(f"'{text}': 'in' needs a literal list on the right")
            if right.item_type != left.type:
                raise ExpressionError(
                    f"'{text}': a {left.type} cannot be in a list of {right.item_type}s"
                )
            if left.choices and right.choices and left.type == "string":
                self._check_choices(right.choices, left.choices, text)
            negate = isinstance(op, ast.NotIn)
            members = frozenset(right.items)

            def member(facts: Facts) -> Value:
                value = lf(facts)
                if value is None:
                    return None
                found = value in members
                return not found if negate else found

            return member
        # null literal compares are rejected: use known(x)
        if (left.const and left.fn({}) is None) or (right.const and right.fn({}) is None):
            raise ExpressionError(f"'{text}': compare with null through known(x) instead")
        if left.type != right.type:
            raise ExpressionError(f"'{text}' compares a {left.type} with a {right.type}")
        if left.type == "string":
            for fact, literal in ((left, right), (right, left)):
                if fact.choices and literal.const:
                    self._check_choices((str(literal.fn({})),), fact.choices, text)
        if left.type in ("bool", "string") and not isinstance(op, (ast.Eq, ast.NotEq)):
            raise ExpressionError(f"'{text}': only == and != apply to {left.type}s")
        compare: dict[type[ast.cmpop], Callable[[Value, Value], bool]] = {
            ast.Eq: lambda a, b: a == b,
            ast.NotEq: lambda a, b: a != b,
            ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
            ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
            ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
            ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
        }
        fn = compare.get(type(op))
        if fn is None:
            raise ExpressionError(f"'{text}': operator not allowed (use ==, !=, <, <=, >, >=, in)")

        def cmp(facts: Facts) -> Value:
            a, b = lf(facts), rf(facts)
            if a is None or b is None:
                return None
            return fn(a, b)

        return cmp

    @staticmethod
    def _check_choices(values: tuple[str, ...], choices: tuple[str, ...], text: _Text) -> None:
        for value in values:
            if value not in choices:
                raise ExpressionError(
                    f"'{text}': '{value}' is not a possible value (possible: {', '.join(choices)})",
                    did_you_mean(value, choices),
                )

    def _call(self, node: ast.Call) -> _Typed:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCTIONS or node.keywords:
            raise ExpressionError(
                f"'{ast.unparse(node.func)}' is not a known function "
                f"(known: {', '.join(_FUNCTIONS)})"
            )
        args = [self.visit(arg) for arg in node.args]
        if name == "known":
            if len(args) != 1 or isinstance(node.args[0], ast.Constant):
                raise ExpressionError("known(x) takes one fact name")
            fn = args[0].fn
            return _Typed("bool", lambda facts: fn(facts) is not None)
        if name == "covers":
            if len(args) != 2 or any(arg.type != "string" for arg in args):
                raise ExpressionError("covers(offered, needed) takes two name-list facts")
            offered_fn, needed_fn = args[0].fn, args[1].fn

            def covering(facts: Facts) -> Value:
                offered, needed = offered_fn(facts), needed_fn(facts)
                both = isinstance(offered, str) and isinstance(needed, str)
                return covers(str(offered), str(needed)) if both else None

            return _Typed("bool", covering)
        if name == "abs":
            if len(args) != 1 or args[0].type != "number":
                raise ExpressionError("abs(x) takes one number")
            fn = args[0].fn
            return _Typed("number", lambda facts: None if (v := fn(facts)) is None else abs(v))  # type: ignore[arg-type]
        if len(args) < 2 or any(arg.type != "number" for arg in args):
            raise ExpressionError(f"{name}(a, b, ...) takes two or more numbers")
        fns = tuple(arg.fn for arg in args)
        pick = min if name == "min" else max

        def extreme(facts: Facts) -> Value:
            values = [fn(facts) for fn in fns]
            if any(v is None for v in values):
                return None
            return pick(values)  # type: ignore[type-var]

        return _Typed("number", extreme)
