"""A small typed client of Prometheus's HTTP API (``/api/v1/query``,
``/api/v1/query_range``), on the standard library.

Every call is bounded: a time-out per request, and a cap on the bytes read from the
answer. What goes wrong becomes an :class:`~gpuadvisor.errors.InputError` (exit 2) that
names the URL and what to change: Prometheus down or unreachable, a query that timed
out, a query Prometheus refused (``bad_data``: usually a selector), an answer too large
or not Prometheus's JSON. Warnings that come with an answer (a partial response from
Thanos or Mimir, a query that hit a limit) are kept with the answer, not dropped.

Thanos Query and Mimir (and Cortex, VictoriaMetrics) serve the same API under their own
path prefix: the URL given may carry it (``https://mimir.example/prometheus``).
"""

from __future__ import annotations

import hashlib
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Final

from gpuadvisor.errors import InputError

#: Seconds one request may take, unless the caller says otherwise.
DEFAULT_TIMEOUT_S: Final = 60.0
#: Largest answer read, in bytes: a 10,000-host fleet's biggest answer is about 30 MB.
DEFAULT_MAX_BYTES: Final = 256 * 1024 * 1024
#: Bytes of an error answer kept for the message.
_ERROR_BYTES: Final = 4096


class PrometheusError(InputError):
    """A query that failed. ``partial_ok``: the run may go on without this query's
    values (it timed out, or the server failed on it) and say so in the report; a
    Prometheus that cannot be reached, or a query it refuses, ends the run."""

    def __init__(self, message: str, *, partial_ok: bool = False, **where: Any) -> None:
        super().__init__(message, **where)
        self.partial_ok = partial_ok


@dataclass(frozen=True)
class Series:
    """One series of an answer: its labels and its values, ``(unix seconds, value)``;
    an instant query gives one value, a range query one per step."""

    labels: dict[str, str]
    values: tuple[tuple[float, float], ...]

    @property
    def value(self) -> float:
        return self.values[-1][1]


@dataclass(frozen=True)
class Answer:
    """What Prometheus answered to one query."""

    query: str
    series: tuple[Series, ...]
    warnings: tuple[str, ...] = ()
    sha256: str = ""
    seconds: float = 0.0
    bytes_read: int = 0
    partial: bool = field(default=False)


def check_url(url: str, *, field: str = "--prometheus") -> str:
    """The base URL without a trailing slash; only http and https are spoken."""
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise InputError(
            f"{url!r} is not an http(s) URL",
            field=field,
            hint="give the address Prometheus (or Thanos Query, or Mimir's Prometheus API) "
            "answers on, e.g. http://prometheus.example:9090",
        )
    if parsed.query or parsed.fragment:
        raise InputError(f"{url!r}: the URL must not carry a query or a fragment", field=field)
    return url.strip().rstrip("/")


