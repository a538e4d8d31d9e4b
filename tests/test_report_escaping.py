"""User text is data in every format: it can never add structure, markup or code.

Each hostile string goes into every field a user or an organisation controls (title,
requester, notes, ISV names, evidence file names, card names from a catalog overlay).
The report is then parsed back, and its structure (headings, lists, tables, links,
emphasis, scripts...) must be exactly that of the same report with harmless text.
"""

from __future__ import annotations

import json
from collections import Counter
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.decision.model import Decision, EvidenceRef, FactValue, Meta
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.render import markdown, printable
from gpuadvisor.render.pdf import literal
from gpuadvisor.render.report import render, render_source
from gpuadvisor.resources import data_dir

from .golden_util import example_decision, with_evidence

HOSTILE = (
    "<script>alert(1)</script>",
    "# Heading",
    '#import "x"',
    "{{ 7*7 }}",
    "]",
    "[link](https://evil.example) ![img](x.png) <https://evil.example>",
    "*bold* _it_ **b** `code` ~~s~~ $x$ @team",
    "1. item",
    "- item",
    "| a | b |",
    "\\",
    '"quote" \\" #let x = 1 #panic("no")',
    "line1\nline2\n\n## h2\n    code",
    "===",
    "---",
    "// comment /* unterminated",
    "<!-- x --> &amp; &lt;b&gt;",
    "{% raw %}{# x #}",
    "#{panic()} #(1/0) #[*x*]",
    "= Title <label> @ref",
    "a\u0000b\u001bc\u2028d",
)

SAFE = "Plain words"


@pytest.fixture(scope="module")
def base(test_catalog: Catalog, rulebase: RuleBase) -> Decision:
    return with_evidence(example_decision("vdi-many-users", test_catalog, rulebase))


def hostile(decision: Decision, text: str) -> Decision:
    """``text`` in every field a user or an organisation's data controls."""
    picks = tuple(p.model_copy(update={"name": text}) for p in decision.picks)
    evidence = tuple(
        EvidenceRef(file=f"{text}.{i}", kind=e.kind, sha256=e.sha256)
        for i, e in enumerate(decision.inputs.evidence)
    )
    measured = tuple(m.model_copy(update={"source": text}) for m in decision.measured)
    gpus = tuple(
        g.model_copy(
            update={
                "name": text,
                "series_source": text,
                "values": tuple(
                    FactValue(name=v.name, value=v.value, unit=v.unit, source=text)
                    for v in g.values
                ),
            }
        )
        for g in decision.gpus
    )
    return decision.model_copy(
        update={
            "meta": Meta(title=text, requester=text, notes=text, isv_apps=(text, text)),
            "picks": picks,
            "inputs": decision.inputs.model_copy(
                update={"evidence": evidence, "profile_file": text}
            ),
            "measured": measured,
            "gpus": gpus,
        }
    )


def flat(text: str) -> str:
    return " ".join(text.split())


def shown_as(text: str) -> str:
    """How a report shows text: control characters as U+FFFD."""
    return printable(text)


# -- Markdown -------------------------------------------------------------------------

STRUCTURE = {
    "heading_open",
    "bullet_list_open",
    "ordered_list_open",
    "list_item_open",
    "table_open",
    "tr_open",
    "th_open",
    "td_open",
    "link_open",
    "image",
    "strong_open",
    "em_open",
    "s_open",
    "code_inline",
    "code_block",
    "fence",
    "html_inline",
    "html_block",
    "hr",
    "blockquote_open",
    "hardbreak",
}


def markdown_structure(text: str) -> Counter[str]:
    markdown_it = pytest.importorskip("markdown_it")
    parser = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough", "linkify"])
    counts: Counter[str] = Counter()
    for token in parser.parse(text):
        for t in [token, *(token.children or [])]:
            if t.type in STRUCTURE:
                counts[t.type] += 1
    return counts


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_structure_does_not_depend_on_user_text(base: Decision, text: str) -> None:
    safe = render(hostile(base, SAFE), "md")
    evil = render(hostile(base, text), "md")
    assert markdown_structure(evil) == markdown_structure(safe)


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_shows_user_text_as_written(base: Decision, text: str) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").render(render(hostile(base, text), "md"))
    title = html.split("<h1>", 1)[1].split("</h1>", 1)[0]
    shown = _text_of(title)
    assert shown == flat(f"GPU purchase recommendation: {shown_as(text)}")


def _text_of(html: str) -> str:
    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = Text()
    parser.feed(html)
    return flat("".join(parser.parts))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# x", "\\# x"),
        ("- x", "\\- x"),
        ("+ x", "\\+ x"),
        ("1. x", "1\\. x"),
        ("12) x", "12\\) x"),
        ("---", "\\---"),
        ("a - b", "a - b"),
        ("single-larger-gpu", "single-larger-gpu"),
        ("+4", "+4"),
        ("a|b", "a\\|b"),
        ("$5", "\\$5"),
        ("x\n\ny", "x y"),
        ("a\\`*_[]<>|~&$@#b", "a\\\\\\`\\*\\_\\[\\]\\<\\>\\|\\~\\&\\$\\@\\#b"),
    ],
)
def test_markdown_escape(text: str, expected: str) -> None:
    assert markdown.escape(text) == expected


