"""A live ``gpuadvisor serve`` application on loopback, and a client that walks its pages
the way a browser submits them (for the HTTP, load and browser tests).

The server is uvicorn in a thread, on a socket bound to 127.0.0.1 port 0; nothing here
talks to any other address. The client reads the page's forms with ``html.parser``
(the pages are ours), answers each question from a table of answers by field path, and
takes what a browser would send for an untouched question: the checked choice, or an
empty text box.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field as default
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from gpuadvisor.ask import show
from gpuadvisor.inputs.profile import SECTIONS
from gpuadvisor.web.server import MAX_REQUEST_HEAD_BYTES

#: Seconds any one request of a test may take (a PDF is the slowest, well under this).
REQUEST_SECONDS = 60.0


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """``app`` served on 127.0.0.1 (a free port) for the block; yields its base URL."""
    # IPPROTO_TCP: see gpuadvisor.web.server.listen (Nagle off, no 40 ms waits).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


@dataclass
class Page:
    """What a test needs of one page: its question, forms' hidden fields, choices,
    messages and headline."""

    html: str
    status: int
    asks: str | None = None
    kind: str | None = None
    hidden: dict[str, str] = default(default_factory=dict)
    checked: str | None = None
    choices: list[str] = default(default_factory=list)
    alerts: list[str] = default(default_factory=list)
    headline: str = ""
    report_action: str | None = None


class _Reader(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self._capture: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and "data-field" in a:
            self.page.asks, self.page.kind = a["data-field"], a.get("data-kind")
        if tag == "form" and a.get("action", "").startswith("/report?"):
            self.page.report_action = a["action"]
        if tag == "input" and a.get("type") == "hidden":
            self.page.hidden.setdefault(a["name"], a.get("value", ""))
        if tag == "input" and a.get("type") == "radio" and a.get("name") == "answer":
            self.page.choices.append(a["value"])
            if "checked" in a:
                self.page.checked = a["value"]
        if a.get("role") == "alert" or a.get("id") == "headline":
            self._capture = "alert" if a.get("role") == "alert" else "headline"
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._capture:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._capture and tag == "p":
            text = " ".join("".join(self._text).split())
            if self._capture == "alert":
                self.page.alerts.append(text)
            else:
                self.page.headline = text
            self._capture = None


def read_page(response: httpx.Response) -> Page:
    page = Page(response.text, response.status_code)
    _Reader(page).feed(response.text)
    return page


def answers_of(document: Mapping[str, Any]) -> dict[str, str]:
    """A profile document's values as typed answers by field path."""
    answers = {}

    def add(path: str, value: Any) -> None:
        if isinstance(value, dict):  # a nested table: [workload.model]
            for name, item in value.items():
                add(f"{path}.{name}", item)
        else:
            answers[path] = show(tuple(value) if isinstance(value, list) else value)

    for section in SECTIONS:
        for name, value in document.get(section, {}).items():
            add(f"{section}.{name}", value)
    if any(p.startswith("workload.model.") for p in answers):
        # A described model: "unknown" to the memory question leads to its questions.
        answers.setdefault("workload.vram_need_gib", "unknown")
    return answers


class Walker:
    """Walks the questionnaire over HTTP: ``answers[field]`` is a string, or a list of
    attempts (all but the last expected to be refused)."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.asked: list[str] = []
        self.refusals: dict[str, list[str]] = {}

    def post(self, path: str, **kwargs: Any) -> Page:
        """POST, then GET where the answer redirects (POST, redirect, GET)."""
        return read_page(self.client.post(path, follow_redirects=True, **kwargs))

    def get(self, path: str, **kwargs: Any) -> Page:
        return read_page(self.client.get(path, follow_redirects=True, **kwargs))

    def walk(self, answers: Mapping[str, str | Sequence[str]], page: Page | None = None) -> Page:
        """From the start (or ``page``) to the finish page."""
        pending = {k: [v] if isinstance(v, str) else list(v) for k, v in answers.items()}
        page = page or self.post("/start")
        for _ in range(500):
            if page.asks is None:
                return page
            self.asked.append(page.asks)
            attempts = pending.get(page.asks, [])
            typed = attempts.pop(0) if attempts else ""
            data = {"walk": page.hidden["walk"], "go": "next"}
            if page.kind in ("choice", "yes-no"):
                typed = typed or (page.checked or "")
            if typed or page.kind not in ("choice", "yes-no"):
                data["answer"] = typed
            answered = page.asks
            page = self.post("/answer", data=data)
            assert page.status == 200, page.html
            if page.asks == answered and page.alerts:
                self.refusals.setdefault(answered, []).extend(page.alerts)
        raise AssertionError("the questionnaire did not end")

    def report(self, page: Page, files: Sequence[tuple[str, bytes]] = ()) -> Page:
        assert page.report_action, "not the finish page"
        return self.post(
            page.report_action, files=[("evidence", f) for f in files] or None, data={}
        )


def evidence_files(paths: Sequence[Path]) -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in paths]


class AnswerBook:
    """The command line's side of an oracle: a dialogue for ``ask`` that answers each
    question from ``answers[field]`` (empty for the default), as :class:`Walker` does."""

    def __init__(self, answers: Mapping[str, str]) -> None:
        from gpuadvisor.ask import QUESTIONS

        self.answers = answers
        self.prompts = {q.prompt: q.field for q in QUESTIONS}
        self.field = ""
        self.asked: list[str] = []

    def say(self, text: str) -> None:
        if text in self.prompts:
            self.field = self.prompts[text]
            self.asked.append(self.field)

    def ask(self, prompt: str) -> str | None:
        return self.answers.get(self.field, "")