class Client:
    """Queries against one Prometheus-compatible API."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.url = check_url(url)
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes

    def instant(self, query: str, at: float) -> Answer:
        """``/api/v1/query`` at unix time ``at``."""
        return self._call("query", {"query": query, "time": _stamp(at)})

    def range(self, query: str, start: float, end: float, step_s: int) -> Answer:
        """``/api/v1/query_range`` from ``start`` to ``end`` every ``step_s`` seconds."""
        params = {"query": query, "start": _stamp(start), "end": _stamp(end), "step": str(step_s)}
        return self._call("query_range", params)

    # -- one request ------------------------------------------------------------------
    def _call(self, endpoint: str, params: dict[str, str]) -> Answer:
        import time

        query = params["query"]
        # The server is told its own time-out too, so it stops the work it would waste.
        params = {**params, "timeout": f"{max(1, int(self.timeout_s))}s"}
        request = urllib.request.Request(
            f"{self.url}/api/v1/{endpoint}",
            data=urllib.parse.urlencode(params).encode("ascii"),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
                "User-Agent": "gpuadvisor-fleet",
            },
            method="POST",
        )
        started = time.monotonic()
        body = self._read(request, query)
        seconds = time.monotonic() - started
        return _answer(body, query, self.url, seconds)

    def _read(self, request: urllib.request.Request, query: str) -> bytes:
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return _bounded(response, self.max_bytes, self.url)
        except urllib.error.HTTPError as exc:
            raise _refused(exc, query, self.url, self.timeout_s) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _timed_out(query, self.url, self.timeout_s) from None
            raise PrometheusError(
                f"cannot reach Prometheus at {self.url}: {_reason(reason)}",
                field="--prometheus",
                hint="check the URL and that Prometheus is running and reachable from here",
            ) from None
        except TimeoutError:
            raise _timed_out(query, self.url, self.timeout_s) from None
        except OSError as exc:  # a connection reset halfway through the answer
            raise PrometheusError(
                f"the connection to Prometheus at {self.url} failed: {_reason(exc)}",
                field="--prometheus",
            ) from None


def _stamp(at: float) -> str:
    return f"{at:.3f}"


def _reason(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return str(reason.strerror).lower()
    return str(reason) or type(reason).__name__


def _bounded(response: Any, max_bytes: int, url: str) -> bytes:
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(url, max_bytes)
    body = bytes(response.read(max_bytes + 1))
    if len(body) > max_bytes:
        raise _too_large(url, max_bytes)
    return body


def _too_large(url: str, max_bytes: int) -> PrometheusError:
    return PrometheusError(
        f"Prometheus at {url} sent an answer larger than {max_bytes // 2**20} MiB",
        field="--prometheus",
        hint="narrow the hosts with --selector, or judge the fleet in parts (one run per "
        "cluster); --max-mib raises the cap",
    )


def _timed_out(query: str, url: str, timeout_s: float) -> PrometheusError:
    return PrometheusError(
        f"Prometheus at {url} did not answer within {timeout_s:g} s: {_short(query)}",
        partial_ok=True,
        field="--prometheus",
        hint="narrow the hosts with --selector, shorten --window, or allow more time "
        "with --timeout",
    )


def _refused(
    exc: urllib.error.HTTPError, query: str, url: str, timeout_s: float
) -> PrometheusError:
    try:
        text = exc.read(_ERROR_BYTES).decode("utf-8", "replace")
    except OSError:
        text = ""
    error_type, message = "", text.strip()[:300]
    try:
        data = json.loads(text)
        error_type, message = str(data.get("errorType", "")), str(data.get("error", message))
    except (ValueError, AttributeError):
        pass
    if error_type == "timeout" or (exc.code == 503 and "timeout" in message.lower()):
        return _timed_out(query, url, timeout_s)
    if error_type == "bad_data" or exc.code == 400:
        return PrometheusError(
            f"Prometheus at {url} refused the query: {message}",
            field="--selector",
            hint=f"the query was: {_short(query)}",
        )
    return PrometheusError(
        f"Prometheus at {url} answered HTTP {exc.code}: {message or exc.reason}",
        # A server error on one query (a store down behind Thanos, a limit hit) leaves
        # the others; a 4xx means the address or the API is wrong.
        partial_ok=exc.code >= 500,
        field="--prometheus",
        hint="is this the address of Prometheus's HTTP API? (Thanos and Mimir: include "
        "their path prefix, e.g. https://mimir.example/prometheus)",
    )


def _short(query: str) -> str:
    return query if len(query) <= 200 else query[:197] + "..."


def _answer(body: bytes, query: str, url: str, seconds: float) -> Answer:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise _not_prometheus(url, "an answer that is not JSON") from None
    if not isinstance(data, dict) or data.get("status") != "success":
        problem = data.get("error") if isinstance(data, dict) else None
        raise _not_prometheus(
            url, f"status {data.get('status')!r}: {problem}" if problem else "no status"
        )
    result = data.get("data")
    if not isinstance(result, dict) or result.get("resultType") not in ("vector", "matrix"):
        raise _not_prometheus(url, "a result that is neither a vector nor a matrix")
    series = tuple(_series(item, url) for item in result.get("result") or ())
    warnings = tuple(str(w) for w in data.get("warnings") or ())
    # Thanos says so when a store did not answer and partial responses are allowed.
    partial = bool(warnings) or bool(data.get("partial_response"))
    return Answer(
        query=query,
        series=series,
        warnings=warnings,
        sha256=hashlib.sha256(body).hexdigest(),
        seconds=seconds,
        bytes_read=len(body),
        partial=partial,
    )


def _series(item: Any, url: str) -> Series:
    if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
        raise _not_prometheus(url, "a series without labels")
    points: list[Any] = item.get("values") or [] if "values" in item else [item.get("value")]
    values = []
    for point in points:
        try:
            stamp, text = point
            values.append((float(stamp), float(text)))
        except (TypeError, ValueError):
            raise _not_prometheus(
                url, f"a sample that is not [time, value]: {point!r:.60}"
            ) from None
    labels = {str(k): str(v) for k, v in item["metric"].items()}
    return Series(labels=labels, values=tuple(values))


def _not_prometheus(url: str, what: str) -> PrometheusError:
    return PrometheusError(
        f"{url} sent {what}; is it Prometheus's HTTP API?",
        field="--prometheus",
        hint="Thanos and Mimir: include their path prefix, e.g. https://mimir.example/prometheus",
    )
