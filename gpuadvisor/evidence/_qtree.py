"""The ``Key : value`` outline that ``nvidia-smi -q`` prints, as a tree.

Nesting comes from indentation. Column widths differ between drivers (the colon moved
right in R590) and do not matter here. Text whose indentation was lost (pasted through
a web page) is nested with :data:`_PARENTS`, the section layout of ``-q``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuadvisor.evidence._limits import lines as checked_lines

#: Section -> sections it may sit in, for text without indentation.
_PARENTS: dict[str, tuple[str, ...]] = {
    "gpu link info": ("pci",),
    "bridge chip": ("pci",),
    "pcie generation": ("gpu link info", "pci"),
    "link width": ("gpu link info", "pci"),
    "volatile": ("ecc errors",),
    "aggregate": ("ecc errors",),
    "single bit": ("volatile", "aggregate"),
    "double bit": ("volatile", "aggregate"),
    "hw slowdown": ("clocks event reasons", "clocks throttle reasons"),
    "bank remap availability histogram": ("remapped rows",),
}


@dataclass
class Node:
    key: str
    value: str | None
    line: int
    children: list[Node] = field(default_factory=list)
    norm: str = ""

    def __post_init__(self) -> None:
        self.norm = normalise(self.key)


def normalise(key: str) -> str:
    return " ".join(key.lower().split())


def build(text: str) -> Node:
    """The whole document under a root node."""
    root = Node("", None, 0)
    lines = [
        (number, raw.rstrip())
        for number, raw in enumerate(checked_lines(text), start=1)
        if raw.strip() and not raw.lstrip().startswith("=")
    ]
    indented = any(raw[:1] in (" ", "\t") for _, raw in lines)
    if indented:
        _build_indented(root, lines)
    else:
        _build_flat(root, lines)
    return root


def _node(number: int, raw: str) -> Node:
    """``Key : value`` (the value may be empty), or a section title.

    The first colon splits, and only when blank space or the end follows it, so
    ``GPU 00000000:17:00.0`` stays a title. Done with ``partition``, not a regular
    expression: ``[^:]*?\\s*:`` backtracks quadratically over long blank runs.
    """
    stripped = raw.strip()
    key, colon, rest = stripped.partition(":")
    if not colon or (rest and not rest[0].isspace()):
        return Node(stripped, None, number)
    return Node(key.rstrip(), rest.strip(), number)


def _build_indented(root: Node, lines: list[tuple[int, str]]) -> None:
    stack: list[tuple[int, Node]] = [(-1, root)]
    for number, raw in lines:
        expanded = raw.expandtabs(4)
        indent = len(expanded) - len(expanded.lstrip(" "))
        node = _node(number, raw)
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))


def _build_flat(root: Node, lines: list[tuple[int, str]]) -> None:
    stack: list[Node] = [root]
    for number, raw in lines:
        node = _node(number, raw)
        if node.value is not None:
            stack[-1].children.append(node)
            continue
        parents = _PARENTS.get(node.norm, ())
        if is_gpu_header(node.key):
            del stack[1:]
        else:
            while (
                len(stack) > 1
                and stack[-1].norm not in parents
                and not is_gpu_header(stack[-1].key)
            ):
                stack.pop()
        stack[-1].children.append(node)
        stack.append(node)


_GPU_HEADER = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")


def is_gpu_header(key: str) -> bool:
    return _GPU_HEADER.match(key.strip()) is not None


def walk(node: Node, *, skip: tuple[str, ...] = ()) -> Iterator[Node]:
    """Descendants, breadth first (shallowest first), not entering ``skip`` sections."""
    queue = deque(node.children)
    while queue:
        current = queue.popleft()
        yield current
        if current.norm not in skip:
            queue.extend(current.children)


def child(node: Node | None, key: str) -> Node | None:
    if node is None:
        return None
    wanted = normalise(key)
    for candidate in node.children:
        if candidate.norm == wanted:
            return candidate
    return None


def find(node: Node | None, *path: str, skip: tuple[str, ...] = ()) -> Node | None:
    """The shallowest descendant matching ``path[0]`` whose children continue the path."""
    return None if node is None else Index(node, skip=skip).find(*path)


def value(node: Node | None, *path: str, skip: tuple[str, ...] = ()) -> str | None:
    found = find(node, *path, skip=skip)
    return None if found is None else found.value


class Index:
    """:func:`find` over one section, with the descendants listed once by key."""

    def __init__(self, node: Node, *, skip: tuple[str, ...] = ()) -> None:
        self._by_key: dict[str, list[Node]] = {}
        for descendant in walk(node, skip=skip):
            self._by_key.setdefault(descendant.norm, []).append(descendant)

    def find(self, *path: str) -> Node | None:
        for candidate in self._by_key.get(normalise(path[0]), ()):
            current: Node | None = candidate
            for step in path[1:]:
                current = child(current, step)
            if current is not None:
                return current
        return None

    def value(self, *path: str) -> str | None:
        found = self.find(*path)
        return None if found is None else found.value
