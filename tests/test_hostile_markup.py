"""Text that looks like HTML, Markdown, Typst or Jinja2, from every file a stranger
writes, through the real command line into every report format.

``test_report_escaping`` proves the escaping of each format on a decision; this file
proves that every path such text takes from an input file to a report goes through it:
profile fields, a catalog overlay's card name, a rules overlay's title, rationale and
action, a GPU and a process name in a capture, and the capture's file name.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .conftest import REPO
from .hostile_support import RULE, Cli

#: One string per language; each would do something if it were not treated as text.
HTML = "<script>alert(1)</script><img src=x onerror=alert(2)>"
MARKDOWN = "[click](https://evil.example) ![x](y.png) **loud**"
TYPST = '#panic("typst ran user text") #read("/etc/passwd")'
JINJA = "{{ 7*7 }} {% include '/etc/passwd' %}"
ALL = f"{HTML} {MARKDOWN} {TYPST} {JINJA}"


def _toml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


@pytest.fixture(scope="module")
def hostile_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    root = tmp_path_factory.mktemp("markup")
    profile = root / "profile.toml"
    profile.write_text(
        f"""schema = "gpuadvisor/profile/v1"
[meta]
title = {_toml(HTML)}
requester = {_toml(MARKDOWN)}
notes = {_toml(ALL + chr(10) + "# Heading" + chr(10) + "| a | b |")}
[workload]
kind = "rendering"
objective = "throughput"
vram_need_gib = 20
concurrent_jobs = 4
[requirements]
isv_apps = [{_toml(TYPST)}, {_toml(JINJA)}]
""",
        encoding="utf-8",
    )
    catalog = root / "catalog"
    catalog.mkdir()
    sku = (REPO / "catalog" / "rtx-6000-ada.toml").read_text(encoding="utf-8")
    sku = sku.replace(
        'name = "NVIDIA RTX 6000 Ada Generation"', f"name = {_toml('<b>RTX</b> ' + TYPST)}"
    )
    (catalog / "rtx-6000-ada.toml").write_text(sku, encoding="utf-8")
    rules = root / "rules"
    rules.mkdir()
    rule = RULE.replace(
        'title = "Many independent jobs that each fit one card scale by adding cards"',
        f"title = {_toml('Many jobs ' + HTML)}",
    )
    rule = rule.replace(
        'action = "Run one process per GPU',
        f"action = {_toml(JINJA + ' ' + TYPST)[:-1]} Run one process per GPU",
    )
    rule = rule.replace('rationale = """', 'rationale = """' + MARKDOWN.replace("\\", "") + "\n")
    (rules / "JOBS-001.toml").write_text(rule, encoding="utf-8")
    capture = root / "smi-L <b>x #panic() [y](z) {{ 1 }}.txt"
    capture.write_text(f"GPU 0: {HTML} (UUID: GPU-4b8a1c2d-0000-0000-0000-000000000000)\n")
    args = [
        "advise",
        str(profile),
        "--no-sensitivity",
        "--catalog",
        str(catalog),
        "--rules",
        str(rules),
        "--evidence",
        str(capture),
    ]
    return args, root


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.attributes += attrs


def test_json_keeps_the_text_exactly(cli: Cli, hostile_inputs: tuple[list[str], Path]) -> None:
    args, _ = hostile_inputs
    result = cli(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    decision = json.loads(result.stdout)
    assert decision["meta"]["title"] == HTML
    assert TYPST in decision["meta"]["isv_apps"]
    assert any(f["title"] == "Many jobs " + HTML for f in decision["findings"])


def test_html_holds_no_markup_from_inputs(cli: Cli, hostile_inputs: tuple[list[str], Path]) -> None:
    args, _ = hostile_inputs
    result = cli(*args, "--format", "html")
    assert result.exit_code == 0, result.stderr
    parsed = _Tags()
    parsed.feed(result.stdout)
    assert parsed.tags["script"] == 0
    assert parsed.tags["img"] == 0 or all(
        not (value or "").startswith("x") for name, value in parsed.attributes if name == "src"
    )
    assert not any(name == "onerror" for name, _ in parsed.attributes)
    assert not any((value or "").startswith("https://evil") for _, value in parsed.attributes)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in result.stdout
    assert "{{ 7*7 }}" in result.stdout


def test_markdown_holds_no_structure_from_inputs(
    cli: Cli, hostile_inputs: tuple[list[str], Path]
) -> None:
    args, _ = hostile_inputs
    result = cli(*args, "--format", "md")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "# Heading" not in lines
    assert not any(line.startswith(("<script", "<img", "| a | b |")) for line in lines)
    assert not re.search(r"(?<!\\)\]\(https://evil", result.stdout), "an unescaped link"
    assert "<script>" not in result.stdout
    assert "{{ 7\\*7 }}" in result.stdout or "{{ 7*7 }}" in result.stdout


def test_pdf_compiles_with_typst_code_in_every_field(
    cli: Cli, hostile_inputs: tuple[list[str], Path]
) -> None:
    """``#panic(...)`` anywhere would stop the compiler; ``#read`` would need the file."""
    pytest.importorskip("typst")
    args, root = hostile_inputs
    out = root / "report.pdf"
    result = cli(*args, "--format", "pdf", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes().startswith(b"%PDF")
