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
#: Control characters a literal writes as ``\u{...}``: they print nothing useful (tab
#: and newline have short escapes).
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _control_escape(match: re.Match[str]) -> str:
    return f"\\u{{{ord(match.group()):x}}}"


def literal(text: object) -> str:
    """A Typst string literal that evaluates to exactly ``text``."""
    value = str(text).replace("\\", "\\\\").replace('"', '\\"')
    value = value.replace("\n", "\\n").replace("\t", "\\t")
    value = _CONTROL.sub(_control_escape, value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates, which no encoding can write
            value = re.sub("[\ud800-\udfff]", lambda _: "\\u{fffd}", value)
    return f'"{value}"'


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


#: Seconds an organisation's Typst template may take to compile (the bundled report
#: needs about one). Typst is a programming language; its loops and recursion are not
#: bounded by Typst itself.
TYPST_SECONDS = 60
#: Memory (address space) the compiler child may use, on systems that can limit it.
TYPST_MEMORY_BYTES = 4 * 1024**3
#: Where package downloads are sent in the child: a closed local port, so an
#: ``@preview`` import (static or built at run time) fails at once, offline or not.
_NO_NETWORK = "http://127.0.0.1:9"
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")
#: The PDF version written. Typst (0.14 on) tags the document for screen readers, and
#: its PDF writer (krilla) then adds ``/MarkInfo << /Suspects false >>`` for PDF 1.6 and
#: 1.7, Typst's default. That is valid PDF, but poppler (22.12 here, as in Debian 12)
#: takes a false ``Suspects`` for the wrong type: pdfinfo, and the viewers built on
#: poppler, print "Syntax Error: Suspects object is wrong type (boolean)" for every
#: report. ``Suspects`` is a PDF 1.6 key, so at 1.5 it is left out (false is its
#: default); pages, text, tags, outline and metadata are the same, and the pages draw
#: the same pixels. What 1.5 drops is the header and footer artifacts' subtype (a PDF
#: 1.7 addition; they are still marked as page furniture, not text).
PDF_STANDARD = "1.5"


def compile_pdf(
    source: str, *, root: Path, font_dirs: tuple[Path, ...] = (), isolated: bool = False
) -> tuple[bytes, tuple[str, ...]]:
    """Typst source -> PDF bytes and Typst's warnings, with the embedded fonts only.

    ``root`` bounds what the document may read (images such as a logo); system fonts
    are ignored so the same input gives the same bytes on every machine. Packages are
    looked up in an empty folder, never in the user's Typst cache. Warnings (an unknown
    font in an organisation's template, say) are returned, not printed: the PDF is
    still right, and the tests hold the bundled template to none.

    ``isolated`` (an organisation's template, which is input): the compiler runs in a
    child process with a deadline (:data:`TYPST_SECONDS`), a memory limit where the
    system has one, and no way to download packages.
    """
    try:
        import typst
    except ImportError:
        raise InputError(
            "PDF output needs the 'typst' package, which is not installed",
            hint="pip install 'gpuadvisor[pdf]', or choose --format html",
        ) from None
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gpuadvisor-typst-") as packages:
        request = {
            "root": str(root),
            "fonts": [str(p) for p in font_dirs],
            "packages": packages,
            "standard": PDF_STANDARD,
        }
        if isolated:
            return _compile_in_child(source, request)
        return _compile(typst, source.encode("utf-8"), request)


def _compile(typst: Any, source: bytes, request: dict[str, Any]) -> tuple[bytes, tuple[str, ...]]:
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pdf = typst.compile(
                source,
                root=request["root"],
                font_paths=request["fonts"],
                ignore_system_fonts=True,
                format="pdf",
                pdf_standards=request["standard"],
                package_path=request["packages"],
                package_cache_path=request["packages"],
            )
    except typst.TypstError as exc:
        raise TypstFailure(str(exc.message), str(getattr(exc, "diagnostic", ""))) from None
    if not isinstance(pdf, bytes):
        raise InternalError("typst returned no PDF")
    return pdf, tuple(str(w.message) for w in caught)


#: The child: limits itself, compiles, answers with one JSON object on stdout. It
#: imports only typst and the standard library, so it does not depend on how
#: gpuadvisor itself was found.
_CHILD = """
import base64, json, sys, warnings
request = json.loads(sys.argv[1])
try:
    import resource
    limit = request["memory"]
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (request["seconds"], request["seconds"] + 5))
except (ImportError, ValueError, OSError):
    pass
import typst
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdf = typst.compile(
            sys.stdin.buffer.read(), root=request["root"], font_paths=request["fonts"],
            ignore_system_fonts=True, format="pdf", pdf_standards=request["standard"],
            package_path=request["packages"], package_cache_path=request["packages"])
    answer = {"pdf": base64.b64encode(pdf).decode("ascii"),
              "warnings": [str(w.message) for w in caught]}
except typst.TypstError as exc:
    answer = {"error": str(exc.message), "diagnostic": str(getattr(exc, "diagnostic", ""))}
sys.stdout.write(json.dumps(answer))
"""


def _compile_in_child(source: str, request: dict[str, Any]) -> tuple[bytes, tuple[str, ...]]:
    import base64
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    for name in ("NO_PROXY", "no_proxy"):
        env.pop(name, None)
    env.update(dict.fromkeys(_PROXY_VARIABLES, _NO_NETWORK))
    request = {**request, "memory": TYPST_MEMORY_BYTES, "seconds": TYPST_SECONDS}
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD, json.dumps(request)],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=TYPST_SECONDS,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TypstFailure(f"compiling ran past its time limit of {TYPST_SECONDS} s", "") from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        reason = "out of memory or killed" if done.returncode < 0 else done.stderr.decode()[-300:]
        raise TypstFailure(
            f"the PDF compiler stopped (exit code {done.returncode})", reason.strip()
        ) from None
    if "error" in answer:
        raise TypstFailure(answer["error"], answer["diagnostic"])
    return base64.b64decode(answer["pdf"]), tuple(answer["warnings"])


class TypstFailure(Exception):
    """Typst could not compile the generated source (a template problem)."""

    def __init__(self, message: str, diagnostic: str) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostic = diagnostic
