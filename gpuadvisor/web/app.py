"""The web application: the questionnaire page by page, the evidence upload, the report
and its downloads (Starlette; plain HTML forms, no script).

One :class:`~gpuadvisor.decision.build.Advisor` serves the whole process. Decisions are
made one at a time under a lock: the engine's memo and the phrasebook are plain
dictionaries every decision writes to, and a decision takes milliseconds, so people
queue for a moment at most. Rendering (the PDF's Typst compile is the slowest step) runs
outside the lock, and every piece of work runs in a worker thread, off the event loop.

Nothing about a person is kept between requests (see :mod:`.tokens`): what could
otherwise leak from one person's session into another's does not exist on the server.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final

import jinja2
from python_multipart.multipart import parse_options_header
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from gpuadvisor.ask import profile_document, starting_answers
from gpuadvisor.decision.build import Advisor
from gpuadvisor.decision.model import Decision
from gpuadvisor.errors import GpuAdvisorError, InputError
from gpuadvisor.evidence import accepted_formats
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES, load_document
from gpuadvisor.web import walk as steps
from gpuadvisor.web.guard import BODY_CUT, BODY_TAIL, LOOPBACK_NAMES, Guard
from gpuadvisor.web.tokens import MAX_TOKEN_CHARS, Signer, StaleToken
from gpuadvisor.web.uploads import MAX_FILES, is_upload, read_upload, request_folder

Handler = Callable[[Request], Awaitable[Response]]

HERE: Final = Path(__file__).parent
#: A request body larger than this is not read (the page says so): every upload at
#: the input limit would not fit, but a host's captures are far smaller.
MAX_BODY_BYTES: Final = 4 * MAX_INPUT_BYTES
PROFILE_NAME: Final = "profile.toml"
#: What the downloads are called and sent as.
DOWNLOADS: Final = {
    "pdf": ("gpuadvisor-report.pdf", "application/pdf"),
    "md": ("gpuadvisor-report.md", "text/markdown; charset=utf-8"),
    "html": ("gpuadvisor-report.html", "text/html; charset=utf-8"),
    "json": ("gpuadvisor-decision.json", "application/json"),
}
STALE: Final = (
    "This page was made by an earlier run of the server (or was changed), so its answers "
    "cannot be read back. Please start again; the profile download keeps answers for "
    "next time."
)


def _load_advisor(catalog_overlays: Sequence[Path], rules_overlays: Sequence[Path]) -> Advisor:
    from gpuadvisor.engine.core import Engine
    from gpuadvisor.engine.rules import load_rules
    from gpuadvisor.inputs.catalog import load_catalog

    return Advisor(Engine(load_catalog(catalog_overlays), load_rules(rules_overlays)))


class Pages:
    """The pages, each made from the request alone and this process's shared parts."""

    def __init__(self, advisor: Advisor, signer: Signer, exposed_at: str | None) -> None:
        self.advisor = advisor
        self.signer = signer
        self.exposed_at = exposed_at
        self._decide = threading.Lock()
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.style = (HERE / "static" / "style.css").read_bytes()

    # -- the pages ------------------------------------------------------------------

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        template = self.templates.get_template(name)
        html = template.render(exposed_at=self.exposed_at, **context)
        return HTMLResponse(html, status_code=status)

    def start(self, message: str | None = None, status: int = 200) -> HTMLResponse:
        return self.page("start.html", status, message=message, max_mib=MAX_INPUT_BYTES >> 20)

    def at(self, walk: steps.Walk, message: str | None = None, typed: str = "") -> HTMLResponse:
        """The page of where ``walk`` stands: its question, or the finish page."""
        view = steps.view_of(walk)
        if view is None:
            return self.finish(walk, message=message)
        return self.page(
            "question.html",
            q=view,
            walk=self.signer.pack_walk(walk),
            message=message,
            typed=typed,
            number=len(walk.asked) + 1,
            can_go_back=bool(walk.asked),
            notes=walk.notes if not walk.asked else (),
        )

    def finish(self, walk: steps.Walk, message: str | None = None) -> HTMLResponse:
        problem = None
        try:
            steps.profile_of(walk)
        except GpuAdvisorError as exc:
            problem = str(exc)
        return self.page(
            "finish.html",
            walk=self.signer.pack_walk(walk),
            rows=steps.summary_of(walk),
            message=message,
            problem=problem,
            max_files=MAX_FILES,
            max_mib=MAX_INPUT_BYTES >> 20,
            formats=accepted_formats(),
        )

    # -- the work behind them --------------------------------------------------------

    def begin_from(self, form: FormData) -> HTMLResponse:
        upload = form.get("profile")
        review = form.get("review") == "yes"
        if not is_upload(upload):
            if "profile" in form:
                return self.start("Choose a profile file to start from, or start afresh.")
            return self.at(steps.begin())
        with request_folder() as folder:
            path = folder.keep(upload.filename, read_upload(upload))
            name = folder.shown(path)
            try:
                document, text = load_document(path)
                stated, notes = starting_answers(document, name=name, text=text)
            except GpuAdvisorError as exc:
                return self.start(str(folder.cite(exc)))
        return self.at(steps.begin(stated, review=review, start_name=name, notes=tuple(notes)))

    def report(self, walk: steps.Walk, form: FormData | str) -> HTMLResponse:
        if isinstance(form, str):
            return self.finish(walk, form)
        try:
            profile = steps.profile_of(walk)
        except GpuAdvisorError:
            return self.finish(walk)  # the finish page shows the problem
        written = profile_document(profile)
        uploads = [v for v in form.getlist("evidence") if is_upload(v)]
        with request_folder() as folder:
            paths = [folder.keep(u.filename, read_upload(u)) for u in uploads]
            try:
                decision = self._decision(profile, written, paths)
            except GpuAdvisorError as exc:
                return self.finish(walk, str(folder.cite(exc)))
            decision = folder.cite_in(decision)
        from gpuadvisor.render.report import render

        return self.page(
            "report.html",
            d=decision,
            report=render(decision, "html"),
            decision=self.signer.pack_decision(decision),
            walk=self.signer.pack_walk(walk),
        )

    def _decision(self, profile: Any, written: str, evidence: list[Path]) -> Decision:
        from gpuadvisor.pipeline import advise_profile

        model = profile.workload.model
        if model is not None and model.hf_config is not None:  # never reaches here from a walk
            raise InputError("the web page reads no file named in a profile (hf_config)")
        with self._decide:
            return advise_profile(
                profile,
                profile_sha256=hashlib.sha256(written.encode("utf-8")).hexdigest(),
                profile_file=PROFILE_NAME,
                evidence=evidence,
                advisor=self.advisor,
            )

    def answer(self, form: FormData) -> Response:
        walk = self.signer.unpack_walk(str(form.get("walk", "")))
        if form.get("go") == "back":
            return self.at(steps.back(walk))
        if walk.at is None:
            return self.at(walk)
        typed = str(form.get("answer", ""))
        try:
            return self.at(steps.answer(walk, typed))
        except steps.Refused as refused:
            return self.at(walk, message=refused.message, typed=typed)

    def bug(self, exc: Exception) -> HTMLResponse:
        if os.environ.get("GPUADVISOR_DEBUG") == "1":
            traceback.print_exception(type(exc), exc, exc.__traceback__)
        print(f"gpuadvisor serve: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return self.page(
            "message.html",
            500,
            title="Something went wrong inside gpuadvisor",
            message="This is a bug, not something you did. Please report it with the "
            "answers and files you used; GPUADVISOR_DEBUG=1 prints the details on the "
            "server's console.",
        )

    def download(self, what: str, form: FormData) -> Response:
        if what == "toml":
            walk = self.signer.unpack_walk(str(form.get("walk", "")))
            try:
                text = profile_document(steps.profile_of(walk))
            except GpuAdvisorError as exc:
                return self.finish(walk, str(exc))
            return _attachment(text.encode("utf-8"), PROFILE_NAME, "application/toml")
        if what not in DOWNLOADS:
            raise HTTPException(404)
        decision = self.signer.unpack_decision(str(form.get("decision", "")))
        from gpuadvisor.render.report import render

        body = render(decision, what)
        name, media = DOWNLOADS[what]
        return _attachment(body if isinstance(body, bytes) else body.encode("utf-8"), name, media)


