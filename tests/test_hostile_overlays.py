"""Organisation overlays are data, never code.

A rules overlay's conditions go through :mod:`gpuadvisor.engine.expr` (a whitelisted syntax
tree, no ``eval``): every attempt to reach Python is refused at load time, naming the
file, the rule and the field. A template overlay renders in Jinja2's immutable sandbox,
confined to its folder and bounded in time and size; a Typst overlay compiles in a child
process that cannot read outside the folder, download packages or run without end.
Every case goes through the real command line and must exit 2 without a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuadvisor.render import pdf, sandbox

from .hostile_support import RULE, Cli, Inputs, make_inputs, run_refused


@pytest.fixture()
def inputs(tmp_path: Path) -> Inputs:
    return make_inputs(tmp_path)


# -- rules: conditions ----------------------------------------------------------------

#: Conditions that must not load; each replaces the start of JOBS-001's ``when``.
CONDITIONS: dict[str, str] = {
    "dunder-attribute": "workload.__class__",
    "subclasses-walk": "().__class__.__bases__[0].__subclasses__()",
    "import-and-run": "__import__('os').system('touch PWNED')",
    "eval": "eval('1 == 1')",
    "open-a-file": "open('/etc/passwd')",
    "getattr": "getattr(workload, 'kind')",
    "lambda": "(lambda: True)()",
    "list-comprehension": "[x for x in (1, 2)] == [1, 2]",
    "generator": "any(x for x in (1, 2))",
    "set-literal": "{1, 2} == {2, 1}",
    "dict-literal": "{'a': 1} == {'a': 1}",
    "walrus": "(x := True)",
    "subscript": "workload.kind[0] == 'i'",
    "starred": "max(*[1, 2]) > 0",
    "f-string": "f'{workload.kind}' == 'inference'",
    "bytes": "b'x' == b'x'",
    "keyword-argument": "min(1, 2, key=abs) > 0",
    "method-of-a-result": "max(1, 2).bit_length() > 0",
    "conditional-expression": "(1 if true else 2) > 0",
    "power": "9 ** 9 ** 9 > 0",
    "shift": "1 << 100000 > 0",
    "bitwise-or": "(true | false)",
    "modulo": "5 % 2 == 1",
    "floor-division": "5 // 2 == 2",
    "matrix-multiply": "(1 @ 2) == 2",
    "invert": "~1 == -2",
    "identity": "workload.kind is 'inference'",
    "await": "await x",
    "deeply-nested": "not " * 45 + "true",
    "long-sum": "1 + " * 60 + "1 > 0",
    "parentheses": "(" * 300 + "true" + ")" * 300,
    "over-2000-characters": "'" + "a" * 2100 + "' == 'a'",
}


@pytest.mark.parametrize("case", CONDITIONS)
@pytest.mark.parametrize("command", ["advise --rules", "rules lint DIR"])
def test_conditions_cannot_run_code(cli: Cli, inputs: Inputs, command: str, case: str) -> None:
    condition = CONDITIONS[case].replace("\\", "\\\\").replace('"', '\\"')
    text = RULE.replace('when = "', f'when = "{condition} and ', 1)
    path = inputs.write("rules-overlay/JOBS-001.toml", text)
    args = {
        "advise --rules": ["advise", str(inputs.profile), "--rules", str(inputs.rules)],
        "rules lint DIR": ["rules", "lint", str(inputs.rules)],
        "rules test --rules": ["rules", "test", "--rules", str(inputs.rules)],
    }[command]
    cwd = Path.cwd()
    os.chdir(inputs.root)  # where "touch PWNED" would land
    try:
        result = run_refused(cli, inputs, args, "rule JOBS-001", where=f"{path}")
    finally:
        os.chdir(cwd)
    assert ": when: " in result.stderr
    assert not (inputs.root / "PWNED").exists()


@pytest.mark.parametrize(
    "key",
    ["action", "rationale"],
)
def test_placeholders_name_facts_only(cli: Cli, inputs: Inputs, key: str) -> None:
    """``{fact.name}`` placeholders are looked up in the facts, never formatted with
    Python's ``str.format`` (which would reach attributes: ``{x.__class__}``)."""
    old = 'action = "' if key == "action" else 'rationale = """'
    text = RULE.replace(old, old + "{workload.__class__.__init__.__globals__} ", 1)
    path = inputs.write("rules-overlay/JOBS-001.toml", text)
    run_refused(cli, inputs, ["rules", "lint", str(inputs.rules)], "names no fact", where=str(path))


def test_a_rule_can_only_use_whitelisted_functions(cli: Cli, inputs: Inputs) -> None:
    text = RULE.replace('when = "', 'when = "abs(-1) > 0 and max(1, 2) > min(1, 2) and ', 1)
    inputs.write("rules-overlay/JOBS-001.toml", text)
    result = cli("rules", "test", "--rules", str(inputs.rules))
    assert result.exit_code == 0, result.stderr  # known, min, max, abs are the language


