"""``fleet --serve``: the same fleet report as a local, read-only web page.

``/`` is the HTML report, ``/fleet.json`` the JSON, ``/fleet.md`` the Markdown: the
same renderings as the command writes. Nothing can be sent to the page (GET and HEAD
only). It goes through the web page's own guard (``gpuadvisor.web.guard``: loopback Host
names only when served on loopback, no caching, no framing, no script). The report is
made before the page listens, so a Prometheus that is down is an error at start; with
``refresh_s`` a request for a report older than that asks Prometheus again (one
request at a time; the others get the report being replaced until it is).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable
from typing import Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from gpuadvisor.errors import GpuAdvisorError
from gpuadvisor.fleet.build import Options, run_fleet
from gpuadvisor.fleet.client import Client
from gpuadvisor.fleet.model import FleetReport
from gpuadvisor.fleet.profiles import Fleet
from gpuadvisor.fleet.report import render
from gpuadvisor.web.guard import Guard

#: Nothing is sent to this page; a body is refused past this size.
_MAX_BODY: Final = 1024


class _Report:
    """The report served, and how it is made again."""

    def __init__(self, client: Client, fleet: Fleet, options: Options, refresh_s: float | None):
        self.client, self.fleet, self.options, self.refresh_s = client, fleet, options, refresh_s
        self.lock = threading.Lock()
        self.report, _ = run_fleet(client, fleet, options)
        self.made = time.monotonic()
        self.problem: str | None = None

    def current(self) -> FleetReport:
        stale = self.refresh_s is not None and time.monotonic() - self.made > self.refresh_s
        if stale and self.lock.acquire(blocking=False):
            try:
                options = dataclasses.replace(self.options, at=float(int(time.time())))
                self.report, _ = run_fleet(self.client, self.fleet, options)
                self.problem = None
            except GpuAdvisorError as exc:  # keep the last good report, and say why
                self.problem = str(exc)
            finally:
                self.made = time.monotonic()
                self.lock.release()
        return self.report


def create_app(
    client: Client,
    fleet: Fleet,
    options: Options,
    *,
    refresh_s: float | None = None,
    allowed_hosts: Iterable[str] | None = None,
) -> ASGIApp:
    state = _Report(client, fleet, options, refresh_s)

    # Plain functions: Starlette runs them in its thread pool, so asking Prometheus
    # again does not hold the event loop.
    def page(fmt: str, media: str) -> Response:
        body = render(state.current(), fmt)
        headers = {"x-gpuadvisor-refresh-problem": state.problem[:200]} if state.problem else {}
        return Response(body, media_type=media, headers=headers)

    def html(request: Request) -> Response:
        return page("html", "text/html; charset=utf-8")

    def json(request: Request) -> Response:
        return page("json", "application/json")

    def markdown(request: Request) -> Response:
        return page("md", "text/markdown; charset=utf-8")

    def health(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    app = Starlette(
        routes=[
            Route("/", html, methods=["GET", "HEAD"]),
            Route("/fleet.json", json, methods=["GET", "HEAD"]),
            Route("/fleet.md", markdown, methods=["GET", "HEAD"]),
            Route("/healthz", health, methods=["GET", "HEAD"]),
        ]
    )
    return Guard(app, max_body_bytes=_MAX_BODY, allowed_hosts=allowed_hosts)