def _attachment(body: bytes, name: str, media: str) -> Response:
    return Response(
        body, media_type=media, headers={"content-disposition": f'attachment; filename="{name}"'}
    )


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
) -> Starlette:
    """The application. ``exposed_at`` (the address, when it is not loopback) puts a
    warning on every page; ``allowed_hosts`` None accepts any Host header."""
    pages = Pages(
        advisor or _load_advisor(catalog_overlays, rules_overlays),
        signer or Signer(),
        exposed_at,
    )

    def guarded(work: Callable[[Request], Awaitable[Response]]) -> Handler:
        """Every answer is a page: a stale token starts again with the reason, a bug
        says it is one (the details on the server's console with GPUADVISOR_DEBUG=1)."""

        async def handle(request: Request) -> Response:
            try:
                return await work(request)
            except StaleToken:
                return await run_in_threadpool(pages.start, STALE, 400)
            except HTTPException:
                raise
            except Exception as exc:  # the safety net for bugs, as in cli.app.main
                return await run_in_threadpool(pages.bug, exc)

        return handle

    async def home(request: Request) -> Response:
        return await run_in_threadpool(pages.start)

    async def style(request: Request) -> Response:
        return Response(pages.style, media_type="text/css; charset=utf-8")

    async def start(request: Request) -> Response:
        form = await _form(request, files=1)
        if isinstance(form, str):
            return await run_in_threadpool(pages.start, form)
        try:
            return await run_in_threadpool(pages.begin_from, form)
        finally:
            await form.close()

    async def answer(request: Request) -> Response:
        form = await _form(request, files=0)
        if isinstance(form, str):
            return await run_in_threadpool(pages.start, form, 400)
        return await run_in_threadpool(pages.answer, form)

    async def report(request: Request) -> Response:
        form = await _form(request, files=MAX_FILES)
        try:
            walk = pages.signer.unpack_walk(request.query_params.get("walk", ""))
            return await run_in_threadpool(pages.report, walk, form)
        finally:
            if not isinstance(form, str):
                await form.close()

    async def download(request: Request) -> Response:
        form = await _form(request, files=0)
        if isinstance(form, str):
            return await run_in_threadpool(pages.start, form, 400)
        return await run_in_threadpool(pages.download, request.path_params["what"], form)

    async def refused(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = "There is no such page here." if status == 404 else "That does not work here."
        return await run_in_threadpool(pages.start, message, status)

    routes = [
        Route("/", guarded(home), methods=["GET"]),
        Route("/static/style.css", style, methods=["GET"]),
        Route("/start", guarded(start), methods=["POST"]),
        Route("/answer", guarded(answer), methods=["POST"]),
        Route("/report", guarded(report), methods=["POST"]),
        Route("/download/{what}", guarded(download), methods=["POST"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(Guard, max_body_bytes=MAX_BODY_BYTES, allowed_hosts=allowed_hosts)],
        exception_handlers={HTTPException: refused},
    )
