"""Twenty people at once: concurrent sessions on loopback, each walking the
questionnaire with its own answers and capture to its own report and downloads, with
no error and nothing of one session in another's (a bounded test: each request has a
timeout, the whole run a deadline, and it stops by itself).
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import pytest

from gpuadvisor.ask import interview
from gpuadvisor.decision.build import Advisor
from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.pipeline import advise_profile
from gpuadvisor.web.app import create_app

from .conftest import REPO
from .web_support import REQUEST_SECONDS, AnswerBook, Walker, live_server

SESSIONS = 20
#: The whole load run's deadline (it takes a few seconds on a laptop).
DEADLINE_SECONDS = 240.0
CAPTURE = REPO / "examples" / "evidence" / "thermal-throttled-workstation" / "nvidia-smi-q.txt"
KINDS = ("training", "inference", "rendering", "simulation", "mixed")


@dataclass(frozen=True)
class Session:
    number: int

    @property
    def title(self) -> str:
        return f"Load session {self.number:02d} <{self.number}>"

    @property
    def capture_name(self) -> str:
        return f"capture-{self.number:02d}.txt"

    @property
    def answers(self) -> dict[str, str]:
        return {
            "meta.title": self.title,
            "workload.kind": KINDS[self.number % len(KINDS)],
            "workload.objective": "throughput" if self.number % 2 else "latency",
            "workload.vram_need_gib": str(6 + 3 * self.number),
            "budget.max_usd": str(5000 + 1000 * self.number),
        }


@dataclass(frozen=True)
class Outcome:
    session: Session
    page_html: str
    headline: str
    decision: Decision
    pdf: bytes
    seconds: float


def run_session(url: str, session: Session, together: threading.Barrier) -> Outcome:
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=REQUEST_SECONDS) as client:
        walker = Walker(client)
        together.wait(REQUEST_SECONDS)  # everyone starts at once
        page = walker.walk(session.answers)
        assert page.report_action and not page.alerts, page.html
        together.wait(REQUEST_SECONDS)  # and asks for the report at once
        report = walker.report(page, [(session.capture_name, CAPTURE.read_bytes())])
        assert report.status == 200 and not report.alerts, report.html
        token = report.hidden["decision"]
        decision = Decision.model_validate_json(
            client.post("/download/json", data={"decision": token}).text
        )
        pdf = client.post("/download/pdf", data={"decision": token})
        assert pdf.status_code == 200, pdf.text
    return Outcome(
        session, report.html, report.headline, decision, pdf.content, time.monotonic() - started
    )


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(create_app()) as base:
        yield base


def test_twenty_concurrent_sessions_each_get_their_own_report(url: str) -> None:
    pypdf = pytest.importorskip("pypdf")
    sessions = [Session(n) for n in range(SESSIONS)]
    # What each session should get, decided one at a time with an Advisor of its own.
    oracle = Advisor(Engine(load_catalog(), load_rules()))
    expected = {
        s.number: advise_profile(
            interview(AnswerBook(s.answers)),
            profile_sha256="",
            profile_file="profile.toml",
            evidence=[CAPTURE],
            advisor=oracle,
        ).recommendation.headline
        for s in sessions
    }
    together = threading.Barrier(SESSIONS)
    begun = time.monotonic()
    with ThreadPoolExecutor(max_workers=SESSIONS) as pool:
        futures = [pool.submit(run_session, url, s, together) for s in sessions]
        outcomes = [f.result(timeout=DEADLINE_SECONDS) for f in futures]
    assert time.monotonic() - begun < DEADLINE_SECONDS
    titles = {s.number: s.title for s in sessions}
    for outcome in outcomes:
        mine = outcome.session
        decision = outcome.decision
        assert decision.meta.title == mine.title
        assert decision.vram_need_gib == 6 + 3 * mine.number
        assert [e.file for e in decision.inputs.evidence] == [mine.capture_name]
        assert outcome.headline == " ".join(expected[mine.number].split())
        others = [n for n in titles if n != mine.number]
        assert f"Load session {mine.number:02d} &lt;{mine.number}&gt;" in outcome.page_html
        assert not [n for n in others if f"Load session {n:02d}" in outcome.page_html]
        assert not [
            s.capture_name for s in sessions if s != mine and s.capture_name in outcome.page_html
        ]
        text = " ".join(
            page.extract_text() for page in pypdf.PdfReader(io.BytesIO(outcome.pdf)).pages
        )
        assert f"Load session {mine.number:02d}" in text
        assert not [n for n in others if f"Load session {n:02d}" in text]
