"""Markdown escaping: every value a template prints is inert text.

The Markdown environment applies :func:`finalize` to every ``{{ ... }}``, so a value
can only be text, never structure: no headings, lists, tables, links, HTML, emphasis
or math, whoever wrote it. Templates opt out only through :func:`code`, which builds a
correctly fenced code span, or Jinja's ``safe`` (for the template's own markup).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from gpuadvisor.render import printable

# Characters that start inline constructs anywhere in a line (CommonMark and GFM):
# escapes, code, emphasis, links/images, raw HTML, table cells, strikethrough,
# entities, math ($ on GitHub), mentions, and headings with their closing sequence.
_INLINE = re.compile(r"[\\`*_\[\]<>|~&$@#]")
# Constructs that only matter at the start of a line (after at most the one space that
# collapsing leaves): list items, thematic breaks, setext underlines, ordered lists.
_BLOCK_START = re.compile(r"^( ?)([-+=](?=\s|$)|-+ *$|=+ *$)")
_ORDERED_START = re.compile(r"^( ?\d{1,9})([.)])(?=\s|$)")
_WHITESPACE = re.compile(r"\s+")

# Replacements are functions, not r"\1\\\2" templates: a template is looked up on
# every call, matched or not, and escaping runs for every value a report prints.


def _escape_match(match: re.Match[str]) -> str:
    return "\\" + match[0]


def _escape_second(match: re.Match[str]) -> str:
    return f"{match[1]}\\{match[2]}"


def one_line(text: object) -> str:
    """Whitespace runs (newlines included) collapsed to one space; the edges are kept as
    one space so runs of text around a code span keep their spacing."""
    return _WHITESPACE.sub(" ", printable(str(text)))


def escape(text: object) -> str:
    """Text as inert Markdown on one line, safe in a paragraph, a list item or a cell."""
    flat = _INLINE.sub(_escape_match, one_line(text))
    flat = _BLOCK_START.sub(_escape_second, flat)
    return _ORDERED_START.sub(_escape_second, flat)


def code(text: object, cell: bool = False) -> Markup:
    """A code span for identifiers and commands.

    The fence is longer than any backtick run inside, so the span cannot be closed
    early. In a table cell (``cell=True``) ``|`` is escaped, because GFM splits cells
    before it parses code spans; elsewhere the escape would show.
    """
    flat = one_line(text).strip()
    if cell:
        flat = flat.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return Markup(f"{fence}{pad}{flat}{pad}{fence}")


def rich(runs: Iterable[Any]) -> Markup:
    """Text with commands (``view.Run`` pieces): prose escaped, commands as code spans."""
    return Markup("".join(code(r.text) if r.code else escape(r.text) for r in runs).strip())


def finalize(value: object) -> str:
    """Applied to every printed value: Markup passes, everything else is escaped."""
    if isinstance(value, Markup):
        return str(value)
    return escape(value).strip()