# -- templates ----------------------------------------------------------------------

MD = "report.md.j2"

#: name -> (files in the template folder, fragment of the message).
TEMPLATES: dict[str, tuple[dict[str, str], str]] = {
    "class-mro": ({MD: "{{ ''.__class__.__mro__ }}"}, "unsafe"),
    "template-reference-context": ({MD: "{{ self._TemplateReference__context }}"}, "unsafe"),
    "cycler-globals": ({MD: "{{ cycler.__init__.__globals__ }}"}, "unsafe"),
    "joiner-globals": ({MD: "{{ joiner.__init__.__globals__.os }}"}, "unsafe"),
    "decision-class": ({MD: "{{ d.__class__.__init__ }}"}, "unsafe"),
    "format-attribute": ({MD: "{{ '{0.__class__}'.format(d) }}"}, "unsafe"),
    "mutate-a-list": ({MD: "{% set l = [1] %}{{ l.append(2) }}"}, "unsafe"),
    "include-etc-passwd": ({MD: "{% include '/etc/passwd' %}"}, "TemplateNotFound"),
    "include-dotdot": ({MD: "{% include '../../../../etc/passwd' %}"}, "TemplateNotFound"),
    "import-outside": ({MD: "{% import '../x.j2' as x %}"}, "TemplateNotFound"),
    "extends-absolute": ({MD: "{% extends '/etc/hostname' %}"}, "TemplateNotFound"),
    "asset-outside": ({MD: "{{ asset_data_uri('../../etc/passwd') }}"}, "plain relative path"),
    "asset-absolute": ({MD: "{{ asset_data_uri('/etc/passwd') }}"}, "plain relative path"),
    "lipsum": ({MD: "{{ lipsum(100000) }}"}, "'lipsum' is undefined"),
    "namespace-doubling": (
        {
            MD: "{% set ns = namespace(s='x') %}{% for i in range(64) %}"
            "{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
        },
        "'namespace' is undefined",
    ),
    "string-times-huge": ({MD: "{{ 'x' * 10000000000 }}"}, "TemplateLimit"),
    "list-times-huge": ({MD: "{{ [1] * 10000000000 }}"}, "TemplateLimit"),
    "power-tower": ({MD: "{{ 99999 ** 99999 }}"}, "TemplateLimit"),
    "center-huge": ({MD: "{{ 'x' | center(10000000000) }}"}, "TemplateLimit"),
    "method-ljust-huge": ({MD: "{{ 'x'.ljust(10000000000) }}"}, "TemplateLimit"),
    "percent-width": ({MD: "{{ '%0999999999d' % 1 }}"}, "TemplateLimit"),
    "macro-doubling": (
        {
            MD: "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}{{ s|length }}"
            "{% endif %}{% endmacro %}{{ d('x', 60) }}"
        },
        "TemplateLimit",
    ),
    "output-flood": (
        {MD: "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"},
        "TemplateLimit",
    ),
    "macro-recursion": ({MD: "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}"}, "without end"),
    "include-itself": ({MD: "{% include 'report.md.j2' %}"}, "without end"),
    "division-by-zero": ({MD: "{{ 1 / 0 }}"}, "ZeroDivisionError"),
    "type-error": ({MD: "{{ 'a' + 1 }}"}, "TypeError"),
    "undefined-name": ({MD: "{{ nope }}"}, "UndefinedError"),
    "syntax-error": ({MD: "line\n{% if %}"}, "TemplateSyntaxError"),
    "runbook-not-toml": ({"runbook.toml": "x = ["}, "invalid TOML"),
}


@pytest.mark.parametrize("case", TEMPLATES)
def test_template_sandbox(cli: Cli, inputs: Inputs, case: str) -> None:
    files, fragment = TEMPLATES[case]
    for name, text in files.items():
        inputs.write(f"templates/{name}", text)
    args = ["advise", str(inputs.profile), "--no-sensitivity", "--template", str(inputs.templates)]
    result = run_refused(cli, inputs, args, fragment, where=str(inputs.templates))
    assert "root:x:0" not in result.stderr


