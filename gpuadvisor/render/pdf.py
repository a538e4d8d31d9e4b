"""PDF through Typst: user text as string literals, and compilation.

Why string literals rather than escaping markup: in Typst markup a dozen characters are
special and some only in context (``#``, ``[``, ``]``, ``*``, ``_``, `````, ``$``,
``<``, ``>``, ``@``, ``=``, ``-``, ``+``, ``/``, ``\\``, ``~``, ``//`` comments, smart
quotes...). Inside a string literal only ``\\`` and ``"`` are. The Typst environment
applies :func:`finalize` to every ``{{ ... }}``, which prints ``#"...";``: the string is
displayed as text and never reaches the markup parser or the code evaluator, and the
``;`` ends the embedded expression so template text after it cannot extend it.
In code positions templates use ``| str`` (a bare literal) or ``| num``.

The typst package is imported only here, and only when a PDF is asked for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from markupsafe import Markup

from gpuadvisor.errors import InputError, InternalError
from gpuadvisor.render import printable

_WHITESPACE = re.compile(r"\s+")


def literal(text: object) -> str:
    """A Typst string literal that evaluates to exactly ``text``."""
    out = ['"']
    for char in str(text):
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            # Control characters print nothing useful; lone surrogates cannot be encoded.
            out.append("\\u{fffd}" if 0xD800 <= code <= 0xDFFF else f"\\u{{{code:x}}}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def string(text: object) -> Markup:
    """Filter ``str``: a bare literal for code positions, e.g. ``title: {{ t | str }}``."""
    return Markup(literal(text))


def number(value: object) -> Markup:
    """Filter ``num``: a finite number for code positions; anything else is a bug."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InternalError(f"not a number for a Typst template: {value!r}")
    return Markup(repr(value))


def finalize(value: object) -> str:
    """Applied to every printed value: Markup passes, everything else becomes text.

    Display text is put on one line (whitespace runs become one space): rule rationales
    are hard-wrapped in their TOML files, and a newline in a Typst string would become
    a forced line break.
    """
    if isinstance(value, Markup):
        return str(value)
    return _text(str(value).strip())


def _text(value: str) -> str:
    flat = _WHITESPACE.sub(" ", printable(value))
    return f"#{literal(flat)};"


def rich(runs: Iterable[Any]) -> Markup:
    """Text with commands (``view.Run`` pieces): prose as text, commands as ``raw``."""
    parts = [f"#raw({literal(r.text.strip())});" if r.code else _text(r.text) for r in runs]
    return Markup("".join(parts))


def compile_pdf(
    source: str, *, root: Path, font_dirs: tuple[Path, ...] = ()
) -> tuple[bytes, tuple[str, ...]]:
    """Typst source -> PDF bytes and Typst's warnings, with the embedded fonts only.

    ``root`` bounds what the document may read (images such as a logo); system fonts
    are ignored so the same input gives the same bytes on every machine. Warnings (an
    unknown font in an organisation's template, say) are returned, not printed: the
    PDF is still right, and the tests hold the bundled template to none.
    """
    try:
        import typst
    except ImportError:
        raise InputError(
            "PDF output needs the 'typst' package, which is not installed",
            hint="pip install 'gpuadvisor[pdf]', or choose --format html",
        ) from None
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # The stub ties input, root and font paths to one type; the call mixes
            # bytes (the source) and str (folders), which typst accepts.
            pdf = typst.compile(  # type: ignore[call-overload]
                source.encode("utf-8"),
                root=str(root),
                font_paths=[str(p) for p in font_dirs],
                ignore_system_fonts=True,
                format="pdf",
            )
    except typst.TypstError as exc:
        raise TypstFailure(str(exc.message), str(getattr(exc, "diagnostic", ""))) from None
    if not isinstance(pdf, bytes):
        raise InternalError("typst returned no PDF")
    return pdf, tuple(str(w.message) for w in caught)


class TypstFailure(Exception):
    """Typst could not compile the generated source (a template problem)."""

    def __init__(self, message: str, diagnostic: str) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostic = diagnostic
