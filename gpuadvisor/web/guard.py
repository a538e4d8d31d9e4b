"""What every request goes through before the page sees it: the Host it names, the site
that sent it, the size of its body, and the headers every answer carries.

- **Host.** Served on loopback, the page answers only requests addressed to a loopback
  name (``127.0.0.1``, ``localhost``, ``[::1]``): a web site that points its own name
  at 127.0.0.1 (DNS rebinding) gets a refusal, not the page.
- **Origin.** A form another web site sends here (its page POSTing to 127.0.0.1) names
  that site in its Origin header: it is refused (403, with a page that says why). A
  POST from this page names this page's own address; one with no Origin at all (older
  browsers, curl) is accepted as before.
- **Body size and end.** A body larger than the limit is not read into the form: the page is
  told (``BODY_CUT`` in the request's scope) and answers with its own message, on the
  page the person was on; the rest of the body is read and dropped, so the browser
  receives that answer instead of a reset connection. The body's last bytes are kept
  (``BODY_TAIL``), so a multipart form that ends before its closing boundary is told
  apart from a whole one.
- **Headers.** Nothing is cached (answers are in the pages), no referrer is sent to
  another site, the page cannot be framed by another site, and the content security
  policy allows no script and no request to anywhere but this server.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

BODY_CUT: Final = "gpuadvisor.body_cut"
#: The last bytes of the body, where a whole multipart form has its closing boundary.
BODY_TAIL: Final = "gpuadvisor.body_tail"
_TAIL_BYTES: Final = 256

#: Loopback names a browser may put in the Host header.
LOOPBACK_NAMES: Final = frozenset({"127.0.0.1", "localhost", "::1"})

SECURITY_HEADERS: Final = (
    (b"cache-control", b"no-store"),
    # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with
    # every form, and the page's own POSTs could not be told from another site's.
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
)

#: Methods that change nothing, which any page may send.
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})

#: A body this much larger than the limit is not read to its end: the connection is
#: closed instead (no browser form sends that much by mistake).
_DRAIN_FACTOR: Final = 8


def host_name(header: str) -> str:
    """``localhost`` for ``localhost:8765``, ``::1`` for ``[::1]:8765``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def same_origin(headers: dict[bytes, bytes]) -> bool:
    """Whether a request's Origin (when it names one) is this page's own address: the
    scheme http and the Host the request was sent to. "null" (a sandboxed or local
    page) is foreign."""
    origin = headers.get(b"origin")
    if origin is None:
        return True
    host = headers.get(b"host", b"").strip().lower()
    return bool(host) and origin.strip().lower() == b"http://" + host


class Guard:
    """ASGI middleware doing the jobs of the module docstring."""

    def __init__(
        self, app: ASGIApp, *, max_body_bytes: int, allowed_hosts: Iterable[str] | None
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.allowed_hosts = frozenset(allowed_hosts) if allowed_hosts is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        if self.allowed_hosts is not None:
            host = host_name(headers.get(b"host", b"").decode("latin-1"))
            if host not in self.allowed_hosts:
                await _refuse_host(send)
                return
        if scope.get("method") not in SAFE_METHODS and not same_origin(headers):
            await _refuse_origin(send)
            return
        scope[BODY_CUT] = False
        scope[BODY_TAIL] = b""
        limit = self.max_body_bytes
        try:
            declared = int(headers.get(b"content-length", b"0"))
        except ValueError:
            declared = 0
        seen = 0
        finished = False

        async def limited() -> Message:
            nonlocal seen, finished
            if finished:
                return {"type": "http.request", "body": b"", "more_body": False}
            if declared > limit:
                await _drain(receive, declared, limit * _DRAIN_FACTOR)
                scope[BODY_CUT] = True
                finished = True
                return {"type": "http.request", "body": b"", "more_body": False}
            message = await receive()
            if message["type"] != "http.request":
                return message
            body = message.get("body", b"")
            seen += len(body)
            scope[BODY_TAIL] = (scope[BODY_TAIL] + body)[-_TAIL_BYTES:]
            if seen > limit:
                if message.get("more_body", False):
                    await _drain(receive, None, limit * _DRAIN_FACTOR - seen)
                scope[BODY_CUT] = True
                finished = True
                return {"type": "http.request", "body": b"", "more_body": False}
            if not message.get("more_body", False):
                finished = True
            return message

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, limited, with_headers)


async def _drain(receive: Receive, declared: int | None, budget: int) -> None:
    """Read and drop the rest of a body, up to ``budget`` bytes."""
    if declared is not None and declared > budget:
        return
    read = 0
    while read <= budget:
        message = await receive()
        if message["type"] != "http.request":
            return
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _refuse_host(send: Send) -> None:
    body = (
        b"This gpuadvisor page answers only requests addressed to this machine's loopback "
        b"name (127.0.0.1, localhost or [::1]).\n"
    )
    await send(
        {
            "type": "http.response.start",
            "status": 421,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode("ascii")),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


_FOREIGN_PAGE: Final = (
    b'<!doctype html><html lang="en"><head><meta charset="utf-8">'
    b"<title>Refused \xc2\xb7 gpuadvisor</title></head><body>"
    b"<h1>Refused: sent from another site</h1>"
    b"<p>This form was sent to gpuadvisor by a page of another web site, so it was not "
    b"read: only the gpuadvisor page itself may send answers and files here.</p>"
    b'<p><a href="/">Open the gpuadvisor page</a></p></body></html>\n'
)


async def _refuse_origin(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(_FOREIGN_PAGE)).encode("ascii")),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": _FOREIGN_PAGE})