def test_template_time_limit(cli: Cli, inputs: Inputs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TEMPLATE_SECONDS", 0.5)
    inputs.write(
        f"templates/{MD}",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    )
    args = ["advise", str(inputs.profile), "--no-sensitivity", "--template", str(inputs.templates)]
    run_refused(cli, inputs, args, "time limit", where=str(inputs.templates))


@pytest.mark.parametrize("name", [MD, "runbook.toml", "logo.png"])
def test_links_out_of_the_template_folder_are_refused(cli: Cli, inputs: Inputs, name: str) -> None:
    secret = inputs.write("secret.txt", "TOP-SECRET\n")
    (inputs.templates / name).symlink_to(secret)
    args = ["advise", str(inputs.profile), "--no-sensitivity", "--template", str(inputs.templates)]
    result = run_refused(cli, inputs, args, "points outside", where=str(inputs.templates / name))
    assert "TOP-SECRET" not in result.stderr


def test_a_link_inside_the_template_folder_is_fine(cli: Cli, inputs: Inputs) -> None:
    inputs.write("templates/parts/base.md.j2", '{% extends "bundled/report.md.j2" %}')
    (inputs.templates / MD).symlink_to(inputs.templates / "parts" / "base.md.j2")
    args = ["advise", str(inputs.profile), "--no-sensitivity", "--template", str(inputs.templates)]
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# GPU purchase recommendation")


@pytest.mark.parametrize(
    ("name", "data", "fragment"),
    [
        (MD, b"\xff\xfe{{ x }}", "not valid UTF-8"),
        (MD, bytes(range(256)), "binary"),
        (MD, b"x" * (sandbox.MAX_TEMPLATE_BYTES + 1), "limit"),
        ("runbook.toml", b"\x00\x01", "binary"),
    ],
    ids=["latin-1", "binary", "oversize", "binary-runbook"],
)
def test_template_files_are_read_like_any_input(
    cli: Cli, inputs: Inputs, name: str, data: bytes, fragment: str
) -> None:
    path = inputs.write(f"templates/{name}", data)
    args = ["advise", str(inputs.profile), "--no-sensitivity", "--template", str(inputs.templates)]
    run_refused(cli, inputs, args, fragment, where=str(path))


def test_an_oversize_asset_is_refused(cli: Cli, inputs: Inputs) -> None:
    inputs.write("templates/report.html.j2", "{{ asset_data_uri('logo.png') }}")
    path = inputs.write("templates/logo.png", b"\x89PNG" + b"0" * (3 * 1024 * 1024))
    args = [
        "advise",
        str(inputs.profile),
        "--no-sensitivity",
        "--format",
        "html",
        "--template",
        str(inputs.templates),
    ]
    run_refused(cli, inputs, args, "limit", where=str(path))


# -- Typst --------------------------------------------------------------------------

TYP = "report.typ.j2"

TYPST: dict[str, tuple[str, str]] = {
    "read-absolute": ('#read("/etc/passwd")', "file not found"),
    "read-outside": ('#read("../secret.txt")', "escape the project root"),
    "image-outside": ('#image("../../../../etc/hostname")', "escape the project root"),
    "package-import": ('#import "@preview/cetz:0.2.2": canvas\nx', "failed to download"),
    "package-import-built-at-run-time": (
        '#let p = "@pre" + "view/cetz:0.2.2"\n#import p: canvas\nx',
        "failed to download",
    ),
    "local-package": ('#import "@local/x:0.1.0": y\nx', "package not found"),
    "syntax": ("#let x = (", "unclosed delimiter"),
    "panic": ('#panic("stop")', "panicked"),
}


@pytest.mark.parametrize("case", TYPST)
def test_typst_template_is_confined(cli: Cli, inputs: Inputs, case: str) -> None:
    pytest.importorskip("typst")
    source, fragment = TYPST[case]
    inputs.write("secret.txt", "TOP-SECRET\n")
    inputs.write(f"templates/{TYP}", source)
    out = inputs.root / "report.pdf"
    args = [
        "advise",
        str(inputs.profile),
        "--no-sensitivity",
        "--format",
        "pdf",
        "--template",
        str(inputs.templates),
        "-o",
        str(out),
    ]
    result = run_refused(cli, inputs, args, fragment, where=str(inputs.templates))
    assert "TOP-SECRET" not in result.stderr
    assert not out.exists()


def test_typst_link_out_of_the_folder_is_refused(cli: Cli, inputs: Inputs) -> None:
    secret = inputs.write("secret.txt", "TOP-SECRET\n")
    (inputs.templates / "data.txt").symlink_to(secret)
    inputs.write(f"templates/{TYP}", '#read("data.txt")')
    args = [
        "advise",
        str(inputs.profile),
        "--no-sensitivity",
        "--format",
        "pdf",
        "--template",
        str(inputs.templates),
        "-o",
        str(inputs.root / "r.pdf"),
    ]
    run_refused(cli, inputs, args, "points outside", where=str(inputs.templates / "data.txt"))


def test_typst_runaway_template_is_stopped(
    cli: Cli, inputs: Inputs, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("typst")
    monkeypatch.setattr(pdf, "TYPST_SECONDS", 3)
    inputs.write(f"templates/{TYP}", '#let s = "ab"\n#for i in range(64) { s = s + s }\n#s.len()')
    args = [
        "advise",
        str(inputs.profile),
        "--no-sensitivity",
        "--format",
        "pdf",
        "--template",
        str(inputs.templates),
        "-o",
        str(inputs.root / "r.pdf"),
    ]
    result = run_refused(cli, inputs, args, where=str(inputs.templates))
    assert "time limit" in result.stderr or "compiler stopped" in result.stderr
