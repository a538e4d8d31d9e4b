"""The web application: the routes of the questionnaire, the evidence upload, the report
and its downloads (Starlette; plain HTML forms, no script). The pages are
:mod:`.pages`; every piece of work runs in one of :data:`WORKERS` threads, off the event
loop (a bounded pool: each thread a Python allocator arena, each arena kept).

The answers are kept by nobody but the page (see :mod:`.tokens`); the only thing kept
between requests is an upload's captures, bounded (see :mod:`.captures`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from python_multipart.multipart import parse_options_header
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gpuadvisor.decision.build import Advisor
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES
from gpuadvisor.web.captures import CaptureStore
from gpuadvisor.web.guard import BODY_CUT, BODY_TAIL, LOOPBACK_NAMES, Guard
from gpuadvisor.web.pages import DOWNLOADS, PROFILE_NAME, STALE, Decider, Pages
from gpuadvisor.web.tokens import MAX_TOKEN_CHARS, Signer, StaleToken
from gpuadvisor.web.uploads import MAX_FILES

__all__ = ["DOWNLOADS", "MAX_BODY_BYTES", "PROFILE_NAME", "create_app"]

Handler = Callable[[Request], Awaitable[Response]]
T = TypeVar("T")

#: A request body larger than this is not read (the page says so): every upload at
#: the input limit would not fit, but a host's captures are far smaller.
MAX_BODY_BYTES: Final = 4 * MAX_INPUT_BYTES
#: Threads that make pages at once (decisions are one at a time anyway, PDFs too).
WORKERS: Final = 4


def _load_advisor(catalog_overlays: Sequence[Path], rules_overlays: Sequence[Path]) -> Advisor:
    from gpuadvisor.engine.core import Engine
    from gpuadvisor.engine.rules import load_rules
    from gpuadvisor.inputs.catalog import load_catalog

    return Advisor(Engine(load_catalog(catalog_overlays), load_rules(rules_overlays)))


# -- routes ----------------------------------------------------------------------------


async def _form(request: Request, *, files: int) -> FormData | str:
    """The request's form, or why it could not be read (a sentence for the page)."""
    if request.scope.get(BODY_CUT):
        return _TOO_LARGE
    try:
        form = await request.form(
            max_files=files, max_fields=64, max_part_size=MAX_TOKEN_CHARS + 1024
        )
    except HTTPException as exc:  # the form parser refused it: too many files, broken
        return f"The upload could not be read ({exc.detail.rstrip('.')}); nothing was read."
    if request.scope.get(BODY_CUT):
        await form.close()
        return _TOO_LARGE
    if files and not _complete(request):
        await form.close()
        return "The upload arrived incomplete (the request ended early); nothing was read."
    return form


def _complete(request: Request) -> bool:
    """Whether a multipart body ends with its closing boundary (the parser accepts a
    body cut short, with the last file silently shorter)."""
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    if kind != b"multipart/form-data":
        return True
    boundary = options.get(b"boundary", b"")
    tail = request.scope.get(BODY_TAIL, b"").rstrip(b"\r\n")
    return bool(boundary) and tail.endswith(b"--" + boundary + b"--")


_TOO_LARGE: Final = (
    f"The upload is larger than the {MAX_BODY_BYTES >> 20} MiB this page takes at once; "
    "nothing was read."
)


def create_app(
    advisor: Advisor | None = None,
    *,
    catalog_overlays: Sequence[Path] = (),
    rules_overlays: Sequence[Path] = (),
    exposed_at: str | None = None,
    allowed_hosts: frozenset[str] | None = LOOPBACK_NAMES,
    signer: Signer | None = None,
    store: CaptureStore | None = None,
) -> Starlette:
    """The application. ``exposed_at`` (the address, when it is not loopback) puts a
    warning on every page; ``allowed_hosts`` None accepts any Host header."""
    pages = Pages(
        Decider(advisor or _load_advisor(catalog_overlays, rules_overlays)),
        signer or Signer(),
        exposed_at,
        store if store is not None else CaptureStore(),
    )
    limiter: list[CapacityLimiter] = []

    async def run(work: Callable[..., T], *args: Any) -> T:
        if not limiter:  # made inside the event loop, on first use
            limiter.append(CapacityLimiter(WORKERS))
        return await anyio.to_thread.run_sync(work, *args, limiter=limiter[0])

    def guarded(work: Callable[[Request], Awaitable[Response]]) -> Handler:
        """Every answer is a page: a stale token starts again with the reason, a bug
        says it is one (the details on the server's console with GPUADVISOR_DEBUG=1)."""

        async def handle(request: Request) -> Response:
            try:
                return await work(request)
            except StaleToken:
                return await run(pages.start, STALE, 400)
            except HTTPException:
                raise
            except Exception as exc:  # the safety net for bugs, as in cli.app.main
                return await run(pages.bug, exc)

        return handle

    def walk_of(request: Request) -> Any:
        return pages.signer.unpack_walk(request.query_params.get("w", ""))

    async def home(request: Request) -> Response:
        return await run(pages.start)

    async def style(request: Request) -> Response:
        return Response(pages.style, media_type="text/css; charset=utf-8")

    async def start(request: Request) -> Response:
        form = await _form(request, files=1)
        if isinstance(form, str):
            return await run(pages.start, form)
        try:
            return await run(pages.begin_from, form)
        finally:
            await form.close()

    async def shown(request: Request) -> Response:
        return await run(pages.shown, walk_of(request), request.query_params.get("m", ""))

    async def answer(request: Request) -> Response:
        form = await _form(request, files=0)
        if isinstance(form, str):
            return await run(pages.start, form, 400)
        return await run(pages.answer, form)

    async def edit(request: Request) -> Response:
        query = request.query_params
        return await run(pages.edit, walk_of(request), query.get("f", ""), query.get("to", ""))

    async def upload(request: Request) -> Response:
        form = await _form(request, files=MAX_FILES)
        try:
            return await run(pages.upload, walk_of(request), form)
        finally:
            if not isinstance(form, str):
                await form.close()

    async def report(request: Request) -> Response:
        return await run(pages.report, walk_of(request), request.query_params.get("ok") == "1")

    async def download(request: Request) -> Response:
        form = await _form(request, files=0)
        if isinstance(form, str):
            return await run(pages.start, form, 400)
        return await run(pages.download, request.path_params["what"], form)

    async def refused(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = "There is no such page here." if status == 404 else "That does not work here."
        return await run(pages.start, message, status)

    routes = [
        Route("/", guarded(home), methods=["GET"]),
        Route("/static/style.css", style, methods=["GET"]),
        Route("/start", guarded(start), methods=["POST"]),
        Route("/walk", guarded(shown), methods=["GET"]),
        Route("/answer", guarded(answer), methods=["POST"]),
        Route("/edit", guarded(edit), methods=["GET"]),
        Route("/report", guarded(upload), methods=["POST"]),
        Route("/report", guarded(report), methods=["GET"]),
        Route("/download/{what}", guarded(download), methods=["POST"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(Guard, max_body_bytes=MAX_BODY_BYTES, allowed_hosts=allowed_hosts)],
        exception_handlers={HTTPException: refused},
    )
