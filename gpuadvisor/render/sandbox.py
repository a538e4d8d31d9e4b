"""Where report templates run, and what an organisation's template folder may hold.

An organisation's ``--template DIR`` is input from outside, like a profile: it is
displayed, never trusted. Jinja2's ``ImmutableSandboxedEnvironment`` already refuses
attributes that start with ``_`` (``''.__class__``, ``cycler.__init__.__globals__``,
``self._TemplateReference__context``) and calls that modify data. This module adds what
the sandbox does not bound:

- Files: templates, ``runbook.toml`` and assets are read only from inside their folder,
  through :mod:`gpuadvisor.inputs.textio` (size limit, UTF-8). ``{% include '/etc/passwd' %}``,
  ``..`` and a symbolic link pointing out of the folder are refused, so a template
  cannot copy a file from the machine into a report that is then sent back.
- Time and memory: a template is a small program, so each rendering has a deadline
  (:data:`TEMPLATE_SECONDS`), looked at on every attribute or item lookup, call, filter,
  operator and ``range`` step; ``*``, ``**`` and ``%`` cannot build huge strings or
  numbers; no single text or argument may exceed :data:`MAX_TEXT`; ``lipsum`` and
  ``namespace`` (the one way to grow a value across loop iterations) are not offered.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment, safe_range

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.textio import decode_text, read_bytes

#: Seconds one template rendering may take (the bundled report needs well under one).
TEMPLATE_SECONDS = 30.0
#: Longest text a template may build, print or pass to a function, in characters.
MAX_TEXT = 16 * 1024 * 1024
#: Most files and folders a template folder may hold.
MAX_TEMPLATE_FILES = 10_000
#: Largest template or runbook file, in bytes.
MAX_TEMPLATE_BYTES = 2 * 1024 * 1024

#: Filters whose whole-number argument sets the size of what they build.
_SIZED_FILTERS = ("center", "indent", "wordwrap", "truncate", "batch", "slice")
#: String methods whose whole-number argument sets the size of what they build.
_SIZED_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
_WIDE_FORMAT = re.compile(r"%[^a-zA-Z%]*\d{5,}")


class TemplateLimit(SecurityError):
    """A template went past one of the limits of this module."""


def inside(folder: Path, name: str) -> Path | None:
    """``folder/name`` when ``name`` is a plain relative path that stays inside
    ``folder`` once symbolic links are followed; None otherwise."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts or "\\" in name:
        return None
    if any(":" in part for part in pure.parts):  # C:, a Windows drive or stream
        return None
    candidate = folder.joinpath(*pure.parts)
    try:
        resolved = candidate.resolve()
        root = folder.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return candidate if resolved == root or root in resolved.parents else None


def check_template_folder(folder: Path) -> None:
    """Refuse a template folder holding a link out of itself, or too many files.

    The Typst compiler reads images and fonts below the folder by itself and follows
    symbolic links, so the folder is checked as a whole before anything reads it.
    """
    root = folder.resolve()
    seen = 0
    for current, dirs, files in os.walk(folder, followlinks=False):
        for entry in (*dirs, *files):
            seen += 1
            if seen > MAX_TEMPLATE_FILES:
                raise InputError(
                    f"the template folder holds more than {MAX_TEMPLATE_FILES} files",
                    file=str(folder),
                )
            path = Path(current, entry)
            if not path.is_symlink():
                continue
            try:
                target = path.resolve()
            except (OSError, RuntimeError):
                target = None
            if target is None or not (target == root or root in target.parents):
                raise InputError(
                    "a symbolic link in the template folder points outside it; "
                    "a template may read only its own folder",
                    file=str(path),
                )


def read_template_text(path: Path) -> str:
    return decode_text(read_bytes(path, max_bytes=MAX_TEMPLATE_BYTES), str(path))


