"""``gpuadvisor serve`` over HTTP, on loopback: the questionnaire from the first question
to the report and its downloads, uploads as data, every mistake answered on the page.

The oracle for a page's decision is the command line's path: the profile ``ask`` makes
from the same answers, decided by ``pipeline.advise_profile`` with an Advisor of its own.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpuadvisor.ask import interview
from gpuadvisor.decision.model import Decision
from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES, load_document
from gpuadvisor.pipeline import advise, advise_profile
from gpuadvisor.web.app import MAX_BODY_BYTES, create_app
from gpuadvisor.web.uploads import MAX_FILES

from .conftest import REPO
from .web_support import (
    REQUEST_SECONDS,
    AnswerBook,
    Page,
    Walker,
    answers_of,
    evidence_files,
    live_server,
    read_page,
)

EXAMPLES = sorted((REPO / "examples").glob("*.toml"))
THERMAL = REPO / "examples" / "evidence" / "thermal-throttled-workstation"
REQUIRED = {
    "workload.kind": "training",
    "workload.objective": "throughput",
    "workload.vram_need_gib": "20",
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(create_app()) as base:
        yield base


@pytest.fixture()
def client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=REQUEST_SECONDS) as http:
        yield http


@pytest.fixture()
def walker(client: httpx.Client) -> Walker:
    return Walker(client)


def finished(walker: Walker, answers: dict[str, Any] | None = None) -> Page:
    page = walker.walk(answers or REQUIRED)
    assert page.report_action, page.html
    return page


def download(client: httpx.Client, what: str, **data: str) -> httpx.Response:
    response = client.post(f"/download/{what}", data=data)
    assert response.status_code == 200, response.text
    assert response.headers["content-disposition"].startswith("attachment; filename=")
    return response


def decision_token(report: Page) -> str:
    return report.hidden["decision"]


# -- the walk gives the command line's decision -------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_a_worked_example_walked_on_the_page_gives_the_command_lines_decision(
    walker: Walker, client: httpx.Client, example: Path
) -> None:
    answers = answers_of(load_document(example)[0])
    page = finished(walker, answers)
    report = walker.report(page)
    assert report.status == 200 and not report.alerts, report.html
    toml = download(client, "toml", walk=page.hidden["walk"]).text
    book = AnswerBook(answers)
    cli_profile = interview(book)
    assert walker.asked == book.asked
    assert parse_profile(toml) == cli_profile
    expected = advise_profile(
        cli_profile,
        profile_sha256=hashlib.sha256(toml.encode()).hexdigest(),
        profile_file="profile.toml",
    )
    got = Decision.model_validate_json(
        download(client, "json", decision=decision_token(report)).text
    )
    assert got == expected
    assert report.headline == " ".join(expected.recommendation.headline.split())


def test_the_downloads_hold_the_report_the_page_shows(walker: Walker, client: httpx.Client) -> None:
    pypdf = pytest.importorskip("pypdf")
    page = finished(walker, {**REQUIRED, "meta.title": "Downloads <b>&</b> co"})
    report = walker.report(page, evidence_files([THERMAL / "nvidia-smi-q.txt"]))
    token = decision_token(report)
    headline = report.headline
    pdf = download(client, "pdf", decision=token)
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    text = " ".join(
        " ".join(p.extract_text().split()) for p in pypdf.PdfReader(io.BytesIO(pdf.content)).pages
    )
    assert headline in text
    markdown = download(client, "md", decision=token).text.replace("\\", "")  # \$ -> $
    assert headline in " ".join(markdown.split())
    html = download(client, "html", decision=token).text
    assert "Downloads &lt;b&gt;&amp;&lt;/b&gt; co" in html
    decision = Decision.model_validate_json(download(client, "json", decision=token).text)
    toml = download(client, "toml", walk=page.hidden["walk"]).content
    assert decision.inputs.profile_sha256 == hashlib.sha256(toml).hexdigest()
    assert decision.meta.title == "Downloads <b>&</b> co"


# -- answers --------------------------------------------------------------------------


def test_a_wrong_answer_is_explained_on_the_page_and_can_be_corrected(walker: Walker) -> None:
    page = walker.post("/start")
    while page.asks != "workload.vram_need_gib":
        answer = REQUIRED.get(page.asks or "", page.checked or "")
        page = walker.post("/answer", data={"walk": page.hidden["walk"], "answer": answer})
    refused = walker.post("/answer", data={"walk": page.hidden["walk"], "answer": "lots"})
    assert refused.status == 200 and refused.asks == "workload.vram_need_gib"
    assert refused.alerts == [
        "Not accepted: answer with a number, like 2.5, or describe, to describe the AI model "
        "instead. Please answer again."
    ]
    assert 'value="lots"' in refused.html  # what was typed stays in the box
    accepted = walker.post("/answer", data={"walk": refused.hidden["walk"], "answer": "48 GB"})
    assert accepted.asks != "workload.vram_need_gib" and not accepted.alerts
    done = walker.walk({}, accepted)
    assert "44.7" in done.html  # 48 GB (decimal) read as 44.7 GiB, as on the command line


def test_a_required_choice_left_empty_is_asked_again(walker: Walker) -> None:
    page = walker.post("/start")
    while page.asks != "workload.kind":
        page = walker.post("/answer", data={"walk": page.hidden["walk"], "answer": ""})
    again = walker.post("/answer", data={"walk": page.hidden["walk"]})
    assert again.asks == "workload.kind" and again.alerts == ["This one needs an answer."]


def test_back_returns_to_the_last_question_with_its_answer_chosen(walker: Walker) -> None:
    page = finished(walker)
    back = walker.post("/answer", data={"walk": page.hidden["walk"], "go": "back"})
    assert back.asks == "meta.notes"
    for _ in range(40):
        if back.asks == "workload.objective":
            break
        back = walker.post("/answer", data={"walk": back.hidden["walk"], "go": "back"})
    assert back.checked == "throughput"


@pytest.mark.parametrize("token", ["", "not-a-token", "eJx.AAAA"])
def test_a_changed_or_stale_page_starts_again_with_the_reason(walker: Walker, token: str) -> None:
    page = walker.post("/answer", data={"walk": token, "answer": "x"})
    assert page.status == 400 and "earlier run of the server" in page.alerts[0]
    assert "Traceback" not in page.html
    report = walker.post("/report?walk=" + token, files=[("evidence", ("a.txt", b"x"))])
    assert report.status == 400 and "earlier run of the server" in report.alerts[0]


def test_a_stale_decision_token_is_refused_on_the_page(client: httpx.Client) -> None:
    page = read_page(client.post("/download/pdf", data={"decision": "x.y"}))
    assert page.status == 400 and "earlier run of the server" in page.alerts[0]


# -- uploads --------------------------------------------------------------------------


BAD_UPLOADS = [
    ("binary.dat", b"\x00\x01\x02" * 10, "binary.dat: looks like binary data"),
    ("latin1.txt", "Température: 87 °C\n".encode("latin-1"), "latin1.txt:1: not valid UTF-8"),
    ("notes.txt", b"hello, this is not a capture\n", "notes.txt: unrecognised evidence format"),
    ("empty.txt", b"   \n", "empty.txt: file is empty"),
    (
        "smi.txt",
        b"NVIDIA-SMI has failed because it couldn't communicate\n",
        "error message from nvidia-smi",
    ),
    ("big.txt", b"x" * (MAX_INPUT_BYTES + 10), "big.txt: file is larger than the 16 MiB limit"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_UPLOADS, ids=[b[0] for b in BAD_UPLOADS])
def test_a_malformed_capture_is_named_on_the_page_and_the_answers_stay(
    walker: Walker, name: str, data: bytes, message: str
) -> None:
    page = finished(walker)
    refused = walker.report(page, [(name, data)])
    assert refused.status == 200 and refused.report_action, refused.html
    assert any(message in alert for alert in refused.alerts), refused.alerts
    assert refused.hidden["walk"] == page.hidden["walk"]
    assert "Traceback" not in refused.html and "gpuadvisor-web-" not in refused.html


def test_too_many_files_or_too_large_a_body_is_answered_on_the_same_page(walker: Walker) -> None:
    page = finished(walker)
    capture = (THERMAL / "nvidia-smi-q.txt").read_bytes()
    many = walker.report(page, [(f"q{i}.txt", capture) for i in range(MAX_FILES + 1)])
    assert many.report_action and "Too many files" in many.alerts[0], many.alerts
    huge = walker.report(page, [("a.txt", b"x" * (MAX_BODY_BYTES // 2 + 1))] * 2)
    assert huge.report_action and "nothing was read" in huge.alerts[0], huge.alerts
    assert huge.hidden["walk"] == page.hidden["walk"]
    broken = read_page(
        walker.client.post(
            page.report_action or "",
            content=b'--xyz\r\nContent-Disposition: form-data; name="evidence"; filename=',
            headers={"content-type": "multipart/form-data; boundary=xyz"},
            follow_redirects=True,
        )
    )
    assert broken.report_action and broken.alerts, broken.html


def test_uploads_are_kept_in_a_private_folder_for_the_request_only(
    walker: Walker, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import gpuadvisor.pipeline

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[tuple[Path, bool, int]] = []
    real = gpuadvisor.pipeline.advise_profile

    def spy(*args: Any, **kwargs: Any) -> Decision:
        for path in kwargs["evidence"]:
            seen.append((path, path.is_file(), path.parent.stat().st_mode & 0o777))
        return real(*args, **kwargs)

    monkeypatch.setattr(gpuadvisor.pipeline, "advise_profile", spy)
    page = finished(walker)
    sent = [("../../../etc/passwd", (THERMAL / "nvidia-smi-q.txt").read_bytes())]
    report = walker.report(page, sent)
    assert report.status == 200 and not report.alerts, report.alerts
    # Decided when uploaded, and again for the report page from the capture kept.
    assert len(seen) == 2
    for path, existed, mode in seen:
        assert existed and mode == 0o700 and path.parent.parent == tmp_path
        assert path.name == "upload-01"  # our name, never the one sent
    assert list(tmp_path.iterdir()) == []  # removed after the request
    decision = Decision.model_validate_json(
        download(walker.client, "json", decision=decision_token(report)).text
    )
    assert [e.file for e in decision.inputs.evidence] == ["passwd"]
    assert "upload-01" not in decision.to_json() and str(tmp_path) not in decision.to_json()


def test_two_captures_of_one_host_are_merged_and_cited_by_their_names(walker: Walker) -> None:
    files = evidence_files([THERMAL / "nvidia-smi-q.txt", THERMAL / "nvidia-smi-dmon.txt"])
    report = walker.report(finished(walker), files)
    decision = Decision.model_validate_json(
        download(walker.client, "json", decision=decision_token(report)).text
    )
    assert [e.file for e in decision.inputs.evidence] == ["nvidia-smi-q.txt", "nvidia-smi-dmon.txt"]
    assert decision.fix_first and "nvidia-smi-q.txt" in decision.fix_first[0].evidence


# -- starting from a profile ------------------------------------------------------------


def start_from(walker: Walker, name: str, data: bytes, review: str = "no") -> Page:
    return walker.post("/start", files={"profile": (name, data)}, data={"review": review})


def test_an_uploaded_partial_profile_is_asked_only_what_it_leaves_open(walker: Walker) -> None:
    partial = b'[workload]\nkind = "training"\nobjective = "throughput"\nvram_need_gib = 20\n'
    page = start_from(walker, "partial.toml", partial)
    assert page.asks == "meta.title" and not page.alerts
    done = walker.walk({}, page)
    assert not {"workload.kind", "workload.objective", "workload.vram_need_gib"} & set(walker.asked)
    assert "starting profile" in done.html


def test_an_uploaded_profile_with_review_asks_its_answers_again(walker: Walker) -> None:
    example = (REPO / "examples" / "llm-latency-endpoint.toml").read_bytes()
    page = start_from(walker, "llm.toml", example, review="yes")
    assert page.asks == "meta.title" and 'placeholder="Support-chat LLM endpoint"' in page.html


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[workload\nkind = 1\n", "mine.toml:1: invalid TOML"),
        (b'[workload]\nknd = "training"\n', "did you mean 'kind'"),
        (b'schema = "gpuadvisor/profile/v9"\n', "unsupported schema"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b"", "file is empty"),
        (b'{"workload": {"kind": "training", "kind": "x"}}', "mine.toml"),
    ],
)
def test_a_broken_profile_upload_is_explained_on_the_start_page(
    walker: Walker, data: bytes, message: str
) -> None:
    page = start_from(walker, "mine.toml", data)
    assert page.status == 200 and page.asks is None and page.alerts, page.html
    assert message in page.alerts[0], page.alerts
    assert "upload-01" not in page.alerts[0] and "Traceback" not in page.html


def test_a_profile_value_the_model_refuses_is_noted_and_asked_again(walker: Walker) -> None:
    page = start_from(walker, "p.toml", b'[workload]\nkind = "training"\nvram_need_gib = "20"\n')
    assert "p.toml: workload.vram_need_gib: not accepted" in page.html, page.html
    done = walker.walk(REQUIRED, page)
    assert "workload.vram_need_gib" in walker.asked and done.report_action


# -- the server's own answers ----------------------------------------------------------


def test_every_answer_carries_the_security_headers(client: httpx.Client) -> None:
    for response in (client.get("/"), client.post("/start"), client.get("/static/style.css")):
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "script-src" not in response.headers["content-security-policy"]
        assert "default-src 'none'" in response.headers["content-security-policy"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "192.0.2.1", ""])
def test_requests_for_another_host_name_are_refused(url: str, host: str) -> None:
    response = httpx.get(url + "/", headers={"host": host})
    assert response.status_code == 421 and "loopback" in response.text


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_names_get_the_page(url: str, host: str) -> None:
    port = url.rsplit(":", 1)[1]
    assert httpx.get(url + "/", headers={"host": f"{host}:{port}"}).status_code == 200


def test_a_page_that_does_not_exist_is_a_page_too(client: httpx.Client) -> None:
    missing = read_page(client.get("/etc/passwd"))
    assert missing.status == 404 and missing.alerts == ["There is no such page here."]
    wrong = read_page(client.get("/answer"))
    assert wrong.status == 405 and wrong.alerts


def test_a_bug_is_a_page_saying_so_without_a_traceback(
    walker: Walker, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gpuadvisor.web.pages

    def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("boom in render")

    page = finished(walker)
    monkeypatch.setattr(gpuadvisor.web.pages, "buyer_view", broken)
    monkeypatch.delenv("GPUADVISOR_DEBUG", raising=False)
    bug = walker.report(page)
    assert bug.status == 500 and "This is a bug" in bug.alerts[0]
    assert "boom" not in bug.html and "Traceback" not in bug.html
    assert "internal error: RuntimeError: boom in render" in capsys.readouterr().err


def test_an_exposed_page_says_so_on_every_page() -> None:
    app = create_app(exposed_at="http://0.0.0.0:8765/", allowed_hosts=None)
    with live_server(app) as base:
        page = read_page(httpx.get(base + "/", headers={"host": "anything.example"}))
    assert page.status == 200
    assert "reachable from other machines (http://0.0.0.0:8765/)" in page.alerts[0]


def test_an_organisations_catalog_overlay_applies_to_the_page() -> None:
    acme = REPO / "examples" / "overlays" / "acme-catalog"
    example = REPO / "examples" / "llm-latency-endpoint.toml"
    expected = advise(example, catalog_overlays=[acme]).recommendation.headline
    assert expected != advise(example).recommendation.headline  # the overlay matters
    app = create_app(catalog_overlays=[acme])
    with live_server(app) as base, httpx.Client(base_url=base, timeout=REQUEST_SECONDS) as http:
        walker = Walker(http)
        report = walker.report(finished(walker, answers_of(load_document(example)[0])))
    assert report.headline == " ".join(expected.split())


def test_serve_with_a_broken_overlay_exits_2_before_listening(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuadvisor.web import server

    def listen(address: Any) -> None:
        raise AssertionError("listened despite a broken overlay")

    monkeypatch.setattr(server, "listen", listen)
    (tmp_path / "bad.toml").write_text("id = \n", encoding="utf-8")
    result = cli("serve", "--catalog", str(tmp_path))
    assert result.exit_code == 2 and "bad.toml" in result.stderr, result.stderr


def test_a_visitor_cannot_make_the_server_open_a_path(
    walker: Walker, client: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profile's hf_config names a file on the machine that reads it. Uploaded to the
    page, it is left out with a note (never opened), and the walk never asks for one,
    even for a model only described by its size."""
    secret = tmp_path / "config.json"
    secret.write_text('{"num_hidden_layers": 1}')
    opened: list[Path] = []
    import gpuadvisor.sizing as sizing

    real = sizing.read_architecture

    def spy(path: Path) -> object:
        opened.append(path)
        return real(path)

    monkeypatch.setattr(sizing, "read_architecture", spy)
    profile = (
        '[workload]\nkind = "inference"\nobjective = "throughput"\n'
        f'[workload.model]\nfamily = "llm"\nparams_b = 7.0\nprecision = "bf16"\n'
        f'task = "inference"\nhf_config = "{secret}"\n'
    ).encode()
    page = start_from(walker, "model.toml", profile)
    assert "hf_config: left out" in page.html
    done = walker.walk({}, page)
    assert "workload.model.hf_config" not in walker.asked
    report = walker.report(done)
    assert report.status == 200 and not report.alerts, report.html
    assert str(secret) not in report.html and not opened
