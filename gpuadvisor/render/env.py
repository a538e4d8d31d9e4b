"""The template environment: sandboxed, strict, overlayable, one escaping policy per format.

Organisations restyle reports with ``--template DIR``: a file there replaces the bundled
file of the same name, everything else falls back to the bundled templates, and every
bundled file stays reachable as ``bundled/NAME`` so an overlay can extend instead of
copy (``{% extends "bundled/report.html.j2" %}`` and override one block).

All templates, bundled or not, run in Jinja2's ``ImmutableSandboxedEnvironment`` with
``StrictUndefined``, bounded in time, size and files by :mod:`gpuadvisor.render.sandbox`:
a template can read the report's values and call the filters registered here, but
cannot reach Python internals, mutate the decision, read files outside its folder, run
without end, or print a value that does not exist. Printed values are escaped by the
format's policy (HTML and SVG: autoescape; Markdown and Typst: a ``finalize`` hook), so
forgetting a filter can never turn user text into markup.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import jinja2
from markupsafe import Markup, escape

from gpuadvisor import __version__
from gpuadvisor.decision.words import describe_flip, format_measure
from gpuadvisor.inputs.cache import user_cache_folder
from gpuadvisor.inputs.textio import read_bytes
from gpuadvisor.render import printable
from gpuadvisor.render.sandbox import FolderLoader, ReportSandbox, inside
from gpuadvisor.resources import data_dir
from gpuadvisor.vocabulary import format_value

Flavour = Literal["md", "html", "svg", "typst"]

BUNDLED_PREFIX = "bundled"

#: Images a template may embed with ``asset_data_uri``.
_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
}
_MAX_ASSET_BYTES = 2 * 1024 * 1024


def money(value: float | None) -> str:
    return "on quote" if value is None else f"${value:,.0f}"


def _printable(value: object) -> object:
    """HTML and SVG: autoescape runs after this; control characters become U+FFFD."""
    if isinstance(value, (Markup, int, float)) or value is None:
        return value
    return printable(str(value))


def html_rich(runs: Iterable[Any]) -> Markup:
    """Text with commands (``view.Run`` pieces): escaped prose, commands in ``<code>``."""
    return Markup("").join(
        Markup("<code>{}</code>").format(printable(r.text.strip()))
        if r.code
        else escape(printable(r.text))
        for r in runs
    )


def template_folders(overlay: Path | None) -> tuple[Path, ...]:
    """Where templates and assets are looked up, first match wins."""
    bundled = data_dir("reports")
    return (overlay, bundled) if overlay is not None else (bundled,)


def find_asset(name: str, folders: tuple[Path, ...]) -> Path:
    """A file next to the templates, by a plain relative name (no ``..``, no absolute)."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise jinja2.TemplateError(f"asset name must be a plain relative path: {name!r}")
    for folder in folders:
        candidate = inside(folder, name)
        if candidate is not None and candidate.is_file():
            return candidate
    raise jinja2.TemplateError(f"asset not found next to the templates: {name!r}")


class _QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """A cache that can fail without failing the report (a full disk, a vanished folder)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled bundled templates, kept per user like Python's own ``.pyc`` files.

    Compiling the report templates is a noticeable share of one ``advise`` run. Entries
    are keyed by template name and source checksum, so an edited template is never served
    stale. ``GPUADVISOR_NO_CACHE=1`` turns it off; an unwritable cache folder simply
    means no cache. Organisation templates are never cached.
    """
    # Cached bytecode is executed: user_cache_folder gives only a real folder of ours
    # that nobody else can write to (Jinja2's own default cache folder checks the same).
    folder = user_cache_folder(f"templates-{__version__}")
    if folder is None:
        return None
    return _QuietBytecodeCache(str(folder))


def environment(flavour: Flavour, overlay: Path | None = None) -> jinja2.Environment:
    folders = template_folders(overlay)
    loader = jinja2.ChoiceLoader(
        [
            *(FolderLoader(folder) for folder in folders),
            jinja2.PrefixLoader({BUNDLED_PREFIX: FolderLoader(folders[-1])}),
        ]
    )
    finalize, format_filters = _format_escaping(flavour)
    env = ReportSandbox(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=flavour in ("html", "svg"),
        finalize=finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_bytecode_cache() if overlay is None else None,
    )

    def asset_data_uri(name: str) -> Markup:
        """An image next to the templates as a ``data:`` URI (a logo in a self-contained
        HTML report)."""
        path = find_asset(name, folders)
        kind = _IMAGE_TYPES.get(path.suffix.lower())
        if kind is None:
            raise jinja2.TemplateError(f"not an image type a report can embed: {name!r}")
        data = read_bytes(path, max_bytes=_MAX_ASSET_BYTES)
        return Markup(f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}")

    filters: dict[str, Callable[..., Any]] = {
        "money": money,
        "value": format_value,
        "flip": describe_flip,
        "measure": format_measure,
        **format_filters,
    }
    env.add_filters(filters)
    env.globals["asset_data_uri"] = asset_data_uri
    return env


def _format_escaping(
    flavour: Flavour,
) -> tuple[Callable[[Any], Any], dict[str, Callable[..., Any]]]:
    """The format's ``finalize`` hook (applied to every printed value) and its own
    filters. A format's module is imported only when that format is rendered."""
    if flavour == "md":
        from gpuadvisor.render import markdown

        return markdown.finalize, {"code": markdown.code, "rich": markdown.rich}
    if flavour == "typst":
        from gpuadvisor.render import pdf

        return pdf.finalize, {"str": pdf.string, "num": pdf.number, "rich": pdf.rich}
    if flavour == "html":
        return _printable, {"rich": html_rich}
    return _printable, {}