class FolderLoader(jinja2.BaseLoader):
    """Templates from one folder, read through :mod:`gpuadvisor.inputs.textio` and confined to
    it (Jinja2's ``FileSystemLoader`` follows links out of its folder)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = inside(self.folder, template)
        if path is None:
            if ".." in template or template.startswith("/") or "\\" in template:
                raise jinja2.TemplateNotFound(template)
            candidate = self.folder.joinpath(*PurePosixPath(template).parts)
            if candidate.is_symlink():
                raise InputError(
                    "template is a link to a file outside the template folder",
                    file=str(candidate),
                )
            raise jinja2.TemplateNotFound(template)
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        text = read_template_text(path)
        mtime = path.stat().st_mtime

        def uptodate() -> bool:
            try:
                return path.stat().st_mtime == mtime
            except OSError:
                return False

        return text, str(path), uptodate


class ReportSandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox with a deadline and bounded sizes (module docstring)."""

    intercepted_binops = frozenset({"*", "**", "%"})

    def __init__(self, *args: Any, seconds: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = time.monotonic() + (TEMPLATE_SECONDS if seconds is None else seconds)
        self._steps = 0
        for name in ("lipsum", "namespace"):
            self.globals.pop(name, None)
        self.globals["range"] = self._range
        self.add_filters(dict(self.filters))

    # -- the clock ----------------------------------------------------------------
    def tick(self) -> None:
        self._steps += 1
        if self._steps % 256 == 0 and time.monotonic() > self._deadline:
            raise TemplateLimit("the template ran past its time limit")

    def _range(self, *args: int) -> Iterator[int]:
        for value in safe_range(*args):
            self.tick()
            yield value

    # -- sizes --------------------------------------------------------------------
    @staticmethod
    def check_text(value: object) -> None:
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise TemplateLimit(f"a text of more than {MAX_TEXT} characters")

    @staticmethod
    def _check_width(value: object) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_TEXT:
            raise TemplateLimit(f"a width or count of {value} is larger than any report needs")

    def add_filters(self, filters: dict[str, Callable[..., Any]]) -> None:
        """Register filters, each under the deadline and the size limits."""
        for name, function in filters.items():
            self.filters[name] = self._bounded_filter(function, name)

    def _bounded_filter(self, function: Callable[..., Any], name: str) -> Callable[..., Any]:
        sized = name in _SIZED_FILTERS

        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            self.tick()
            for value in (*args, *kwargs.values()):
                self.check_text(value)
                if sized:
                    self._check_width(value)
            result = function(*args, **kwargs)
            self.check_text(result)
            return result

        return run

    # -- the sandbox's hooks ------------------------------------------------------
    def getattr(self, obj: Any, attribute: str) -> Any:
        self.tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self.tick()
        return super().getitem(obj, argument)

    def call(
        __self,  # Jinja2's signature: a keyword argument may be named "self"
        __context: jinja2.runtime.Context,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        __self.tick()
        for value in (*args, *kwargs.values()):
            __self.check_text(value)
        if getattr(__obj, "__name__", None) in _SIZED_METHODS and isinstance(
            getattr(__obj, "__self__", None), str
        ):
            for value in (*args, *kwargs.values()):
                __self._check_width(value)
        result = super().call(__context, __obj, *args, **kwargs)
        __self.check_text(result)
        return result

    def call_binop(
        self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any
    ) -> Any:
        self.tick()
        both_whole = isinstance(left, int) and isinstance(right, int)
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                sized = isinstance(seq, (str, list, tuple)) and isinstance(count, int)
                if sized and len(seq) * max(count, 0) > MAX_TEXT:
                    raise TemplateLimit("'*' would build more than a report needs")
            if both_whole and left.bit_length() + right.bit_length() > 4096:
                raise TemplateLimit("'*' of numbers this large")
        elif operator == "**":
            if both_whole and right > 0 and max(left.bit_length(), 1) * right > 4096:
                raise TemplateLimit("'**' of numbers this large")
        elif operator == "%" and isinstance(left, str) and _WIDE_FORMAT.search(left):
            raise TemplateLimit("'%' with a field width larger than a report needs")
        return super().call_binop(context, operator, left, right)
