"""Organisation templates (--template DIR): overlay, extend, sandbox, errors, CLI."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.render.report import render

from .conftest import REPO, CliResult
from .golden_util import example_decision


@pytest.fixture(scope="module")
def decision(test_catalog: Catalog, rulebase: RuleBase) -> Decision:
    return example_decision("llm-latency-endpoint", test_catalog, rulebase)


def tiny_png() -> bytes:
    """A valid 2×2 PNG in the organisation's colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xb0\x00\x20" * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def overlay(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    folder = tmp_path / "acme"
    folder.mkdir(exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def test_overlay_file_replaces_only_itself(decision: Decision, tmp_path: Path) -> None:
    folder = overlay(tmp_path, {"report.css": ":root { --accent: #b00020; } /* ACME */"})
    html = render(decision, "html", template_dir=folder)
    assert "/* ACME */" in html and "--accent: #1f4e79" not in html
    assert '<section id="runbook">' in html  # the rest is the bundled template


def test_overlay_extends_a_bundled_block_with_a_logo(decision: Decision, tmp_path: Path) -> None:
    folder = overlay(
        tmp_path,
        {
            "logo.png": tiny_png(),
            "report.html.j2": (
                '{% extends "bundled/report.html.j2" %}'
                '{% block masthead %}<img alt="ACME" src="{{ asset_data_uri("logo.png") }}">'
                "<h1>ACME · {{ d.meta.title }}</h1>{% endblock %}"
            ),
        },
    )
    html = render(decision, "html", template_dir=folder)
    assert '<img alt="ACME" src="data:image/png;base64,iVBORw0KGgo' in html
    assert "<h1>ACME · Support-chat LLM endpoint</h1>" in html
    assert "<h2>Operating runbook</h2>" in html


def test_overlay_restyles_the_pdf(decision: Decision, tmp_path: Path) -> None:
    pytest.importorskip("typst")
    folder = overlay(
        tmp_path,
        {
            "logo.png": tiny_png(),
            "report.typ.j2": (
                '{% extends "bundled/report.typ.j2" %}'
                '{% block style %}#let accent = rgb("#b00020"){% endblock %}'
                '{% block title_block %}#image("logo.png", width: 2cm)\n'
                "#text(size: 18pt)[ACME: {{ d.meta.title }}]\n{% endblock %}"
            ),
        },
    )
    pdf = render(decision, "pdf", template_dir=folder)
    assert pdf.startswith(b"%PDF-") and b"/Subtype/Image" in pdf
    assert pdf != render(decision, "pdf")


def test_overlay_runbook_replaces_the_bundled_one(decision: Decision, tmp_path: Path) -> None:
    folder = overlay(
        tmp_path,
        {
            "runbook.toml": (
                '[[item]]\nid = "acme-cmdb"\ntitle = "Register the cards in the CMDB"\n'
                'why = "Asset policy AP-7."\nsteps = ["Open a ticket with `cmdb add`."]\n'
                "always = true\n"
            )
        },
    )
    text = render(decision, "md", template_dir=folder)
    runbook = text.split("## Operating runbook", 1)[1].split("\n## ", 1)[0]
    assert "### Register the cards in the CMDB" in runbook
    assert "`cmdb add`" in runbook
    assert "Pin the driver branch" not in runbook


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{ d.__class__.__mro__ }}", "SecurityError"),
        ("{{ cycler.__init__.__globals__ }}", "SecurityError"),
        ("{% set x = [] %}{{ x.append(1) }}", "SecurityError"),
        ("{{ d.meta.model_copy }}{{ d.meta.__dict__ }}", "SecurityError"),
        ("{{ no_such_value }}", "'no_such_value' is undefined"),
        ("{% if %}", "TemplateSyntaxError"),
        ('{{ asset_data_uri("../../etc/passwd") }}', "plain relative path"),
        ('{{ asset_data_uri("report.md.j2") }}', "not an image"),
    ],
)
def test_overlay_templates_are_sandboxed_and_strict(
    decision: Decision, tmp_path: Path, template: str, message: str
) -> None:
    folder = overlay(tmp_path, {"report.md.j2": template})
    with pytest.raises(InputError, match=message) as caught:
        render(decision, "md", template_dir=folder)
    assert caught.value.file == str(folder)


def test_overlay_typst_error_is_an_input_error(decision: Decision, tmp_path: Path) -> None:
    pytest.importorskip("typst")
    folder = overlay(tmp_path, {"report.typ.j2": "#let x = \n"})
    with pytest.raises(InputError, match="the PDF template did not compile"):
        render(decision, "pdf", template_dir=folder)


def test_missing_template_folder_is_an_input_error(decision: Decision, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="template folder does not exist"):
        render(decision, "html", template_dir=tmp_path / "nope")


# -- command line ---------------------------------------------------------------------

Cli = Callable[..., CliResult]
PROFILE = REPO / "examples" / "llm-latency-endpoint.toml"


@pytest.fixture()
def fixture_catalog(monkeypatch: pytest.MonkeyPatch, test_catalog: Catalog) -> None:
    """advise reads the fixture catalog, whatever the bundled one holds."""
    monkeypatch.setattr("gpuadvisor.pipeline.load_catalog", lambda *a, **k: test_catalog)


@pytest.mark.usefixtures("fixture_catalog")
def test_cli_writes_html(cli: Cli) -> None:
    html = cli("advise", str(PROFILE), "--format", "html", "--no-sensitivity")
    assert html.exit_code == 0, html.stderr
    assert html.stdout.startswith("<!DOCTYPE html>")


@pytest.mark.usefixtures("fixture_catalog")
def test_cli_writes_pdf_to_a_file(cli: Cli, tmp_path: Path) -> None:
    pytest.importorskip("typst")
    out = tmp_path / "report.pdf"
    result = cli("advise", str(PROFILE), "--format", "pdf", "-o", str(out), "--no-sensitivity")
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes().startswith(b"%PDF-")
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


@pytest.mark.usefixtures("fixture_catalog")
def test_cli_template_option(cli: Cli, tmp_path: Path) -> None:
    folder = overlay(tmp_path, {"report.md.j2": "ACME: {{ d.recommendation.headline }}\n"})
    result = cli("advise", str(PROFILE), "--template", str(folder), "--no-sensitivity")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ACME: Buy one Test Pro 96")
    bad = overlay(tmp_path, {"report.md.j2": "{{ d.__class__.__subclasses__() }}"})
    refused = cli("advise", str(PROFILE), "--template", str(bad), "--no-sensitivity")
    assert refused.exit_code == 2 and "SecurityError" in refused.stderr
    assert "Traceback" not in refused.stderr
    missing = cli("advise", str(PROFILE), "--template", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "template folder does not exist" in missing.stderr
