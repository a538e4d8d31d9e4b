"""The pages, each made from the request alone and this process's shared parts: the
decisions (:class:`Decider`), the captures kept for reports (:mod:`.captures`), the
signer and the templates.

Every question and the answers page are shown by GET (``/walk?w=TOKEN``): an answer is
POSTed and answered with a redirect to the next page's address (POST, redirect, GET),
so the browser's Back and reload work without "Confirm Form Resubmission". A message
for the next page (a refused answer, a refused upload) travels signed in that address.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup, escape
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, RedirectResponse, Response

from gpuadvisor.ask import QUESTIONS, profile_document, starting_answers
from gpuadvisor.decision.build import Advisor
from gpuadvisor.decision.model import Decision
from gpuadvisor.errors import GpuAdvisorError, InputError
from gpuadvisor.evidence import accepted_formats
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES, load_document
from gpuadvisor.web import views
from gpuadvisor.web import walk as steps
from gpuadvisor.web.captures import CaptureStore, Kept, mixed_warning
from gpuadvisor.web.report_view import buyer_view
from gpuadvisor.web.tokens import Signer
from gpuadvisor.web.uploads import MAX_FILES, is_upload, read_upload, request_folder
from gpuadvisor.web.wording import wording

HERE: Final = Path(__file__).parent
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
GONE: Final = (
    "The captures attached earlier are no longer kept (the page keeps the last uploads "
    "for two hours); your answers are. Attach the captures again to make the report."
)
#: The longest answer the page takes (the longest text field, the notes, is 4,000): the
#: answers travel in the page's address.
MAX_ANSWER_CHARS: Final = 4000
#: Decisions one Advisor makes before a fresh one (with empty caches) takes over: this
#: bounds the memory the engine's memo and the phrasebook hold in a long-running page.
RENEW_AFTER: Final = 64
#: PDFs compiled at once, each in a child process of its own (a compile takes a
#: fraction of a second, so people queue for a moment at most).
PDF_AT_ONCE: Final = 2


class Decider:
    """Decisions, made one at a time through one :class:`Advisor` that is renewed every
    :data:`RENEW_AFTER` decisions (the engine's memo and the phrasebook are plain
    dictionaries every decision writes to, and a decision takes milliseconds)."""

    def __init__(self, advisor: Advisor, renew_after: int = RENEW_AFTER) -> None:
        self.advisor = advisor
        self.renew_after = renew_after
        self.made = 0
        self._lock = threading.Lock()
        self._pdf = threading.BoundedSemaphore(PDF_AT_ONCE)

    def decide(self, profile: Profile, written: str, evidence: Sequence[Path]) -> Decision:
        from gpuadvisor.engine.core import Engine
        from gpuadvisor.pipeline import advise_profile

        model = profile.workload.model
        if model is not None and model.hf_config is not None:  # never reaches here from a walk
            raise InputError("the web page reads no file named in a profile (hf_config)")
        with self._lock:
            if self.made >= self.renew_after:
                engine = self.advisor.engine
                self.advisor = Advisor(Engine(engine.catalog, engine.rules))
                self.made = 0
            self.made += 1
            return advise_profile(
                profile,
                profile_sha256=hashlib.sha256(written.encode("utf-8")).hexdigest(),
                profile_file=PROFILE_NAME,
                evidence=list(evidence),
                advisor=self.advisor,
            )

    def render(self, decision: Decision, fmt: str) -> str | bytes:
        """The report in ``fmt``. A PDF is compiled by Typst in a child process (the
        command line's way for an organisation's template, with its time and memory
        limits): Typst's caches then live and die with the child, where in this
        long-running process they grew with every distinct report (see docs/web.md)."""
        from gpuadvisor.errors import InternalError
        from gpuadvisor.render.env import template_folders
        from gpuadvisor.render.pdf import TypstFailure, compile_pdf
        from gpuadvisor.render.report import render, render_source

        if fmt != "pdf":
            return render(decision, fmt)
        source = render_source(decision, "pdf")
        with self._pdf:
            try:
                pdf, _warnings = compile_pdf(source, root=template_folders(None)[0], isolated=True)
            except TypstFailure as exc:
                raise InternalError(f"the PDF did not compile: {exc.message}") from None
        return pdf


def address(path: str, **query: str) -> str:
    return f"{path}?{urlencode({k: v for k, v in query.items() if v})}"


class Pages:
    def __init__(
        self, decider: Decider, signer: Signer, exposed_at: str | None, store: CaptureStore
    ) -> None:
        self.decider = decider
        self.signer = signer
        self.exposed_at = exposed_at
        self.store = store
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters["breakable"] = breakable
        self.style = (HERE / "static" / "style.css").read_bytes()

    # -- pages ------------------------------------------------------------------------

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        template = self.templates.get_template(name)
        html = template.render(exposed_at=self.exposed_at, **context)
        return HTMLResponse(html, status_code=status)

    def start(self, message: str | None = None, status: int = 200) -> HTMLResponse:
        return self.page("start.html", status, message=message, max_mib=MAX_INPUT_BYTES >> 20)

    def go(self, walk: steps.Walk, message: str = "", typed: str = "") -> Response:
        """The redirect (303: the browser GETs it) to where ``walk`` stands."""
        note = self.signer.pack_note(message, typed) if message else ""
        if walk.at is None and walk.returning == "report":
            return RedirectResponse(self.report_address(steps.finished(walk)), 303)
        return RedirectResponse(address("/walk", w=self.signer.pack_walk(walk), m=note), 303)

    def report_address(self, walk: steps.Walk, **more: str) -> str:
        return address("/report", w=self.signer.pack_walk(walk), **more)

    def shown(self, walk: steps.Walk, note: str = "") -> HTMLResponse:
        """The page of where ``walk`` stands: its question, or the answers page."""
        message, typed = self.signer.unpack_note(note) if note else ("", "")
        view = views.view_of(walk)
        if view is None:
            return self.answers(walk, message)
        return self.page(
            "question.html",
            q=view,
            walk=self.signer.pack_walk(walk),
            message=message,
            typed=typed,
            said=walk.said,
            back_to=self._back_to(walk),
            changing=bool(walk.returning),
            can_go_back=bool(walk.asked) and not walk.returning,
            notes=walk.notes if not walk.asked else (),
        )

    def _back_to(self, walk: steps.Walk) -> str:
        """Where "leave this unchanged" goes while an answer is changed ("" otherwise)."""
        if walk.returning == "report":
            return self.report_address(steps.finished(walk))
        if walk.returning == "answers":
            return address("/walk", w=self.signer.pack_walk(steps.finished(walk)))
        return ""

    def answers(self, walk: steps.Walk, message: str = "") -> HTMLResponse:
        problem = None
        try:
            steps.profile_of(walk)
        except GpuAdvisorError as exc:
            problem = str(exc)
        last = steps.back(walk) if walk.asked else None
        return self.page(
            "answers.html",
            walk=self.signer.pack_walk(walk),
            last=self.signer.pack_walk(last) if last else "",
            rows=views.summary_of(walk),
            message=message,
            problem=problem,
            max_files=MAX_FILES,
            max_mib=MAX_INPUT_BYTES >> 20,
            formats=accepted_formats(),
            kept=walk.capture_names,
        )

    # -- what a form does -----------------------------------------------------------------

    def begin_from(self, form: FormData) -> Response:
        upload = form.get("profile")
        review = form.get("review") == "yes"
        if not is_upload(upload):
            if "profile" in form:
                return self.start("Choose a profile file to start from, or start afresh.")
            return self.go(steps.begin())
        with request_folder() as folder:
            path = folder.keep(upload.filename, read_upload(upload))
            name = folder.shown(path)
            try:
                document, text = load_document(path)
                stated, notes = starting_answers(document, name=name, text=text)
            except GpuAdvisorError as exc:
                return self.start(str(folder.cite(exc)))
        return self.go(steps.begin(stated, review=review, start_name=name, notes=tuple(notes)))

    def answer(self, form: FormData) -> Response:
        walk = self.signer.unpack_walk(str(form.get("walk", "")))
        go = form.get("go")
        if go == "back":
            return self.go(steps.back(walk))
        if walk.at is None:
            return self.go(walk)
        if go == "skip":
            return self.go(steps.skip_group(walk))
        typed = str(form.get("answer", ""))
        if len(typed) > MAX_ANSWER_CHARS:
            message = f"Not accepted: an answer here is at most {MAX_ANSWER_CHARS:,} characters."
            return self.go(walk, message, typed[: steps.MAX_TYPED_CHARS])
        if form.get("mode") == views.DESCRIBE and not typed.strip():
            typed = views.DESCRIBE
        try:
            return self.go(steps.answer(walk, typed))
        except steps.Refused as refused:
            return self.go(walk, refused.message, typed[: steps.MAX_TYPED_CHARS])

    def edit(self, walk: steps.Walk, path: str, to: str) -> Response:
        returning: steps.Returning = "report" if to == "report" else "answers"
        return self.shown(steps.edit(walk, path, returning))

    def upload(self, walk: steps.Walk, form: FormData | str) -> Response:
        """The captures attached: checked, kept, and the report's address (or the
        answers page's, with why they were refused)."""
        if isinstance(form, str):
            return self.go(steps.finished(walk), form)
        try:
            profile = steps.profile_of(walk)
        except GpuAdvisorError:
            return self.go(steps.finished(walk))  # the answers page shows the problem
        uploads = [v for v in form.getlist("evidence") if is_upload(v)]
        if not uploads:  # the captures kept from before, if any, stand
            return RedirectResponse(self.report_address(steps.finished(walk)), 303)
        with request_folder() as folder:
            paths = [folder.keep(u.filename, read_upload(u)) for u in uploads]
            names = [folder.shown(p) for p in paths]
            try:
                written = profile_document(profile, sorted(walk.unknown))
                decision = self.decider.decide(profile, written, paths)
                warning = mixed_warning(paths, names, folder.cite_in(decision).evidence_conflicts)
            except GpuAdvisorError as exc:
                return self.go(steps.finished(walk), str(folder.cite(exc)))
            files = tuple(
                (name, path.read_bytes()) for name, path in zip(names, paths, strict=True)
            )
        name = self.store.put(Kept(files, warning)) or ""
        done = replace(steps.finished(walk), captures=name, capture_names=tuple(names))
        return RedirectResponse(self.report_address(done), 303)

    def report(self, walk: steps.Walk, confirmed: bool) -> Response:
        try:
            profile = steps.profile_of(walk)
        except GpuAdvisorError:
            return self.go(steps.finished(walk))
        kept = self.store.get(walk.captures) if walk.captures else None
        if walk.captures and kept is None:
            return self.go(replace(steps.finished(walk), captures="", capture_names=()), GONE)
        if kept is not None and kept.warning and not confirmed:
            return self.page(
                "mixed.html",
                warning=kept.warning,
                onward=self.report_address(walk, ok="1"),
                answers=address("/walk", w=self.signer.pack_walk(walk)),
            )
        written = profile_document(profile, sorted(walk.unknown))
        with request_folder() as folder:
            paths = [folder.keep(name, data) for name, data in (kept.files if kept else ())]
            try:
                decision = self.decider.decide(profile, written, paths)
            except GpuAdvisorError as exc:  # the same files were accepted when uploaded
                return self.go(steps.finished(walk), str(folder.cite(exc)))
            decision = folder.cite_in(decision)
        asked = [q.field for q in QUESTIONS if walk.settled(q.field)]
        return self.page(
            "report.html",
            v=buyer_view(
                decision,
                budget_usd=profile.budget.max_usd,
                slo_ms=profile.workload.latency_slo_ms,
                asked=asked,
                assumed=self._assumed(walk, profile),
            ),
            decision=self.signer.pack_decision(decision),
            walk=self.signer.pack_walk(walk),
            rows=views.summary_of(walk),
        )

    def _assumed(self, walk: steps.Walk, profile: Profile) -> tuple[str, ...]:
        """The values taken where the answers say "don't know", in words."""
        from gpuadvisor.ask import show

        say = wording()
        taken = []
        for question in QUESTIONS:
            if question.field in walk.unknown:
                section, _, name = question.field.partition(".")
                value = getattr(getattr(profile, section), name, None)
                said = say.assumed(question.field, show(value))
                if value is not None and "." not in name and said:
                    taken.append(said)
        if not taken:
            return ()
        return (f"Assumed where you answered don't know: {'; '.join(taken)}.",)

    def download(self, what: str, form: FormData) -> Response:
        if what == "toml":
            walk = self.signer.unpack_walk(str(form.get("walk", "")))
            try:
                text = profile_document(steps.profile_of(walk), sorted(walk.unknown))
            except GpuAdvisorError as exc:
                return self.answers(walk, str(exc))
            return attachment(text.encode("utf-8"), PROFILE_NAME, "application/toml")
        if what not in DOWNLOADS:
            raise HTTPException(404)
        decision = self.signer.unpack_decision(str(form.get("decision", "")))
        body = self.decider.render(decision, what)
        name, media = DOWNLOADS[what]
        return attachment(body if isinstance(body, bytes) else body.encode("utf-8"), name, media)

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


_URL: Final = re.compile(r"https?://[^\s<>\"')]+")
_BREAK_AFTER: Final = re.compile(r"([/.\-?=&])")


def breakable(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity after each slash, dot or dash of
    its addresses, so a long address wraps on a phone instead of pushing the page wide."""
    parts = []
    last = 0
    for found in _URL.finditer(text):
        parts.append(escape(text[last : found.start()]))
        pieces = _BREAK_AFTER.split(found.group(0))
        parts.append(
            Markup("").join(
                escape(p) + (Markup("<wbr>") if _BREAK_AFTER.fullmatch(p) else "") for p in pieces
            )
        )
        last = found.end()
    parts.append(escape(text[last:]))
    return Markup("").join(parts)


def attachment(body: bytes, name: str, media: str) -> Response:
    return Response(
        body, media_type=media, headers={"content-disposition": f'attachment; filename="{name}"'}
    )