def test_markdown_code_span_cannot_be_closed_early() -> None:
    assert markdown.code("a`b") == "``a`b``"
    assert markdown.code("`x`") == "`` `x` ``"
    assert markdown.code("a|b", cell=True) == "`a\\|b`"


# -- HTML -----------------------------------------------------------------------------


class _Tags(HTMLParser):
    """Tags and attributes, except the lines of chart labels: a long name is set on
    more lines than a short one (each line an SVG ``<text>``), which is layout."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.attributes: Counter[str] = Counter()
        self.svg = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.svg += tag == "svg"
        if self.svg and tag == "text":
            return
        self.tags[tag] += 1
        for name, _ in attrs:
            self.attributes[name] += 1

    def handle_endtag(self, tag: str) -> None:
        self.svg -= tag == "svg"

    def handle_comment(self, data: str) -> None:
        self.tags["<!--"] += 1


def html_structure(text: str) -> tuple[Counter[str], Counter[str]]:
    parser = _Tags()
    parser.feed(text)
    return parser.tags, parser.attributes


@pytest.mark.parametrize("text", HOSTILE)
def test_html_structure_does_not_depend_on_user_text(base: Decision, text: str) -> None:
    safe = render(hostile(base, SAFE), "html")
    evil = render(hostile(base, text), "html")
    assert html_structure(evil) == html_structure(safe)
    assert "<script" not in evil


@pytest.mark.parametrize("text", HOSTILE)
def test_html_shows_user_text_as_written(base: Decision, text: str) -> None:
    html = render(hostile(base, text), "html")
    title = html.split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert _text_of(title) == flat(shown_as(text))


# -- JSON -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE)
def test_json_keeps_user_text_exactly(base: Decision, text: str) -> None:
    data = json.loads(render(hostile(base, text), "json"))
    assert data["meta"]["title"] == text
    assert data["meta"]["isv_apps"] == [text, text]
    assert data["inputs"]["evidence"][0]["file"] == f"{text}.0"


# -- Typst / PDF ----------------------------------------------------------------------

#: Elements whose number must not change with user text (a query per report).
ELEMENTS = (
    "heading",
    "strong",
    "emph",
    "raw",
    "link",
    "math.equation",
    "table",
    "list",
    "enum",
    "image",
    "figure",
    "ref",
    "footnote",
    "metadata",
    "terms",
    "quote",
)


def typst_structure(source: str) -> Counter[str]:
    typst = pytest.importorskip("typst")
    found = json.loads(
        typst.query(
            source.encode(),
            f"selector.or({', '.join(ELEMENTS)})",
            ignore_system_fonts=True,
            root=str(data_dir("reports")),
        )
    )
    return Counter(element["func"] for element in found)


@pytest.fixture(scope="module")
def typst_baseline(base: Decision) -> Counter[str]:
    return typst_structure(render_source(hostile(base, SAFE), "pdf"))


@pytest.mark.parametrize("text", HOSTILE)
def test_typst_structure_does_not_depend_on_user_text(
    base: Decision, typst_baseline: Counter[str], text: str
) -> None:
    evil = render_source(hostile(base, text), "pdf")
    assert typst_structure(evil) == typst_baseline
    assert typst_baseline["heading"] > 10 and typst_baseline["table"] > 5


@pytest.mark.parametrize("text", HOSTILE[:8])
def test_pdf_shows_user_text_as_written(base: Decision, text: str) -> None:
    pypdf = pytest.importorskip("pypdf")
    pytest.importorskip("typst")
    import io

    reader = pypdf.PdfReader(io.BytesIO(render(hostile(base, text), "pdf")))
    assert reader.metadata is not None and reader.metadata.title == text
    first = flat(reader.pages[0].extract_text())
    assert flat(shown_as(text)) in first


def test_typst_literal_escapes() -> None:
    """Quotes and backslashes escaped, tab and newline by their short escapes, other
    control characters by code, lone surrogates (no encoding can write them) as U+FFFD."""
    assert literal('say "hi" \\ bye') == '"say \\"hi\\" \\\\ bye"'
    assert literal("a\tb\nc\x00d\x1be\x7ff") == '"a\\tb\\nc\\u{0}d\\u{1b}e\\u{7f}f"'
    assert literal("x\ud800y\udfffz · 🙂") == '"x\\u{fffd}y\\u{fffd}z · 🙂"'
    assert literal(12) == '"12"'


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_typst_literal_round_trips_any_text(text: str) -> None:
    typst = pytest.importorskip("typst")
    source = f"#metadata({literal(text)}) <value>"
    value = json.loads(
        typst.query(source.encode(), "<value>", field="value", one=True, ignore_system_fonts=True)
    )
    assert value == text
