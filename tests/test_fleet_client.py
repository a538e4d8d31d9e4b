"""The Prometheus client's error handling, against a tiny local HTTP server from the
standard library (the end-to-end tests use a real Prometheus): each failure is a clear
message naming the URL, and says whether the run may go on without the query."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.fleet.client import Client, PrometheusError, check_url

from .fleet_support import free_port


class _Handler(BaseHTTPRequestHandler):
    status: ClassVar[int] = 200
    body: ClassVar[bytes] = b""
    delay_s: ClassVar[float] = 0.0
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        form = self.rfile.read(length).decode()
        type(self).seen.append({"path": self.path, "form": form})
        time.sleep(self.delay_s)
        try:
            self.send_response(self.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.body)))
            self.end_headers()
            self.wfile.write(self.body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (time-out, size)
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/prefix", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


def _vector(*series: dict[str, Any], **extra: Any) -> bytes:
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": list(series)}, **extra}
    ).encode()


def test_an_answer_is_read_with_its_labels_values_and_hash(
    server: tuple[str, type[_Handler]],
) -> None:
    url, handler = server
    handler.body = _vector(
        {"metric": {"instance": "h:9400", "gpu": "0"}, "value": [1700000000, "91.5"]}
    )
    answer = Client(url).instant("up", 1700000000.0)
    assert answer.series[0].labels == {"instance": "h:9400", "gpu": "0"}
    assert answer.series[0].value == 91.5
    assert len(answer.sha256) == 64 and not answer.partial
    # The path prefix is kept (Thanos, Mimir), the query goes in a POST form.
    assert handler.seen[0]["path"] == "/prefix/api/v1/query"
    assert (
        "query=up" in handler.seen[0]["form"] and "time=1700000000.000" in handler.seen[0]["form"]
    )


def test_warnings_make_a_partial_answer(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.body = _vector(warnings=["store 10.0.0.7:10901 did not answer"])
    answer = Client(url).instant("up", 0.0)
    assert answer.partial and answer.warnings == ("store 10.0.0.7:10901 did not answer",)


def test_a_prometheus_that_is_down_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PrometheusError) as caught:
        Client(url, timeout_s=5).instant("up", 0.0)
    assert f"cannot reach Prometheus at {url}" in str(caught.value)
    assert caught.value.exit_code == 2 and not caught.value.partial_ok


def test_a_query_that_takes_too_long_times_out(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.delay_s = 1.5
    handler.body = _vector()
    started = time.monotonic()
    with pytest.raises(PrometheusError) as caught:
        Client(url, timeout_s=0.5).instant("sum(up)", 0.0)
    assert time.monotonic() - started < 1.4
    assert "did not answer within 0.5 s: sum(up)" in str(caught.value)
    assert caught.value.partial_ok and "--timeout" in (caught.value.hint or "")


def test_prometheus_own_timeout_reads_the_same(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.status = 503
    handler.body = json.dumps(
        {"status": "error", "errorType": "timeout", "error": "query timed out"}
    ).encode()
    with pytest.raises(PrometheusError) as caught:
        Client(url, timeout_s=7).instant("sum(up)", 0.0)
    assert "did not answer within 7 s" in str(caught.value) and caught.value.partial_ok


def test_a_refused_query_names_prometheus_reason(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.status = 400
    handler.body = json.dumps(
        {"status": "error", "errorType": "bad_data", "error": 'parse error: unexpected "}"'}
    ).encode()
    with pytest.raises(PrometheusError) as caught:
        Client(url).instant("up{", 0.0)
    assert 'refused the query: parse error: unexpected "}"' in str(caught.value)
    assert not caught.value.partial_ok


def test_a_server_error_on_one_query_lets_the_run_go_on(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.status = 500
    handler.body = b'{"status":"error","errorType":"internal","error":"store unavailable"}'
    with pytest.raises(PrometheusError) as caught:
        Client(url).instant("up", 0.0)
    assert "HTTP 500: store unavailable" in str(caught.value) and caught.value.partial_ok


def test_an_answer_too_large_is_refused(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.body = _vector(*[{"metric": {"i": str(n)}, "value": [0, "1"]} for n in range(2000)])
    with pytest.raises(PrometheusError) as caught:
        Client(url, max_bytes=10_000).instant("up", 0.0)
    assert "larger than" in str(caught.value) and "--selector" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>not found</html>", "not JSON"),
        (
            b'{"status": "success", "data": {"resultType": "scalar", "result": [0, "1"]}}',
            "neither a vector",
        ),
        (
            b'{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": "x"}]}}',
            "not [time, value]",
        ),
    ],
)
def test_an_answer_that_is_not_prometheus_is_named(
    server: tuple[str, type[_Handler]], body: bytes, problem: str
) -> None:
    url, handler = server
    handler.body = body
    with pytest.raises(PrometheusError) as caught:
        Client(url).instant("up", 0.0)
    assert problem in str(caught.value) and "Prometheus's HTTP API" in str(caught.value)


@pytest.mark.parametrize(
    "url", ["ftp://prom:9090", "prom:9090", "http://", "file:///etc/passwd", "http://p/?q=1"]
)
def test_only_http_urls_are_spoken(url: str) -> None:
    with pytest.raises(InputError) as caught:
        check_url(url)
    assert caught.value.field == "--prometheus" and caught.value.exit_code == 2
